#include "isserver.h"
#include "alarms.h"
#include "summer.h"
#include "webserver.h"

#include "dialog/directory.h"
#include "dialog/handoff.h"
#include "dialog/message.h"

#include "dialog/is/checkpoint.h"
#include "dialog/is/codec.h"
#include "is/protocol_p.h"
#include "transport_p.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSaveFile>
#include <QTimer>
#include <cstdio>

Q_LOGGING_CATEGORY(lcAccess, "dialog.is.access")

namespace dialog::isd {

using namespace is::protocol;
using is::Status;

namespace {
const QString StatisticsType = QStringLiteral("ISServerStatistics");
const QString StatisticsObject = QStringLiteral("Statistics");

is::TypeInfo statisticsType()
{
    using is::AttributeInfo;
    using is::BasicType;
    is::TypeInfo t(StatisticsType, QStringLiteral("Figures of an IS server, updated every second"));
    t.setAttributes({
        AttributeInfo(QStringLiteral("objects"), BasicType::U64, QStringLiteral("Objects held")),
        AttributeInfo(QStringLiteral("changes"), BasicType::U64,
                      QStringLiteral("Creations, updates and removals since start")),
        AttributeInfo(QStringLiteral("changesPerSecond"), BasicType::Double,
                      QStringLiteral("Changes per second (last interval)")),
        AttributeInfo(QStringLiteral("deliveries"), BasicType::U64,
                      QStringLiteral("Notifications delivered to subscribers since start")),
        AttributeInfo(QStringLiteral("deliveriesPerSecond"), BasicType::Double,
                      QStringLiteral("Deliveries per second (last interval)")),
        AttributeInfo(QStringLiteral("subscribers"), BasicType::U32, QStringLiteral("Active subscriptions")),
        AttributeInfo(QStringLiteral("slowSubscribers"), BasicType::U32,
                      QStringLiteral("Subscriptions at priority 0 (served from their own queue)")),
        AttributeInfo(QStringLiteral("dropped"), BasicType::U64,
                      QStringLiteral("Notifications dropped for slow subscribers since start")),
        AttributeInfo(QStringLiteral("requests"), BasicType::U64,
                      QStringLiteral("Requests served since start")),
        AttributeInfo(QStringLiteral("lastCheckpoint"), BasicType::Time,
                      QStringLiteral("Time of the last checkpoint written")),
        AttributeInfo(QStringLiteral("checkpointErrors"), BasicType::U64,
                      QStringLiteral("Checkpoints that could not be written")),
        AttributeInfo(QStringLiteral("subscriberNames"), BasicType::String,
                      QStringLiteral("Subscribing process and channel"), true),
        AttributeInfo(QStringLiteral("subscriberPriorities"), BasicType::U32,
                      QStringLiteral("Current priority of each subscriber"), true),
        AttributeInfo(QStringLiteral("subscriberDelivered"), BasicType::U64,
                      QStringLiteral("Notifications delivered to each subscriber"), true),
        AttributeInfo(QStringLiteral("subscriberDropped"), BasicType::U64,
                      QStringLiteral("Notifications dropped for each subscriber"), true),
        AttributeInfo(QStringLiteral("quotaRefused"), BasicType::U64,
                      QStringLiteral("Writes refused for a quota since start")),
        AttributeInfo(QStringLiteral("accessRefused"), BasicType::U64,
                      QStringLiteral("Writes refused by the access list since start")),
        AttributeInfo(QStringLiteral("journalErrors"), BasicType::U64,
                      QStringLiteral("Writes refused since start because their journal record could not "
                                     "be written")),
    });
    return t;
}
} // namespace

IsServer::IsServer(const ServerOptions &options, QObject *parent) : QObject(parent), m_options(options)
{
    m_pool.setMaxThreadCount(qMax(1, options.threads));
    m_clock.start();
}

IsServer::~IsServer()
{
    m_summers.clear();
    m_alarms.reset();
    m_web.reset(); // its dictionary and WebSocket clients use the client and the repository
    m_pushers.clear();
    m_pushReceiver.reset();
    m_mirror.reset(); // it unsubscribes through the client
    m_historyDictionary.reset();
    // The client first: its sender threads may still call back into the dispatcher.
    m_client.reset();
    handoff::waitForDone(m_pool);
    m_dispatcher.reset();
}

bool IsServer::start(QString *error)
{
    if (!Client::isValidName(is::protocol::serviceName(m_options.name)) ||
        m_options.name.contains(QLatin1Char('.'))) {
        *error = QStringLiteral("invalid server name '%1' (not empty, no '.')").arg(m_options.name);
        return false;
    }
    if (!m_options.typesDir.isEmpty() && !m_types.loadDirectory(m_options.typesDir, error))
        return false;
    if (!m_types.contains(StatisticsType) && !m_types.declareType(statisticsType(), error))
        return false;
    m_repository = std::make_unique<is::Repository>(m_options.name, m_types);
    if (m_options.access.audit) {
        m_audit = std::make_unique<AuditTrail>(m_options.access.trail);
        if (!m_audit->open(error))
            return false;
    }
    is::Criteria mirrorCriteria;
    if (!m_options.mirrorCriteria.isEmpty()) {
        mirrorCriteria = is::Criteria(m_options.mirrorCriteria);
        if (!mirrorCriteria.isValid()) {
            *error = QStringLiteral("invalid --mirror-criteria '%1': %2")
                         .arg(m_options.mirrorCriteria, mirrorCriteria.errorString());
            return false;
        }
    }
    if (!m_options.metricsCriteria.isEmpty() && !is::Criteria(m_options.metricsCriteria).isValid()) {
        *error = QStringLiteral("invalid --metrics-criteria '%1': %2")
                     .arg(m_options.metricsCriteria, is::Criteria(m_options.metricsCriteria).errorString());
        return false;
    }
    if (!m_options.mirrorOf.isEmpty() &&
        !Client::isValidName(is::protocol::serviceName(m_options.mirrorOf))) {
        *error = QStringLiteral("invalid --mirror-of server name '%1'").arg(m_options.mirrorOf);
        return false;
    }

    // Types declared at run time are kept next to the checkpoint (its objects need them).
    if (!m_options.dataDir.isEmpty()) {
        QFile f(typesFile());
        if (f.exists()) {
            QList<is::TypeInfo> declared;
            QString why;
            QJsonParseError pe;
            const QJsonDocument doc =
                f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll(), &pe) : QJsonDocument();
            if (!doc.isArray() || !is::typesFromJson(doc.array(), &declared, &why) ||
                !is::mergeTypes(m_types, declared, &why)) {
                *error = QStringLiteral("cannot load the declared types %1: %2")
                             .arg(f.fileName(), why.isEmpty() ? pe.errorString() : why);
                return false;
            }
            m_declared = declared;
        }
    }

