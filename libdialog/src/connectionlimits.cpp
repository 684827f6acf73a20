#include "connectionlimits_p.h"

#include <QLoggingCategory>

#include <sys/resource.h>

Q_LOGGING_CATEGORY(lcLimits, "dialog.net.limits", QtInfoMsg)

namespace dialog::net {

namespace {
/// Descriptors kept out of the inbound budget: files, the listener, the process's own threads.
constexpr qint64 ReservedDescriptors = 128;

qint64 raiseDescriptorLimit()
{
    struct rlimit rl;
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        const rlim_t before = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &rl) != 0)
            rl.rlim_cur = before;
    }
    return rl.rlim_cur == RLIM_INFINITY ? qint64(1) << 30 : qint64(rl.rlim_cur);
}
} // namespace

qint64 ConnectionLimits::descriptorLimit()
{
    static const qint64 limit = raiseDescriptorLimit();
    return limit;
}

ConnectionLimits::ConnectionLimits(const Caps &wanted) : m_caps(wanted)
{
    // Every inbound connection of a process usually has an outbound twin (its answers go by a
    // socket of their own), so inbound connections get half of what is left after the reserve; a
    // quarter of that at most may be in a handshake, the rest is for connections past it.
    const qint64 inbound = qMax<qint64>(8, (descriptorLimit() - ReservedDescriptors) / 2);
    m_caps.handshaking = int(qBound<qint64>(1, qint64(wanted.handshaking), qMax<qint64>(1, inbound / 4)));
    m_caps.handshakingPerAddress = qBound(1, wanted.handshakingPerAddress, m_caps.handshaking);
    const qint64 rest = qMax<qint64>(1, inbound - m_caps.handshaking);
    m_caps.connections = int(wanted.connections > 0 ? qMin<qint64>(wanted.connections, rest) : rest);
    m_caps.connectionsPerAddress = qBound(1, wanted.connectionsPerAddress, m_caps.connections);
    qCDebug(lcLimits) << "descriptor limit" << descriptorLimit() << "handshaking" << m_caps.handshaking << "/"
                      << m_caps.handshakingPerAddress << "connections" << m_caps.connections << "/"
                      << m_caps.connectionsPerAddress;
}

ConnectionLimits::Victim ConnectionLimits::evict(std::list<Pending>::iterator it)
{
    Victim v{it->reader, it->id, it->from};
    m_pendingById.remove(it->id);
    auto from = m_pendingFrom.find(it->from);
    if (from != m_pendingFrom.end() && --*from <= 0)
        m_pendingFrom.erase(from);
    m_pending.erase(it);
    return v;
}

ConnectionLimits::Victim ConnectionLimits::admitHandshake(const QHostAddress &from, ReaderWorker *reader,
                                                          quint64 id)
{
    QMutexLocker l(&m_lock);
    Victim victim;
    if (m_pendingFrom.value(from) >= m_caps.handshakingPerAddress) {
        for (auto it = m_pending.begin(); it != m_pending.end(); ++it) {
            if (it->from == from) {
                victim = evict(it);
                break;
            }
        }
    } else if (qsizetype(m_pending.size()) >= m_caps.handshaking) {
        victim = evict(m_pending.begin());
    }
    m_pending.push_back(Pending{id, reader, from});
    m_pendingById.insert(id, std::prev(m_pending.end()));
    ++m_pendingFrom[from];
    return victim;
}

void ConnectionLimits::handshakeDone(quint64 id)
{
    QMutexLocker l(&m_lock);
    const auto it = m_pendingById.constFind(id);
    if (it != m_pendingById.cend())
        evict(*it);
}

bool ConnectionLimits::admitConnection(const QHostAddress &from, QString *why)
{
    QMutexLocker l(&m_lock);
    if (m_connections >= m_caps.connections) {
        *why = QStringLiteral("%1 connections are open, the most this process takes (descriptor limit %2)")
                   .arg(m_connections)
                   .arg(descriptorLimit());
        return false;
    }
    const int fromThere = m_connectionsFrom.value(from);
    if (fromThere >= m_caps.connectionsPerAddress) {
        *why = QStringLiteral("%1 connections from %2 are open, the most one address may hold")
                   .arg(fromThere)
                   .arg(from.toString());
        return false;
    }
    ++m_connectionsFrom[from];
    ++m_connections;
    return true;
}

void ConnectionLimits::connectionDone(const QHostAddress &from)
{
    QMutexLocker l(&m_lock);
    --m_connections;
    auto it = m_connectionsFrom.find(from);
    if (it != m_connectionsFrom.end() && --*it <= 0)
        m_connectionsFrom.erase(it);
}

} // namespace dialog::net
