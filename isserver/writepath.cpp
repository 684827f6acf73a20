#include "writepath.h"

#include "persistence.h"
#include "replies.h"
#include "statistics.h"
#include "writertracker.h"

#include "dialog/client.h"
#include "dialog/is/codec.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"
#include "dialog/security.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcWrite, "dialog.is.write")
Q_LOGGING_CATEGORY(lcAccess, "dialog.is.access")

namespace dialog::isd {

namespace {
QString operationName(WritePath::Op op)
{
    switch (op) {
    case WritePath::Op::Insert:
        return QStringLiteral("insert");
    case WritePath::Op::Update:
        return QStringLiteral("update");
    case WritePath::Op::Upsert:
        return QStringLiteral("upsert");
    case WritePath::Op::Remove:
        break;
    }
    return QStringLiteral("remove");
}
} // namespace

WritePath::WritePath(const ServerOptions &options, is::Repository &repository, is::TypeRegistry &types,
                     Client &client, WriterTracker &writers, Persistence *persistence, QObject *parent)
    : QObject(parent), m_options(options), m_repository(repository), m_types(types), m_client(client),
      m_writers(writers), m_persistence(persistence), m_quota(options.quota)
{
}

WritePath::~WritePath() = default;

bool WritePath::start(QString *error)
{
    if (m_options.access.audit) {
        AuditTrail::Options trail = m_options.access.trail;
        if (!m_client.options().secretFile.isEmpty()) { // keys the chain
            if (const Status st = security::readSecretFile(m_client.options().secretFile, &trail.secret);
                !st.isOk()) {
                *error = st.message();
                return false;
            }
        }
        m_audit = std::make_unique<AuditTrail>(trail);
        if (const Status st = m_audit->open(); !st.isOk()) {
            *error = st.message();
            return false;
        }
    }
    for (const is::StoredObject &so : m_repository.objects())
        m_quota.written(QString(), QString(), so.name, is::encode(so.object).size());
    return true;
}

QString WritePath::quotaKey(const QString &name) const
{
    // Requests may name an object with or without the "Server." prefix; the repository does not.
    const QString prefix = m_options.name + QLatin1Char('.');
    return name.startsWith(prefix) ? name.mid(prefix.size()) : name;
}

void WritePath::write(const Request &request, Op op, const QString &name, const QByteArray &value)
{
    if (quotaKey(name) == ServerStatistics::objectName()) {
        replyStatus(m_client, request, Status::Code::InvalidName,
                    QStringLiteral("%1.%2 is written by the server only")
                        .arg(m_options.name, ServerStatistics::objectName()));
        return;
    }
    if (!permitWrite(request, op, name))
        return;
    is::Object obj;
    if (op != Op::Remove) {
        const QString refused =
            m_quota.check(request.origin(), request.originAddress(), quotaKey(name), value.size());
        if (!refused.isEmpty()) {
            replyStatus(m_client, request, Status::Code::QuotaExceeded, refused);
            return;
        }
        // The one decoding of the value: the object keeps these bytes for every consumer of the change.
        if (const Status decoded = is::decode(value, m_types, obj); !decoded.isOk()) {
            replyStatus(m_client, request, decoded.code(), decoded.message());
            return;
        }
    }
    QString error;
    const Status::Code res =
        apply(request.origin(), request.originAddress(), op, name, obj, value.size(), &error);
    acknowledge(request, res, error);
}

Status::Code WritePath::apply(const QString &origin, const QString &address, Op op, const QString &name,
                              const is::Object &obj, qint64 bytes, QString *error)
{
    const QString key = quotaKey(name);
    const Status res = op == Op::Insert   ? m_repository.insert(name, obj)
                       : op == Op::Update ? m_repository.update(name, obj)
                       : op == Op::Upsert ? m_repository.upsert(name, obj)
                                          : m_repository.remove(name);
    *error = res.message();
    if (!res.isOk())
        return res.code();
    QString object;
    m_repository.objectName(name, &object);
    if (op == Op::Remove) {
        m_quota.removed(key);
        m_writers.removed(object);
    } else {
        m_quota.written(origin, address, key, bytes);
        if (m_history) // appended to by the repository's listener, in this thread, with the change
            m_quota.historyHeld(key, m_history->bytesOf(object));
        m_writers.written(object, origin);
    }
    return res.code();
}

void WritePath::acknowledge(const Request &request, Status::Code code, const QString &error)
{
    if (!m_persistence || !m_persistence->holdsAcknowledgements()) {
        replyStatus(m_client, request, code, error);
        return;
    }
    // Acknowledged only once its journal record is written (and synced, by the policy); the
    // replies of one batch keep their order.
    m_persistence->afterJournal(code == Status::Code::Ok, [this, request, code, error](bool ok,
                                                                                       const QString &why) {
        if (ok || code != Status::Code::Ok)
            replyStatus(m_client, request, code, error);
        else
            replyStatus(m_client, request, Status::Code::StorageError,
                        QStringLiteral("not journaled, so not acknowledged: %1 (the change is held in memory "
                                       "only and is lost if the server dies before its next checkpoint)")
                            .arg(why));
    });
}

bool WritePath::permitWrite(const Request &request, Op op, const QString &name)
{
    if (!m_audit && m_options.access.access.isEmpty())
        return true;
    const QString object = m_options.name + QLatin1Char('.') + quotaKey(name);
    const Origin origin{request.origin(), request.originUser(), request.originHost(),
                        request.originAddress()};
    const AccessList::Decision d = m_options.access.access.check(AccessList::Kind::IsWrite, object, origin);
    const QString operation = operationName(op);
    if (m_audit) {
        AuditRecord r;
        r.timeMs = QDateTime::currentMSecsSinceEpoch();
        r.daemon = m_options.client.name;
        r.kind = AccessList::Kind::IsWrite;
        r.name = object;
        r.operation = operation;
        r.origin = origin;
        r.allowed = d.allowed;
        r.because = m_options.access.access.isEmpty() ? QString() : d.because;
        m_audit->record(r);
    }
    if (d.allowed)
        return true;
    ++m_accessRefused;
    qCWarning(lcAccess).noquote() << operation << object << "from" << origin.process << "user" << origin.user
                                  << "host" << origin.host << origin.address << "refused by" << d.because
                                  << "of the access list";
    replyStatus(
        m_client, request, Status::Code::PermissionDenied,
        QStringLiteral("the access list (%1) of IS server %2 does not let %3 (user '%4', host '%5') %6 %7")
            .arg(d.because, m_options.name, origin.process, origin.user, origin.host, operation, object));
    return false;
}

void WritePath::declareTypes(const Request &request, const QByteArray &typesJson)
{
    const QJsonDocument doc = QJsonDocument::fromJson(typesJson);
    QList<is::TypeInfo> types;
    const Status read = doc.isArray() ? is::typesFromJson(doc.array(), &types)
                                      : Status(Status::Code::BadRequest, QStringLiteral("types are not a JSON array"));
    if (!read.isOk()) {
        replyStatus(m_client, request, read.code(), read.message());
        return;
    }
    QList<is::TypeInfo> fresh;
    for (const is::TypeInfo &t : std::as_const(types))
        if (!m_types.contains(t.name()))
            fresh << t;
    // Every declared type stays in memory and in the checkpoint: their number is bounded.
    if (const QString refused = m_quota.checkTypes(m_types.typeNames().size(), fresh.size());
        !refused.isEmpty()) {
        replyStatus(m_client, request, Status::Code::QuotaExceeded, refused);
        return;
    }
    if (const Status merged = is::mergeTypes(m_types, types); !merged.isOk()) {
        replyStatus(m_client, request, merged.code(), merged.message());
        return;
    }
    QString error;
    if (!fresh.isEmpty()) {
        emit typesDeclared(fresh);
        if (m_persistence && !m_persistence->addDeclaredTypes(fresh, &error)) {
            qCWarning(lcWrite, "%s: %s", qPrintable(m_options.name), qPrintable(error));
            replyStatus(m_client, request, Status::Code::ServerError, error);
            return;
        }
    }
    replyStatus(m_client, request, Status::Code::Ok);
}

} // namespace dialog::isd