    if (!m_options.dataDir.isEmpty()) {
        if (!QDir().mkpath(m_options.dataDir)) {
            *error = QStringLiteral("cannot create the data directory %1").arg(m_options.dataDir);
            return false;
        }
        is::Checkpoint::LoadOptions lo;
        lo.fallbackToPrevious = true;
        lo.renameCorrupt = true;
        lo.skipObjects = {StatisticsObject}; // made afresh every second; its type may have grown
        is::Checkpoint::LoadResult lr;
        const Status loaded = is::Checkpoint::load(*m_repository, m_options.dataDir, lo, &lr);
        if (!loaded.isOk()) {
            *error = QStringLiteral("cannot load the checkpoint: %1 (no checkpoint is deleted; move the "
                                    "file away to start empty)")
                         .arg(loaded.message());
            return false;
        }
        if (lr.status == is::Checkpoint::LoadStatus::LoadedFromPrevious)
            std::fprintf(
                stderr,
                "dialog-isserver %s: the latest checkpoint is unusable (%s)%s; loaded %lld objects from %s\n",
                qPrintable(m_options.name), qPrintable(lr.latestError),
                lr.corruptRenamed.isEmpty() ? ""
                                            : qPrintable(QStringLiteral(", kept as ") + lr.corruptRenamed),
                qlonglong(lr.objects), qPrintable(lr.file));
        else if (lr.status == is::Checkpoint::LoadStatus::Loaded)
            std::fprintf(stderr, "dialog-isserver %s: loaded %lld objects from %s\n",
                         qPrintable(m_options.name), qlonglong(lr.objects), qPrintable(lr.file));
        std::fflush(stderr);
        if (!startJournal(error))
            return false;
    }

    if (!startHistory(error))
        return false;
    // What a checkpoint brought counts to the server's total, owned by nobody.
    m_quota = std::make_unique<Quota>(m_options.quota);
    for (const is::StoredObject &so : m_repository->objects())
        m_quota->written(QString(), so.name, is::encode(so.object).size());

    DispatcherOptions dopt;
    dopt.workers = m_options.threads;
    dopt.queueRecords = m_options.queueRecords;
    dopt.slowGraceMs = m_options.slowGraceMs;
    m_dispatcher = std::make_unique<Dispatcher>(*m_repository, dopt);
    m_repository->addListener([this](const is::Change &c) {
        m_dispatcher->publish(c);
        scheduleFlush();
    });

    if (!startSums(error) || !startAlarms(error))
        return false;

    m_client = std::make_unique<Client>(m_options.client);
    connect(m_client.get(), &Client::requestReceived, this, &IsServer::onRequest);
    if (!m_client->start()) {
        *error = m_client->errorString();
        return false;
    }
    // Who is lost: the objects they wrote are stale and leave the sums.
    m_client->subscribe(directoryServiceName(), this,
                        [this, pages = std::make_shared<DirectoryAssembler>()](const Message &m) {
                            if (const auto dir = pages->add(m.data())) // a large directory comes in pages
                                onDirectory(*dir);
                        });
    Service *announce = m_client->publish(is::protocol::serviceName(m_options.name));
    QJsonObject announcement{
        {QStringLiteral("server"), m_options.name},
        {QStringLiteral("started"), QString::number(is::Time::currentTime().microsecondsSinceEpoch())},
        {QStringLiteral("pid"), QCoreApplication::applicationPid()}};
    if (!m_options.mirrorOf.isEmpty())
        announcement.insert(QStringLiteral("mirrorOf"), m_options.mirrorOf);
    if (m_options.mirrorListenPort >= 0)
        announcement.insert(QStringLiteral("mirrorOf"), m_options.mirrorMaster);
    announce->update(QJsonDocument(announcement).toJson(QJsonDocument::Compact));

    if (!m_options.mirrorOf.isEmpty()) {
        m_mirror =
            std::make_unique<Mirror>(*m_repository, m_types, *m_client, m_options.mirrorOf, mirrorCriteria);
        connect(m_mirror.get(), &Mirror::typesAdded, this, [this](const QList<is::TypeInfo> &types) {
            m_declared += types; // a checkpoint of the copy needs them to be read back
            QString why;
            if (!saveDeclaredTypes(&why))
                std::fprintf(stderr, "dialog-isserver %s: %s\n", qPrintable(m_options.name), qPrintable(why));
        });
        connect(m_mirror.get(), &Mirror::synchronised, this, &IsServer::copyMasterHistory);
        m_mirror->start();
    }

