#include "benchsupport.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaEnum>
#include <QTimer>
#include <QtEndian>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <mutex>

namespace dialog::tool {

namespace {

int fanin(const QStringList &args)
{
    const QString verb = QStringLiteral("bench fanin");
    qint64 senders = 25, size = 1024, seconds = 3;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "The DIALOG paper's test: N publisher processes each update one service as fast as flow control "
        "allows; this process subscribes to all and counts what arrives. Starts its own Control Server."));
    p.add(Option::integer(QStringLiteral("senders"), QStringLiteral("n"),
                          QStringLiteral("Publisher processes (default 25)."), &senders, 1, 500));
    p.add(Option::size(QStringLiteral("size"), QStringLiteral("bytes"),
                       QStringLiteral("Message size in bytes (default 1024)."), &size, 1, 64 * 1024 * 1024));
    p.add(Option::duration(QStringLiteral("seconds"), QStringLiteral("s"),
                           QStringLiteral("Measurement time (default 3)."), &seconds, OptionUnit::Seconds, 1,
                           3600));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    QString error;
    ClientOptions o = ClientOptions::fromEnvironment(QStringLiteral("bench-subscriber"));
    o.exitOnRefusal = true;
    // Every publisher connects from 127.0.0.1, up to hundreds at once (as the Control Server's
    // limits in Environment); --max-handshaking-per-address may set it again.
    o.maxHandshakingPerAddress = 1024;
    if (const Status st = o.applyParser(p.parser()); !st.isOk())
        return fail(verb, st.message());
    Environment env;
    Environment::shareSecurity(o);
    if (!env.startControlServer(&error))
        return fail(verb, error);
    o.controlServers = {env.address};
    auto client = std::make_unique<Client>(o);
    if (!client->start())
        return fail(verb, client->errorString());
    QList<Subscription *> subs;
    QList<QProcess *> publishers;
    for (int i = 0; i < senders; ++i) {
        const QString service = QStringLiteral("bench.fanin.%1").arg(i);
        subs.append(client->subscribe(service));
        publishers << env.children.start(
            ChildProcesses::binary(QStringLiteral("dialogctl")),
            {QStringLiteral("publish"), service, QStringLiteral("--name"),
             QStringLiteral("bench.publisher.%1").arg(i), QStringLiteral("--control-server"), env.address,
             QStringLiteral("--rate"), QStringLiteral("0"), QStringLiteral("--size"), QString::number(size),
             QStringLiteral("--random"), QStringLiteral("--flow"), QStringLiteral("block"),
             QStringLiteral("--block-ms"), QStringLiteral("600000"), QStringLiteral("--wait-subscribers"),
             QStringLiteral("1")});
    }
    const auto allActive = [&] {
        return std::all_of(subs.cbegin(), subs.cend(),
                           [](Subscription *s) { return s->state() == Subscription::State::Active; });
    };
    if (!runUntil(allActive, 30000)) {
        QStringList late;
        for (Subscription *s : std::as_const(subs))
            if (s->state() != Subscription::State::Active)
                late << QStringLiteral("%1 (%2)").arg(
                    s->service(), QString::fromLatin1(QMetaEnum::fromType<Subscription::State>().valueToKey(
                                      int(s->state()))));
        return fail(verb, QStringLiteral("not every publisher delivered within 30 s: %1")
                              .arg(late.join(QStringLiteral(", "))));
    }
    runFor(500); // warm-up
    const auto totals = [&] {
        quint64 received = 0, lost = 0;
        for (Subscription *s : std::as_const(subs)) {
            received += s->receivedCount();
            lost += s->lostCount();
        }
        return std::make_pair(received, lost);
    };
    const auto before = totals();
    const qint64 self = QCoreApplication::applicationPid();
    const double cpuBefore = processCpuSeconds(self);
    QElapsedTimer t;
    t.start();
    runFor(int(seconds * 1000));
    const auto after = totals();
    const double elapsed = t.nsecsElapsed() / 1e9;
    const double cpu = processCpuSeconds(self) - cpuBefore;
    // This process is the subscriber: its memory with every connection busy, and the most it held.
    const qint64 rssKb = processStatusKb(self, "VmRSS"), peakKb = processStatusKb(self, "VmHWM");
    // At rest: the publishers stopped (SIGSTOP: their connections stay open and idle), everything
    // they had sent delivered; then what the subscriber still holds.
    for (QProcess *pub : std::as_const(publishers))
        ::kill(pid_t(pub->processId()), SIGSTOP);
    quint64 heard = totals().first;
    QElapsedTimer quiet;
    quiet.start();
    runUntil(
        [&] {
            const quint64 now = totals().first;
            if (now != heard) {
                heard = now;
                quiet.restart();
            }
            return quiet.elapsed() >= 2000; // at rest: nothing for 2 s
        },
        30000);
    const qint64 restKb = processStatusKb(self, "VmRSS");
    for (QProcess *pub : std::as_const(publishers))
        ::kill(pid_t(pub->processId()), SIGCONT);
    // Close the subscriber first: its connections break, which releases publishers blocked in update().
    client.reset();
    env.children.stopAll();

