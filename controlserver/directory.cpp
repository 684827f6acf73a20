#include "directory.h"

#include "dialog/security.h"

#include <algorithm>

namespace dialog::cs {

namespace {
QStringList sorted(const QSet<QString> &set)
{
    QStringList l(set.cbegin(), set.cend());
    l.sort();
    return l;
}

ProcessEntry entry(const ProcessRecord &p)
{
    ProcessEntry e;
    e.name = p.name;
    e.host = p.host;
    e.port = p.port;
    e.pid = p.pid;
    e.version = p.version;
    e.services = sorted(p.services);
    e.commands = sorted(p.commands);
    e.subscriptions = sorted(p.requests);
    e.connectedAtMs = p.connectedAtMs;
    return e;
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
        // The incarnation is public (INFO_SERVICE, the directory); the session is not.
        if (!it->session.isEmpty() && !security::proofsEqual(it->session, p.session)) {
            if (reason)
                *reason = QStringLiteral("process '%1' (incarnation %2) is connected, and this CONNECT "
                                         "does not show its session")
                              .arg(p.name)
                              .arg(p.incarnation);
            return ConnectResult::NameInUse;
        }
        removeProcess(p.name, QString(), 0);
        ProcessRecord fresh = p;
        fresh.services.clear();
        fresh.commands.clear();
        fresh.requests.clear();
        m_processes.insert(p.name, fresh);
        m_atEndpoint.insert(qMakePair(p.host, p.port), p.name);
        m_lost.removeIf([&](const LostRecord &l) { return l.process.name == p.name && l.lostAtMs == 0; });
        return ConnectResult::Refreshed;
    }
    ProcessRecord fresh = p;
    fresh.services.clear();
    fresh.commands.clear();
    fresh.requests.clear();
    m_processes.insert(p.name, fresh);
    m_atEndpoint.insert(qMakePair(p.host, p.port), p.name);
    m_lost.removeIf([&](const LostRecord &l) { return l.process.name == p.name; });
    return ConnectResult::Accepted;
}

ProcessRecord Directory::removeProcess(const QString &name, const QString &reason, qint64 nowMs)
{
    ProcessRecord p = m_processes.take(name);
    if (p.name.isEmpty())
        return p;
    const auto at = m_atEndpoint.constFind(qMakePair(p.host, p.port));
    if (at != m_atEndpoint.cend() && at.value() == name)
        m_atEndpoint.erase(at);
    m_names -= int(p.commands.size() + p.requests.size());
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
        LostRecord l{p, nowMs, reason, 0};
        // The lists of a lost process are history: the first names (in order) are kept, the rest
        // counted. A process that registered thousands of long names leaves a small trace.
        for (QSet<QString> *set : {&l.process.services, &l.process.commands, &l.process.requests}) {
            if (set->size() <= m_lostLimits.maxNames)
                continue;
            const QStringList keep = sorted(*set).mid(0, m_lostLimits.maxNames);
            l.omittedNames += int(set->size()) - int(keep.size());
            *set = QSet<QString>(keep.cbegin(), keep.cend());
        }
        l.process.statistics = ProcessStatistics();
        m_lost.append(std::move(l));
        while (m_lost.size() > m_lostLimits.maxCount)
            m_lost.removeFirst();
        expireLost(nowMs);
    }
    return p;
}

bool Directory::expireLost(qint64 nowMs)
{
    const auto n = m_lost.removeIf(
        [&](const LostRecord &l) { return l.lostAtMs != 0 && nowMs - l.lostAtMs > m_lostLimits.maxAgeMs; });
    return n > 0;
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
    return m_atEndpoint.value(qMakePair(host, port));
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
    if (p == m_processes.end() || p->commands.contains(command))
        return;
    p->commands.insert(command);
    m_commands[command].insert(process);
    ++m_names;
}

void Directory::unregisterCommand(const QString &process, const QString &command)
{
    auto p = m_processes.find(process);
    if (p != m_processes.end() && p->commands.remove(command))
        --m_names;
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
    if (p == m_processes.end() || p->requests.contains(service))
        return;
    p->requests.insert(service);
    m_requests[service].insert(process);
    ++m_names;
}

void Directory::cancelRequest(const QString &process, const QString &service)
{
    auto p = m_processes.find(process);
    if (p != m_processes.end() && p->requests.remove(service))
        --m_names;
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

StatisticsSnapshot Directory::statistics(qint64 nowMs) const
{
    StatisticsSnapshot snap;
    snap.timeMs = nowMs;
    for (const QString &n : processNames()) {
        const ProcessRecord &p = *m_processes.constFind(n);
        if (p.statistics.atMs == 0)
            continue;
        snap.processes.append(p.statistics);
        snap.processes.last().name = p.name;
    }
    return snap;
}

QJsonObject Directory::statisticsJson(qint64 nowMs) const
{
    return statistics(nowMs).toJsonObject();
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

DirectorySnapshot Directory::snapshot(qint64 nowMs) const
{
    DirectorySnapshot snap;
    snap.timeMs = nowMs;
    for (const QString &n : processNames())
        snap.processes.append(entry(m_processes.value(n)));
    for (const LostRecord &l : m_lost) {
        snap.lost.append(entry(l.process));
        snap.lost.last().lostAtMs = l.lostAtMs;
        snap.lost.last().lostReason = l.reason;
        snap.lost.last().omittedNames = l.omittedNames;
    }
    return snap;
}

QJsonObject Directory::toJson(qint64 nowMs) const
{
    return snapshot(nowMs).toJsonObject();
}

} // namespace dialog::cs