    if (!startPush(error))
        return false;

    m_statsTimer = new QTimer(this);
    connect(m_statsTimer, &QTimer::timeout, this, &IsServer::publishStatistics);
    m_statsTimer->start(1000);
    publishStatistics();
    if (!m_options.dataDir.isEmpty() && m_options.checkpointS > 0) {
        m_checkpointTimer = new QTimer(this);
        connect(m_checkpointTimer, &QTimer::timeout, this, &IsServer::checkpoint);
        m_checkpointTimer->start(m_options.checkpointS * 1000);
    }
    if (m_options.httpPort >= 0) {
        m_web = std::make_unique<WebServer>(*this);
        if (!m_web->listen(error)) {
            m_web.reset();
            return false;
        }
    }
    return true;
}

void IsServer::scheduleFlush()
{
    if (m_flushScheduled)
        return;
    m_flushScheduled = true;
    // After the requests of the current batch: one hand-over to the workers for all of them.
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_flushScheduled = false;
            m_dispatcher->flush();
        },
        Qt::QueuedConnection);
}

void IsServer::reply(const Request &request, const QByteArray &data)
{
    m_client->reply(request, data);
}

void IsServer::replyStatus(const Request &request, Status::Code code, const QString &error)
{
    isproto::Reply r;
    r.set_code(quint32(code));
    if (!error.isEmpty())
        r.set_error(error.toStdString());
    reply(request, serialize(r));
}

void IsServer::onRequest(const Request &request)
{
    ++m_requests;
    isproto::Request r;
    const QByteArray data = request.data();
    if (!r.ParseFromArray(data.constData(), int(data.size()))) {
        replyStatus(request, Status::Code::BadRequest, QStringLiteral("malformed IS request"));
        return;
    }
    switch (r.op()) {
    case isproto::Request::INSERT:
    case isproto::Request::UPDATE:
    case isproto::Request::UPSERT:
    case isproto::Request::REMOVE:
        if (refuseIfMirror(request))
            return;
        write(request, r.op(), QString::fromStdString(r.name()), QByteArray::fromStdString(r.value()));
        return;
    case isproto::Request::GET:
    case isproto::Request::LIST:
    case isproto::Request::TYPES:
        read(request, data);
        return;
    case isproto::Request::HISTORY:
        readHistory(request, data);
        return;
    case isproto::Request::DECLARE_TYPES: {
        if (refuseIfMirror(request))
            return;
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(r.types_json()));
        QList<is::TypeInfo> types;
        QString error;
        if (!doc.isArray() || !is::typesFromJson(doc.array(), &types, &error)) {
            replyStatus(request, Status::Code::BadRequest,
                        error.isEmpty() ? QStringLiteral("types are not a JSON array") : error);
            return;
        }
        QList<is::TypeInfo> fresh;
        for (const is::TypeInfo &t : std::as_const(types))
            if (!m_types.contains(t.name()))
                fresh << t;
        if (!is::mergeTypes(m_types, types, &error)) {
            replyStatus(request, Status::Code::TypeMismatch, error);
            return;
        }
        if (!fresh.isEmpty()) {
            for (const auto &p : m_pushers)
                p->typesDeclared(fresh);
            m_declared += fresh;
            if (!saveDeclaredTypes(&error)) {
                replyStatus(request, Status::Code::ServerError, error);
                return;
            }
        }
        replyStatus(request, Status::Code::Ok);
        return;
    }
    case isproto::Request::SUBSCRIBE:
        subscribe(request, QString::fromStdString(r.channel()), fromProto(r.criteria()), r.with_values(),
                  r.snapshot(), QString::fromStdString(r.archive_service()), r.history_us());
        return;
    case isproto::Request::UNSUBSCRIBE:
        m_dispatcher->removeSubscriber(request.origin() + QLatin1Char('/') +
                                       QString::fromStdString(r.channel()));
        replyStatus(request, Status::Code::Ok);
        return;
    default:
        replyStatus(request, Status::Code::BadRequest,
                    QStringLiteral("unknown IS operation %1").arg(int(r.op())));
        return;
    }
}