    const double msgs = double(after.first - before.first) / elapsed;
    const double mbs = msgs * double(size) / 1e6;
    const quint64 lost = after.second - before.second;
    const quint64 received = after.first - before.first;
    const double cpuUsPerMsg = received > 0 ? cpu * 1e6 / double(received) : 0;
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{
            {QStringLiteral("test"), QStringLiteral("fanin")},
            {QStringLiteral("senders"), senders},
            {QStringLiteral("size"), size},
            {QStringLiteral("seconds"), seconds},
            {QStringLiteral("messages_per_s"), qRound64(msgs)},
            {QStringLiteral("mb_per_s"), qRound64(mbs * 10) / 10.0},
            {QStringLiteral("lost"), qint64(lost)},
            {QStringLiteral("subscriber_cpu_us_per_msg"), qRound64(cpuUsPerMsg * 1000) / 1000.0},
            {QStringLiteral("subscriber_rss_mb"), qRound64(rssKb / 102.4) / 10.0},
            {QStringLiteral("subscriber_peak_mb"), qRound64(peakKb / 102.4) / 10.0},
            {QStringLiteral("subscriber_rest_mb"), qRound64(restKb / 102.4) / 10.0}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("fanin: %lld senders -> 1 subscriber, %lld B messages, %.2f s\n", senders, size, elapsed);
        std::printf("  %.0f messages/s, %.1f MB/s, %llu lost\n", msgs, mbs,
                    static_cast<unsigned long long>(lost));
        std::printf(
            "  subscriber: %.3f us CPU per message, %.1f MB resident (peak %.1f MB); at rest with %lld "
            "idle connections %.1f MB\n",
            cpuUsPerMsg, rssKb / 1024.0, peakKb / 1024.0, senders, restKb / 1024.0);
    }
    return 0;
}

