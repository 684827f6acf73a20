#include "dialog/directory.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace dialog {

namespace {

namespace key {
const QLatin1String timeMs("time_ms"), processes("processes"), lost("lost"), name("name"), host("host"),
    port("port"), pid("pid"), services("services"), commands("commands"), subscriptions("subscriptions"),
    connectedAtMs("connected_at_ms"), lostAtMs("lost_at_ms"), reason("reason"), atMs("at_ms"),
    messagesOut("messages_out"), bytesOut("bytes_out"), messagesIn("messages_in"), bytesIn("bytes_in"),
    dropped("dropped"), reconnects("reconnects"), protocolErrors("protocol_errors"),
    queuedBytes("queued_bytes"), outgoingConnections("outgoing_connections"),
    incomingConnections("incoming_connections");
} // namespace key

QStringList strings(const QJsonValue &v)
{
    QStringList l;
    for (const QJsonValue &x : v.toArray())
        l << x.toString();
    return l;
}

QJsonObject entryJson(const ProcessEntry &p, bool lost)
{
    QJsonObject o{{key::name, p.name},
                  {key::host, p.host},
                  {key::port, p.port},
                  {key::pid, p.pid},
                  {key::services, QJsonArray::fromStringList(p.services)},
                  {key::commands, QJsonArray::fromStringList(p.commands)},
                  {key::subscriptions, QJsonArray::fromStringList(p.subscriptions)},
                  {key::connectedAtMs, p.connectedAtMs}};
    if (lost) {
        o.insert(key::lostAtMs, p.lostAtMs);
        o.insert(key::reason, p.lostReason);
    }
    return o;
}

ProcessEntry entryFrom(const QJsonObject &o)
{
    ProcessEntry p;
    p.name = o.value(key::name).toString();
    p.host = o.value(key::host).toString();
    p.port = quint16(qBound(0, o.value(key::port).toInt(), 65535));
    p.pid = o.value(key::pid).toInteger();
    p.services = strings(o.value(key::services));
    p.commands = strings(o.value(key::commands));
    p.subscriptions = strings(o.value(key::subscriptions));
    p.connectedAtMs = o.value(key::connectedAtMs).toInteger();
    p.lostAtMs = o.value(key::lostAtMs).toInteger();
    p.lostReason = o.value(key::reason).toString();
    return p;
}

/// The object of @p json if it has an array under "processes".
std::optional<QJsonObject> snapshotObject(const QByteArray &json, const char *what, QString *error)
{
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    QString why;
    if (pe.error != QJsonParseError::NoError)
        why = pe.errorString();
    else if (!doc.isObject() || !doc.object().value(key::processes).isArray())
        why = QStringLiteral("no \"processes\" array");
    if (why.isEmpty())
        return doc.object();
    if (error)
        *error = QStringLiteral("malformed %1: %2").arg(QLatin1String(what), why);
    return std::nullopt;
}

template <typename T> const T *byName(const QList<T> &list, const QString &name)
{
    for (const T &x : list)
        if (x.name == name)
            return &x;
    return nullptr;
}

} // namespace

QString directoryServiceName()
{
    return QStringLiteral("DIALOG.Directory");
}

QString statisticsServiceName()
{
    return QStringLiteral("DIALOG.Statistics");
}

bool ProcessEntry::operator==(const ProcessEntry &o) const
{
    return name == o.name && host == o.host && port == o.port && pid == o.pid && services == o.services &&
           commands == o.commands && subscriptions == o.subscriptions && connectedAtMs == o.connectedAtMs &&
           lostAtMs == o.lostAtMs && lostReason == o.lostReason;
}

const ProcessEntry *DirectorySnapshot::process(const QString &name) const
{
    return byName(processes, name);
}

QStringList DirectorySnapshot::processNames() const
{
    QStringList l;
    l.reserve(processes.size());
    for (const ProcessEntry &p : processes)
        l << p.name;
    return l;
}

QJsonObject DirectorySnapshot::toJsonObject() const
{
    QJsonArray procs, gone;
    for (const ProcessEntry &p : processes)
        procs.append(entryJson(p, false));
    for (const ProcessEntry &p : lost)
        gone.append(entryJson(p, true));
    return QJsonObject{{key::timeMs, timeMs}, {key::processes, procs}, {key::lost, gone}};
}

