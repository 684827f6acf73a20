// IS benchmarks (the ATLAS IS paper's tests): fan-out of updates to many subscribers, and the
// latency from an update to its delivery. The orchestrator starts a Control Server, an IS server,
// subscriber processes (is-subscriber) and sender processes (is-sender), and collects what the
// subscribers report through DIALOG services.
#include "benchsupport.h"

#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace dialog::tool {

namespace {

const QString BenchServer = QStringLiteral("Bench");
const QString SampleType = QStringLiteral("BenchSample");

qint64 steadyNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

is::TypeInfo sampleType()
{
    is::TypeInfo t(SampleType, QStringLiteral("Benchmark payload"));
    t.setAttributes(
        {is::AttributeInfo(QStringLiteral("sent"), is::BasicType::S64,
                           QStringLiteral("Sender's steady clock at the update (ns)")),
         is::AttributeInfo(QStringLiteral("data"), is::BasicType::U8, QStringLiteral("Payload"), true)});
    return t;
}

/// Child: updates its objects as fast as replies allow (--rate 0) or at a fixed rate.
int isSender(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-sender");
    qint64 index = 0, size = 9, rate = 0, objects = 10, window = 64;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral("Internal: the update side of the IS benchmarks."));
    p.add(Option::integer(QStringLiteral("index"), QStringLiteral("n"), QStringLiteral("Sender number."),
                          &index, 0, 100000));
    p.add(Option::size(QStringLiteral("size"), QStringLiteral("b"), QStringLiteral("Payload bytes."), &size,
                       0, 16 << 20));
    p.add(Option::integer(QStringLiteral("rate"), QStringLiteral("hz"),
                          QStringLiteral("Updates/s (0: as fast as possible)."), &rate, 0, 1000000));
    p.add(Option::integer(QStringLiteral("objects"), QStringLiteral("n"),
                          QStringLiteral("Objects updated in turn."), &objects, 1, 100000));
    p.add(Option::integer(QStringLiteral("window"), QStringLiteral("n"),
                          QStringLiteral("Updates in flight (rate 0)."), &window, 1, 100000));
    if (!parse(p, args))
        return 1;
    QString error;
    auto client = makeClient(p, QStringLiteral("bench-is-sender"), &error);
    if (!client)
        return fail(verb, error);
    is::Dictionary dict(client.get());
    dict.setTimeout(30000);
    const is::Status ds = dict.declareTypesSync(BenchServer, {sampleType()});
    if (!ds.isOk())
        return fail(verb, ds.toString());
    is::Object obj = is::Object::create(dict.types(), SampleType);
    obj.set(QStringLiteral("data"), QList<quint8>(size, quint8('x')));
    QStringList names;
    for (int k = 0; k < objects; ++k)
        names << QStringLiteral("%1.bench.%2.%3").arg(BenchServer).arg(index).arg(k);
    qint64 next = 0, inFlight = 0;
    int failures = 0;
    std::function<void()> sendOne = [&] {
        obj.set<qint64>(QStringLiteral("sent"), steadyNs());
        ++inFlight;
        dict.update(names.at(next++ % objects), obj, is::Dictionary::UpdateMode::CreateIfMissing,
                    [&](const is::Status &s) {
                        --inFlight;
                        if (!s.isOk() && ++failures == 1)
                            std::fprintf(stderr, "dialogctl %s: %s\n", qPrintable(verb),
                                         qPrintable(s.toString()));
                        if (rate == 0)
                            while (inFlight < window)
                                sendOne();
                    });
    };
    QTimer timer;
    if (rate > 0) {
        timer.setTimerType(Qt::PreciseTimer);
        QObject::connect(&timer, &QTimer::timeout, &timer, [&] { sendOne(); });
        timer.start(int(qMax<qint64>(1, 1000 / rate)));
    } else {
        while (inFlight < window)
            sendOne();
    }
    return QCoreApplication::exec();
}