bool IsServer::startPush(QString *error)
{
    push::Security security;
    {
        net::TransportOptions to;
        const ClientOptions &c = m_options.client;
        if (!net::applySecurity(c.secretFile, {c.tlsCert, c.tlsKey, c.tlsCa}, to, error))
            return false;
        security = {to.secret, to.tls};
    }
    if (m_options.mirrorListenPort >= 0) {
        m_pushReceiver =
            std::make_unique<PushReceiver>(*m_repository, m_types, m_options.mirrorMaster, security);
        connect(m_pushReceiver.get(), &PushReceiver::typesAdded, this,
                [this](const QList<is::TypeInfo> &types) {
                    m_declared += types; // a checkpoint of the copy needs them to be read back
                    QString why;
                    if (!saveDeclaredTypes(&why))
                        std::fprintf(stderr, "dialog-isserver %s: %s\n", qPrintable(m_options.name),
                                     qPrintable(why));
                });
        if (!m_pushReceiver->listen(m_options.mirrorListenAddress, quint16(m_options.mirrorListenPort),
                                    error))
            return false;
    }
    if (m_options.pushTo.isEmpty())
        return true;
    is::Criteria criteria;
    if (!m_options.pushCriteria.isEmpty()) {
        criteria = is::Criteria(m_options.pushCriteria);
        if (!criteria.isValid()) {
            *error = QStringLiteral("invalid --push-criteria '%1': %2")
                         .arg(m_options.pushCriteria, criteria.errorString());
            return false;
        }
    }
    for (const QString &target : std::as_const(m_options.pushTo)) {
        const qsizetype colon = target.lastIndexOf(QLatin1Char(':'));
        bool ok = false;
        const uint port = colon > 0 ? target.mid(colon + 1).toUInt(&ok) : 0;
        if (!ok || port < 1 || port > 65535) {
            *error = QStringLiteral("invalid --push-to '%1' (HOST:PORT)").arg(target);
            return false;
        }
        QString host = target.left(colon);
        if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
            host = host.mid(1, host.size() - 2);
        m_pushers.push_back(std::make_unique<PushSender>(*m_repository, host, quint16(port), criteria,
                                                         m_options.pushPingMs, security));
    }
    // Writes are applied in this thread, so the listener runs here too (see PushSender).
    m_repository->addListener([this](const is::Change &c) {
        for (const auto &p : m_pushers)
            p->change(c);
    });
    for (const auto &p : m_pushers)
        p->start();
    return true;
}

bool IsServer::refuseIfMirror(const Request &request)
{
    if (m_pushReceiver) {
        replyStatus(
            request, Status::Code::ReadOnly,
            QStringLiteral("IS server %1 is a read-only push mirror of %2 (pushed from another network); "
                           "write to %2 there")
                .arg(m_options.name, m_options.mirrorMaster));
        return true;
    }
    if (!m_mirror)
        return false;
    replyStatus(request, Status::Code::ReadOnly,
                QStringLiteral("IS server %1 is a read-only mirror of %2; write to %2")
                    .arg(m_options.name, m_options.mirrorOf));
    return true;
}

QString IsServer::quotaKey(const QString &name) const
{
    // Requests may name an object with or without the "Server." prefix; the repository does not.
    const QString prefix = m_options.name + QLatin1Char('.');
    return name.startsWith(prefix) ? name.mid(prefix.size()) : name;
}

void IsServer::write(const Request &request, int op, const QString &name, const QByteArray &value)
{
    QString error;
    is::Repository::Result res;
    if (name == StatisticsObject || name == m_options.name + QLatin1Char('.') + StatisticsObject) {
        replyStatus(
            request, Status::Code::InvalidName,
            QStringLiteral("%1.%2 is written by the server only").arg(m_options.name, StatisticsObject));
        return;
    }
    if (!permitWrite(request, op, name))
        return;
    if (op == isproto::Request::REMOVE) {
        res = m_repository->remove(name, &error);
        if (res == is::Repository::Result::Ok)
            m_quota->removed(quotaKey(name));
    } else {
        const QString refused = m_quota->check(request.origin(), quotaKey(name), value.size());
        if (!refused.isEmpty()) {
            replyStatus(request, Status::Code::QuotaExceeded, refused);
            return;
        }
        is::Object obj;
        if (const Status st = is::decode(value, m_types, obj); !st.isOk()) {
            replyStatus(request, st.code(), st.message());
            return;
        }
        res = op == isproto::Request::INSERT   ? m_repository->insert(name, obj, &error)
              : op == isproto::Request::UPDATE ? m_repository->update(name, obj, &error)
                                               : m_repository->upsert(name, obj, &error);
        if (res == is::Repository::Result::Ok)
            m_quota->written(request.origin(), quotaKey(name), value.size());
    }
    if (res == is::Repository::Result::Ok) {
        const QString object = m_repository->objectName(name);
        {
            QMutexLocker locker(&m_lostLock);
            m_writerLost.remove(object);
        }
        if (op == isproto::Request::REMOVE)
            m_writers.remove(object);
        else
            m_writers.insert(object, request.origin());
    }
    if (m_journal && (m_journal->hasPending() || !m_pendingReplies.isEmpty() || m_journalInFlight > 0)) {
        // Acknowledged only once its journal record is written (and synced, by the policy); the
        // replies of one batch keep their order.
        m_pendingReplies.append({request, res, error});
        if (m_options.journalSync == is::Journal::Sync::Always)
            commitJournal();
        else
            scheduleJournalCommit();
        return;
    }
    replyStatus(request, res, error);
}

bool IsServer::permitWrite(const Request &request, int op, const QString &name)
{
    if (!m_audit && m_options.access.access.isEmpty())
        return true;
    const QString object = m_options.name + QLatin1Char('.') + quotaKey(name);
    const Origin origin{request.origin(), request.originUser(), request.originHost(),
                        request.originAddress()};
    const AccessList::Decision d = m_options.access.access.check(AccessList::Kind::IsWrite, object, origin);
    const QString operation = op == isproto::Request::INSERT   ? QStringLiteral("insert")
                              : op == isproto::Request::UPDATE ? QStringLiteral("update")
                              : op == isproto::Request::UPSERT ? QStringLiteral("upsert")
                                                               : QStringLiteral("remove");
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
        request, Status::Code::PermissionDenied,
        QStringLiteral("the access list (%1) of IS server %2 does not let %3 (user '%4', host '%5') %6 %7")
            .arg(d.because, m_options.name, origin.process, origin.user, origin.host, operation, object));
    return false;
}

