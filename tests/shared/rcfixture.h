// What the run-control integration tests share: a Control Server with fast heartbeats, a client of
// it subscribed to the master's state, transition requests answered, the partition file.
#pragma once

#include "dialog/rc/protocol.h"
#include "dialog/subscription.h"
#include "processfixture.h"

#include <QFile>
#include <QTemporaryDir>

namespace dialog::test {

/// The heartbeat of every process of a run-control test: a lost one is seen within about a second.
inline const QStringList kRcHeartbeat{QStringLiteral("--heartbeat-ms"), QStringLiteral("200")};

/// A Control Server (kRcHeartbeat), a scratch directory and an in-process client named @p name that
/// subscribes to the state of the master @p master.
struct RcBed
{
    std::unique_ptr<ProcessFixture> fx;
    std::unique_ptr<QTemporaryDir> dir;
    std::unique_ptr<Client> client;
    Subscription *master = nullptr;

    /// False if the Control Server (with @p controlServerArgs) or the client did not start.
    bool start(const QString &name, const QString &masterName = QStringLiteral("Master"),
               const QStringList &controlServerArgs = {})
    {
        fx = std::make_unique<ProcessFixture>();
        dir = std::make_unique<QTemporaryDir>();
        if (!fx->startControlServer(kRcHeartbeat + controlServerArgs))
            return false;
        ClientOptions o = fx->clientOptions(name);
        o.heartbeatMs = 200;
        client = std::make_unique<Client>(o);
        if (!client->start())
            return false;
        master = client->subscribe(rc::stateService(masterName));
        return true;
    }
    /// The client first, then every process, then the files.
    void stop()
    {
        client.reset();
        fx.reset();
        dir.reset();
    }

    /// The master's last published state.
    QJsonObject masterState() const { return QJsonDocument::fromJson(master->lastMessage().data()).object(); }

    /// Sends transition @p t to @p masterName and waits for the reply (the request times out by itself).
    Reply transition(const QString &t, int timeoutMs = 20000,
                     const QString &masterName = QStringLiteral("Master"))
    {
        Reply out;
        bool done = false;
        client->request(rc::stateService(masterName), t.toUtf8(), timeoutMs, client.get(),
                        [&](const Reply &r) {
                            out = r;
                            done = true;
                        });
        waitUntil([&done] { return done; }, timeoutMs + 2000, 5);
        return out;
    }

    /// The partition "name" of this Control Server ("start": @p startControlServer), heartbeat 200 ms,
    /// master "Master" with @p timeoutMs and its run-number file in the scratch directory, @p slaves;
    /// @p extra merged into the top level. Written as DIR/FILE; returns the path.
    QString writePartition(const QString &name, const QJsonArray &slaves, int timeoutMs,
                           bool startControlServer, const QJsonObject &extra) const
    {
        QJsonObject p{
            {QStringLiteral("name"), name},
            {QStringLiteral("control_server"),
             QJsonObject{{QStringLiteral("host"), QStringLiteral("localhost")},
                         {QStringLiteral("port"), fx->port()},
                         {QStringLiteral("start"), startControlServer}}},
            {QStringLiteral("heartbeat_ms"), 200},
            {QStringLiteral("master"),
             QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                         {QStringLiteral("transition_timeout_ms"), timeoutMs},
                         {QStringLiteral("run_number_file"), dir->filePath(QStringLiteral("runnumber"))}}},
            {QStringLiteral("slaves"), slaves}};
        for (auto it = extra.begin(); it != extra.end(); ++it)
            p.insert(it.key(), it.value());
        const QString path = dir->filePath(name + QStringLiteral(".json"));
        QFile f(path);
        f.open(QIODevice::WriteOnly | QIODevice::Truncate);
        f.write(QJsonDocument(p).toJson());
        return path;
    }
};

} // namespace dialog::test