int rtt(const QStringList &args)
{
    const QString verb = QStringLiteral("bench rtt");
    qint64 size = 64, count = 10000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Round trips between this process and an echo process. --mode command (default): command -> Control "
        "Server -> provider -> service update -> back. --mode request: a request straight to the provider "
        "and "
        "its reply (two processes, no Control Server on the path). Starts its own Control Server."));
    p.add(Option::text(QStringLiteral("mode"), QStringLiteral("mode"),
                       QStringLiteral("command (default) or request.")));
    p.add(Option::size(QStringLiteral("size"), QStringLiteral("bytes"),
                       QStringLiteral("Payload size in bytes (default 64)."), &size, 8, 64 * 1024 * 1024));
    p.add(Option::integer(QStringLiteral("count"), QStringLiteral("n"),
                          QStringLiteral("Round trips to measure (default 10000)."), &count, 1, 10000000));
    p.add(Option::flag(
        QStringLiteral("direct"),
        QStringLiteral("Command mode: the echo takes each command, and this process each update, in "
                       "the reader thread that received it (direct delivery: "
                       "Client::registerCommandDirect, Client::subscribeDirect). Request mode: the "
                       "echo takes each request in its reader thread "
                       "(Client::setRequestHandlerDirect); the reply still reaches this process's "
                       "thread.")));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    const QString mode = p.value(QStringLiteral("mode")).isEmpty() ? QStringLiteral("command")
                                                                   : p.value(QStringLiteral("mode"));
    if (mode != QLatin1String("command") && mode != QLatin1String("request"))
        return fail(verb, QStringLiteral("unknown --mode '%1' (command or request)").arg(mode));
    const bool request = mode == QLatin1String("request");
    const bool direct = p.isSet(QStringLiteral("direct"));
    QString error;
    ClientOptions o = ClientOptions::fromEnvironment(QStringLiteral("bench-rtt"));
    o.exitOnRefusal = true;
    if (const Status st = o.applyParser(p.parser()); !st.isOk())
        return fail(verb, st.message());
    Environment env;
    Environment::shareSecurity(o);
    // --receive-spin-us (or $DIALOG_RECEIVE_SPIN_US) holds for every process of the round trip.
    const QStringList spin = o.receiveSpinUs > 0 ? QStringList{QStringLiteral("--receive-spin-us"),
                                                               QString::number(o.receiveSpinUs)}
                                                 : QStringList();
    if (!env.startControlServer(&error, spin))
        return fail(verb, error);
    env.children.start(
        ChildProcesses::binary(QStringLiteral("dialogctl")),
        QStringList{QStringLiteral("echo"), QStringLiteral("--name"), QStringLiteral("bench.echo"),
                    QStringLiteral("--control-server"), env.address, QStringLiteral("--quiet")} +
            spin +
            (request ? QStringList{QStringLiteral("--reply"), QStringLiteral("bench.rr")}
                     : QStringList{QStringLiteral("--command"), QStringLiteral("bench.ping"),
                                   QStringLiteral("--service"), QStringLiteral("bench.pong")}) +
            (direct ? QStringList{QStringLiteral("--direct")} : QStringList()));
    o.controlServers = {env.address};
    Client client(o);
    if (!client.start())
        return fail(verb, client.errorString());

    // Both modes: ping(n) sends n; answered(data) is called with what came back, under `lock` (with
    // --direct in a reader thread, which then sends the next ping itself).
    QByteArray payload(size, 'x');
    std::mutex lock;
    quint64 expected = 0;
    bool got = false;
    std::function<void(const QByteArray &)> answered = [&](const QByteArray &d) {
        if (d.size() >= 8 && qFromLittleEndian<quint64>(d.constData()) == expected)
            got = true;
    };
    const auto onPong = [&](const Message &m) {
        std::lock_guard<std::mutex> l(lock);
        answered(m.data());
    };
    Subscription *pong = nullptr;
    if (!request && direct) {
        pong = client.subscribeDirect(QStringLiteral("bench.pong"), onPong);
    } else if (!request) {
        pong = client.subscribe(QStringLiteral("bench.pong"));
        QObject::connect(pong, &Subscription::messageReceived, &client, onPong);
    }
    QObject replies;
    auto ping = [&](quint64 n) {
        qToLittleEndian<quint64>(n, payload.data());
        expected = n;
        got = false;
        if (!request)
            return client.sendCommand(QStringLiteral("bench.ping"), payload);
        client.request(QStringLiteral("bench.rr"), payload, 5000, &replies, [&](const Reply &r) {
            std::lock_guard<std::mutex> l(lock);
            if (r.isOk())
                answered(r.data());
        });
        return true;
    };
    // Warm-up: until the echo answers (its registration may still be on its way).
    quint64 n = 1;
    const bool up = runUntil(
        [&] {
            {
                std::lock_guard<std::mutex> l(lock);
                if (!got && client.state() == Client::State::Connected)
                    ping(n++);
            }
            runFor(request ? 200 : 20);
            std::lock_guard<std::mutex> l(lock);
            return got;
        },
        15000);
    if (!up)
        return fail(verb, QStringLiteral("the echo process did not answer within 15 s"));
    // Event-driven: each answer sends the next ping from the slot, no polling.
    QList<qint64> samples;
    samples.reserve(count);
    QElapsedTimer t;
    QEventLoop loop;
    bool failed = false;
    // No answer for 5 s: the round trip was lost.
    QTimer watchdog;
    watchdog.setInterval(5000);
    qsizetype progress = -1;
    QObject::connect(&watchdog, &QTimer::timeout, &loop, [&] {
        std::lock_guard<std::mutex> l(lock);
        if (samples.size() == progress) {
            failed = true;
            loop.quit();
        }
        progress = samples.size();
    });
    std::unique_lock<std::mutex> measuring(lock);
    answered = [&](const QByteArray &d) {
        if (d.size() < 8 || qFromLittleEndian<quint64>(d.constData()) != expected || samples.size() >= count)
            return;
        samples.append(t.nsecsElapsed());
        if (samples.size() >= count) {
            QMetaObject::invokeMethod(&loop, &QEventLoop::quit, Qt::QueuedConnection);
            return;
        }
        t.start();
        ping(++n);
    };
    t.start();
    ping(++n);
    measuring.unlock();
    watchdog.start();
    loop.exec();
    if (pong)
        client.unsubscribe(pong); // no direct call comes after this (one in progress ended)
    std::lock_guard<std::mutex> done(lock);
    if (failed)
        return fail(verb, QStringLiteral("round trip %1 timed out").arg(samples.size()));
    env.children.stopAll();
    std::sort(samples.begin(), samples.end());
    const auto pct = [&](double q) {
        return samples.at(qMin(samples.size() - 1, qsizetype(q * samples.size()))) / 1000.0;
    };
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{{QStringLiteral("test"), QStringLiteral("rtt")},
                            {QStringLiteral("mode"), mode},
                            {QStringLiteral("direct"), direct},
                            {QStringLiteral("receive_spin_us"), o.receiveSpinUs},
                            {QStringLiteral("size"), size},
                            {QStringLiteral("count"), count},
                            {QStringLiteral("p50_us"), qRound64(pct(0.50) * 10) / 10.0},
                            {QStringLiteral("p99_us"), qRound64(pct(0.99) * 10) / 10.0}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("rtt (%s%s%s): %lld round trips of %lld B: p50 %.1f us, p99 %.1f us, max %.1f us\n",
                    qPrintable(mode), direct ? ", direct" : "",
                    o.receiveSpinUs > 0 ? qPrintable(QStringLiteral(", spin %1 us").arg(o.receiveSpinUs))
                                        : "",
                    count, size, pct(0.5), pct(0.99), samples.last() / 1000.0);
    }
    return 0;
}