/// Child: K subscriptions to every bench object; reports counts (and latencies) every 100 ms as
/// the service bench.is.sub.<index>.
int isSubscriber(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-subscriber");
    qint64 index = 0, subscriptions = 25, delayUs = 0;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral("Internal: the subscriber side of the IS benchmarks."));
    p.add(Option::integer(QStringLiteral("index"), QStringLiteral("n"),
                          QStringLiteral("Subscriber process number."), &index, 0, 100000));
    p.add(Option::integer(QStringLiteral("subscriptions"), QStringLiteral("n"),
                          QStringLiteral("Subscriptions in this process."), &subscriptions, 1, 10000));
    p.add(Option::flag(QStringLiteral("latency"), QStringLiteral("Decode each value and report latencies.")));
    p.add(Option::duration(QStringLiteral("delay-us"), QStringLiteral("us"),
                           QStringLiteral("Work this long per event (a slow subscriber)."), &delayUs,
                           OptionUnit::Microseconds, 0, 10000000));
    p.add(Option::text(QStringLiteral("server"), QStringLiteral("name"),
                       QStringLiteral("IS server to subscribe to (default Bench)."))
              .defaultValue(BenchServer));
    if (!parse(p, args))
        return 1;
    QString error;
    auto client = makeClient(p, QStringLiteral("bench-is-subscriber"), &error);
    if (!client)
        return fail(verb, error);
    is::Dictionary dict(client.get());
    dict.setTimeout(30000);
    is::Receiver receiver(&dict);
    const bool latency = p.isSet(QStringLiteral("latency"));
    quint64 count = 0;
    QList<qint64> samples;
    receiver.setCallback([&](const is::Event &e) {
        ++count;
        if (delayUs > 0)
            QThread::usleep(quint64(delayUs));
        if (latency && e.hasValue()) {
            const qint64 sent = e.object().get<qint64>(0);
            samples.append((steadyNs() - sent) / 1000);
        }
    });
    const is::Criteria criteria(QStringLiteral("bench\\..*"));
    for (int i = 0; i < subscriptions; ++i)
        receiver.subscribe(p.value(QStringLiteral("server")), criteria, true);
    Service *report = client->publish(QStringLiteral("bench.is.sub.%1").arg(index));
    QTimer timer;
    QObject::connect(&timer, &QTimer::timeout, &timer, [&] {
        int active = 0;
        for (int i = 1; i <= subscriptions; ++i)
            active += receiver.isActive(i);
        QJsonArray lat;
        for (qint64 s : std::as_const(samples))
            lat.append(s);
        samples.clear();
        report->update(QJsonDocument(QJsonObject{{QStringLiteral("active"), active},
                                                 {QStringLiteral("count"), qint64(count)},
                                                 {QStringLiteral("dropped"), qint64(receiver.droppedCount())},
                                                 {QStringLiteral("lat"), lat}})
                           .toJson(QJsonDocument::Compact));
    });
    timer.start(100);
    return QCoreApplication::exec();
}

struct Totals
{
    qint64 active = 0, count = 0, dropped = 0;
};

/// The orchestrator's view of the subscriber processes.
struct Subscribers
{
    QList<Subscription *> subs;
    QHash<int, QJsonObject> last;
    QList<qint64> latencies;
    bool collect = false;

    Totals totals() const
    {
        Totals t;
        for (const QJsonObject &o : last) {
            t.active += o.value(QLatin1String("active")).toInteger();
            t.count += o.value(QLatin1String("count")).toInteger();
            t.dropped += o.value(QLatin1String("dropped")).toInteger();
        }
        return t;
    }
};

