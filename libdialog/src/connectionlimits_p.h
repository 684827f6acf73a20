// Caps on the inbound connections of a transport that are not lockouts. Connections still in their
// handshake (no HELLO, or no AUTH yet) say nothing about who they are: past a cap the oldest of them
// (from the same address first) is given up for the newcomer, so a flood of idle sockets cannot keep
// a real process out for longer than its own handshake takes. Connections past their handshake are
// capped per source address and in total, below the process's descriptor limit (raised to its hard
// limit at start), so that a flood is refused with a reason instead of exhausting descriptors.
#pragma once

#include <QHash>
#include <QHostAddress>
#include <QMutex>
#include <QString>
#include <list>

namespace dialog::net {

class ReaderWorker;

class ConnectionLimits
{
public:
    struct Caps
    {
        int handshaking = 1024;           ///< connections in their handshake, in total
        int handshakingPerAddress = 64;   ///< the same, from one source address
        int connections = 0;              ///< connections past their handshake (0: from descriptors)
        int connectionsPerAddress = 1024; ///< the same, from one source address
    };
    /// Raises the descriptor limit to its hard limit (once per process) and derives the caps that
    /// @p wanted leaves open from it.
    explicit ConnectionLimits(const Caps &wanted);

    /// The caps in force (after the descriptor limit bounded them).
    const Caps &caps() const { return m_caps; }

    /// A connection to be closed to make room (see admitHandshake).
    struct Victim
    {
        ReaderWorker *reader = nullptr; ///< null: none
        quint64 id = 0;
        QHostAddress from;
    };
    /// Counts the connection @p id (read by @p reader) from @p from as in its handshake. Never
    /// refuses: at a cap the oldest one in its handshake from that address (or, at the total cap,
    /// of all) is no longer counted and returned for its reader to close. Thread-safe.
    Victim admitHandshake(const QHostAddress &from, ReaderWorker *reader, quint64 id);
    /// The connection @p id finished its handshake or closed; nothing if it was given up. Thread-safe.
    void handshakeDone(quint64 id);
    /// Counts a connection from @p from past its handshake; false (not counted) with @p why when a
    /// cap is reached. Thread-safe.
    bool admitConnection(const QHostAddress &from, QString *why);
    /// A connection counted by admitConnection() closed. Thread-safe.
    void connectionDone(const QHostAddress &from);

    /// The descriptor limit after raising it (the soft limit, RLIMIT_NOFILE).
    static qint64 descriptorLimit();

private:
    struct Pending
    {
        quint64 id;
        ReaderWorker *reader;
        QHostAddress from;
    };
    Victim evict(std::list<Pending>::iterator it); // with m_lock held

    Caps m_caps;
    QMutex m_lock;
    std::list<Pending> m_pending; // oldest first; guarded by m_lock
    QHash<quint64, std::list<Pending>::iterator> m_pendingById;
    QHash<QHostAddress, int> m_pendingFrom;
    int m_connections = 0;
    QHash<QHostAddress, int> m_connectionsFrom;
};

} // namespace dialog::net