// Every bench verb with what it measures: `dialogctl bench --help` and the error for an unknown
// verb list them from here.
struct BenchVerb
{
    const char *name;
    const char *description;
};
const BenchVerb benchVerbs[] = {
    {"fanin", "N publisher processes -> 1 subscriber: messages/s, MB/s, CPU and memory"},
    {"rtt", "round trips: command via the Control Server, or request -> reply (--mode)"},
    {"cs-scale", "thousands of processes against one Control Server, and its restart"},
    {"cs-scale-clients", "the light client processes cs-scale starts (not run by hand)"},
    {"rc-tree", "the run-control tree: 10 segments x 100 slaves, configure/start/stop, a removal"},
    {"rc-tree-slaves", "the simulated slaves rc-tree starts (not run by hand)"},
    {"agent", "processes started through host agents: time until all are registered"},
    {"is-fanout", "IS updates delivered per second to many subscribers"},
    {"is-latency", "p50/p99 from an IS update to its delivery"},
    {"is-load", "IS server memory with N objects, and its restart time"},
    {"is-write", "acknowledged IS writes per second, with or without the journal"},
    {"is-sender", "the writer processes is-fanout and is-latency start (not run by hand)"},
    {"is-subscriber", "the subscriber processes is-fanout and is-latency start (not run by hand)"},
    {"is-http", "HTTP GETs per second of the web IS"},
    {"is-mirror-cost", "what a stopped IS mirror costs the server it mirrors"},
    {"is-sum", "latency and CPU of a farm-summed IS histogram"},
    {"is-history", "memory of the IS history ring and its query latency"},
    {"is-evolve", "loading a checkpoint of an older type layout against the current one"},
    {"archive", "dialog-archiver's insert rate and one-week query time"},
    {"log", "messages stored per second by dialog-logger and its search time"},
    {"config", "dialog-configdb: commit latency, a large configure read, runs ls over many runs"},
    {"sampling", "a readout's rate with no consumer, 10 consumers of 1 %, and a stopped one"},
    {"dqm", "dialog-dqm: a round of 1,000 checks, and a histogram as PNG from the web IS with its 304"},
    {"alarms", "dialog-alarmserver: 100,000 rules, an alarm storm reaching a subscriber of the table"},
};