/// The IS server Bench, @p processes subscriber processes with @p total subscriptions in all; with
/// @p viaMirror they subscribe to BenchMirror, a mirror of Bench.
bool startSystem(Environment &env, Client &client, Subscribers &subs, qint64 processes, qint64 total,
                 bool latency, QString *error, int isThreads, bool viaMirror = false,
                 QProcess **isServer = nullptr)
{
    QStringList isArgs{QStringLiteral("--name"), BenchServer, QStringLiteral("--control-server"),
                       env.address};
    if (isThreads > 0)
        isArgs << QStringLiteral("--threads") << QString::number(isThreads);
    QProcess *master = env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")), isArgs);
    if (isServer)
        *isServer = master;
    const QString server = viaMirror ? BenchServer + QStringLiteral("Mirror") : BenchServer;
    if (viaMirror)
        env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")),
                           QStringList{QStringLiteral("--name"), server, QStringLiteral("--mirror-of"),
                                       BenchServer, QStringLiteral("--control-server"), env.address} +
                               isArgs.mid(4));
    for (int i = 0; i < processes; ++i) {
        const qint64 n = total / processes + (i < total % processes ? 1 : 0);
        QStringList a{QStringLiteral("is-subscriber"),
                      QStringLiteral("--index"),
                      QString::number(i),
                      QStringLiteral("--subscriptions"),
                      QString::number(n),
                      QStringLiteral("--control-server"),
                      env.address,
                      QStringLiteral("--name"),
                      QStringLiteral("bench.is.subscriber.%1").arg(i),
                      QStringLiteral("--server"),
                      server};
        if (latency)
            a << QStringLiteral("--latency");
        env.children.start(ChildProcesses::binary(QStringLiteral("dialogctl")),
                           QStringList{QStringLiteral("bench")} + a);
        Subscription *s = client.subscribe(QStringLiteral("bench.is.sub.%1").arg(i));
        QObject::connect(s, &Subscription::messageReceived, &client, [&subs, i](const Message &m) {
            const QJsonObject o = QJsonDocument::fromJson(m.data()).object();
            subs.last.insert(i, o);
            if (subs.collect)
                for (const QJsonValue &v : o.value(QLatin1String("lat")).toArray())
                    subs.latencies.append(v.toInteger());
        });
        subs.subs << s;
    }
    if (!runUntil([&] { return subs.totals().active == total; }, 30000)) {
        *error = QStringLiteral("only %1 of %2 subscriptions became active within 30 s")
                     .arg(subs.totals().active)
                     .arg(total);
        return false;
    }
    return true;
}

void startSenders(Environment &env, qint64 senders, qint64 size, qint64 rate, qint64 objects)
{
    for (int i = 0; i < senders; ++i)
        env.children.start(ChildProcesses::binary(QStringLiteral("dialogctl")),
                           {QStringLiteral("bench"), QStringLiteral("is-sender"), QStringLiteral("--index"),
                            QString::number(i), QStringLiteral("--size"), QString::number(size),
                            QStringLiteral("--rate"), QString::number(rate), QStringLiteral("--objects"),
                            QString::number(objects), QStringLiteral("--control-server"), env.address,
                            QStringLiteral("--name"), QStringLiteral("bench.is.sender.%1").arg(i)});
}

/// The options addCommon() adds.
struct CommonOptions
{
    qint64 subscribers = 100, processes = 4, size = 8, seconds = 5, isThreads = 0;
};

