// The last crash of each process, from the host agents: every agent in the directory
// (DIALOG.Agent.<host>) is asked for its crash reports every few seconds (request op "crashes",
// docs/agent.md), and a line of the run-control window shows the newest one of its nodes: time,
// process, signal, the crashing function and the host. The same text is the node's tooltip.
#pragma once

#include "dialog/directory.h"

#include <QHash>
#include <QJsonObject>
#include <QLabel>
#include <QObject>
#include <QSet>
#include <QTimer>
#include <functional>
#include <optional>

namespace dialog {
class Client;
}

namespace dialog::runcontrol {

class CrashWatch : public QObject
{
    Q_OBJECT
public:
    explicit CrashWatch(Client *client, int intervalMs = 3000, QObject *parent = nullptr);
    /// The newest crash report of @p process (the agents' JSON object), if any agent has one.
    std::optional<QJsonObject> lastCrash(const QString &process) const;
    /// "14:03:07 RO1: SIGSEGV in Readout::fill (readout.cpp:120) on daq03 (PID 4711)".
    static QString describe(const QJsonObject &crash);
    /// The function a backtrace crashed in: the innermost named frame of the crashing thread (the
    /// first frame of the agent's report), with its source file and line when gdb knows them
    /// ("Readout::fill (readout.cpp:120)"); empty without frames.
    static QString crashingFunction(const QString &backtrace);

Q_SIGNALS:
    /// A crash report of @p process newer than any seen before.
    void crashed(const QString &process, const QJsonObject &crash);

private:
    void poll();

    Client *m_client;
    DirectoryAssembler m_assembler;
    QStringList m_agents;
    QHash<QString, qint64> m_since;  // per agent: the time after its newest report seen
    QSet<QString> m_asking;          // agents with a request outstanding
    QHash<QString, QJsonObject> m_last;
    QTimer m_timer;
};

/// The newest crash among the processes @p shown accepts; hidden until there is one.
class LastCrashLine : public QLabel
{
    Q_OBJECT
public:
    LastCrashLine(CrashWatch *watch, std::function<bool(const QString &process)> shown, QWidget *parent = nullptr);

private:
    qint64 m_newestMs = 0;
};

} // namespace dialog::runcontrol
