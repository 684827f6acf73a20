#include "mirror.h"

#include "dialog/client.h"
#include "dialog/is/codec.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/evolution.h"
#include "dialog/is/typeregistry.h"

#include <QLoggingCategory>
#include <QPointer>

Q_LOGGING_CATEGORY(lcMirror, "dialog.is.mirror")

namespace dialog::isd {

namespace {
// Each IS server writes its own statistics object under this name; the master's is not copied.
const QString StatisticsObject = QStringLiteral("Statistics");
} // namespace

Mirror::Mirror(is::Repository &repository, is::TypeRegistry &types, Client &client, const QString &master,
               const is::Criteria &criteria, QObject *parent)
    : QObject(parent), m_repository(repository), m_types(types), m_client(client), m_master(master),
      m_criteria(criteria)
{
}

Mirror::~Mirror() = default;

void Mirror::start()
{
    m_dictionary = std::make_unique<is::Dictionary>(&m_client);
    m_receiver = std::make_unique<is::Receiver>(m_dictionary.get());
    m_receiver->setCallback([this](const is::Event &e) { onEvent(e); });
    connect(
        m_receiver.get(), &is::Receiver::subscriptionChanged, this,
        [this](int, const Status &status) {
            if (!status.isOk()) {
                m_stats.synchronised = false;
                report(QStringLiteral("not connected to the master (%1); the copy is kept and resynchronised "
                                      "when the master is back")
                           .arg(status.toString()));
            }
        });
    m_receiver->subscribeWithSnapshot(m_master, m_criteria, true);
}

void Mirror::report(const QString &what)
{
    qCWarning(lcMirror, "%s (mirror of %s): %s", qPrintable(m_repository.serverName()), qPrintable(m_master),
              qPrintable(what));
}

bool Mirror::mergeMasterTypes()
{
    const is::TypeRegistry &theirs = m_dictionary->types();
    QList<is::TypeInfo> all, fresh;
    for (const QString &name : theirs.typeNames()) {
        const is::TypeInfo t = theirs.type(name);
        all << t;
        if (!m_types.contains(name))
            fresh << t;
    }
    // A type both know with different layouts keeps ours: the master's objects are converted.
    if (const Status st = is::declareNewTypes(m_types, fresh); !st.isOk()) {
        report(QStringLiteral("cannot take the master's types: %1").arg(st.message()));
        return false;
    }
    m_evolution = std::make_unique<is::Evolution>(m_types, is::Layouts::of(theirs));
    for (const QString &line : m_evolution->changes()) {
        if (!m_evolutionReported.contains(line))
            report(line + QStringLiteral(" (the master's objects are converted)"));
    }
    m_evolutionReported = m_evolution->changes();
    if (!m_evolution->status().isOk())
        report(m_evolution->status().message());
    if (!fresh.isEmpty())
        Q_EMIT typesAdded(fresh);
    return true;
}

void Mirror::fetchTypesAndReplay()
{
    m_fetching = true;
    QPointer<Mirror> guard(this);
    m_dictionary->fetchTypes(m_master, [this, guard](const is::Status &st) {
        if (!guard)
            return;
        if (!st.isOk())
            report(QStringLiteral("cannot fetch the master's types: %1").arg(st.toString()));
        else
            mergeMasterTypes();
        m_fetching = false;
        std::vector<is::Event> held;
        held.swap(m_held);
        for (const is::Event &e : held)
            if (!apply(e, false)) // a type still unknown is an error now, not another fetch
                ++m_stats.errors;
    });
}

void Mirror::onEvent(const is::Event &event)
{
    if (m_fetching) {
        m_held.push_back(event);
        return;
    }
    if (!apply(event, true) && !m_fetching)
        ++m_stats.errors;
}

bool Mirror::apply(const is::Event &event, bool mayFetchTypes)
{
    switch (event.kind()) {
    case is::Event::Kind::SnapshotBegin:
        // The receiver fetched the master's types just before subscribing.
        mergeMasterTypes();
        m_inSnapshot = true;
        m_seen.clear();
        return true;
    case is::Event::Kind::SnapshotEnd: {
        // What the master did not send no longer exists there.
        qsizetype removed = 0, kept = 0;
        for (const is::ObjectInfo &o : m_repository.list()) {
            if (o.name == StatisticsObject)
                continue;
            if (m_seen.contains(o.name)) {
                ++kept;
                continue;
            }
            is::Change gone;
            gone.kind = is::Change::Kind::Removed;
            gone.name = m_repository.serverName() + QLatin1Char('.') + o.name;
            gone.time = is::Time::currentTime();
            if (m_repository.mirror(gone).isOk())
                ++removed;
        }
        m_inSnapshot = false;
        m_seen.clear();
        ++m_stats.snapshots;
        m_stats.synchronised = true;
        const qsizetype objects = kept;
        report(QStringLiteral("%1 with %2: %3 objects%4")
                   .arg(m_stats.snapshots == 1 ? QStringLiteral("synchronised")
                                               : QStringLiteral("resynchronised"),
                        m_master)
                   .arg(objects)
                   .arg(removed ? QStringLiteral(", %1 removed that the master no longer has").arg(removed)
                                : QString()));
        Q_EMIT synchronised(objects);
        return true;
    }
    case is::Event::Kind::History:
        // Only for receivers that asked for history first (Receiver::setHistoryFirst), which a
        // mirror never does: nothing to copy.
        return true;
    case is::Event::Kind::Created:
    case is::Event::Kind::Updated:
    case is::Event::Kind::Removed:
        break;
    }
    const QString bare = QString::fromUtf8(event.objectNameUtf8());
    if (bare == StatisticsObject)
        return true;
    is::Change c;
    c.name = m_repository.serverName() + QLatin1Char('.') + bare;
    c.time = event.time();
    QString error;
    if (event.kind() == is::Event::Kind::Removed) {
        c.kind = is::Change::Kind::Removed;
        const Status r = m_repository.mirror(c);
        ++m_stats.applied;
        return r.isOk() || r.code() == Status::Code::NotFound;
    }
    if (m_inSnapshot)
        m_seen.insert(bare);
    c.kind = event.kind() == is::Event::Kind::Created ? is::Change::Kind::Created : is::Change::Kind::Updated;
    const Status decoded = m_evolution ? m_evolution->decode(event.encodedValue(), c.object)
                                       : is::decode(event.encodedValue(), m_types, c.object);
    if (const Status &st = decoded; !st.isOk()) {
        error = st.message();
        if (mayFetchTypes && !m_types.contains(event.typeName())) {
            // A type the master declared after our last fetch: hold this and what follows.
            m_held.push_back(event);
            if (!m_fetching)
                fetchTypesAndReplay();
            return false;
        }
        report(QStringLiteral("cannot copy %1: %2").arg(event.name(), error));
        return false;
    }
    if (const Status st = m_repository.mirror(c); !st.isOk()) {
        report(QStringLiteral("cannot copy %1: %2").arg(event.name(), st.message()));
        return false;
    }
    ++m_stats.applied;
    return true;
}

} // namespace dialog::isd