bool IsServer::startJournal(QString *error)
{
    Q_UNUSED(error); // a journal that cannot be written refuses writes, it does not stop the server
    if (!m_options.journal || !m_options.mirrorOf.isEmpty() || m_options.mirrorListenPort >= 0)
        return true;
    // The changes acknowledged since the checkpoint, on top of it. A damaged journal never stops
    // the server: what can be read is applied, the rest is said.
    const is::Journal::ReplayResult rr = is::Journal::replay(*m_repository, m_options.dataDir);
    for (const QString &problem : rr.problems)
        std::fprintf(stderr, "dialog-isserver %s: journal: %s\n", qPrintable(m_options.name),
                     qPrintable(problem));
    if (rr.segments > 0)
        std::fprintf(stderr,
                     "dialog-isserver %s: replayed %lld changes (%lld records) from %d journal segments\n",
                     qPrintable(m_options.name), qlonglong(rr.applied), qlonglong(rr.records), rr.segments);
    m_journal = std::make_unique<is::Journal>(m_options.dataDir, m_options.name, m_options.journalSync);
    QString why;
    if (m_journal->open(&why)) {
        std::fprintf(
            stderr, "dialog-isserver %s: journal %s (sync %s)\n", qPrintable(m_options.name),
            qPrintable(is::Journal::segmentPath(m_options.dataDir, m_options.name, m_journal->segment())),
            qPrintable(is::Journal::syncName(m_options.journalSync)));
    } else {
        // A full disk must not keep the server from serving reads; every write is refused (each
        // commit tries a new segment) until the journal can be written again.
        std::fprintf(stderr, "dialog-isserver %s: journal: %s; writes are refused until it can be written\n",
                     qPrintable(m_options.name), qPrintable(why));
        m_journalFailing = true;
    }
    std::fflush(stderr);
    m_repository->addListener([this](const is::Change &c) {
        if (c.name == StatisticsObject)
            return; // the server's own figures are made afresh at start
        m_journal->append(c);
        scheduleJournalCommit();
    });
    return true;
}

void IsServer::scheduleJournalCommit()
{
    if (m_journalCommitScheduled)
        return;
    m_journalCommitScheduled = true;
    // After the requests of the current batch: one write (and one fdatasync) for all of them.
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_journalCommitScheduled = false;
            commitJournal();
        },
        Qt::QueuedConnection);
}

void IsServer::commitJournal()
{
    if (!m_journal || (!m_journal->hasPending() && m_pendingReplies.isEmpty()))
        return;
    ++m_journalInFlight;
    // With --journal-sync batch the fdatasync runs on the journal's thread while this one goes on
    // with the next requests; the replies come back here, in order, once the records are durable.
    m_journal->commitAsync(
        this, [this, replies = std::exchange(m_pendingReplies, {})](bool ok, const QString &why) {
            --m_journalInFlight;
            journalCommitted(replies, ok, why);
        });
}

void IsServer::journalCommitted(const QList<PendingReply> &replies, bool ok, const QString &why)
{
    if (!ok) {
        quint64 refused = 0;
        for (const PendingReply &p : replies)
            refused += p.code == Status::Code::Ok;
        m_journalErrors.fetch_add(qMax<quint64>(refused, 1));
        if (!m_journalFailing)
            std::fprintf(stderr,
                         "dialog-isserver %s: journal append failed: %s; %llu writes refused (StorageError), "
                         "until the journal can be written again\n",
                         qPrintable(m_options.name), qPrintable(why), qulonglong(refused));
        std::fflush(stderr);
        m_journalFailing = true;
    } else if (m_journalFailing && !replies.isEmpty()) {
        m_journalFailing = false;
        std::fprintf(stderr,
                     "dialog-isserver %s: journal appends succeed again (%llu writes refused so far)\n",
                     qPrintable(m_options.name), qulonglong(m_journalErrors.load()));
        std::fflush(stderr);
    }
    for (const PendingReply &p : replies) {
        if (ok || p.code != Status::Code::Ok)
            replyStatus(p.request, p.code, p.error);
        else
            replyStatus(p.request, Status::Code::StorageError,
                        QStringLiteral("not journaled, so not acknowledged: %1 (the change is held in memory "
                                       "only and is lost if the server dies before its next checkpoint)")
                            .arg(why));
    }
}

