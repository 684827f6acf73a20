#include "quota.h"

namespace dialog::isd {

QString Quota::check(const QString &client, const QString &address, const QString &name, qint64 bytes)
{
    const auto old = m_owned.constFind(name);
    const bool exists = old != m_owned.cend();
    const Usage mine = m_usage.value(client);
    const Usage here = m_usageByAddress.value(address);
    const bool sameAddress = exists && old->address == address;
    // What the write would leave: the old value is replaced, its history stays (and passes to the
    // writer with the object); both were counted to its owner until now.
    const qint64 oldValue = exists ? old->bytes - old->history : 0;
    const qint64 history = exists ? old->history : 0;
    const qint64 hereObjects = here.objects + (sameAddress ? 0 : 1);
    const qint64 hereBytes = here.bytes + bytes + (sameAddress ? -oldValue : history);
    const qint64 mineObjects = mine.objects + (exists && old->client == client ? 0 : 1);
    const qint64 mineBytes = mine.bytes + bytes + (exists && old->client == client ? -oldValue : history);
    const qint64 totalObjects = m_owned.size() + (exists ? 0 : 1);
    const qint64 totalBytes = m_bytes + bytes - oldValue;
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
        why = QStringLiteral("quota exceeded: %1 would own %2 bytes (values and their history), the most "
                             "one client may is %3")
                  .arg(client)
                  .arg(mineBytes)
                  .arg(m_limits.maxBytesPerClient);
    else if (!address.isEmpty() && hereObjects > m_limits.maxObjectsPerAddress)
        why = QStringLiteral("quota exceeded: the clients from %1 own %2 objects, the most one address may")
                  .arg(address)
                  .arg(m_limits.maxObjectsPerAddress);
    else if (!address.isEmpty() && hereBytes > m_limits.maxBytesPerAddress)
        why = QStringLiteral("quota exceeded: the clients from %1 would own %2 bytes (values and their "
                             "history), the most one address may is %3")
                  .arg(address)
                  .arg(hereBytes)
                  .arg(m_limits.maxBytesPerAddress);
    else if (totalObjects > m_limits.maxObjects)
        why =
            QStringLiteral("quota exceeded: the server holds %1 objects, its limit").arg(m_limits.maxObjects);
    else if (totalBytes > m_limits.maxBytes)
        why = QStringLiteral("quota exceeded: the server would hold %1 bytes (values and their history), its "
                             "limit is %2")
                  .arg(totalBytes)
                  .arg(m_limits.maxBytes);
    if (!why.isEmpty())
        ++m_refused;
    return why;
}

void Quota::written(const QString &client, const QString &address, const QString &name, qint64 bytes)
{
    const qint64 history = m_owned.value(name).history;
    removed(name);
    m_owned.insert(name, Owned{client, address, bytes, 0});
    Usage &u = m_usage[client];
    ++u.objects;
    u.bytes += bytes;
    if (!address.isEmpty()) {
        Usage &a = m_usageByAddress[address];
        ++a.objects;
        a.bytes += bytes;
    }
    m_bytes += bytes;
    historyHeld(name, history); // the object's history is its new owner's
}

void Quota::historyHeld(const QString &name, qint64 bytes)
{
    const auto it = m_owned.find(name);
    if (it == m_owned.end())
        return;
    const qint64 delta = bytes - it->history;
    if (delta == 0)
        return;
    it->history = bytes;
    it->bytes += delta;
    if (auto u = m_usage.find(it->client); u != m_usage.end())
        u->bytes += delta;
    if (auto a = m_usageByAddress.find(it->address); a != m_usageByAddress.end())
        a->bytes += delta;
    m_bytes += delta;
}

QString Quota::checkTypes(qsizetype known, qsizetype more) const
{
    if (known + more <= m_limits.maxTypes)
        return {};
    return QStringLiteral("quota exceeded: the server knows %1 types, %2 more would pass its limit of %3")
        .arg(known)
        .arg(more)
        .arg(m_limits.maxTypes);
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
    if (auto a = m_usageByAddress.find(it->address); a != m_usageByAddress.end()) {
        --a->objects;
        a->bytes -= it->bytes;
        if (a->objects <= 0)
            m_usageByAddress.erase(a);
    }
    m_bytes -= it->bytes;
    m_owned.erase(it);
}

} // namespace dialog::isd
