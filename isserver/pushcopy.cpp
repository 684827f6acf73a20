#include "pushcopy.h"

#include "dialog/is/codec.h"
#include "dialog/is/protocol.h"
#include "dialog/is/typeregistry.h"

namespace dialog::isd {

namespace {
const QString StatisticsObject = QStringLiteral("Statistics"); // each server has its own
} // namespace

PushCopy::PushCopy(is::Repository &repository, is::TypeRegistry &types,
                   std::function<void(const QString &)> report, QObject *parent)
    : QObject(parent), m_repository(repository), m_types(types), m_report(std::move(report))
{
}

bool PushCopy::takeTypes(const QJsonArray &json, QString *error)
{
    QList<is::TypeInfo> types, fresh;
    if (const Status st = is::typesFromJson(json, &types); !st.isOk()) {
        *error = st.message();
        return false;
    }
    for (const is::TypeInfo &t : std::as_const(types))
        if (!m_types.contains(t.name()))
            fresh << t;
    // A type both know with different layouts keeps ours: the master's objects are converted.
    if (const Status st = is::declareNewTypes(m_types, fresh); !st.isOk()) {
        *error = QStringLiteral("cannot take the master's types: %1").arg(st.message());
        return false;
    }
    is::Layouts theirs;
    if (const Status st = is::Layouts::of(types, &theirs); !st.isOk()) {
        *error = QStringLiteral("cannot take the master's types: %1").arg(st.message());
        return false;
    }
    m_evolution = std::make_unique<is::Evolution>(m_types, theirs);
    for (const QString &line : m_evolution->changes()) {
        if (!m_evolutionReported.contains(line))
            m_report(line + QStringLiteral(" (the master's objects are converted)"));
    }
    m_evolutionReported = m_evolution->changes();
    if (!m_evolution->status().isOk())
        m_report(m_evolution->status().message());
    if (!fresh.isEmpty())
        Q_EMIT typesAdded(fresh);
    return true;
}

bool PushCopy::records(const QByteArray &payload, QString *error)
{
    qsizetype pos = 0;
    is::protocol::RecordView r;
    while (pos < payload.size()) {
        if (const Status read = is::protocol::nextRecord(payload, pos, r); !read.isOk()) {
            *error = QStringLiteral("malformed records: %1").arg(read.message());
            return false;
        }
        if (r.kind == is::protocol::SnapshotBegin) {
            m_inSnapshot = true;
            m_seen.clear();
            continue;
        }
        if (r.kind == is::protocol::SnapshotEnd) {
            if (!m_inSnapshot) {
                *error = QStringLiteral("snapshot end without its beginning");
                return false;
            }
            // What the master did not send no longer exists there.
            qsizetype removed = 0;
            for (const is::ObjectInfo &o : m_repository.list()) {
                if (o.name == StatisticsObject || m_seen.contains(o.name))
                    continue;
                is::Change gone;
                gone.kind = is::Change::Kind::Removed;
                gone.name = m_repository.serverName() + QLatin1Char('.') + o.name;
                gone.time = is::Time::currentTime();
                removed += m_repository.mirror(gone).isOk();
            }
            const qsizetype objects = m_seen.size();
            m_inSnapshot = false;
            m_seen.clear();
            ++m_snapshots;
            m_report(
                QStringLiteral("%1: %2 objects%3")
                    .arg(m_snapshots == 1 ? QStringLiteral("synchronised") : QStringLiteral("resynchronised"))
                    .arg(objects)
                    .arg(removed ? QStringLiteral(", %1 removed that the master no longer has").arg(removed)
                                 : QString()));
            Q_EMIT synchronised(objects);
            continue;
        }
        if (r.kind > is::protocol::Removed) {
            *error = QStringLiteral("unexpected record kind %1").arg(r.kind);
            return false;
        }
        const QString bare = QString::fromUtf8(payload.constData() + r.nameOffset, r.nameLength);
        if (bare.isEmpty() || bare == StatisticsObject)
            continue;
        is::Change c;
        c.name = m_repository.serverName() + QLatin1Char('.') + bare;
        c.time = is::Time(r.timeUs);
        QString why;
        if (r.kind == is::protocol::Removed) {
            c.kind = is::Change::Kind::Removed;
            (void)m_repository.mirror(c); // NotFound is fine: the copy did not have it
            continue;
        }
        if (m_inSnapshot)
            m_seen.insert(bare);
        c.kind = r.kind == is::protocol::Created ? is::Change::Kind::Created : is::Change::Kind::Updated;
        const QByteArray value = payload.mid(r.valueOffset, r.valueLength);
        const Status decoded =
            m_evolution ? m_evolution->decode(value, c.object) : is::decode(value, m_types, c.object);
        if (!decoded.isOk())
            why = decoded.message();
        if (!decoded.isOk() || !m_repository.mirror(c).isOk())
            // One object that cannot be copied is reported, not a reason to drop the master.
            m_report(QStringLiteral("cannot copy %1: %2").arg(c.name, why));
    }
    return true;
}

} // namespace dialog::isd
