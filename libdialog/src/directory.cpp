#include "dialog/directory.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <utility>

namespace dialog {

namespace {

namespace key {
const QLatin1String timeMs("time_ms"), processes("processes"), lost("lost"), name("name"), host("host"),
    port("port"), pid("pid"), services("services"), commands("commands"), subscriptions("subscriptions"),
    connectedAtMs("connected_at_ms"), lostAtMs("lost_at_ms"), reason("reason"), atMs("at_ms"),
    messagesOut("messages_out"), bytesOut("bytes_out"), messagesIn("messages_in"), bytesIn("bytes_in"),
    dropped("dropped"), reconnects("reconnects"), protocolErrors("protocol_errors"),
    queuedBytes("queued_bytes"), outgoingConnections("outgoing_connections"),
    incomingConnections("incoming_connections"), generation("generation"), page("page"), pages("pages"),
    continued("continued"), omitted("omitted"), version("version");
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
    if (!p.version.isEmpty())
        o.insert(key::version, p.version);
    if (lost) {
        o.insert(key::lostAtMs, p.lostAtMs);
        o.insert(key::reason, p.lostReason);
        if (p.omittedNames > 0)
            o.insert(key::omitted, p.omittedNames);
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
    p.version = o.value(key::version).toString();
    p.services = strings(o.value(key::services));
    p.commands = strings(o.value(key::commands));
    p.subscriptions = strings(o.value(key::subscriptions));
    p.connectedAtMs = o.value(key::connectedAtMs).toInteger();
    p.lostAtMs = o.value(key::lostAtMs).toInteger();
    p.lostReason = o.value(key::reason).toString();
    p.omittedNames = qMax(0, o.value(key::omitted).toInt());
    return p;
}

QByteArray compact(const QJsonValue &v)
{
    return v.isArray() ? QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact)
                       : QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact);
}

/// A process whose entry is over @p room bytes of JSON, as entries of at most that size each (the
/// second and later marked "continued"); a part holds at least one name, so a name longer than
/// the room still travels, alone.
QList<QByteArray> splitEntry(const ProcessEntry &p, bool lost, qint64 room)
{
    ProcessEntry skeleton = p;
    skeleton.services.clear();
    skeleton.commands.clear();
    skeleton.subscriptions.clear();
    // The continuation flag and separators: a few bytes per part beyond the skeleton.
    const qint64 base = compact(entryJson(skeleton, lost)).size() + 20;
    QList<QByteArray> parts;
    ProcessEntry cur = skeleton;
    qint64 bytes = base;
    const auto flush = [&] {
        QJsonObject o = entryJson(cur, lost);
        if (!parts.isEmpty())
            o.insert(key::continued, true);
        parts.append(compact(o));
        cur = skeleton;
        bytes = base;
    };
    const QList<QStringList ProcessEntry::*> lists{&ProcessEntry::services, &ProcessEntry::commands,
                                                   &ProcessEntry::subscriptions};
    for (QStringList ProcessEntry::*list : lists) {
        for (const QString &name : p.*list) {
            const qint64 size = compact(QJsonArray{name}).size() - 1; // the name and a comma
            if (bytes + size > room && bytes > base)
                flush();
            (cur.*list).append(name);
            bytes += size;
        }
    }
    flush();
    return parts;
}

void mergeInto(ProcessEntry &into, const ProcessEntry &more)
{
    into.services += more.services;
    into.commands += more.commands;
    into.subscriptions += more.subscriptions;
}

/// The object of @p json if it has an array under "processes".
Status snapshotObject(const QByteArray &json, const char *what, QJsonObject *out)
{
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    QString why;
    if (pe.error != QJsonParseError::NoError)
        why = pe.errorString();
    else if (!doc.isObject() || !doc.object().value(key::processes).isArray())
        why = QStringLiteral("no \"processes\" array");
    if (!why.isEmpty())
        return Status(Status::Code::BadRequest, QStringLiteral("malformed %1: %2").arg(QLatin1String(what), why));
    *out = doc.object();
    return {};
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

QString commandServiceName()
{
    return QStringLiteral("DIALOG.Command");
}

QByteArray commandRequestData(const QString &command, const QByteArray &data)
{
    return command.toUtf8() + '\0' + data;
}

bool splitCommandRequest(const QByteArray &request, QByteArray &command, QByteArray &data)
{
    const qsizetype nul = request.indexOf('\0');
    if (nul < 0)
        return false;
    command = request.left(nul);
    data = request.mid(nul + 1);
    return true;
}

bool ProcessEntry::operator==(const ProcessEntry &o) const
{
    return name == o.name && host == o.host && port == o.port && pid == o.pid && version == o.version &&
           services == o.services && commands == o.commands && subscriptions == o.subscriptions &&
           connectedAtMs == o.connectedAtMs && lostAtMs == o.lostAtMs && lostReason == o.lostReason &&
           omittedNames == o.omittedNames;
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

Status DirectorySnapshot::fromJson(const QByteArray &json, DirectorySnapshot *out)
{
    QJsonObject object;
    if (Status bad = snapshotObject(json, "DIALOG.Directory", &object); !bad.isOk())
        return bad;
    const QJsonObject *o = &object;
    DirectorySnapshot s;
    s.timeMs = o->value(key::timeMs).toInteger();
    for (const QJsonValue &v : o->value(key::processes).toArray())
        s.processes.append(entryFrom(v.toObject()));
    for (const QJsonValue &v : o->value(key::lost).toArray())
        s.lost.append(entryFrom(v.toObject()));
    *out = std::move(s);
    return {};
}

QList<QByteArray> DirectorySnapshot::toPages(qint64 maxBytes, quint64 generation) const
{
    maxBytes = qMax(maxBytes, MinPageBytes);
    // Room for the page's own fields (time, generation, page numbers, the two arrays).
    constexpr qint64 PageOverhead = 256;
    const qint64 room = maxBytes - PageOverhead;
    struct Page
    {
        QByteArray processes, lost; // entries, comma-separated
        qint64 bytes = 0;
    };
    QList<Page> pages(1);
    const auto add = [&](const QByteArray &entry, bool isLost) {
        if (pages.last().bytes + entry.size() + 1 > room && pages.last().bytes > 0)
            pages.append(Page());
        QByteArray &list = isLost ? pages.last().lost : pages.last().processes;
        if (!list.isEmpty())
            list.append(',');
        list.append(entry);
        pages.last().bytes += entry.size() + 1;
    };
    const auto place = [&](const ProcessEntry &e, bool isLost) {
        const QByteArray whole = compact(entryJson(e, isLost));
        if (whole.size() <= room)
            add(whole, isLost);
        else
            for (const QByteArray &part : splitEntry(e, isLost, room))
                add(part, isLost);
    };
    for (const ProcessEntry &p : processes)
        place(p, false);
    for (const ProcessEntry &p : lost)
        place(p, true);
    // Entries are compact JSON objects already: the page is put together around them.
    QList<QByteArray> out;
    out.reserve(pages.size());
    for (qsizetype i = 0; i < pages.size(); ++i) {
        QByteArray page;
        page.reserve(pages.at(i).bytes + PageOverhead);
        page += "{\"time_ms\":" + QByteArray::number(timeMs) +
                ",\"generation\":" + QByteArray::number(generation) + ",\"page\":" + QByteArray::number(i) +
                ",\"pages\":" + QByteArray::number(pages.size()) + ",\"processes\":[";
        page += pages.at(i).processes;
        page += "],\"lost\":[";
        page += pages.at(i).lost;
        page += "]}";
        out.append(page);
    }
    return out;
}

Status DirectoryAssembler::add(const QByteArray &message, std::optional<DirectorySnapshot> *complete)
{
    complete->reset();
    QJsonObject object;
    if (Status bad = snapshotObject(message, "DIALOG.Directory", &object); !bad.isOk())
        return bad;
    const QJsonObject *o = &object;
    const int pages = o->value(key::pages).toInt(1);
    const int page = o->value(key::page).toInt(0);
    const quint64 generation = quint64(o->value(key::generation).toDouble(0));
    if (pages < 1 || page < 0 || page >= pages)
        return Status(Status::Code::BadRequest,
                      QStringLiteral("malformed DIALOG.Directory: page %1 of %2").arg(page).arg(pages));
    if (page == 0) {
        m_generation = generation;
        m_pages = pages;
        m_next = 0;
        m_partial = DirectorySnapshot();
        m_partial.timeMs = o->value(key::timeMs).toInteger();
    } else if (generation != m_generation || pages != m_pages || page != m_next) {
        return {}; // a page of a generation whose start was missed: wait for the next one
    }
    const auto append = [](QList<ProcessEntry> &list, const QJsonArray &entries) {
        for (const QJsonValue &v : entries) {
            const QJsonObject e = v.toObject();
            ProcessEntry p = entryFrom(e);
            if (e.value(key::continued).toBool() && !list.isEmpty() && list.last().name == p.name)
                mergeInto(list.last(), p);
            else
                list.append(std::move(p));
        }
    };
    append(m_partial.processes, o->value(key::processes).toArray());
    append(m_partial.lost, o->value(key::lost).toArray());
    if (++m_next < m_pages)
        return {};
    m_next = 0;
    m_pages = 0;
    *complete = std::exchange(m_partial, DirectorySnapshot());
    return {};
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

Status StatisticsSnapshot::fromJson(const QByteArray &json, StatisticsSnapshot *out)
{
    QJsonObject object;
    if (Status bad = snapshotObject(json, "DIALOG.Statistics", &object); !bad.isOk())
        return bad;
    const QJsonObject *o = &object;
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
    *out = std::move(s);
    return {};
}

} // namespace dialog
