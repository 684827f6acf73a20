// dialog-configdb on the DIALOG side: the requests on CONFIG.<name> (JSON objects with "op"), each
// answered by the store on the database thread, in the order they came.
#pragma once

#include "configdatabase.h"
#include "configstore.h"
#include "configweb.h"
#include "runregistry.h"

#include "dialog/client.h"

#include <QJsonObject>
#include <QThread>
#include <memory>

namespace dialog::configdb {

class ConfigServer : public QObject
{
    Q_OBJECT
public:
    /// @p client must live in this thread and outlive the server.
    /// @p crashAfterRows: ConfigStore::setCrashAfterRows() (for tests; 0: never).
    ConfigServer(Client *client, const sql::DatabaseConfig &database, const QString &name,
                 int crashAfterRows = 0);
    ~ConfigServer() override;

    /// Opens the database (waiting for it) and publishes CONFIG.<name>. False with the reason.
    bool start(QString *error);
    /// Serves the read-only web page (ConfigWeb) on @p address:@p port (0: any free port). False
    /// with the reason. After start().
    bool listenWeb(const QHostAddress &address, quint16 port, QString *error);
    /// The web page's port (0 without one).
    quint16 webPort() const;
    /// A read-only request (runs, run, get, ls, log, diff, tags, resolve) answered on the database
    /// thread as CONFIG.<name> answers it; @p done gets the answer, or {"error", "code"}, in
    /// @p context's thread (dropped if @p context is gone).
    void query(const QJsonObject &request, QObject *context, std::function<void(const QJsonObject &)> done);

private:
    void onRequest(const Request &request);
    /// Runs in the database thread: the answer to @p request, or {"error", "code"}.
    QJsonObject answer(const QJsonObject &request, const Request &origin);
    QJsonObject configAnswer(const QString &op, const QJsonObject &request, const Request &origin,
                             Status *st);

    Client *m_client;
    sql::DatabaseConfig m_config;
    QString m_service;
    int m_crashAfterRows = 0;
    /// The partition has a secret: the user and host a request claims were proven with it.
    bool m_proven = false;
    QThread m_thread;
    QObject *m_worker = nullptr; ///< lives in m_thread; the database objects are used there only
    std::unique_ptr<ConfigDatabase> m_db;
    std::unique_ptr<ConfigStore> m_store;
    std::unique_ptr<RunRegistry> m_runs;
    /// After m_thread: destroyed once no database task can post to it any more.
    std::unique_ptr<ConfigWeb> m_web;
};

} // namespace dialog::configdb