QByteArray DirectorySnapshot::toJson() const
{
    return QJsonDocument(toJsonObject()).toJson(QJsonDocument::Compact);
}

std::optional<DirectorySnapshot> DirectorySnapshot::fromJson(const QByteArray &json, QString *error)
{
    const auto o = snapshotObject(json, "DIALOG.Directory", error);
    if (!o)
        return std::nullopt;
    DirectorySnapshot s;
    s.timeMs = o->value(key::timeMs).toInteger();
    for (const QJsonValue &v : o->value(key::processes).toArray())
        s.processes.append(entryFrom(v.toObject()));
    for (const QJsonValue &v : o->value(key::lost).toArray())
        s.lost.append(entryFrom(v.toObject()));
    return s;
}

bool DirectorySnapshot::operator==(const DirectorySnapshot &o) const
{
    return timeMs == o.timeMs && processes == o.processes && lost == o.lost;
}

bool ProcessStatistics::operator==(const ProcessStatistics &o) const
{
    return name == o.name && atMs == o.atMs && messagesOut == o.messagesOut && bytesOut == o.bytesOut &&
           messagesIn == o.messagesIn && bytesIn == o.bytesIn && dropped == o.dropped &&
           reconnects == o.reconnects && protocolErrors == o.protocolErrors && queuedBytes == o.queuedBytes &&
           outgoingConnections == o.outgoingConnections && incomingConnections == o.incomingConnections;
}

const ProcessStatistics *StatisticsSnapshot::process(const QString &name) const
{
    return byName(processes, name);
}

QJsonObject StatisticsSnapshot::toJsonObject() const
{
    QJsonArray procs;
    for (const ProcessStatistics &s : processes)
        procs.append(QJsonObject{{key::name, s.name},
                                 {key::atMs, s.atMs},
                                 {key::messagesOut, double(s.messagesOut)},
                                 {key::bytesOut, double(s.bytesOut)},
                                 {key::messagesIn, double(s.messagesIn)},
                                 {key::bytesIn, double(s.bytesIn)},
                                 {key::dropped, double(s.dropped)},
                                 {key::reconnects, double(s.reconnects)},
                                 {key::protocolErrors, double(s.protocolErrors)},
                                 {key::queuedBytes, double(s.queuedBytes)},
                                 {key::outgoingConnections, s.outgoingConnections},
                                 {key::incomingConnections, s.incomingConnections}});
    return QJsonObject{{key::timeMs, timeMs}, {key::processes, procs}};
}

QByteArray StatisticsSnapshot::toJson() const
{
    return QJsonDocument(toJsonObject()).toJson(QJsonDocument::Compact);
}

std::optional<StatisticsSnapshot> StatisticsSnapshot::fromJson(const QByteArray &json, QString *error)
{
    const auto o = snapshotObject(json, "DIALOG.Statistics", error);
    if (!o)
        return std::nullopt;
    StatisticsSnapshot s;
    s.timeMs = o->value(key::timeMs).toInteger();
    for (const QJsonValue &v : o->value(key::processes).toArray()) {
        const QJsonObject p = v.toObject();
        // Negative or fractional counters cannot come from a Control Server: clamp, do not wrap.
        const auto count = [&](QLatin1String k) { return quint64(qMax(0.0, p.value(k).toDouble())); };
        ProcessStatistics f;
        f.name = p.value(key::name).toString();
        f.atMs = p.value(key::atMs).toInteger();
        f.messagesOut = count(key::messagesOut);
        f.bytesOut = count(key::bytesOut);
        f.messagesIn = count(key::messagesIn);
        f.bytesIn = count(key::bytesIn);
        f.dropped = count(key::dropped);
        f.reconnects = count(key::reconnects);
        f.protocolErrors = count(key::protocolErrors);
        f.queuedBytes = qint64(count(key::queuedBytes));
        f.outgoingConnections = p.value(key::outgoingConnections).toInt();
        f.incomingConnections = p.value(key::incomingConnections).toInt();
        s.processes.append(f);
    }
    return s;
}

} // namespace dialog
