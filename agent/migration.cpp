#include "migration.h"

#include "agentserver.h"
#include "processtable.h"

#include "dialog/client.h"
#include "dialog/subscription.h"

#include <QDateTime>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcMigration, "dialog.agent.migration", QtInfoMsg)

namespace dialog::agent {

namespace {
constexpr int EvaluateMs = 200;
}

Migration::Migration(Client *client, const QString &host, ProcessTable *table, QObject *parent)
    : QObject(parent), m_client(client), m_host(host), m_table(table)
{
    m_timer.setInterval(EvaluateMs);
    connect(&m_timer, &QTimer::timeout, this, &Migration::evaluate);
}

void Migration::start()
{
    m_table->setRestartGate([this](const QString &name) { return mayStart(name); });
    m_directory = m_client->subscribe(directoryServiceName());
    connect(m_directory, &Subscription::messageReceived, this, &Migration::onMessage);
    connect(m_client, &Client::stateChanged, this, [this](Client::State s) {
        if (s != Client::State::Connected) {
            // What it showed may be stale from now on: nothing is decided until a new one comes.
            m_snapshot.reset();
            m_assembler = DirectoryAssembler();
            m_goneSinceMs.clear();
        }
    });
    m_timer.start();
}

void Migration::onMessage(const Message &m)
{
    if (m_client->state() != Client::State::Connected)
        return;
    std::optional<DirectorySnapshot> complete;
    if (const Status st = m_assembler.add(m.data(), &complete); !st.isOk()) {
        qCWarning(lcMigration).noquote() << "directory:" << st.message();
        return;
    }
    if (complete)
        m_snapshot = std::move(complete);
}

bool Migration::mayStart(const QString &name) const
{
    if (!m_snapshot || m_client->state() != Client::State::Connected)
        return false;
    for (const ProcessTable::Migratable &p : m_table->migratable())
        if (p.name == name) {
            const ProcessEntry *holder = m_snapshot->process(name);
            return !holder || holder->pid == p.pid || holder->pid == p.lastPid;
        }
    return true;
}

void Migration::evaluate()
{
    if (!m_snapshot || m_client->state() != Client::State::Connected)
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (const ProcessTable::Migratable &p : m_table->migratable()) {
        const ProcessEntry *holder = m_snapshot->process(p.name);
        if (p.state == QLatin1String("running")) {
            m_goneSinceMs.remove(p.name);
            // Held by another process (not this copy, nor its run before): that copy won.
            if (holder && holder->pid != p.pid && holder->pid != p.lastPid)
                m_table->yield(p.name, QStringLiteral("its name is held by PID %1 at %2 (the copy the Control Server kept)")
                                           .arg(holder->pid)
                                           .arg(holder->host));
            continue;
        }
        if (p.state != QLatin1String("standby"))
            continue;
        if (holder) {
            // Where it runs: the agent of its list at the address it advertises.
            for (const QString &h : p.hosts)
                if (const ProcessEntry *a = m_snapshot->process(AgentServer::serviceName(h)); a && a->host == holder->host)
                    m_holderAgent.insert(p.name, h);
            m_goneSinceMs.remove(p.name);
            continue;
        }
        // Gone with the agent it ran under (one that is alive restarts it itself), and so is every
        // host before this one in its list (this one is the first reachable fallback).
        const qsizetype self = p.hosts.indexOf(m_host);
        const QStringList before = p.hosts.mid(0, self < 0 ? p.hosts.size() : self);
        const QString holderAgent = m_holderAgent.value(p.name);
        bool gone = holderAgent.isEmpty() || !m_snapshot->process(AgentServer::serviceName(holderAgent));
        for (const QString &h : before)
            gone = gone && !m_snapshot->process(AgentServer::serviceName(h));
        if (!gone) {
            m_goneSinceMs.remove(p.name);
            continue;
        }
        const qint64 since = m_goneSinceMs.value(p.name, 0);
        if (since == 0) {
            m_goneSinceMs.insert(p.name, now);
            continue;
        }
        if (now - since < p.lossMs)
            continue;
        m_goneSinceMs.remove(p.name);
        m_holderAgent.remove(p.name);
        QStringList agents = before;
        if (!holderAgent.isEmpty() && !agents.contains(holderAgent))
            agents.append(holderAgent);
        const QString why = QStringLiteral("%1%2 gone for %3 ms (migrated here)")
                                .arg(p.name,
                                     agents.isEmpty() ? QString()
                                                      : QStringLiteral(" and the agents of %1").arg(agents.join(QStringLiteral(", "))))
                                .arg(now - since);
        m_table->takeOver(p.name, why);
    }
}

} // namespace dialog::agent
