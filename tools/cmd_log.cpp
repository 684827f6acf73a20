// dialogctl log: the message log — tail, search (answered by dialog-logger), report (from scripts).
#include "clientsetup.h"

#include "dialog/glob.h"
#include "dialog/logrecord.h"
#include "dialog/report.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimer>
#include <cstdio>
#include <optional>

namespace dialog::tool {

namespace {

const char *logUsage = "usage: dialogctl log <tail|search|report|stats> [options]\n"
                       "\n"
                       "  tail     the newest messages; --follow keeps printing new ones\n"
                       "  search   stored messages by time, severity, process, host, category, text, run\n"
                       "  report   report a message (as a script's process)\n"
                       "  stats    the logger's counters (JSON)\n";

// A --since / --until value into @p out.
std::function<Status(const QString &)> timeReader(qint64 *out)
{
    return [out](const QString &v) {
        const auto t = parseLogTime(v);
        if (!t)
            return Option::refuse(QStringLiteral("expected e.g. 2h, 30m, 2026-11-23T18:00:00 or ms"));
        *out = *t;
        return Status();
    };
}

/// Adds the options of a query, written to @p q (its limit is the default) and @p timeoutMs.
void addFilterOptions(OptionTable &p, LogQuery *q, qint64 *timeoutMs)
{
    p.add({Option::custom(QStringLiteral("since"), QStringLiteral("time"),
                          QStringLiteral("From this time: 2h, 30m, 10s, 3d ago, or ISO 8601, or ms."),
                          timeReader(&q->sinceMs)),
           Option::custom(QStringLiteral("until"), QStringLiteral("time"),
                          QStringLiteral("Up to this time (same forms)."), timeReader(&q->untilMs)),
           Option::custom(QStringLiteral("severity"), QStringLiteral("level"),
                          QStringLiteral("At least this severity: debug, info, warning, error, fatal."),
                          [q](const QString &v) {
                              const auto s = severityFromName(v);
                              if (!s)
                                  return Option::refuse(QStringLiteral("debug, info, warning, error, fatal"));
                              q->minSeverity = *s;
                              return Status();
                          }),
           Option::text(QStringLiteral("process"), QStringLiteral("glob"),
                        QStringLiteral("Process name pattern (*, ?, [..])."), &q->process),
           Option::text(QStringLiteral("host"), QStringLiteral("glob"), QStringLiteral("Host name pattern."),
                        &q->host),
           Option::text(QStringLiteral("category"), QStringLiteral("glob"),
                        QStringLiteral("Category pattern."), &q->category),
           Option::text(QStringLiteral("text"), QStringLiteral("text"),
                        QStringLiteral("Text containing this (case-insensitive)."), &q->text),
           Option::integer(QStringLiteral("run"), QStringLiteral("n"), QStringLiteral("Run number."), &q->run,
                           1, 0xffffffffLL),
           Option::integer(QStringLiteral("limit"), QStringLiteral("n"),
                           QStringLiteral("At most this many messages (1..10000, default %1).").arg(q->limit),
                           &q->limit, 1, 10000),
           Option::integer(QStringLiteral("before"), QStringLiteral("id"),
                           QStringLiteral("Paging: messages older than this id."), &q->beforeId, 1,
                           qint64(1) << 62),
           Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per message.")),
           Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                            QStringLiteral("Wait this long for the logger (default 5000)."), timeoutMs,
                            OptionUnit::Milliseconds, 1, 3600000)});
}

QString formatRecord(const LogRecord &r)
{
    QString line =
        QStringLiteral("%1 %2 %3@%4[%5] %6: %7")
            .arg(QDateTime::fromMSecsSinceEpoch(r.timeMs).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")),
                 severityName(r.severity).toUpper().leftJustified(7), r.process, r.host)
            .arg(r.pid)
            .arg(r.category, r.text);
    if (r.run)
        line += QStringLiteral(" [run %1]").arg(r.run);
    for (auto it = r.values.cbegin(); it != r.values.cend(); ++it)
        line += QStringLiteral(" %1=%2").arg(it.key(), it.value().toString());
    return line;
}

void printRecord(const LogRecord &r, bool json)
{
    const QByteArray line =
        json ? QJsonDocument(r.toJson()).toJson(QJsonDocument::Compact) : formatRecord(r).toUtf8();
    std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
    std::fputc('\n', stdout);
}

/// Sends one request to the logger and waits (event loop) for the answer.
Reply ask(Client &client, char kind, const QByteArray &payload, int timeoutMs)
{
    Reply answer;
    QEventLoop loop;
    client.request(logservice::service(), QByteArray(1, kind) + payload, timeoutMs, &loop,
                   [&](const Reply &r) {
                       answer = r;
                       loop.quit();
                   });
    loop.exec();
    return answer;
}

QString whyNot(const Reply &r, int timeoutMs)
{
    switch (r.error()) {
    case Status::Code::Timeout:
        return QStringLiteral("no answer from %1 within %2 ms (is dialog-logger running?)")
            .arg(logservice::service())
            .arg(timeoutMs);
    case Status::Code::ProviderLost:
        return QStringLiteral("the logger was lost while answering");
    case Status::Code::NotAccepted:
        return QStringLiteral("%1 does not answer requests").arg(logservice::service());
    default:
        return r.errorString().isEmpty() ? QStringLiteral("request failed") : r.errorString();
    }
}

/// search and tail: one page (or, with @p follow, the page then live messages).
int query(const QStringList &args, const QString &verb, bool tail)
{
    OptionTable p(program(verb));
    p.setDescription(tail ? QStringLiteral("Prints the newest messages (oldest first).")
                          : QStringLiteral("Searches the stored messages; prints one page, oldest first."));
    LogQuery q;
    q.limit = tail ? 20 : 100;
    qint64 timeout = 5000;
    addFilterOptions(p, &q, &timeout);
    if (tail)
        p.add(Option::flag(QStringLiteral("follow"),
                           QStringLiteral("Keep printing messages as they are stored.")));
    if (!parseOptionsOnly(p, args))
        return 1;
    const bool json = p.isSet(QStringLiteral("json"));
    const bool follow = tail && p.isSet(QStringLiteral("follow"));
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    const Reply r = ask(*client, logservice::QueryKind, q.encode(), int(timeout));
    if (!r.isOk())
        return fail(verb, whyNot(r, int(timeout)));
    LogPage page;
    if (const Status read = LogPage::decode(r.data(), &page); !read.isOk())
        return fail(verb, QStringLiteral("bad answer from the logger: ") + read.message());
    qint64 lastId = 0;
    for (auto it = page.records.crbegin(); it != page.records.crend(); ++it) {
        printRecord(*it, json);
        lastId = std::max(lastId, it->id);
    }
    if (!tail && page.more)
        std::fprintf(stderr, "dialogctl %s: more messages match; next page: --before %lld\n",
                     qPrintable(verb), qlonglong(page.records.last().id));
    std::fflush(stdout);
    if (!follow)
        return 0;
    // Live: what the logger publishes after every commit, filtered here like the query.
    Subscription *sub = client->subscribe(logservice::live());
    if (!sub)
        return fail(verb, client->errorString());
    const QRegularExpression processRe = globToRegex(q.process), hostRe = globToRegex(q.host),
                             categoryRe = globToRegex(q.category);
    auto matches = [&](const LogRecord &rec) {
        auto glob = [](const QString &pattern, const QRegularExpression &re, const QString &s) {
            return pattern.isEmpty() || re.match(s).hasMatch();
        };
        return rec.severity >= q.minSeverity && glob(q.process, processRe, rec.process) &&
               glob(q.host, hostRe, rec.host) && glob(q.category, categoryRe, rec.category) &&
               (q.text.isEmpty() || rec.text.contains(q.text, Qt::CaseInsensitive)) &&
               (!q.run || rec.run == q.run) && (!q.sinceMs || rec.timeMs >= q.sinceMs) &&
               (!q.untilMs || rec.timeMs <= q.untilMs);
    };
    // An update the subscription did not keep up with is missing from the ids: those records are
    // fetched with a search (newer than the last printed, older than the batch) before going on.
    qint64 lastSeen = -1; // the highest id of any live batch, matching or not
    bool catchingUp = false;
    QList<QList<LogRecord>> pending;
    auto catchUp = [&](qint64 beforeId) {
        LogQuery g = q;
        g.sinceMs = q.sinceMs;
        g.afterId = lastId;
        g.beforeId = beforeId;
        g.limit = 10000;
        QList<LogRecord> missed;
        for (;;) {
            const Reply r = ask(*client, logservice::QueryKind, g.encode(), int(timeout));
            LogPage page;
            const Status read = r.isOk() ? LogPage::decode(r.data(), &page) : Status(r.error());
            if (!read.isOk()) {
                std::fprintf(stderr, "dialogctl %s: messages may be missing: %s\n", qPrintable(verb),
                             qPrintable(r.isOk() ? read.message() : whyNot(r, int(timeout))));
                break;
            }
            missed += page.records;
            if (!page.more || page.records.isEmpty())
                break;
            g.beforeId = page.records.last().id;
        }
        for (auto it = missed.crbegin(); it != missed.crend(); ++it) {
            printRecord(*it, json);
            lastId = std::max(lastId, it->id);
        }
    };
    auto onBatch = [&](const QList<LogRecord> &records) {
        if (records.isEmpty())
            return;
        if (lastSeen < 0 || records.first().id > lastSeen + 1)
            catchUp(records.first().id);
        for (const LogRecord &rec : records) {
            lastSeen = std::max(lastSeen, rec.id);
            if (rec.id <= lastId || !matches(rec))
                continue;
            printRecord(rec, json);
            lastId = rec.id;
        }
    };
    QObject::connect(sub, &Subscription::messageReceived, client.get(), [&](const Message &m) {
        QList<LogRecord> records;
        if (!decodeRecords(m.data(), &records).isOk())
            return;
        pending.append(records);
        if (catchingUp) // a search is under way in a nested event loop: taken after it
            return;
        catchingUp = true;
        while (!pending.isEmpty())
            onBatch(pending.takeFirst());
        catchingUp = false;
        std::fflush(stdout);
    });
    return QCoreApplication::exec();
}

int report(const QStringList &args, const QString &verb)
{
    qint64 run = 0, count = 1, queue = 20000, collapse = 10000, timeout = 10000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral("Reports a message to the logger and waits for its acknowledgement."));
    p.addPositional(QStringLiteral("text"), QStringLiteral("The message."));
    p.add(Option::text(QStringLiteral("severity"), QStringLiteral("level"),
                       QStringLiteral("debug, info (default), warning, error, fatal."))
              .defaultValue(QStringLiteral("info")));
    p.add(Option::text(QStringLiteral("category"), QStringLiteral("name"),
                       QStringLiteral("Category (default \"default\")."))
              .defaultValue(QStringLiteral("default")));
    p.add(Option::text(QStringLiteral("value"), QStringLiteral("key=value"),
                       QStringLiteral("A key=value carried with the message (repeatable).")));
    p.add(Option::integer(QStringLiteral("run"), QStringLiteral("n"), QStringLiteral("Run number."), &run, 1,
                          0xffffffffLL));
    p.add(Option::text(
        QStringLiteral("time"), QStringLiteral("time"),
        QStringLiteral("The message's time instead of now (2h ago, ISO 8601 or ms; for back-filling).")));
    p.add(Option::integer(QStringLiteral("count"), QStringLiteral("n"),
                          QStringLiteral("Report it N times (default 1)."), &count, 1, 100000000));
    p.add(Option::flag(QStringLiteral("numbered"),
                       QStringLiteral("With --count: append \" #i\" to each message.")));
    p.add(Option::integer(QStringLiteral("queue"), QStringLiteral("n"),
                          QStringLiteral("Reporting queue capacity (default 20000)."), &queue, 1, 100000000));
    p.add(Option::duration(
        QStringLiteral("collapse-ms"), QStringLiteral("ms"),
        QStringLiteral("Identical messages within this time are collapsed (default 10000; 0: never)."),
        &collapse, OptionUnit::Milliseconds, 0, 3600000));
    p.add(Option::duration(
        QStringLiteral("timeout-ms"), QStringLiteral("ms"),
        QStringLiteral("Fail if not acknowledged by the logger within this time (default 10000)."), &timeout,
        OptionUnit::Milliseconds, 1, 3600000));
    if (!parse(p, args))
        return 1;
    if (p.positionalArguments().size() != 1)
        return fail(verb, QStringLiteral("expected exactly one message text (see --help)"));
    const auto severity = severityFromName(p.value(QStringLiteral("severity")));
    if (!severity)
        return fail(verb, QStringLiteral("invalid --severity '%1' (debug, info, warning, error, fatal)")
                              .arg(p.value(QStringLiteral("severity"))));
    qint64 timeMs = 0;
    if (p.isSet(QStringLiteral("time"))) {
        const auto t = parseLogTime(p.value(QStringLiteral("time")));
        if (!t)
            return fail(verb,
                        QStringLiteral("invalid --time '%1' (expected e.g. 2h, 2026-11-23T18:00:00 or ms)")
                            .arg(p.value(QStringLiteral("time"))));
        timeMs = *t;
    }
    QVariantMap values;
    for (const QString &kv : p.values(QStringLiteral("value"))) {
        const int eq = kv.indexOf(QLatin1Char('='));
        if (eq <= 0)
            return fail(verb, QStringLiteral("invalid --value '%1' (expected key=value)").arg(kv));
        values.insert(kv.left(eq), kv.mid(eq + 1));
    }
    ReportOptions ro;
    ro.queueCapacity = int(queue);
    ro.collapseWindowMs = int(collapse);
    setReportOptions(ro);
    setReportRunNumber(quint32(run));
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    startReporting(client.get());
    const QString text = p.positionalArguments().first();
    const QString category = p.value(QStringLiteral("category"));
    const bool numbered = p.isSet(QStringLiteral("numbered"));
    LogRecord r;
    r.severity = *severity;
    r.category = category;
    r.values = values;
    r.timeMs = timeMs;
    for (qint64 i = 1; i <= count; ++i) {
        r.text = numbered ? QStringLiteral("%1 #%2").arg(text).arg(i) : text;
        dialog::report(r);
    }
    QElapsedTimer t;
    t.start();
    // Wait for the connection first: flushReports() counts from the first batch sent.
    while (client->state() != Client::State::Connected && t.elapsed() < timeout)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    const bool ok = flushReports(int(std::max<qint64>(1, timeout - t.elapsed())));
    const ReportStatistics s = reportStatistics();
    if (!ok)
        return fail(
            verb, QStringLiteral("%1 messages not acknowledged by the logger within %2 ms (is dialog-logger "
                                 "running?)")
                      .arg(s.queued)
                      .arg(timeout));
    if (s.dropped)
        return fail(verb, QStringLiteral("%1 of %2 messages dropped (%3)")
                              .arg(s.dropped)
                              .arg(s.reported)
                              .arg(s.lastError.isEmpty() ? QStringLiteral("queue full") : s.lastError));
    std::fprintf(stderr, "dialogctl %s: %llu reported, %llu collapsed, %llu dropped, %llu stored\n",
                 qPrintable(verb), (unsigned long long)s.reported, (unsigned long long)s.collapsed,
                 (unsigned long long)s.dropped, (unsigned long long)s.acknowledged);
    return 0;
}

