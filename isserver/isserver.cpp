#include "isserver.h"
#include "derivedobjects.h"
#include "persistence.h"
#include "reads.h"
#include "replication.h"
#include "replies.h"
#include "statistics.h"
#include "subscriptions.h"
#include "webserver.h"
#include "writepath.h"
#include "writertracker.h"

#include "dialog/client.h"
#include "dialog/directory.h"
#include "dialog/handoff.h"
#include "dialog/is/history.h"
#include "dialog/is/protocol.h"
#include "dialog/is/repository.h"
#include "dialog/message.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcServer, "dialog.is.server")

namespace dialog::isd {

using is::protocol::parseRequest;
using is::protocol::RequestMessage;
using is::protocol::serviceName;

IsServer::IsServer(const ServerOptions &options, QObject *parent) : QObject(parent), m_options(options)
{
    m_pool.setMaxThreadCount(qMax(1, options.threads));
}

IsServer::~IsServer()
{
    m_derived.reset();
    m_web.reset(); // its dictionary and WebSocket clients use the client and the repository
    m_replication.reset();
    // The client first: its sender threads may still call back into the dispatcher.
    m_client.reset();
    handoff::waitForDone(m_pool);
    m_subscriptions.reset();
}

bool IsServer::start(QString *error)
{
    return checkOptions(error) && openRepository(error) && startHistory(error) && startParts(error) &&
           join(error) && startServices(error);
}

bool IsServer::checkOptions(QString *error) const
{
    if (!Client::isValidName(serviceName(m_options.name)) || m_options.name.contains(QLatin1Char('.'))) {
        *error = QStringLiteral("invalid server name '%1' (not empty, no '.')").arg(m_options.name);
        return false;
    }
    if (!m_options.metricsCriteria.isEmpty() && !is::Criteria(m_options.metricsCriteria).isValid()) {
        *error = QStringLiteral("invalid --metrics-criteria '%1': %2")
                     .arg(m_options.metricsCriteria, is::Criteria(m_options.metricsCriteria).errorString());
        return false;
    }
    return Replication::checkOptions(m_options, error);
}

bool IsServer::openRepository(QString *error)
{
    Status st = m_options.typesDir.isEmpty() ? Status() : m_types.loadDirectory(m_options.typesDir);
    if (st.isOk())
        st = ServerStatistics::declareType(m_types);
    if (!st.isOk()) {
        *error = st.message();
        return false;
    }
    m_repository = std::make_unique<is::Repository>(m_options.name, m_types);
    m_persistence = std::make_unique<Persistence>(m_options, m_types, *m_repository, m_pool);
    // Types declared at run time are kept next to the checkpoint (its objects need them).
    return m_persistence->loadTypes(error) && m_persistence->load(error);
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
        if (!f.open(QIODevice::ReadOnly)) {
            *error = QStringLiteral("cannot read --history-config %1: %2").arg(f.fileName(), f.errorString());
            return false;
        }
        if (const Status st = is::HistoryStore::parseRules(QString::fromUtf8(f.readAll()), m_history->defaults(), &rules);
            !st.isOk()) {
            *error = QStringLiteral("--history-config %1: %2").arg(f.fileName(), st.message());
            return false;
        }
        m_history->setRules(rules);
    }
    // In the writer's thread, after the change: one append to the object's ring.
    m_repository->addListener([h = m_history.get()](const is::Change &c) { h->record(c); });
    return true;
}

bool IsServer::startParts(QString *error)
{
    m_client = std::make_unique<Client>(m_options.client);
    m_writers = std::make_unique<WriterTracker>(m_types);
    m_writePath = std::make_unique<WritePath>(m_options, *m_repository, m_types, *m_client, *m_writers,
                                              m_persistence.get());
    m_writePath->setHistory(m_history.get());
    if (!m_writePath->start(error))
        return false;
    m_reads = std::make_unique<Reads>(m_options.name, *m_repository, m_types, *m_client, m_pool, *m_writers,
                                      m_history.get());
    m_reads->setScanBudget(m_options.scanBudgetMs);
    DispatcherOptions dopt;
    dopt.workers = m_options.threads;
    dopt.queueRecords = m_options.queueRecords;
    dopt.slowGraceMs = m_options.slowGraceMs;
    m_subscriptions = std::make_unique<Subscriptions>(*m_repository, *m_client, m_history.get(), dopt);
    m_subscriptions->start();
    m_derived = std::make_unique<DerivedObjects>(m_options, m_types, *m_repository);
    if (!m_derived->start(error))
        return false;
    m_replication =
        std::make_unique<Replication>(m_options, *m_repository, m_types, *m_client, m_history.get());
    const auto keepTypes = [this](const QList<is::TypeInfo> &types) {
        QString why;
        if (!m_persistence->addDeclaredTypes(types, &why))
            qCWarning(lcServer, "%s: %s", qPrintable(m_options.name), qPrintable(why));
    };
    // A checkpoint of a mirror's copy needs the master's types to be read back.
    connect(m_replication.get(), &Replication::typesAdded, this, keepTypes);
    connect(m_writePath.get(), &WritePath::typesDeclared, m_replication.get(), &Replication::typesDeclared);
    return true;
}

