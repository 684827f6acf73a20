// Migration of the processes that may run on several hosts (a start request's "hosts"): this
// agent follows the Control Server's directory and
//   - starts a standby process here when the process and the agents of every host before this one
//     in its "hosts" have been gone from the directory for its loss interval (the first reachable
//     fallback takes it);
//   - stops its own copy when the directory shows the name held by another process (the Control
//     Server's duplicate-name rule decided: the copy that lost goes to standby);
//   - lets the restart policy start a migratable process again only while it sees a fresh
//     directory in which no other process holds the name (an agent cut off from the Control Server
//     never starts a second copy).
#pragma once

#include "dialog/directory.h"

#include <QHash>
#include <QObject>
#include <QTimer>
#include <optional>

namespace dialog {
class Client;
class Message;
class Subscription;
} // namespace dialog

namespace dialog::agent {

class ProcessTable;

class Migration : public QObject
{
    Q_OBJECT
public:
    Migration(Client *client, const QString &host, ProcessTable *table, QObject *parent = nullptr);
    /// Subscribes to the directory and installs the table's restart gate.
    void start();
    /// Whether this agent may start @p name now (a fresh directory, no other process holds it).
    bool mayStart(const QString &name) const;

private:
    void onMessage(const Message &m);
    void evaluate();

    Client *m_client;
    QString m_host;
    ProcessTable *m_table;
    Subscription *m_directory = nullptr;
    DirectoryAssembler m_assembler;
    std::optional<DirectorySnapshot> m_snapshot; ///< only while connected, from after the connection
    QHash<QString, qint64> m_goneSinceMs;        ///< standby entries: since when their takeover holds
    QHash<QString, QString> m_holderAgent;       ///< standby entries: the agent host it ran under
    QTimer m_timer;
};

} // namespace dialog::agent
