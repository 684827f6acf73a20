#include "quota.h"

namespace dialog::isd {

QString Quota::check(const QString &client, const QString &name, qint64 bytes)
{
    const auto old = m_owned.constFind(name);
    const bool exists = old != m_owned.cend();
    const Usage mine = m_usage.value(client);
    // What the write would leave: the old value is replaced, and counted to its owner until now.
    const qint64 mineObjects = mine.objects + (exists && old->client == client ? 0 : 1);
    const qint64 mineBytes = mine.bytes + bytes - (exists && old->client == client ? old->bytes : 0);
    const qint64 totalObjects = m_owned.size() + (exists ? 0 : 1);
    const qint64 totalBytes = m_bytes + bytes - (exists ? old->bytes : 0);
    QString why;
    if (bytes > m_limits.maxObjectBytes)
        why = QStringLiteral("quota exceeded: the value is %1 bytes, the largest accepted is %2")
                  .arg(bytes)
                  .arg(m_limits.maxObjectBytes);
    else if (mineObjects > m_limits.maxObjectsPerClient)
        why = QStringLiteral("quota exceeded: %1 owns %2 objects, the most one client may")
                  .arg(client)
                  .arg(m_limits.maxObjectsPerClient);
    else if (mineBytes > m_limits.maxBytesPerClient)
        why = QStringLiteral("quota exceeded: %1 would own %2 bytes, the most one client may is %3")
                  .arg(client)
                  .arg(mineBytes)
                  .arg(m_limits.maxBytesPerClient);
    else if (totalObjects > m_limits.maxObjects)
        why =
            QStringLiteral("quota exceeded: the server holds %1 objects, its limit").arg(m_limits.maxObjects);
    else if (totalBytes > m_limits.maxBytes)
        why = QStringLiteral("quota exceeded: the server would hold %1 bytes, its limit is %2")
                  .arg(totalBytes)
                  .arg(m_limits.maxBytes);
    if (!why.isEmpty())
        ++m_refused;
    return why;
}

void Quota::written(const QString &client, const QString &name, qint64 bytes)
{
    removed(name);
    m_owned.insert(name, Owned{client, bytes});
    Usage &u = m_usage[client];
    ++u.objects;
    u.bytes += bytes;
    m_bytes += bytes;
}

void Quota::removed(const QString &name)
{
    const auto it = m_owned.find(name);
    if (it == m_owned.end())
        return;
    auto u = m_usage.find(it->client);
    if (u != m_usage.end()) {
        --u->objects;
        u->bytes -= it->bytes;
        if (u->objects <= 0)
            m_usage.erase(u);
    }
    m_bytes -= it->bytes;
    m_owned.erase(it);
}

} // namespace dialog::isd