void IsServer::read(const Request &request, const QByteArray &data)
{
    // Reads run on the worker pool; the repository and the registry are thread-safe, and so is
    // replying (it only queues a frame).
    handoff::startIn(m_pool, [this, request, data] {
        isproto::Request r;
        r.ParseFromArray(data.constData(), int(data.size()));
        isproto::Reply out;
        const auto fill = [this](isproto::Entry *e, const QString &name, const QString &type, is::Time t,
                                 quint64 n, const is::Object *obj) {
            e->set_name(name.toStdString());
            e->set_type(type.toStdString());
            e->set_time_us(t.microsecondsSinceEpoch());
            e->set_update_count(n);
            const is::Staleness st = staleness(name, type, t);
            e->set_writer_lost(st.writerLost);
            e->set_overdue(st.overdue);
            e->set_age_us(st.ageUs);
            e->set_expected_interval_s(st.expectedIntervalS);
            if (obj) {
                const QByteArray v = is::encode(*obj);
                e->set_value(v.constData(), size_t(v.size()));
            }
        };
        if (r.op() == isproto::Request::GET) {
            is::Object obj;
            is::ObjectInfo info;
            QString error;
            const auto res = m_repository->get(QString::fromStdString(r.name()), &obj,
                                               QString::fromStdString(r.type()), &error, &info);
            out.set_code(quint32(res));
            out.set_error(error.toStdString());
            if (res == is::Repository::Result::Ok)
                fill(out.add_entries(), info.name, info.typeName, info.time, info.updateCount, &obj);
        } else if (r.op() == isproto::Request::LIST) {
            const is::Criteria c = fromProto(r.criteria());
            if (!c.isValid()) {
                out.set_code(quint32(Status::Code::BadRequest));
                out.set_error(c.errorString().toStdString());
            } else if (r.stale_only()) {
                for (const is::ObjectInfo &o : m_repository->list(c))
                    if (staleness(o.name, o.typeName, o.time).isStale())
                        fill(out.add_entries(), o.name, o.typeName, o.time, o.updateCount, nullptr);
            } else if (r.with_values()) {
                for (const is::StoredObject &o : m_repository->objects(c))
                    fill(out.add_entries(), o.name, o.object.typeName(), o.time, o.updateCount, &o.object);
            } else {
                for (const is::ObjectInfo &o : m_repository->list(c))
                    fill(out.add_entries(), o.name, o.typeName, o.time, o.updateCount, nullptr);
            }
        } else {
            out.set_types_json(
                QJsonDocument(is::typesToJson(m_types)).toJson(QJsonDocument::Compact).toStdString());
        }
        QByteArray bytes = serialize(out);
        if (bytes.size() > m_client->options().maxMessageSize) {
            isproto::Reply tooBig;
            tooBig.set_code(quint32(Status::Code::BadRequest));
            tooBig.set_error(
                QStringLiteral("the answer (%1 bytes) exceeds the maximum message size; narrow the criteria")
                    .arg(bytes.size())
                    .toStdString());
            bytes = serialize(tooBig);
        }
        m_client->reply(request, bytes);
    });
}

void IsServer::subscribe(const Request &request, const QString &channel, const is::Criteria &criteria,
                         bool withValues, bool snapshot, const QString &archiveService, qint64 historyUs)
{
    if (!criteria.isValid()) {
        replyStatus(request, Status::Code::BadRequest, criteria.errorString());
        return;
    }
    StreamPtr stream = m_client->openStream(request, channel);
    if (!stream) {
        replyStatus(request, Status::Code::BadRequest,
                    QStringLiteral("invalid subscription channel '%1'").arg(channel));
        return;
    }
    auto s = std::make_shared<Subscriber>();
    s->origin = request.origin();
    s->channel = channel;
    s->key = request.origin() + QLatin1Char('/') + channel;
    s->stream = stream;
    s->criteria = criteria;
    s->withValues = withValues;
    s->archiveService = archiveService;
    // Taken here, in the thread applying the writes, so the snapshot and the changes that follow it
    // fit exactly.
    s->snapshot = snapshot;
    if (snapshot)
        s->snapshotObjects = m_repository->objects(criteria);
    if (historyUs > 0 && m_history)
        historyRecords(*s, historyUs);
    // Changes already handed to the workers before this point are not for this subscriber.
    m_dispatcher->flush();
    m_dispatcher->addSubscriber(s);
    replyStatus(request, Status::Code::Ok);
}

bool IsServer::startHistory(QString *error)
{
    if (m_options.historyCount <= 0)
        return true;
    m_history = std::make_unique<is::HistoryStore>(
        is::HistoryLimits{m_options.historyCount, m_options.historySeconds});
    if (!m_options.historyConfig.isEmpty()) {
        QFile f(m_options.historyConfig);
        QList<is::HistoryStore::Rule> rules;
        QString why;
        if (!f.open(QIODevice::ReadOnly)) {
            *error = QStringLiteral("cannot read --history-config %1: %2").arg(f.fileName(), f.errorString());
            return false;
        }
        if (!is::HistoryStore::parseRules(QString::fromUtf8(f.readAll()), m_history->defaults(), &rules,
                                          &why)) {
            *error = QStringLiteral("--history-config %1: %2").arg(f.fileName(), why);
            return false;
        }
        m_history->setRules(rules);
    }
    // In the writer's thread, after the change: one append to the object's ring.
    m_repository->addListener([h = m_history.get()](const is::Change &c) { h->record(c); });
    return true;
}

QString IsServer::archiveService() const
{
    if (!m_dispatcher)
        return {};
    for (const SubscriberPtr &s : m_dispatcher->subscribers())
        if (!s->archiveService.isEmpty() && !s->stream->isBroken())
            return s->archiveService;
    return {};
}

void IsServer::readHistory(const Request &request, const QByteArray &data)
{
    const QString archive = archiveService(); // the subscriber list is read here, not in the pool
    handoff::startIn(m_pool, [this, request, data, archive] {
        isproto::Request r;
        r.ParseFromArray(data.constData(), int(data.size()));
        isproto::Reply out;
        out.set_archive_service(archive.toStdString());
        QString error;
        const QString name = m_repository->objectName(QString::fromStdString(r.name()), &error);
        if (name.isEmpty()) {
            replyStatus(request, Status::Code::InvalidName, error);
            return;
        }
        is::History h;
        Status st =
            m_history
                ? m_history->query(name, QString::fromStdString(r.attribute()), is::Time(r.from_us()),
                                   is::Time(r.to_us()), qsizetype(r.max_points()), &h)
                : Status(Status::Code::NotFound,
                         QStringLiteral("IS server %1 keeps no history (--history 0)").arg(m_options.name));
        if (st.code() == Status::Code::NotFound) {
            // An object without numeric values held (yet) has an empty history; a missing one has none.
            is::ObjectInfo info;
            is::Object obj;
            if (m_repository->get(name, &obj, {}, nullptr, &info) == is::Repository::Result::Ok &&
                m_history) {
                h.typeName = info.typeName;
                st = Status();
            }
        }
        out.set_code(quint32(st.code()));
        out.set_error(st.message().toStdString());
        is::protocol::toProto(h, &out);
        m_client->reply(request, serialize(out));
    });
}