/// Adds the options every IS benchmark takes, written to @p c.
void addCommon(OptionTable &p, CommonOptions &c)
{
    p.add({Option::integer(QStringLiteral("subscribers"), QStringLiteral("n"),
                           QStringLiteral("Subscriptions in total (default 100)."), &c.subscribers, 1, 10000),
           Option::integer(QStringLiteral("processes"), QStringLiteral("n"),
                           QStringLiteral("Subscriber processes (default 4)."), &c.processes, 1, 100),
           Option::size(QStringLiteral("size"), QStringLiteral("bytes"),
                        QStringLiteral("Payload bytes per update."), &c.size, 0, 16 << 20),
           Option::duration(QStringLiteral("seconds"), QStringLiteral("s"),
                            QStringLiteral("Measurement time (default 5)."), &c.seconds, OptionUnit::Seconds,
                            1, 3600),
           Option::integer(QStringLiteral("is-threads"), QStringLiteral("n"),
                           QStringLiteral("Worker threads of the IS server (default: cores)."), &c.isThreads,
                           1, 256),
           Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line."))});
}

/// A Control Server for the benchmark and this process's client of it (null with @p error).
std::unique_ptr<Client> startBench(Environment &env, const QString &name, QString *error)
{
    if (!env.startControlServer(error))
        return nullptr;
    ClientOptions o = ClientOptions::fromEnvironment(name);
    o.exitOnRefusal = true;
    o.controlServers = {env.address};
    auto client = std::make_unique<Client>(o);
    if (!client->start()) {
        *error = client->errorString();
        return nullptr;
    }
    return client;
}

int isFanout(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-fanout");
    qint64 senders = 3;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "The IS paper's test: senders update objects of one IS server as fast as it answers; every "
        "subscriber receives every update. Reports deliveries/s summed over all subscribers."));
    p.add(Option::integer(QStringLiteral("senders"), QStringLiteral("n"),
                          QStringLiteral("Sender processes (default 3)."), &senders, 1, 100));
    CommonOptions common;
    common.size = 9;
    addCommon(p, common);
    if (!parse(p, args))
        return 1;
    common.processes = qMin(common.processes, common.subscribers);
    const auto [subscribers, processes, size, seconds, isThreads] = common;
    QString error;
    Environment env;
    const auto clientPtr = startBench(env, QStringLiteral("bench-is-fanout"), &error);
    if (!clientPtr)
        return fail(verb, error);
    Client &client = *clientPtr;
    Subscribers subs;
    QProcess *server = nullptr;
    if (!startSystem(env, client, subs, processes, subscribers, false, &error, int(isThreads), false,
                     &server))
        return fail(verb, error);
    startSenders(env, senders, size, 0, 10);
    if (!runUntil([&] { return subs.totals().count > 0; }, 30000))
        return fail(verb, QStringLiteral("no update was delivered within 30 s"));
    runFor(1000); // warm-up
    const Totals before = subs.totals();
    QElapsedTimer t;
    t.start();
    runFor(int(seconds * 1000));
    const Totals after = subs.totals();
    const double elapsed = t.nsecsElapsed() / 1e9;
    const qint64 serverRssKb = processStatusKb(server->processId(), "VmRSS");
    const qint64 serverPeakKb = processStatusKb(server->processId(), "VmHWM");
    env.children.stopAll();
    const double rate = double(after.count - before.count) / elapsed;
    const qint64 dropped = after.dropped - before.dropped;
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{{QStringLiteral("test"), QStringLiteral("is-fanout")},
                            {QStringLiteral("senders"), senders},
                            {QStringLiteral("subscribers"), subscribers},
                            {QStringLiteral("processes"), processes},
                            {QStringLiteral("size"), size},
                            {QStringLiteral("seconds"), seconds},
                            {QStringLiteral("deliveries_per_s"), qRound64(rate)},
                            {QStringLiteral("updates_per_s"), qRound64(rate / double(subscribers))},
                            {QStringLiteral("dropped"), dropped},
                            {QStringLiteral("server_rss_mb"), qRound64(serverRssKb / 102.4) / 10.0},
                            {QStringLiteral("server_peak_mb"), qRound64(serverPeakKb / 102.4) / 10.0}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("is-fanout: %lld senders -> IS server -> %lld subscribers in %lld processes, %lld B\n",
                    senders, subscribers, processes, size);
        std::printf("  %.0f deliveries/s (%.0f updates/s), %lld dropped\n", rate, rate / double(subscribers),
                    dropped);
        std::printf("  IS server: %.1f MB resident (peak %.1f MB)\n", serverRssKb / 1024.0,
                    serverPeakKb / 1024.0);
    }
    return 0;
}

int isLatency(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-latency");
    qint64 rate = 100;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "One sender updates an object at --rate; every subscriber measures the time from the update "
        "call to its delivery. Reports p50/p99 over all deliveries."));
    p.add(Option::integer(QStringLiteral("rate"), QStringLiteral("hz"),
                          QStringLiteral("Updates per second (default 100)."), &rate, 1, 1000));
    p.add(Option::flag(
        QStringLiteral("via-mirror"),
        QStringLiteral("Subscribers subscribe to a mirror (--mirror-of) of the updated server.")));
    CommonOptions common;
    addCommon(p, common);
    if (!parse(p, args))
        return 1;
    common.processes = qMin(common.processes, common.subscribers);
    const auto [subscribers, processes, size, seconds, isThreads] = common;
    QString error;
    Environment env;
    const auto clientPtr = startBench(env, QStringLiteral("bench-is-latency"), &error);
    if (!clientPtr)
        return fail(verb, error);
    Client &client = *clientPtr;
    Subscribers subs;
    const bool viaMirror = p.isSet(QStringLiteral("via-mirror"));
    if (!startSystem(env, client, subs, processes, subscribers, true, &error, int(isThreads), viaMirror))
        return fail(verb, error);
    startSenders(env, 1, size, rate, 1);
    if (!runUntil([&] { return subs.totals().count > 0; }, 30000))
        return fail(verb, QStringLiteral("no update was delivered within 30 s"));
    runFor(1000); // warm-up
    subs.collect = true;
    runFor(int(seconds * 1000));
    subs.collect = false;
    env.children.stopAll();
    QList<qint64> &s = subs.latencies;
    if (s.isEmpty())
        return fail(verb, QStringLiteral("no latency sample"));
    std::sort(s.begin(), s.end());
    const auto pct = [&](double q) { return s.at(qMin(s.size() - 1, qsizetype(q * s.size()))); };
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{{QStringLiteral("test"), QStringLiteral("is-latency")},
                            {QStringLiteral("subscribers"), subscribers},
                            {QStringLiteral("rate"), rate},
                            {QStringLiteral("size"), size},
                            {QStringLiteral("via_mirror"), viaMirror},
                            {QStringLiteral("samples"), s.size()},
                            {QStringLiteral("p50_us"), pct(0.5)},
                            {QStringLiteral("p99_us"), pct(0.99)},
                            {QStringLiteral("max_us"), s.last()}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("is-latency: 1 sender at %lld Hz -> %lld subscribers%s, %lld B: p50 %lld us, p99 %lld "
                    "us, max %lld "
                    "us (%lld samples)\n",
                    rate, subscribers, viaMirror ? " of a mirror" : "", size, pct(0.5), pct(0.99), s.last(),
                    qint64(s.size()));
    }
    return 0;
}

