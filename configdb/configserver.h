// dialog-configdb on the DIALOG side: the requests on CONFIG.<name> (JSON objects with "op"), each
// answered by the store on the database thread, in the order they came.
#pragma once

#include "configdatabase.h"
#include "configstore.h"
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
};

} // namespace dialog::configdb