void IsServer::historyRecords(Subscriber &s, qint64 historyUs)
{
    const is::Time now = is::Time::currentTime();
    QByteArray chunk;
    int records = 0;
    for (const is::ObjectInfo &o : m_repository->list(s.criteria)) {
        is::History h;
        if (!m_history->query(o.name, {}, is::Time(now.microsecondsSinceEpoch() - historyUs), now, 0, &h)
                 .isOk())
            continue;
        isproto::Reply reply;
        is::protocol::toProto(h, &reply);
        is::protocol::appendRecord(chunk, is::protocol::HistoryRecord, o.name.toUtf8(), h.typeName.toUtf8(),
                                   h.oldest.microsecondsSinceEpoch(), serialize(reply));
        ++records;
        if (chunk.size() >= m_dispatcher->options().maxMessage)
            s.history.push_back({std::exchange(chunk, {}), std::exchange(records, 0)});
    }
    if (records > 0)
        s.history.push_back({chunk, records});
}

void IsServer::copyMasterHistory()
{
    if (!m_history)
        return;
    if (!m_historyDictionary) {
        m_historyDictionary = std::make_unique<is::Dictionary>(m_client.get());
        m_historyDictionary->setTimeout(30000);
    }
    const bool idle = m_historyToCopy.isEmpty();
    m_historyToCopy.clear();
    for (const is::ObjectInfo &o : m_repository->list())
        if (o.name != StatisticsObject)
            m_historyToCopy << o.name;
    if (idle)
        copyNextHistory();
}

void IsServer::copyNextHistory()
{
    // One request at a time: the copy goes in the background, the master serves it from its pool.
    if (m_historyToCopy.isEmpty())
        return;
    const QString name = m_historyToCopy.takeFirst();
    const is::Time until(is::Time::currentTime().microsecondsSinceEpoch() + 60LL * 1000000);
    m_historyDictionary->history(m_options.mirrorOf + QLatin1Char('.') + name, is::Time(0), until, 0,
                                 [this, name](const is::Status &s, const is::History &h) {
                                     is::Object prototype;
                                     if (s.isOk() &&
                                         m_repository->get(name, &prototype) == is::Repository::Result::Ok &&
                                         prototype.typeName() == h.typeName)
                                         m_history->restore(name, prototype, h);
                                     copyNextHistory();
                                 });
}

void IsServer::publishStatistics()
{
    const qint64 nowMs = m_clock.elapsed();
    const is::Repository::Statistics rs = m_repository->statistics();
    // The server's own statistics updates are not counted as changes.
    const quint64 changes = rs.inserts + rs.updates + rs.removes - m_statsPublished;
    const quint64 deliveries = m_dispatcher->deliveries();
    const double dt = qMax<qint64>(1, nowMs - m_lastStatsMs) / 1000.0;
    is::Object o = is::Object::create(m_types, StatisticsType);
    o.set<quint64>(QStringLiteral("objects"), quint64(rs.objects));
    o.set<quint64>(QStringLiteral("changes"), changes);
    o.set<double>(QStringLiteral("changesPerSecond"), m_lastStatsMs ? (changes - m_lastChanges) / dt : 0.0);
    o.set<quint64>(QStringLiteral("deliveries"), deliveries);
    o.set<double>(QStringLiteral("deliveriesPerSecond"),
                  m_lastStatsMs ? (deliveries - m_lastDeliveries) / dt : 0.0);
    o.set<quint64>(QStringLiteral("dropped"), m_dispatcher->drops());
    o.set<quint64>(QStringLiteral("requests"), m_requests);
    o.set<is::Time>(QStringLiteral("lastCheckpoint"), is::Time(m_lastCheckpointUs.load()));
    o.set<quint64>(QStringLiteral("checkpointErrors"), m_checkpointErrors.load());
    QList<QString> names;
    QList<quint32> prios;
    QList<quint64> delivered, dropped;
    quint32 slow = 0;
    for (const SubscriberPtr &s : m_dispatcher->subscribers()) {
        names << s->key;
        const int p = s->priority.load();
        prios << quint32(p);
        slow += p == 0;
        delivered << s->delivered.load();
        dropped << s->dropped.load();
    }
    o.set<quint32>(QStringLiteral("subscribers"), quint32(names.size()));
    o.set<quint32>(QStringLiteral("slowSubscribers"), slow);
    o.set(QStringLiteral("subscriberNames"), names);
    o.set(QStringLiteral("subscriberPriorities"), prios);
    o.set(QStringLiteral("subscriberDelivered"), delivered);
    o.set(QStringLiteral("subscriberDropped"), dropped);
    o.set<quint64>(QStringLiteral("quotaRefused"), m_quota->refused());
    o.set<quint64>(QStringLiteral("journalErrors"), m_journalErrors.load());
    o.set<quint64>(QStringLiteral("accessRefused"), m_accessRefused);
    if (m_repository->upsert(StatisticsObject, o) == is::Repository::Result::Ok)
        ++m_statsPublished;
    m_lastStatsMs = nowMs;
    m_lastChanges = changes;
    m_lastDeliveries = deliveries;
}

