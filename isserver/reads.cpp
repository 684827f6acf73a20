#include "reads.h"
#include "replies.h"
#include "writertracker.h"

#include "dialog/client.h"
#include "dialog/handoff.h"
#include "dialog/is/codec.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"
#include "is/protocol_p.h"

#include <QJsonDocument>
#include <QThreadPool>

namespace dialog::isd {

using namespace is::protocol;

namespace {
/// One entry of a GET or LIST reply; @p obj null for a list without values.
void fill(isproto::Entry *e, const WriterTracker &writers, const QString &name, const QString &type,
          is::Time t, quint64 n, const is::Object *obj)
{
    e->set_name(name.toStdString());
    e->set_type(type.toStdString());
    e->set_time_us(t.microsecondsSinceEpoch());
    e->set_update_count(n);
    const is::Staleness st = writers.staleness(name, type, t);
    e->set_writer_lost(st.writerLost);
    e->set_overdue(st.overdue);
    e->set_age_us(st.ageUs);
    e->set_expected_interval_s(st.expectedIntervalS);
    if (obj) {
        const QByteArray v = is::encode(*obj); // the bytes it was written with, not a new encoding
        e->set_value(v.constData(), size_t(v.size()));
    }
}
} // namespace

Reads::Reads(const QString &serverName, const is::Repository &repository, const is::TypeRegistry &types,
             Client &client, QThreadPool &pool, const WriterTracker &writers, is::HistoryStore *history)
    : m_serverName(serverName), m_repository(repository), m_types(types), m_client(client), m_pool(pool),
      m_writers(writers), m_history(history)
{
}

void Reads::read(const Request &request, const QByteArray &data)
{
    handoff::startIn(m_pool, [this, request, data] {
        isproto::Request r;
        r.ParseFromArray(data.constData(), int(data.size()));
        isproto::Reply out;
        if (r.op() == isproto::Request::GET) {
            is::Object obj;
            is::ObjectInfo info;
            QString error;
            const auto res = m_repository.get(QString::fromStdString(r.name()), &obj,
                                              QString::fromStdString(r.type()), &error, &info);
            out.set_code(quint32(res));
            out.set_error(error.toStdString());
            if (res == is::Repository::Result::Ok)
                fill(out.add_entries(), m_writers, info.name, info.typeName, info.time, info.updateCount,
                     &obj);
        } else if (r.op() == isproto::Request::LIST) {
            const is::Criteria c = fromProto(r.criteria());
            if (!c.isValid()) {
                out.set_code(quint32(Status::Code::BadRequest));
                out.set_error(c.errorString().toStdString());
            } else if (r.stale_only()) {
                for (const is::ObjectInfo &o : m_repository.list(c))
                    if (m_writers.staleness(o.name, o.typeName, o.time).isStale())
                        fill(out.add_entries(), m_writers, o.name, o.typeName, o.time, o.updateCount,
                             nullptr);
            } else if (r.with_values()) {
                for (const is::StoredObject &o : m_repository.objects(c))
                    fill(out.add_entries(), m_writers, o.name, o.object.typeName(), o.time, o.updateCount,
                         &o.object);
            } else {
                for (const is::ObjectInfo &o : m_repository.list(c))
                    fill(out.add_entries(), m_writers, o.name, o.typeName, o.time, o.updateCount, nullptr);
            }
        } else {
            out.set_types_json(
                QJsonDocument(is::typesToJson(m_types)).toJson(QJsonDocument::Compact).toStdString());
        }
        QByteArray bytes = serialize(out);
        if (bytes.size() > m_client.options().maxMessageSize) {
            isproto::Reply tooBig;
            tooBig.set_code(quint32(Status::Code::BadRequest));
            tooBig.set_error(
                QStringLiteral("the answer (%1 bytes) exceeds the maximum message size; narrow the criteria")
                    .arg(bytes.size())
                    .toStdString());
            bytes = serialize(tooBig);
        }
        m_client.reply(request, bytes);
    });
}

void Reads::readHistory(const Request &request, const QByteArray &data, const QString &archive)
{
    handoff::startIn(m_pool, [this, request, data, archive] {
        isproto::Request r;
        r.ParseFromArray(data.constData(), int(data.size()));
        isproto::Reply out;
        out.set_archive_service(archive.toStdString());
        QString error;
        const QString name = m_repository.objectName(QString::fromStdString(r.name()), &error);
        if (name.isEmpty()) {
            replyStatus(m_client, request, Status::Code::InvalidName, error);
            return;
        }
        is::History h;
        Status st =
            m_history
                ? m_history->query(name, QString::fromStdString(r.attribute()), is::Time(r.from_us()),
                                   is::Time(r.to_us()), qsizetype(r.max_points()), &h)
                : Status(Status::Code::NotFound,
                         QStringLiteral("IS server %1 keeps no history (--history 0)").arg(m_serverName));
        if (st.code() == Status::Code::NotFound) {
            // An object without numeric values held (yet) has an empty history; a missing one has none.
            is::ObjectInfo info;
            is::Object obj;
            if (m_repository.get(name, &obj, {}, nullptr, &info) == is::Repository::Result::Ok && m_history) {
                h.typeName = info.typeName;
                st = Status();
            }
        }
        out.set_code(quint32(st.code()));
        out.set_error(st.message().toStdString());
        toProto(h, &out);
        m_client.reply(request, serialize(out));
    });
}

} // namespace dialog::isd
