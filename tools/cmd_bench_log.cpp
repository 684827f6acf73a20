// dialogctl bench log: messages/s stored by dialog-logger into SQLite from many reporting processes,
// and the time of a typical search ("warnings of one process in the last hour").
#include "benchsupport.h"

#include "dialog/logrecord.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <sys/resource.h>
#include <unistd.h>

namespace dialog::tool {

namespace {

/// One request to the logger, answered within @p timeoutMs (event loop).
Reply askLogger(Client &client, char kind, const QByteArray &payload, int timeoutMs)
{
    Reply answer;
    bool done = false;
    client.request(logservice::service(), QByteArray(1, kind) + payload, timeoutMs, &client,
                   [&](const Reply &r) {
                       answer = r;
                       done = true;
                   });
    runUntil([&] { return done; }, timeoutMs + 1000);
    return answer;
}

qint64 peakKiB(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong();
    return 0;
}

/// CPU seconds (user + system) of each thread of process @p pid, summed by thread name.
QMap<QString, double> threadCpu(qint64 pid)
{
    QMap<QString, double> out;
    const double tick = double(sysconf(_SC_CLK_TCK));
    const QDir tasks(QStringLiteral("/proc/%1/task").arg(pid));
    for (const QString &tid : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile f(tasks.filePath(tid + QStringLiteral("/stat")));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QByteArray stat = f.readAll();
        // pid (comm) state ppid … : fields after the closing parenthesis, utime and stime 12th and 13th.
        const qsizetype open = stat.indexOf('('), close = stat.lastIndexOf(')');
        if (open < 0 || close < open)
            continue;
        const QList<QByteArray> fields = stat.mid(close + 2).split(' ');
        if (fields.size() < 13)
            continue;
        const QString name = QString::fromUtf8(stat.mid(open + 1, close - open - 1));
        out[name] += (fields.at(11).toLongLong() + fields.at(12).toLongLong()) / tick;
    }
    return out;
}

double cpuSum(const QMap<QString, double> &cpu)
{
    double sum = 0;
    for (double v : cpu)
        sum += v;
    return sum;
}

/// CPU seconds of the children reaped so far.
double childrenCpu()
{
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

} // namespace

int benchLog(const QStringList &args)
{
    const QString verb = QStringLiteral("bench log");
    qint64 processes = 25, messages = 40000, queries = 50;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Starts a Control Server, dialog-logger (SQLite in a temporary directory, or --db) and N reporting "
        "processes; "
        "prints the messages/s stored and the time of the search \"warnings of one process in the last "
        "hour\"."));
    p.add(Option::integer(QStringLiteral("processes"), QStringLiteral("n"),
                          QStringLiteral("Reporting processes (default 25)."), &processes, 1, 500));
    p.add(Option::integer(QStringLiteral("messages"), QStringLiteral("n"),
                          QStringLiteral("Messages per process (default 40000)."), &messages, 1, 10000000));
    p.add(Option::integer(QStringLiteral("queries"), QStringLiteral("n"),
                          QStringLiteral("Searches timed (default 50)."), &queries, 1, 100000));
    p.add(Option::text(
        QStringLiteral("db"), QStringLiteral("url"),
        QStringLiteral("Store into this PostgreSQL database (postgresql://user@host:port/db, handed to "
                       "dialog-logger --db) instead of SQLite.")));
    p.add(Option::text(
        QStringLiteral("data-dir"), QStringLiteral("dir"),
        QStringLiteral("Use this SQLite directory (its messages stay, e.g. millions stored before, for "
                       "the search time) instead of a temporary one.")));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object.")));
    if (!parse(p, args))
        return 1;
    QTemporaryDir dir;
    Environment env;
    QString error;
    if (!startWithScratch(dir, env, &error))
        return fail(verb, error);
    qputenv("DIALOG_CONTROL_SERVER", env.address.toUtf8());
    const QString db = p.value(QStringLiteral("db"));
    QProcess *logger =
        env.children.start(ChildProcesses::binary(QStringLiteral("dialog-logger")),
                           QStringList{QStringLiteral("--control-server"), env.address} +
                               (db.isEmpty() ? QStringList{QStringLiteral("--data-dir"),
                                                           p.isSet(QStringLiteral("data-dir"))
                                                               ? p.value(QStringLiteral("data-dir"))
                                                               : dir.path()}
                                             : QStringList{QStringLiteral("--db"), db}));
    ClientOptions o = ClientOptions::fromEnvironment(
        QStringLiteral("dialog-bench-log-%1").arg(QCoreApplication::applicationPid()));
    o.controlServers = {env.address};
    Client client(o);
    if (!client.start())
        return fail(verb, client.errorString());
    auto stored = [&]() -> qint64 {
        const Reply r = askLogger(client, logservice::StatsKind, QByteArray(), 2000);
        return r.isOk()
                   ? QJsonDocument::fromJson(r.data()).object().value(QStringLiteral("stored")).toInteger()
                   : -1;
    };
    if (!runUntil([&] { return stored() >= 0; }, 15000))
        return fail(verb, QStringLiteral("dialog-logger did not answer"));
    const qint64 base = stored();
    const qint64 total = processes * messages;
    // Every other process reports warnings, the others infos.
    QList<QProcess *> reporters;
    const double reapedBefore = childrenCpu();
    for (qint64 i = 0; i < processes; ++i)
        reporters << env.children.start(
            ChildProcesses::binary(QStringLiteral("dialogctl")),
            {QStringLiteral("log"), QStringLiteral("report"), QStringLiteral("--name"),
             QStringLiteral("Bench%1").arg(i, 2, 10, QLatin1Char('0')), QStringLiteral("--count"),
             QString::number(messages), QStringLiteral("--numbered"), QStringLiteral("--queue"),
             QString::number(messages), QStringLiteral("--collapse-ms"), QStringLiteral("0"),
             QStringLiteral("--severity"), QLatin1String(i % 2 ? "warning" : "info"),
             QStringLiteral("--timeout-ms"), QStringLiteral("600000"),
             QStringLiteral("readout buffer occupancy above threshold")});
    // The rate counts from the first stored message to the last, so process start-up is left out.
    QElapsedTimer clock;
    clock.start();
    qint64 firstMs = -1, firstCount = 0, lastMs = 0, now = base;
    // The CPU the logger's threads spend from the first stored message to the last.
    QMap<QString, double> loggerCpuFirst, loggerCpuLast;
    const qint64 controlServerPid = env.controlServer->processId();
    double controlServerCpuFirst = 0;
    while (now - base < total && clock.elapsed() < 600000) {
        runFor(20);
        const qint64 s = stored();
        if (s < 0)
            continue;
        const QMap<QString, double> cpu = threadCpu(logger->processId());
        now = s;
        if (firstMs < 0 && now > base) {
            firstMs = clock.elapsed();
            firstCount = now - base;
            loggerCpuFirst = cpu;
            controlServerCpuFirst = cpuSum(threadCpu(controlServerPid));
        }
        lastMs = clock.elapsed();
        loggerCpuLast = cpu;
    }
    if (now - base < total)
        return fail(verb,
                    QStringLiteral("only %1 of %2 messages stored within 600 s").arg(now - base).arg(total));
    const double seconds = std::max<qint64>(1, lastMs - firstMs) / 1000.0;
    const double rate = (total - firstCount) / seconds;
    const qint64 memKiB = peakKiB(logger->processId());
    const double counted = double(std::max<qint64>(1, total - firstCount));
    // µs of CPU per stored message: the logger's threads (by name), the Control Server, and the
    // reporting processes (all of their lives, start-up included, once they have exited).
    QMap<QString, double> loggerUs;
    for (auto it = loggerCpuLast.cbegin(); it != loggerCpuLast.cend(); ++it)
        loggerUs[it.key()] = (it.value() - loggerCpuFirst.value(it.key())) * 1e6 / counted;
    const double loggerTotalUs = cpuSum(loggerUs);
    const double controlServerUs =
        (cpuSum(threadCpu(controlServerPid)) - controlServerCpuFirst) * 1e6 / counted;
    runUntil(
        [&] {
            return std::all_of(reporters.cbegin(), reporters.cend(),
                               [](QProcess *r) { return r->state() == QProcess::NotRunning; });
        },
        20000);
    const double reportersUs = (childrenCpu() - reapedBefore) * 1e6 / double(total);
    QString threads;
    QJsonObject threadsJson;
    for (auto it = loggerUs.cbegin(); it != loggerUs.cend(); ++it) {
        if (it.value() < 0.05)
            continue;
        threads += QStringLiteral("%1%2 %3")
                       .arg(threads.isEmpty() ? QString() : QStringLiteral(", "), it.key())
                       .arg(it.value(), 0, 'f', 2);
        threadsJson.insert(it.key(), qRound64(it.value() * 100) / 100.0);
    }