bool IsServer::join(QString *error)
{
    connect(m_client.get(), &Client::requestReceived, this, &IsServer::onRequest);
    if (!m_client->start()) {
        *error = m_client->errorString();
        return false;
    }
    // Who is lost: the objects they wrote are stale and leave the sums.
    m_client->subscribe(directoryServiceName(), this,
                        [this, pages = std::make_shared<DirectoryAssembler>()](const Message &m) {
                            std::optional<DirectorySnapshot> dir; // a large directory comes in pages
                            if (pages->add(m.data(), &dir).isOk() && dir)
                                onDirectory(*dir);
                        });
    announce();
    return true;
}

void IsServer::announce()
{
    Service *announce = m_client->publish(serviceName(m_options.name));
    QJsonObject announcement{
        {QStringLiteral("server"), m_options.name},
        {QStringLiteral("started"), QString::number(is::Time::currentTime().microsecondsSinceEpoch())},
        {QStringLiteral("pid"), QCoreApplication::applicationPid()}};
    if (!m_options.mirrorOf.isEmpty())
        announcement.insert(QStringLiteral("mirrorOf"), m_options.mirrorOf);
    if (m_options.mirrorListenPort >= 0)
        announcement.insert(QStringLiteral("mirrorOf"), m_options.mirrorMaster);
    announce->update(QJsonDocument(announcement).toJson(QJsonDocument::Compact));
}

bool IsServer::startServices(QString *error)
{
    if (!m_replication->start(error))
        return false;
    m_statistics = std::make_unique<ServerStatistics>(*m_repository, m_types, [this] {
        const Dispatcher &d = m_subscriptions->dispatcher();
        ServerStatistics::Figures f;
        f.deliveries = d.deliveries();
        f.dropped = d.drops();
        f.subscribers = d.subscribers();
        f.requests = m_requests;
        f.lastCheckpointUs = m_persistence->lastCheckpointUs();
        f.checkpointErrors = m_persistence->checkpointErrors();
        f.quotaRefused = m_writePath->quotaRefused();
        f.accessRefused = m_writePath->accessRefused();
        f.journalErrors = m_persistence->journalErrors();
        return f;
    });
    m_statistics->start();
    m_persistence->startCheckpoints();
    if (m_options.httpPort < 0)
        return true;
    m_web = std::make_unique<WebServer>(m_options, *m_repository, m_types, *m_client, m_history.get(),
                                        *m_writers);
    if (!m_web->listen(error)) {
        m_web.reset();
        return false;
    }
    return true;
}

void IsServer::onRequest(const Request &request)
{
    using Op = RequestMessage::Op;
    ++m_requests;
    RequestMessage r;
    if (!parseRequest(request.data(), &r)) {
        replyStatus(*m_client, request, Status::Code::BadRequest, QStringLiteral("malformed IS request"));
        return;
    }
    switch (r.op) {
    case Op::Insert:
    case Op::Update:
    case Op::Upsert:
    case Op::Remove:
    case Op::DeclareTypes:
        if (const QString readOnly = m_replication->readOnlyReason(); !readOnly.isEmpty())
            replyStatus(*m_client, request, Status::Code::ReadOnly, readOnly);
        else if (r.op == Op::DeclareTypes)
            m_writePath->declareTypes(request, r.typesJson);
        else
            m_writePath->write(request, WritePath::Op(r.op), r.name, r.value);
        return;
    case Op::Get:
    case Op::List:
    case Op::Types:
        m_reads->read(request, r);
        return;
    case Op::History:
        // The subscriber list is read here, not in the pool.
        m_reads->readHistory(request, r, m_subscriptions->archiveService());
        return;
    case Op::Subscribe:
        m_subscriptions->subscribe(
            request, {r.channel, r.criteria, r.withValues, r.snapshot, r.archiveService, r.historyUs});
        return;
    case Op::Unsubscribe:
        m_subscriptions->unsubscribe(request, r.channel);
        return;
    case Op::None:
        break;
    }
    replyStatus(*m_client, request, Status::Code::BadRequest,
                QStringLiteral("unknown IS operation %1").arg(int(r.op)));
}

void IsServer::onDirectory(const DirectorySnapshot &directory)
{
    // The objects of a lost writer are stale and leave the sums until they are written again.
    for (const QString &object : m_writers->lostWriters(directory))
        m_derived->writerLost(object);
}

bool IsServer::saveNow(QString *error)
{
    handoff::waitForDone(m_pool);
    return !m_persistence || m_persistence->saveNow(error);
}

} // namespace dialog::isd