QString benchVerbNames()
{
    QStringList names;
    for (const BenchVerb &v : benchVerbs)
        names << QString::fromLatin1(v.name);
    return names.join(QStringLiteral(", "));
}

void printBenchUsage()
{
    std::puts("usage: dialogctl bench <test> [options]   (dialogctl bench <test> --help for its "
              "options)\n\ntests:");
    for (const BenchVerb &v : benchVerbs)
        std::printf("  %-17s %s\n", v.name, v.description);
    std::puts("\nEvery test starts its own Control Server on a free loopback port and reaps what it starts.");
}

} // namespace

int bench(const QStringList &args)
{
    if (args.size() < 2 || args.at(1).startsWith(QLatin1Char('-'))) {
        if (args.size() >= 2 &&
            (args.at(1) == QLatin1String("--help") || args.at(1) == QLatin1String("-h"))) {
            printBenchUsage();
            return 0;
        }
        return fail(QStringLiteral("bench"), QStringLiteral("expected a test: %1").arg(benchVerbNames()));
    }
    QStringList rest = args;
    const QString test = rest.takeAt(1);
    rest[0] = QStringLiteral("dialogctl bench ") + test;
    if (test == QLatin1String("fanin"))
        return fanin(rest);
    if (test == QLatin1String("rtt"))
        return rtt(rest);
    if (test == QLatin1String("log"))
        return benchLog(rest);
    if (test == QLatin1String("config"))
        return benchConfig(rest);
    if (test == QLatin1String("alarms"))
        return benchAlarms(rest);
    if (test == QLatin1String("sampling"))
        return benchSampling(rest);
    if (test == QLatin1String("dqm"))
        return benchDqm(rest);
    if (test == QLatin1String("is-http"))
        return benchIsHttp(rest);
    if (test == QLatin1String("is-mirror-cost"))
        return benchIsMirrorCost(rest);
    if (test == QLatin1String("is-history"))
        return benchIsHistory(rest);
    if (test == QLatin1String("is-evolve"))
        return benchIsEvolve(rest);
    if (test == QLatin1String("archive"))
        return benchArchive(rest);
    if (test == QLatin1String("is-sum"))
        return benchIsSum(rest);
    if (test == QLatin1String("cs-scale"))
        return benchCsScale(rest);
    if (test == QLatin1String("agent"))
        return benchAgent(rest);
    if (test == QLatin1String("rc-tree"))
        return benchRcTree(rest);
    if (test == QLatin1String("rc-tree-slaves"))
        return benchRcTreeSlaves(rest);
    if (test == QLatin1String("cs-scale-clients"))
        return benchCsScaleClients(rest);
    if (test.startsWith(QLatin1String("is-")))
        return benchIs(test, rest);
    return fail(QStringLiteral("bench"),
                QStringLiteral("unknown test '%1' (%2)").arg(test, benchVerbNames()));
}

} // namespace dialog::tool
