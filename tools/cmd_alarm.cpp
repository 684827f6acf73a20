// dialogctl alarm: the alarm server's table and its operators' actions — ls, tree, history, ack,
// shelve, unshelve, disable, enable — as requests on ALARM.Server.
#include "clientsetup.h"

#include "dialog/logrecord.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <cstdio>

using namespace Qt::StringLiterals;

namespace dialog::tool {

namespace {

// Exit codes of `dialogctl alarm` (in its usage and docs/alarms.md).
constexpr int Usage = 1;    // bad arguments: nothing was asked
constexpr int Refused = 2;  // the alarm server refused: unknown alarm, comment required, nothing to do …
constexpr int NoServer = 3; // no answer: no alarm server, or the Control Server cannot be reached
constexpr int Denied = 4;   // the access list does not let this user do it

const char *alarmUsage =
    "usage: dialogctl alarm <verb> [options]\n"
    "\n"
    "  ls [--all]                     the alarm table (active, latched, shelved, disabled); --all: every "
    "alarm\n"
    "  tree [PATH]                    the tree, each node with the worst active alarm below it\n"
    "  history [PATH] [--since T]     the history of changes, newest first (--until, --limit)\n"
    "  ack PATH [--comment TEXT]      acknowledge\n"
    "  shelve PATH --for 8h|--until T --reason TEXT\n"
    "  unshelve PATH\n"
    "  disable PATH [--comment TEXT]  (experts: see the access list)\n"
    "  enable PATH\n"
    "\n"
    "--json prints JSON. Exit status: 0 done, 1 bad arguments, 2 refused by the alarm server,\n"
    "3 no alarm server answered, 4 permission denied by the access list.\n";

void print(const QByteArray &text)
{
    std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
}

QString timeText(qint64 ms)
{
    return ms > 0 ? QDateTime::fromMSecsSinceEpoch(ms).toString(u"yyyy-MM-dd HH:mm:ss"_s) : u"-"_s;
}

/// "8h", "30m", "90s", "2d" from now, ISO 8601, or ms since the epoch; 0 if not understood.
qint64 parseUntil(const QString &text, bool relative)
{
    static const QRegularExpression duration(u"^(\\d+(?:\\.\\d+)?)(ms|s|m|h|d)$"_s);
    const QRegularExpressionMatch m = duration.match(text);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (m.hasMatch()) {
        static const QHash<QString, double> unit{
            {u"ms"_s, 1}, {u"s"_s, 1e3}, {u"m"_s, 6e4}, {u"h"_s, 3.6e6}, {u"d"_s, 8.64e7}};
        return now + qint64(m.captured(1).toDouble() * unit.value(m.captured(2)));
    }
    if (relative)
        return 0;
    const QDateTime t = QDateTime::fromString(text, Qt::ISODate);
    if (t.isValid())
        return t.toMSecsSinceEpoch();
    bool ok = false;
    const qint64 ms = text.toLongLong(&ok);
    return ok ? ms : 0;
}

struct AlarmVerb
{
    QString name;
    OptionTable table;
    qint64 timeoutMs = 5000;

    explicit AlarmVerb(const QString &verb) : name(verb), table(program(verb))
    {
        table.add({Option::flag(u"json"_s, u"JSON output."_s),
                   Option::integer(u"timeout-ms"_s, u"ms"_s,
                                   u"How long to wait for the alarm server (default 5000)."_s, &timeoutMs,
                                   100, 600000)});
    }
    bool json() const { return table.isSet(u"json"_s); }

