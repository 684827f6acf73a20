#include "reads.h"
#include "replies.h"
#include "scanbudget.h"
#include "writertracker.h"

#include "dialog/client.h"
#include "dialog/handoff.h"
#include "dialog/is/codec.h"
#include "dialog/is/history.h"
#include "dialog/is/protocol.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QJsonDocument>
#include <QThreadPool>

namespace dialog::isd {

using is::protocol::EntryMessage;
using is::protocol::ReplyMessage;
using is::protocol::RequestMessage;

namespace {
EntryMessage entry(const WriterTracker &writers, const QString &name, const QString &type, is::Time t,
                   quint64 n)
{
    EntryMessage e;
    e.name = name;
    e.type = type;
    e.time = t;
    e.updateCount = n;
    e.staleness = writers.staleness(name, type, t);
    return e;
}
} // namespace

Reads::Reads(const QString &serverName, const is::Repository &repository, const is::TypeRegistry &types,
             Client &client, QThreadPool &pool, const WriterTracker &writers, is::HistoryStore *history)
    : m_serverName(serverName), m_repository(repository), m_types(types), m_client(client), m_pool(pool),
      m_writers(writers), m_history(history)
{
}

void Reads::read(const Request &request, const RequestMessage &r)
{
    handoff::startIn(m_pool, [this, request, r] {
        ReplyMessage out;
        if (r.op == RequestMessage::Op::Get) {
            is::Object obj;
            is::ObjectInfo info;
            const Status read = m_repository.get(r.name, &obj, r.type, &info);
            out.code = read.code();
            out.error = read.message();
            if (out.code == Status::Code::Ok) {
                out.entries << entry(m_writers, info.name, info.typeName, info.time, info.updateCount);
                out.entries.last().value = is::encode(obj); // the bytes it was written with
            }
        } else if (r.op == RequestMessage::Op::List) {
            list(r, &out);
        } else {
            out.typesJson = QJsonDocument(is::typesToJson(m_types)).toJson(QJsonDocument::Compact);
        }
        QByteArray bytes = serializeReply(out);
        if (bytes.size() > m_client.options().maxMessageSize) {
            ReplyMessage tooBig;
            tooBig.code = Status::Code::BadRequest;
            tooBig.error =
                QStringLiteral("the answer (%1 bytes) exceeds the maximum message size; narrow the criteria")
                    .arg(bytes.size());
            bytes = serializeReply(tooBig);
        }
        m_client.reply(request, bytes);
    });
}

void Reads::list(const RequestMessage &r, ReplyMessage *out) const
{
    const is::Criteria &c = r.criteria;
    if (!c.isValid()) {
        out->code = Status::Code::BadRequest;
        out->error = c.errorString();
        return;
    }
    ScanBudget budget(m_scanBudgetMs);
    bool complete = true;
    if (r.withValues && !r.staleOnly) {
        for (const is::StoredObject &o : m_repository.objects(c, budget.check(c), &complete)) {
            out->entries << entry(m_writers, o.name, o.object.typeName(), o.time, o.updateCount);
            out->entries.last().value = is::encode(o.object);
        }
    } else {
        for (const is::ObjectInfo &o : m_repository.list(c, budget.check(c), &complete))
            if (!r.staleOnly || m_writers.staleness(o.name, o.typeName, o.time).isStale())
                out->entries << entry(m_writers, o.name, o.typeName, o.time, o.updateCount);
    }
    if (budget.refused(c, complete)) {
        out->entries.clear();
        out->code = Status::Code::BadRequest;
        out->error = budget.errorString();
    }
}

void Reads::readHistory(const Request &request, const RequestMessage &r, const QString &archive)
{
    handoff::startIn(m_pool, [this, request, r, archive] {
        ReplyMessage out;
        out.archiveService = archive;
        QString name;
        if (const Status bad = m_repository.objectName(r.name, &name); !bad.isOk()) {
            replyStatus(m_client, request, bad.code(), bad.message());
            return;
        }
        Status st =
            m_history
                ? m_history->query(name, r.attribute, is::Time(r.fromUs), is::Time(r.toUs),
                                   qsizetype(r.maxPoints), &out.history)
                : Status(Status::Code::NotFound,
                         QStringLiteral("IS server %1 keeps no history (--history 0)").arg(m_serverName));
        if (st.code() == Status::Code::NotFound) {
            // An object without numeric values held (yet) has an empty history; a missing one has none.
            is::ObjectInfo info;
            is::Object obj;
            if (m_repository.get(name, &obj, {}, &info).isOk() && m_history) {
                out.history.typeName = info.typeName;
                st = Status();
            }
        }
        out.code = st.code();
        out.error = st.message();
        m_client.reply(request, serializeReply(out));
    });
}

} // namespace dialog::isd
