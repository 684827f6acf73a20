// What one client may store in an IS server, and what the server holds in total.
#pragma once

#include <QHash>
#include <QString>

namespace dialog::isd {

/// Accounts the objects and bytes (encoded values, and the history ring held for them) of an IS
/// server per client process (the one that wrote an object last owns it, and its history), per
/// address the clients connect from, and in total, and refuses writes over the limits. A process
/// name is what the process claims; the address is its connection's, so a client that writes under
/// many names still shares one address's quota. Used by the server's main thread only.
class Quota
{
public:
    struct Limits
    {
        qint64 maxObjectBytes = 4 * 1024 * 1024;          ///< one encoded value
        qint64 maxObjectsPerClient = 100000;              ///< objects one client process owns
        qint64 maxBytesPerClient = 256LL * 1024 * 1024;   ///< bytes one client process owns
        qint64 maxObjects = 1000000;                      ///< objects in the server
        qint64 maxBytes = 2LL * 1024 * 1024 * 1024;       ///< bytes in the server
        qint64 maxObjectsPerAddress = 400000;             ///< objects the clients of one address own
        qint64 maxBytesPerAddress = 1024LL * 1024 * 1024; ///< bytes the clients of one address own
        qint64 maxTypes = 10000;                          ///< types the server knows (built in and declared)
    };

    explicit Quota(const Limits &limits) : m_limits(limits) {}

    /// Empty when @p client, connected from @p address, may write @p bytes to @p name; otherwise
    /// why not (and counted).
    QString check(const QString &client, const QString &address, const QString &name, qint64 bytes);
    /// @p client (from @p address; empty: none, as for a checkpoint's objects) wrote @p bytes to
    /// @p name (created or replaced); it owns the object now.
    void written(const QString &client, const QString &address, const QString &name, qint64 bytes);
    void removed(const QString &name);
    /// The history ring holds @p bytes for @p name now: counted to the object's owner (its client,
    /// its address, the total) with its value. Nothing for an object not accounted.
    void historyHeld(const QString &name, qint64 bytes);
    /// Empty when the server, knowing @p known types, may take @p more; otherwise why not.
    QString checkTypes(qsizetype known, qsizetype more) const;

    /// Writes refused since start.
    quint64 refused() const { return m_refused; }
    qint64 objects() const { return m_owned.size(); }
    qint64 bytes() const { return m_bytes; }

private:
    struct Owned
    {
        QString client, address;
        qint64 bytes = 0;   // the value's and the history's
        qint64 history = 0; // of which the history's
    };
    struct Usage
    {
        qint64 objects = 0, bytes = 0;
    };
    Limits m_limits;
    QHash<QString, Owned> m_owned;          // object name -> owner and size
    QHash<QString, Usage> m_usage;          // client -> what it owns
    QHash<QString, Usage> m_usageByAddress; // address -> what its clients own
    qint64 m_bytes = 0;
    quint64 m_refused = 0;
};

} // namespace dialog::isd