int stats(const QStringList &args, const QString &verb)
{
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral("Prints the logger's counters as JSON."));
    if (!parse(p, args))
        return 1;
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    const Reply r = ask(*client, logservice::StatsKind, QByteArray(), 5000);
    if (!r.isOk())
        return fail(verb, whyNot(r, 5000));
    std::printf("%s\n", r.data().constData());
    return 0;
}

} // namespace

int log(const QStringList &args)
{
    if (args.size() < 2 || args.at(1) == QLatin1String("--help") || args.at(1) == QLatin1String("-h")) {
        std::fputs(logUsage, args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? 1 : 0;
    }
    const QString sub = args.at(1);
    QStringList rest = args;
    rest.removeAt(1);
    const QString verb = QStringLiteral("log ") + sub;
    rest[0] = QStringLiteral("dialogctl ") + verb;
    if (sub == QLatin1String("tail"))
        return query(rest, verb, true);
    if (sub == QLatin1String("search"))
        return query(rest, verb, false);
    if (sub == QLatin1String("report"))
        return report(rest, verb);
    if (sub == QLatin1String("stats"))
        return stats(rest, verb);
    std::fprintf(stderr, "dialogctl log: unknown command '%s'\n\n%s", qPrintable(sub), logUsage);
    return 1;
}

} // namespace dialog::tool