/// An IS server holding N objects of 10 attributes: its memory, and the time of a restart with reload.
int isLoad(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-load");
    qint64 objects = 100000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Fills an IS server with --objects objects of 10 attributes, reports its resident memory, stops it "
        "(final checkpoint) and reports how long a restart takes until every object is served again."));
    p.add(Option::integer(QStringLiteral("objects"), QStringLiteral("n"),
                          QStringLiteral("Objects (default 100000)."), &objects, 1, 10000000));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    QString error;
    Environment env;
    if (!env.startControlServer(&error))
        return fail(verb, error);
    QTemporaryDir dir;
    const QStringList isArgs{
        QStringLiteral("--name"),     BenchServer, QStringLiteral("--control-server"), env.address,
        QStringLiteral("--data-dir"), dir.path(),  QStringLiteral("--checkpoint-s"),   QStringLiteral("0")};
    QProcess *server = env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")), isArgs);
    ClientOptions o = ClientOptions::fromEnvironment(QStringLiteral("bench-is-load"));
    o.exitOnRefusal = true;
    o.controlServers = {env.address};
    Client client(o);
    if (!client.start())
        return fail(verb, client.errorString());
    is::Dictionary dict(&client);
    dict.setTimeout(30000);
    const is::TypeInfo t = bench10Type();
    const is::Status ds = dict.declareTypesSync(BenchServer, {t});
    if (!ds.isOk())
        return fail(verb, ds.toString());
    is::Object obj = is::Object::create(dict.types(), QStringLiteral("Bench10"));
    obj.set(QStringLiteral("e"), QStringLiteral("readout-crate-07"));
    const qint64 rssEmpty = processStatusKb(server->processId(), "VmRSS");
    qint64 next = 0, done = 0, failures = 0;
    std::function<void()> one = [&] {
        obj.set<quint32>(QStringLiteral("a"), quint32(next));
        obj.set<double>(QStringLiteral("c"), double(next) * 0.5);
        dict.update(QStringLiteral("%1.obj%2").arg(BenchServer).arg(next++), obj,
                    is::Dictionary::UpdateMode::CreateIfMissing, [&](const is::Status &s) {
                        ++done;
                        failures += !s.isOk();
                        if (next < objects)
                            one();
                    });
    };
    for (int i = 0; i < 256 && next < objects; ++i)
        one();
    if (!runUntil([&] { return done == objects; }, 600000))
        return fail(verb, QStringLiteral("filling timed out"));
    if (failures)
        return fail(verb, QStringLiteral("%1 inserts failed").arg(failures));
    runFor(1500); // a statistics round
    const qint64 rssFull = processStatusKb(server->processId(), "VmRSS");
    server->terminate();
    if (!server->waitForFinished(60000) || server->exitCode() != 0)
        return fail(verb, QStringLiteral("the server did not save and exit cleanly"));
    const qint64 fileBytes = QFileInfo(dir.filePath(BenchServer + QStringLiteral(".is"))).size();
    QElapsedTimer clock;
    clock.start();
    server = env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")), isArgs);
    is::Entry stats;
    if (!runUntil(
            [&] {
                stats = is::Entry();
                return dict.getSync(BenchServer + QStringLiteral(".Statistics"), &stats).isOk() &&
                       stats.object.get<quint64>(QStringLiteral("objects")) >= quint64(objects);
            },
            60000))
        return fail(verb, QStringLiteral("the restarted server did not serve the objects within 60 s"));
    const double restartS = clock.nsecsElapsed() / 1e9;
    env.children.stopAll();
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{{QStringLiteral("test"), QStringLiteral("is-load")},
                            {QStringLiteral("objects"), objects},
                            {QStringLiteral("rss_mb"), qRound64(rssFull / 102.4) / 10.0},
                            {QStringLiteral("rss_empty_mb"), qRound64(rssEmpty / 102.4) / 10.0},
                            {QStringLiteral("checkpoint_mb"), qRound64(fileBytes / 104857.6) / 10.0},
                            {QStringLiteral("restart_s"), qRound64(restartS * 100) / 100.0}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf(
            "is-load: %lld objects of 10 attributes: server RSS %.1f MB (empty %.1f MB), checkpoint %.1f MB, "
            "restart with reload %.2f s\n",
            objects, rssFull / 1024.0, rssEmpty / 1024.0, fileBytes / 1048576.0, restartS);
    }
    return 0;
}