    LogQuery q;
    q.sinceMs = QDateTime::currentMSecsSinceEpoch() - 3600000;
    q.minSeverity = Severity::Warning;
    q.process = QStringLiteral("Bench%1").arg(processes > 1 ? 1 : 0, 2, 10, QLatin1Char('0'));
    q.limit = 100;
    QList<double> times;
    int rows = 0;
    for (qint64 i = 0; i < queries; ++i) {
        QElapsedTimer t;
        t.start();
        const Reply r = askLogger(client, logservice::QueryKind, q.encode(), 10000);
        times.append(elapsedMs(t));
        if (!r.isOk())
            return fail(verb, QStringLiteral("search failed: %1").arg(r.errorString()));
        LogPage page;
        if (const Status read = LogPage::decode(r.data(), &page); !read.isOk())
            return fail(verb, QStringLiteral("bad answer from the logger: %1").arg(read.message()));
        rows = int(page.records.size());
    }
    const Spread spread = spreadOf(times);
    const double p50 = spread.p50, p99 = spread.p99;
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{
            {QStringLiteral("test"), QStringLiteral("log")},
            {QStringLiteral("processes"), processes},
            {QStringLiteral("messages"), total},
            {QStringLiteral("stored_per_s"), qRound64(rate)},
            {QStringLiteral("logger_peak_kib"), memKiB},
            {QStringLiteral("database"),
             db.isEmpty() ? QStringLiteral("sqlite") : QStringLiteral("postgresql")},
            {QStringLiteral("query_rows"), rows},
            {QStringLiteral("query_p50_ms"), qRound64(p50 * 100) / 100.0},
            {QStringLiteral("query_p99_ms"), qRound64(p99 * 100) / 100.0},
            {QStringLiteral("logger_cpu_us_per_message"), qRound64(loggerTotalUs * 100) / 100.0},
            {QStringLiteral("logger_threads_cpu_us_per_message"), threadsJson},
            {QStringLiteral("controlserver_cpu_us_per_message"), qRound64(controlServerUs * 100) / 100.0},
            {QStringLiteral("reporters_cpu_us_per_message"), qRound64(reportersUs * 100) / 100.0}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf(
            "log: %lld messages from %lld processes stored at %.0f messages/s into %s; logger peak RSS "
            "%lld MiB\n"
            "log: CPU per message: logger %.2f us (threads: %s), Control Server %.2f us, reporters %.2f us\n"
            "log: \"warnings of %s in the last hour\" (%d rows; %lld messages stored by this run): p50 %.2f "
            "ms, p99 %.2f ms\n",
            total, processes, rate, db.isEmpty() ? "SQLite" : "PostgreSQL", memKiB / 1024, loggerTotalUs,
            qPrintable(threads), controlServerUs, reportersUs, qPrintable(q.process), rows, total, p50, p99);
    }
    return 0;
}

} // namespace dialog::tool