    /// Sends @p request to ALARM.Server; the exit code, the answer in @p answer.
    int call(const QJsonObject &request, QJsonObject *answer)
    {
        QString error;
        auto client = makeClient(table, name, &error);
        if (!client) {
            fail(name, error);
            return NoServer;
        }
        int rc = NoServer;
        bool answered = false;
        client->request(u"ALARM.Server"_s, QJsonDocument(request).toJson(QJsonDocument::Compact),
                        int(timeoutMs), client.get(), [&](const Reply &r) {
                            answered = true;
                            if (r.isOk()) {
                                *answer = QJsonDocument::fromJson(r.data()).object();
                                rc = 0;
                            } else if (r.error() == Status::Code::Failed) {
                                const QString why = r.status().message();
                                rc = why.startsWith(u"permission denied"_s) ? Denied : Refused;
                                fail(name, u"refused: %1"_s.arg(why));
                            } else {
                                fail(name, u"no answer from the alarm server (ALARM.Server): %1"_s.arg(
                                               r.status().toString()));
                            }
                            QCoreApplication::quit();
                        });
        QTimer::singleShot(int(timeoutMs) + 2000, client.get(), [] { QCoreApplication::quit(); });
        QCoreApplication::exec();
        if (!answered)
            fail(name, u"no answer from the alarm server (ALARM.Server) within %1 ms"_s.arg(timeoutMs));
        return rc;
    }
};

QString alarmLine(const QJsonObject &a)
{
    QStringList flags;
    if (a.value(u"shelved"_s).toBool())
        flags << u"shelved until %1 (%2)"_s.arg(timeText(a.value(u"shelved_until_ms"_s).toInteger()),
                                                a.value(u"shelve_reason"_s).toString());
    if (a.value(u"disabled"_s).toBool())
        flags << u"disabled by %1"_s.arg(a.value(u"disabled_by"_s).toString());
    if (a.contains(u"ack_by"_s) && a.value(u"state"_s).toString() == u"acknowledged"_s)
        flags << u"ack %1"_s.arg(a.value(u"ack_by"_s).toString());
    return u"%1  %2  %3  %4  %5%6\n"_s.arg(a.value(u"severity"_s).toString(), -7)
        .arg(a.value(u"state"_s).toString(), -12)
        .arg(timeText(a.value(u"raised_ms"_s).toInteger()), a.value(u"path"_s).toString(),
             a.value(u"value"_s).toString(),
             flags.isEmpty() ? QString() : u"  ["_s + flags.join(u"; "_s) + u']');
}

void printTree(const QJsonObject &node, int depth)
{
    const QString indent(depth * 2, u' ');
    const QString name = node.value(u"path"_s).toString().section(u'/', -1);
    if (node.contains(u"children"_s)) {
        print(u"%1%2  [%3: %4 of %5 active]\n"_s
                  .arg(indent, name.isEmpty() ? u"/"_s : name, node.value(u"worst"_s).toString())
                  .arg(node.value(u"annunciated"_s).toInt())
                  .arg(node.value(u"alarms"_s).toInt())
                  .toUtf8());
        for (const QJsonValue &c : node.value(u"children"_s).toArray())
            printTree(c.toObject(), depth + 1);
    } else {
        print(u"%1%2  %3 %4%5\n"_s
                  .arg(indent, name, node.value(u"severity"_s).toString(), node.value(u"state"_s).toString(),
                       node.value(u"shelved"_s).toBool() ? u" (shelved)"_s : QString())
                  .toUtf8());
    }
}

int positional(AlarmVerb &v, const QStringList &args, int min, int max, QStringList *out)
{
    if (!tool::parse(v.table, args))
        return Usage;
    *out = v.table.positionalArguments();
    if (out->size() < min || out->size() > max) {
        fail(v.name, min == max ? u"expected an alarm path"_s : u"too many arguments"_s);
        return Usage;
    }
    return 0;
}

} // namespace

int alarmVerb(const QStringList &args)
{
    const QString sub = args.value(1);
    if (sub.isEmpty() || sub == u"--help"_s || sub == u"-h"_s) {
        std::fputs(alarmUsage, sub.isEmpty() ? stderr : stdout);
        return sub.isEmpty() ? Usage : 0;
    }
    AlarmVerb v(u"alarm "_s + sub);
    const QStringList rest = args.mid(1);
    QStringList pos;
    QJsonObject request{{u"op"_s, sub}}, a;
    QString comment, reason, forText, untilText, since, until;
    qint64 limit = 100;
    int rc = 0;
    if (sub == u"ls"_s) {
        v.table.add(Option::flag(u"all"_s, u"Every alarm, also those in the normal state."_s));
        if ((rc = positional(v, rest, 0, 0, &pos)))
            return rc;
        request.insert(u"all"_s, v.table.isSet(u"all"_s));
        if ((rc = v.call(request, &a)))
            return rc;
        if (v.json()) {
            for (const QJsonValue &x : a.value(u"alarms"_s).toArray())
                print(QJsonDocument(x.toObject()).toJson(QJsonDocument::Compact) + '\n');
            return 0;
        }
        const QJsonObject c = a.value(u"counts"_s).toObject();
        print(u"%1 rules, worst %2: %3 active, %4 unacknowledged, %5 latched, %6 shelved, %7 disabled\n"_s
                  .arg(a.value(u"rules"_s).toInt())
                  .arg(a.value(u"worst"_s).toString())
                  .arg(c.value(u"active"_s).toInt())
                  .arg(c.value(u"unacknowledged"_s).toInt())
                  .arg(c.value(u"latched"_s).toInt())
                  .arg(c.value(u"shelved"_s).toInt())
                  .arg(c.value(u"disabled"_s).toInt())
                  .toUtf8());
        const QJsonObject h = a.value(u"history"_s).toObject();
        if (h.value(u"pending"_s).toInt() > 0 || h.contains(u"error"_s))
            print(u"history: %1 writes waiting, %2 failures: %3\n"_s.arg(h.value(u"pending"_s).toInt())
                      .arg(h.value(u"failures"_s).toInteger())
                      .arg(h.value(u"error"_s).toString())
                      .toUtf8());
        const QJsonObject hooks = a.value(u"hooks"_s).toObject();
        for (const QString &kind : {u"run"_s, u"post"_s}) {
            const QJsonObject k = hooks.value(kind).toObject();
            if (k.value(u"failed"_s).toInteger() > 0 || k.value(u"dropped"_s).toInteger() > 0)
                print(u"hooks (%1): %2 started, %3 failed (%4 timed out), %5 dropped\n"_s.arg(kind)
                          .arg(k.value(u"started"_s).toInteger())
                          .arg(k.value(u"failed"_s).toInteger())
                          .arg(k.value(u"timed_out"_s).toInteger())
                          .arg(k.value(u"dropped"_s).toInteger())
                          .toUtf8());
        }
        for (const QJsonValue &x : a.value(u"alarms"_s).toArray())
            print(alarmLine(x.toObject()).toUtf8());
        return 0;
    }
    if (sub == u"tree"_s || sub == u"history"_s) {
        if (sub == u"history"_s)
            v.table.add(
                {Option::text(u"since"_s, u"time"_s, u"From: 2h, 3d (ago), ISO 8601 or ms."_s, &since),
                 Option::text(u"until"_s, u"time"_s, u"Up to (same forms; default now)."_s, &until),
                 Option::integer(u"limit"_s, u"n"_s, u"At most this many rows (default 100)."_s, &limit, 1,
                                 100000)});
        if ((rc = positional(v, rest, 0, 1, &pos)))
            return rc;
        request.insert(u"path"_s, pos.value(0));
        if (sub == u"history"_s) {
            const auto s = since.isEmpty() ? std::optional<qint64>(0) : parseLogTime(since);
            const auto u = until.isEmpty() ? std::optional<qint64>(0) : parseLogTime(until);
            if (!s || !u) {
                fail(v.name, u"--since/--until: expected e.g. 2h, 3d, 2026-11-23T18:00:00 or ms"_s);
                return Usage;
            }
            request.insert(u"since_ms"_s, *s);
            request.insert(u"until_ms"_s, *u);
            request.insert(u"limit"_s, limit);
        }
        if ((rc = v.call(request, &a)))
            return rc;
        if (sub == u"tree"_s) {
            if (v.json())
                print(QJsonDocument(a).toJson(QJsonDocument::Compact) + '\n');
            else
                printTree(a, 0);
            return 0;
        }
        for (const QJsonValue &x : a.value(u"rows"_s).toArray()) {
            const QJsonObject r = x.toObject();
            if (v.json()) {
                print(QJsonDocument(r).toJson(QJsonDocument::Compact) + '\n');
                continue;
            }
            print(u"%1  %2  %3  %4  %5%6%7\n"_s
                      .arg(timeText(r.value(u"time_ms"_s).toInteger()), r.value(u"path"_s).toString(),
                           r.value(u"event"_s).toString(), r.value(u"severity"_s).toString(),
                           r.value(u"value"_s).toString(),
                           r.value(u"who"_s).toString().isEmpty() ? QString()
                                                                  : u"  by "_s + r.value(u"who"_s).toString(),
                           r.value(u"comment"_s).toString().isEmpty()
                               ? QString()
                               : u": "_s + r.value(u"comment"_s).toString())
                      .toUtf8());
        }
        if (a.contains(u"warning"_s))
            fail(v.name, a.value(u"warning"_s).toString());
        return 0;
    }
    if (sub == u"ack"_s || sub == u"disable"_s)
        v.table.add(Option::text(u"comment"_s, u"text"_s, u"Why (some alarms require it)."_s, &comment));
    else if (sub == u"shelve"_s)
        v.table.add(
            {Option::text(u"for"_s, u"duration"_s, u"How long: 30m, 8h, 2d."_s, &forText),
             Option::text(u"until"_s, u"time"_s, u"Until: ISO 8601 or ms since the epoch."_s, &untilText),
             Option::text(u"reason"_s, u"text"_s, u"Why it is shelved (required)."_s, &reason)});
    else if (sub != u"unshelve"_s && sub != u"enable"_s) {
        fail(u"alarm"_s, u"unknown verb '%1'"_s.arg(sub));
        std::fputs(alarmUsage, stderr);
        return Usage;
    }
    if ((rc = positional(v, rest, 1, 1, &pos)))
        return rc;
    request.insert(u"path"_s, pos.value(0));
    if (!comment.isEmpty())
        request.insert(u"comment"_s, comment);
    if (sub == u"shelve"_s) {
        const qint64 untilMs = !forText.isEmpty() ? parseUntil(forText, true) : parseUntil(untilText, false);
        if (untilMs <= 0) {
            fail(v.name, u"give --for 30m|8h|2d or --until 2026-12-02T08:00:00"_s);
            return Usage;
        }
        request.insert(u"until_ms"_s, untilMs);
        request.insert(u"reason"_s, reason);
    }
    if ((rc = v.call(request, &a)))
        return rc;
    const QJsonObject alarm = a.value(u"alarm"_s).toObject();
    print(v.json() ? QJsonDocument(alarm).toJson(QJsonDocument::Compact) + '\n' : alarmLine(alarm).toUtf8());
    return 0;
}

} // namespace dialog::tool