/// The write rate of an IS server with and without its journal, per sync policy.
int isWrite(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-write");
    qint64 writes = 100000, objects = 1000, inFlight = 256;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Updates --objects objects of 10 attributes --writes times in all, --in-flight at a time, on an IS "
        "server with a data directory, and reports acknowledged writes per second. --journal off|none|batch|"
        "always: without the journal, or with it and that sync policy (default batch)."));
    p.add(Option::integer(QStringLiteral("writes"), QStringLiteral("n"),
                          QStringLiteral("Writes (default 100000)."), &writes, 1, 100000000));
    p.add(Option::integer(QStringLiteral("objects"), QStringLiteral("n"),
                          QStringLiteral("Distinct objects (default 1000)."), &objects, 1, 1000000));
    p.add(Option::integer(QStringLiteral("in-flight"), QStringLiteral("n"),
                          QStringLiteral("Writes awaiting their acknowledgement (default 256)."), &inFlight,
                          1, 100000));
    p.add(Option::text(QStringLiteral("journal"), QStringLiteral("policy"),
                       QStringLiteral("off, none, batch or always (default batch).")));
    p.add(Option::text(
        QStringLiteral("data-dir"), QStringLiteral("dir"),
        QStringLiteral("Directory for the server's files (default: a temporary directory in $TMPDIR).")));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    const QString journal =
        p.isSet(QStringLiteral("journal")) ? p.value(QStringLiteral("journal")) : QStringLiteral("batch");
    if (!QStringList{QStringLiteral("off"), QStringLiteral("none"), QStringLiteral("batch"),
                     QStringLiteral("always")}
             .contains(journal))
        return fail(verb, QStringLiteral("invalid --journal '%1' (off, none, batch or always)").arg(journal));
    QString error;
    Environment env;
    if (!env.startControlServer(&error))
        return fail(verb, error);
    std::unique_ptr<QTemporaryDir> tmp;
    QString dirPath = p.value(QStringLiteral("data-dir"));
    if (dirPath.isEmpty()) {
        tmp = std::make_unique<QTemporaryDir>();
        dirPath = tmp->path();
    }
    QStringList isArgs{
        QStringLiteral("--name"),     BenchServer, QStringLiteral("--control-server"), env.address,
        QStringLiteral("--data-dir"), dirPath,     QStringLiteral("--checkpoint-s"),   QStringLiteral("10")};
    if (journal == QLatin1String("off"))
        isArgs << QStringLiteral("--no-journal");
    else
        isArgs << QStringLiteral("--journal-sync") << journal;
    QProcess *server = env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")), isArgs);
    // CPU seconds (user + system) the server has used: less at the mercy of a shared machine's
    // load than the rate.
    const auto serverCpuS = [server] {
        QFile f(QStringLiteral("/proc/%1/stat").arg(server->processId()));
        if (!f.open(QIODevice::ReadOnly))
            return -1.0;
        const QByteArray stat = f.readAll();
        const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
        if (fields.size() < 13)
            return -1.0;
        return (fields.at(11).toDouble() + fields.at(12).toDouble()) / double(sysconf(_SC_CLK_TCK));
    };
    ClientOptions o = ClientOptions::fromEnvironment(QStringLiteral("bench-is-write"));
    o.exitOnRefusal = true;
    o.controlServers = {env.address};
    Client client(o);
    if (!client.start())
        return fail(verb, client.errorString());
    is::Dictionary dict(&client);
    dict.setTimeout(30000);
    const is::TypeInfo t = bench10Type();
    if (!runUntil([&] { return dict.declareTypesSync(BenchServer, {t}).isOk(); }, 30000))
        return fail(verb, QStringLiteral("the IS server did not start"));
    is::Object obj = is::Object::create(dict.types(), QStringLiteral("Bench10"));
    obj.set(QStringLiteral("e"), QStringLiteral("readout-crate-07"));
    qint64 next = 0, done = 0, failures = 0;
    QString firstFailure;
    std::function<void()> one = [&] {
        obj.set<quint32>(QStringLiteral("a"), quint32(next));
        obj.set<double>(QStringLiteral("c"), double(next) * 0.5);
        dict.update(QStringLiteral("%1.obj%2").arg(BenchServer).arg(next++ % objects), obj,
                    is::Dictionary::UpdateMode::CreateIfMissing, [&](const is::Status &s) {
                        ++done;
                        if (!s.isOk() && failures++ == 0)
                            firstFailure = s.toString();
                        if (next < writes)
                            one();
                    });
    };
    QElapsedTimer clock;
    clock.start();
    const double cpuBefore = serverCpuS();
    for (qint64 i = 0; i < inFlight && next < writes; ++i)
        one();
    if (!runUntil([&] { return done == writes; }, 600000))
        return fail(verb, QStringLiteral("the writes timed out"));
    const double seconds = clock.nsecsElapsed() / 1e9;
    const double cpuUs = (serverCpuS() - cpuBefore) * 1e6 / double(writes);
    if (failures)
        return fail(verb, QStringLiteral("%1 writes failed (first: %2)").arg(failures).arg(firstFailure));
    qint64 journalBytes = 0;
    for (const QFileInfo &fi :
         QDir(dirPath).entryInfoList({BenchServer + QStringLiteral(".is.journal.*")}, QDir::Files))
        journalBytes += fi.size();
    env.children.stopAll();
    const double rate = writes / seconds;
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{{QStringLiteral("test"), QStringLiteral("is-write")},
                            {QStringLiteral("journal"), journal},
                            {QStringLiteral("writes"), writes},
                            {QStringLiteral("in_flight"), inFlight},
                            {QStringLiteral("writes_per_s"), qRound64(rate)},
                            {QStringLiteral("us_per_write"), qRound64(1e7 / rate) / 10.0},
                            {QStringLiteral("server_cpu_us_per_write"), qRound64(cpuUs * 10) / 10.0},
                            {QStringLiteral("journal_bytes"), journalBytes}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("is-write: journal %s, %lld writes (%lld objects of 10 attributes, %lld in flight): %.0f "
                    "writes/s "
                    "(%.1f us each; server CPU %.1f us per write), journal %.1f MB\n",
                    qPrintable(journal), writes, objects, inFlight, rate, 1e6 / rate, cpuUs,
                    journalBytes / 1048576.0);
    }
    return 0;
}

} // namespace

int benchIs(const QString &test, const QStringList &args)
{
    if (test == QLatin1String("is-write"))
        return isWrite(args);
    if (test == QLatin1String("is-fanout"))
        return isFanout(args);
    if (test == QLatin1String("is-latency"))
        return isLatency(args);
    if (test == QLatin1String("is-load"))
        return isLoad(args);
    if (test == QLatin1String("is-sender"))
        return isSender(args);
    if (test == QLatin1String("is-subscriber"))
        return isSubscriber(args);
    return fail(QStringLiteral("bench"), QStringLiteral("unknown test '%1'").arg(test));
}

} // namespace dialog::tool
