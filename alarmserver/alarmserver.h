// dialog-alarmserver, the wiring: the rules (read and checked by main()), the alarm table with the
// states kept by the previous run, the history store, the evaluator of the conditions, the DIALOG
// services and, with --is-server, the alarms as IS objects.
#pragma once

#include "alarmrules.h"
#include "hookrunner.h"

#include "dialog/audit.h"
#include "dialog/client.h"

#include "sqldatabase.h"

#include <QHostAddress>

#include <memory>

namespace dialog::is {
class Dictionary;
}

namespace dialog::alarm {

class AlarmTable;
class AlarmService;
class Evaluator;
class HistoryStore;
class IsExport;
class AlarmWeb;

struct ServerOptions
{
    sql::DatabaseConfig database;
    AccessOptions access;
    QByteArray secret; ///< the partition's shared secret (keys the audit chain), if any
    QString isServer;  ///< publish the alarms as IS objects there (empty: not)
    int stalePollMs = 1000;
    int httpPort = -1; ///< the web page and /metrics (-1: none, 0: any free port)
    QHostAddress httpBind{QHostAddress::LocalHost};
    QByteArray httpToken; ///< the web's bearer token (empty: read-only, open)
    HookOptions hooks;
};

class AlarmServer : public QObject
{
    Q_OBJECT
public:
    /// @p client must outlive the server.
    AlarmServer(Client *client, const RuleSet &rules, const ServerOptions &options,
                QObject *parent = nullptr);
    ~AlarmServer() override;

    /// Opens the history, restores the kept states, publishes and starts evaluating. False with
    /// the reason.
    bool start(QString *error);
    /// The port of the web side (0: none).
    quint16 webPort() const;

private:
    Client *m_client;
    ServerOptions m_options;
    std::unique_ptr<is::Dictionary> m_dictionary;
    std::unique_ptr<AlarmTable> m_table;
    std::unique_ptr<HistoryStore> m_history;
    std::unique_ptr<AlarmService> m_service;
    std::unique_ptr<Evaluator> m_evaluator;
    std::unique_ptr<IsExport> m_isExport;
    std::unique_ptr<AlarmWeb> m_web;
    std::unique_ptr<HookRunner> m_hooks;
};

} // namespace dialog::alarm
