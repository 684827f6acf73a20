#include "directory.h"

#include <QJsonArray>
#include <algorithm>

namespace dialog::cs {

namespace {
QJsonArray sorted(const QSet<QString> &set)
{
    QStringList l(set.cbegin(), set.cend());
    l.sort();
    return QJsonArray::fromStringList(l);
}

QJsonObject processJson(const ProcessRecord &p)
{
    return QJsonObject{{QStringLiteral("name"), p.name},
                       {QStringLiteral("host"), p.host},
                       {QStringLiteral("port"), p.port},
                       {QStringLiteral("pid"), qint64(p.pid)},
                       {QStringLiteral("services"), sorted(p.services)},
                       {QStringLiteral("commands"), sorted(p.commands)},
                       {QStringLiteral("subscriptions"), sorted(p.requests)},
                       {QStringLiteral("connected_at_ms"), p.connectedAtMs}};
}
} // namespace

Directory::ConnectResult Directory::connectProcess(const ProcessRecord &p, QString *reason)
{
    auto it = m_processes.find(p.name);
    if (it != m_processes.end()) {
        if (it->incarnation != p.incarnation) {
            if (reason)
                *reason = QStringLiteral("process name '%1' is in use by pid %2 at %3:%4")
                              .arg(p.name)
                              .arg(it->pid)
                              .arg(it->host)
                              .arg(it->port);
            return ConnectResult::NameInUse;
        }
        removeProcess(p.name, QString(), 0);
        ProcessRecord fresh = p;
        fresh.services.clear();
        fresh.commands.clear();
        fresh.requests.clear();
        m_processes.insert(p.name, fresh);
        m_lost.removeIf([&](const LostRecord &l) { return l.process.name == p.name && l.lostAtMs == 0; });
        return ConnectResult::Refreshed;
    }
    ProcessRecord fresh = p;
    fresh.services.clear();
    fresh.commands.clear();
    fresh.requests.clear();
    m_processes.insert(p.name, fresh);
    m_lost.removeIf([&](const LostRecord &l) { return l.process.name == p.name; });
    return ConnectResult::Accepted;
}

ProcessRecord Directory::removeProcess(const QString &name, const QString &reason, qint64 nowMs)
{
    ProcessRecord p = m_processes.take(name);
    if (p.name.isEmpty())
        return p;
    for (const QString &s : std::as_const(p.services))
        m_providers.remove(s);
    for (const QString &c : std::as_const(p.commands)) {
        auto it = m_commands.find(c);
        if (it != m_commands.end() && (it->remove(name), it->isEmpty()))
            m_commands.erase(it);
    }
    for (const QString &r : std::as_const(p.requests)) {
        auto it = m_requests.find(r);
        if (it != m_requests.end() && (it->remove(name), it->isEmpty()))
            m_requests.erase(it);
    }
    if (!reason.isEmpty()) {
        m_lost.append(LostRecord{p, nowMs, reason});
        constexpr int MaxLost = 100;
        while (m_lost.size() > MaxLost)
            m_lost.removeFirst();
    }
    return p;
}

const ProcessRecord *Directory::process(const QString &name) const
{
    auto it = m_processes.constFind(name);
    return it == m_processes.cend() ? nullptr : &it.value();
}

const ProcessRecord *Directory::connected(const QString &name, quint64 incarnation) const
{
    const ProcessRecord *p = process(name);
    return p && p->incarnation == incarnation ? p : nullptr;
}

QString Directory::processAt(const QString &host, quint16 port) const
{
    for (const ProcessRecord &p : m_processes)
        if (p.port == port && p.host == host)
            return p.name;
    return QString();
}

QStringList Directory::processNames() const
{
    QStringList l = m_processes.keys();
    l.sort();
    return l;
}

bool Directory::registerService(const QString &process, const QString &service, QString *owner)
{
    auto p = m_processes.find(process);
    if (p == m_processes.end())
        return false;
    const QString current = m_providers.value(service);
    if (!current.isEmpty() && current != process) {
        if (owner)
            *owner = current;
        return false;
    }
    m_providers.insert(service, process);
    p->services.insert(service);
    return true;
}

bool Directory::unregisterService(const QString &process, const QString &service)
{
    const auto owner = m_providers.constFind(service);
    if (owner == m_providers.cend() || owner.value() != process)
        return false;
    m_providers.erase(owner);
    auto p = m_processes.find(process);
    if (p != m_processes.end())
        p->services.remove(service);
    return true;
}

const ProcessRecord *Directory::provider(const QString &service) const
{
    auto it = m_providers.constFind(service);
    return it == m_providers.cend() ? nullptr : process(it.value());
}

void Directory::registerCommand(const QString &process, const QString &command)
{
    auto p = m_processes.find(process);
    if (p == m_processes.end())
        return;
    p->commands.insert(command);
    m_commands[command].insert(process);
}

void Directory::unregisterCommand(const QString &process, const QString &command)
{
    auto p = m_processes.find(process);
    if (p != m_processes.end())
        p->commands.remove(command);
    auto it = m_commands.find(command);
    if (it != m_commands.end() && (it->remove(process), it->isEmpty()))
        m_commands.erase(it);
}

QStringList Directory::commandTargets(const QString &command) const
{
    const QSet<QString> s = m_commands.value(command);
    QStringList l(s.cbegin(), s.cend());
    l.sort();
    return l;
}

void Directory::request(const QString &process, const QString &service)
{
    auto p = m_processes.find(process);
    if (p == m_processes.end())
        return;
    p->requests.insert(service);
    m_requests[service].insert(process);
}

void Directory::cancelRequest(const QString &process, const QString &service)
{
    auto p = m_processes.find(process);
    if (p != m_processes.end())
        p->requests.remove(service);
    auto it = m_requests.find(service);
    if (it != m_requests.end() && (it->remove(process), it->isEmpty()))
        m_requests.erase(it);
}

QStringList Directory::requesters(const QString &service) const
{
    const QSet<QString> s = m_requests.value(service);
    QStringList l(s.cbegin(), s.cend());
    l.sort();
    return l;
}

QStringList Directory::subscribersOf(const ProcessRecord &process) const
{
    QSet<QString> out;
    for (const QString &s : process.services)
        for (const QString &r : m_requests.value(s))
            if (r != process.name)
                out.insert(r);
    QStringList l(out.cbegin(), out.cend());
    l.sort();
    return l;
}

QStringList Directory::providersFor(const ProcessRecord &process) const
{
    QSet<QString> out;
    for (const QString &r : process.requests) {
        const QString p = m_providers.value(r);
        if (!p.isEmpty() && p != process.name)
            out.insert(p);
    }
    QStringList l(out.cbegin(), out.cend());
    l.sort();
    return l;
}

void Directory::heartbeat(const QString &process, qint64 nowMs)
{
    auto p = m_processes.find(process);
    if (p != m_processes.end())
        p->lastSeenMs = nowMs;
}

void Directory::setStatistics(const QString &process, const ProcessStatistics &s)
{
    auto p = m_processes.find(process);
    if (p != m_processes.end())
        p->statistics = s;
}

QJsonObject Directory::statisticsJson(qint64 nowMs) const
{
    QJsonArray procs;
    for (const QString &n : processNames()) {
        const ProcessRecord &p = *m_processes.constFind(n);
        const ProcessStatistics &s = p.statistics;
        if (s.atMs == 0)
            continue;
        // JSON numbers are doubles: exact up to 2^53, far beyond any counter here.
        procs.append(QJsonObject{{QStringLiteral("name"), p.name},
                                 {QStringLiteral("at_ms"), s.atMs},
                                 {QStringLiteral("messages_out"), double(s.messagesOut)},
                                 {QStringLiteral("bytes_out"), double(s.bytesOut)},
                                 {QStringLiteral("messages_in"), double(s.messagesIn)},
                                 {QStringLiteral("bytes_in"), double(s.bytesIn)},
                                 {QStringLiteral("dropped"), double(s.dropped)},
                                 {QStringLiteral("reconnects"), double(s.reconnects)},
                                 {QStringLiteral("protocol_errors"), double(s.protocolErrors)},
                                 {QStringLiteral("queued_bytes"), double(s.queuedBytes)},
                                 {QStringLiteral("outgoing_connections"), qint64(s.outgoingConnections)},
                                 {QStringLiteral("incoming_connections"), qint64(s.incomingConnections)}});
    }
    return QJsonObject{{QStringLiteral("time_ms"), nowMs}, {QStringLiteral("processes"), procs}};
}

QStringList Directory::expired(qint64 nowMs, int misses) const
{
    QStringList l;
    for (const ProcessRecord &p : m_processes)
        if (nowMs - p.lastSeenMs > qint64(misses) * p.heartbeatMs)
            l.append(p.name);
    l.sort();
    return l;
}

QJsonObject Directory::toJson(qint64 nowMs) const
{
    QJsonArray procs;
    for (const QString &n : processNames())
        procs.append(processJson(m_processes.value(n)));
    QJsonArray lost;
    for (const LostRecord &l : m_lost) {
        QJsonObject o = processJson(l.process);
        o.insert(QStringLiteral("lost_at_ms"), l.lostAtMs);
        o.insert(QStringLiteral("reason"), l.reason);
        lost.append(o);
    }
    return QJsonObject{{QStringLiteral("time_ms"), nowMs},
                       {QStringLiteral("processes"), procs},
                       {QStringLiteral("lost"), lost}};
}

} // namespace dialog::cs