void IsServer::checkpoint()
{
    if (m_saving.exchange(true))
        return; // the previous one is still being written
    // Every change made so far is in segment `closed` or before; the checkpoint taken after this
    // holds them all (and maybe some of the next segment: replaying those again is harmless,
    // each record sets an object's whole value).
    quint64 closed = 0;
    if (m_journal) {
        commitJournal();
        QString why;
        closed = m_journal->rotate(&why);
        if (closed == 0) {
            std::fprintf(stderr, "dialog-isserver %s: journal: cannot start a new segment: %s\n",
                         qPrintable(m_options.name), qPrintable(why));
            std::fflush(stderr);
        }
    }
    handoff::startIn(m_pool, [this, closed] {
        const Status saved = is::Checkpoint::save(*m_repository, m_options.dataDir);
        if (saved.isOk()) {
            m_lastCheckpointUs.store(is::Time::currentTime().microsecondsSinceEpoch());
            if (closed > 0)
                handoff::post(this, [this, closed] {
                    // Keep what `.previous` (the checkpoint before) needs, drop the older ones.
                    m_journal->removeUpTo(m_journalCheckpointed);
                    m_journalCheckpointed = closed;
                });
        } else {
            m_checkpointErrors.fetch_add(1);
            std::fprintf(stderr, "dialog-isserver %s: checkpoint failed: %s (the previous one is kept)\n",
                         qPrintable(m_options.name), qPrintable(saved.message()));
            std::fflush(stderr);
        }
        m_saving.store(false);
    });
}

QString IsServer::typesFile() const
{
    return QDir(m_options.dataDir).filePath(m_options.name + QStringLiteral(".types.json"));
}

bool IsServer::saveDeclaredTypes(QString *error)
{
    if (m_options.dataDir.isEmpty())
        return true;
    QJsonArray arr;
    for (const is::TypeInfo &t : std::as_const(m_declared))
        arr.append(is::typeToJson(t));
    QSaveFile f(typesFile());
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(arr).toJson()) < 0 || !f.commit()) {
        *error =
            QStringLiteral("cannot save the declared types to %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    return true;
}

bool IsServer::saveNow(QString *error)
{
    handoff::waitForDone(m_pool);
    if (m_options.dataDir.isEmpty() || !m_repository)
        return true;
    if (m_journal) {
        commitJournal();
        m_journal->drain();
        QCoreApplication::sendPostedEvents(this, QEvent::MetaCall); // the last acknowledgements
    }
    const Status saved = is::Checkpoint::save(*m_repository, m_options.dataDir);
    if (!saved.isOk())
        *error = saved.message();
    else if (m_journal)
        m_journal->removeUpTo(m_journalCheckpointed);
    if (m_journal)
        std::fprintf(
            stderr, "dialog-isserver %s: journal: %llu bytes written, %llu fdatasyncs, %llu writes refused\n",
            qPrintable(m_options.name), qulonglong(m_journal->bytesWritten()), qulonglong(m_journal->syncs()),
            qulonglong(m_journalErrors.load()));
    return saved.isOk();
}

bool IsServer::startSums(QString *error)
{
    for (const auto &rule : std::as_const(m_options.sums)) {
        if (m_mirror || !m_options.mirrorOf.isEmpty()) {
            *error = QStringLiteral("--sum is not available on a mirror (its objects are the master's)");
            return false;
        }
        auto summer = std::make_unique<Summer>(*m_repository, rule.first, rule.second);
        if (!summer->start(error))
            return false;
        for (const auto &other : m_summers)
            if (other->into() == summer->into()) {
                *error = QStringLiteral("--into %1 is given twice").arg(rule.second);
                return false;
            }
        m_summers.push_back(std::move(summer));
    }
    return true;
}

void IsServer::onDirectory(const DirectorySnapshot &directory)
{
    const DirectorySnapshot *dir = &directory;
    const QStringList alive = dir->processNames();
    QSet<QString> lost;
    for (const ProcessEntry &p : dir->lost)
        if (!alive.contains(p.name))
            lost.insert(p.name);
    if (lost.isEmpty())
        return;
    // The objects of a lost writer are stale and leave the sums until they are written again.
    for (auto it = m_writers.begin(); it != m_writers.end();) {
        if (!lost.contains(it.value())) {
            ++it;
            continue;
        }
        {
            QMutexLocker locker(&m_lostLock);
            m_writerLost.insert(it.key());
        }
        for (const auto &summer : m_summers)
            summer->partLost(it.key());
        it = m_writers.erase(it);
    }
}

bool IsServer::isWriterLost(const QString &object) const
{
    QMutexLocker locker(&m_lostLock);
    return m_writerLost.contains(object);
}

is::Staleness IsServer::staleness(const QString &object, const QString &type, is::Time lastWrite) const
{
    return is::Staleness::evaluate(isWriterLost(object), lastWrite, m_types.expectedIntervalS(type),
                                   is::Time::currentTime());
}

bool IsServer::startAlarms(QString *error)
{
    if (m_options.alarmsFile.isEmpty())
        return true;
    QFile f(m_options.alarmsFile);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read --alarms %1: %2").arg(m_options.alarmsFile, f.errorString());
        return false;
    }
    QList<AlarmRule> rules;
    QString why;
    if (!AlarmRule::parse(QString::fromUtf8(f.readAll()), &rules, &why)) {
        *error = QStringLiteral("--alarms %1:%2").arg(m_options.alarmsFile, why);
        return false;
    }
    if (!AlarmEvaluator::declareType(m_types, error))
        return false;
    m_alarms = std::make_unique<AlarmEvaluator>(*m_repository, rules);
    m_alarms->start();
    return true;
}

} // namespace dialog::isd
