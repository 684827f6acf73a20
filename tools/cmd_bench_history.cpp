// dialogctl bench is-history: memory of the IS history ring per object and per numeric attribute
// (100,000 objects with 600 values each, in this process, as the IS server holds them) and the
// latency of a history query for one hour of 1 Hz values (in process, and through a real IS server).
// dialogctl bench archive: dialog-archiver's insert rate and the time of a one-week query downsampled
// to 1,000 points (dialog-archiver --bench-store in a temporary directory).
#include "benchsupport.h"
#include "commands.h"

#include "dialog/is/dictionary.h"
#include "dialog/is/history.h"
#include "dialog/is/typeregistry.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <malloc.h>

namespace dialog::tool {

namespace {

const QString StatsType = QStringLiteral("BenchHistoryStats");

is::TypeInfo statsType()
{
    // The numeric part of a typical readout statistics object.
    is::TypeInfo t(StatsType, QStringLiteral("Benchmark statistics"));
    t.setAttributes(
        {is::AttributeInfo(QStringLiteral("events"), is::BasicType::U64, QStringLiteral("Counter")),
         is::AttributeInfo(QStringLiteral("rate"), is::BasicType::Double, QStringLiteral("Hz")),
         is::AttributeInfo(QStringLiteral("errors"), is::BasicType::U32, QStringLiteral("Counter")),
         is::AttributeInfo(QStringLiteral("busy"), is::BasicType::Float, QStringLiteral("Fraction"))});
    return t;
}

/// Fills @p o with the @p i-th 1 Hz sample of object @p k: a counter growing at a noisy rate, that
/// rate (to 0.1 Hz), a rarely changing error count and a noisy busy fraction.
void sample(is::Object &o, quint64 &events, QRandomGenerator &rng, int i, int k)
{
    const double rate = std::round((1000 + 100 * std::sin((i + k) / 60.0) + rng.bounded(50.0)) * 10) / 10;
    events += quint64(rate);
    o.set<quint64>(0, events);
    o.set<double>(1, rate);
    o.set<quint32>(2, quint32(i / 200));
    o.set<float>(3, float(0.5 + rng.bounded(0.1)));
}

qint64 heapBytes()
{
    const struct mallinfo2 m = mallinfo2();
    return qint64(m.uordblks + m.hblkhd);
}

double median(QList<double> v)
{
    std::sort(v.begin(), v.end());
    return v.isEmpty() ? 0 : v.at(v.size() / 2);
}

} // namespace

int benchIsHistory(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-history");
    qint64 objects = 100000, values = 600;
    OptionTable p(program(verb));
    p.setDescription(
        QStringLiteral("Memory of the IS history ring (objects x values, 4 numeric attributes each) and "
                       "history query latency "
                       "for one hour of 1 Hz values, in process and through a real IS server."));
    p.add(Option::integer(QStringLiteral("objects"), QStringLiteral("n"),
                          QStringLiteral("Objects (default 100000)."), &objects, 1, 10000000));
    p.add(Option::integer(QStringLiteral("values"), QStringLiteral("n"),
                          QStringLiteral("Values per object (default 600)."), &values, 1, 100000));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    is::TypeRegistry types;
    QString error;
    if (const Status st = types.declareType(statsType()); !st.isOk())
        return fail(verb, st.message());
    is::Object o = is::Object::create(types, StatsType);
    const int attributes = o.attributeCount();

    // Memory: the ring of every object filled, object after object (1 Hz stamps).
    const qint64 t0 = is::Time::currentTime().microsecondsSinceEpoch() - values * 1000000;
    QElapsedTimer clock;
    QList<QString> names;
    names.reserve(objects);
    for (qint64 k = 0; k < objects; ++k)
        names.append(QStringLiteral("RO%1.stats").arg(k));
    const qint64 before = heapBytes();
    auto store = std::make_unique<is::HistoryStore>(is::HistoryLimits{int(values), int(values) + 3600});
    clock.start();
    QRandomGenerator rng(42);
    for (qint64 k = 0; k < objects; ++k) {
        quint64 events = 0;
        for (qint64 i = 0; i < values; ++i) {
            sample(o, events, rng, int(i), int(k));
            store->append(names.at(k), o, is::Time(t0 + i * 1000000 + rng.bounded(2000)));
        }
    }
    const double fillS = clock.nsecsElapsed() / 1e9;
    const qint64 held = heapBytes() - before;
    const double perObject = double(held) / double(objects);
    const double perAttribute = perObject / attributes;
    const double encodedPerValue = double(store->encodedBytes()) / double(objects * values * attributes);
    store.reset();

    // Query of one hour of 1 Hz values, in process.
    is::HistoryStore hour(is::HistoryLimits{3600, 7200});
    quint64 events = 0;
    const qint64 h0 = is::Time::currentTime().microsecondsSinceEpoch() - 3600LL * 1000000;
    for (int i = 0; i < 3600; ++i) {
        sample(o, events, rng, i, 0);
        hour.append(QStringLiteral("RO.stats"), o, is::Time(h0 + i * 1000000LL));
    }
    QList<double> rawMs, downMs;
    for (int q = 0; q < 50; ++q) {
        is::History h;
        clock.restart();
        hour.query(QStringLiteral("RO.stats"), QStringLiteral("rate"), is::Time(h0), is::Time::currentTime(),
                   0, &h);
        rawMs.append(clock.nsecsElapsed() / 1e6);
        clock.restart();
        hour.query(QStringLiteral("RO.stats"), QStringLiteral("rate"), is::Time(h0), is::Time::currentTime(),
                   1000, &h);
        downMs.append(clock.nsecsElapsed() / 1e6);
    }

    // Through a real IS server: 3,600 values of one object (written as fast as it takes them).
    Environment env;
    if (!env.startControlServer(&error))
        return fail(verb, error);
    env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")),
                       {QStringLiteral("--name"), QStringLiteral("Bench"), QStringLiteral("--control-server"),
                        env.address, QStringLiteral("--history"), QStringLiteral("3600")});
    Client client(env.clientOptions(QStringLiteral("bench-is-history")));
    if (!client.start())
        return fail(verb, client.errorString());
    is::Dictionary dict(&client);
    dict.setTimeout(30000);
    if (!waitForIsServer(dict, QStringLiteral("Bench")))
        return fail(verb, QStringLiteral("the IS server did not answer within 30 s"));
    if (!dict.declareTypesSync(QStringLiteral("Bench"), {statsType()}).isOk())
        return fail(verb, QStringLiteral("cannot declare the benchmark type"));
    is::Object ro = is::Object::create(dict.types(), StatsType);
    qint64 done = 0, failed = 0;
    events = 0;
    for (int i = 0; i < 3600; ++i) {
        sample(ro, events, rng, i, 0);
        dict.update(QStringLiteral("Bench.RO"), ro, is::Dictionary::UpdateMode::CreateIfMissing,
                    [&](const is::Status &s) {
                        ++done;
                        failed += !s.isOk();
                    });
    }
    if (!runUntil([&] { return done == 3600; }, 60000) || failed)
        return fail(verb, QStringLiteral("the updates did not complete"));
    QList<double> serverRawMs, serverDownMs;
    qsizetype serverPoints = 0;
    for (int q = 0; q < 20; ++q) {
        is::History h;
        const is::Time now = is::Time(is::Time::currentTime().microsecondsSinceEpoch() + 1000000);
        clock.restart();
        if (!dict.historySync(QStringLiteral("Bench.RO"), is::Time(0), now, 0, &h, QStringLiteral("rate"))
                 .isOk())
            return fail(verb, QStringLiteral("history query failed"));
        serverRawMs.append(clock.nsecsElapsed() / 1e6);
        serverPoints = h.series.value(0).points.size();
        clock.restart();
        dict.historySync(QStringLiteral("Bench.RO"), is::Time(0), now, 1000, &h, QStringLiteral("rate"));
        serverDownMs.append(clock.nsecsElapsed() / 1e6);
    }
    env.children.stopAll();

    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{
            {QStringLiteral("test"), QStringLiteral("is-history")},
            {QStringLiteral("objects"), objects},
            {QStringLiteral("values"), values},
            {QStringLiteral("attributes"), attributes},
            {QStringLiteral("bytes_per_object"), qRound64(perObject)},
            {QStringLiteral("bytes_per_attribute"), qRound64(perAttribute)},
            {QStringLiteral("encoded_bytes_per_value"), qRound64(encodedPerValue * 100) / 100.0},
            {QStringLiteral("appends_per_s"), qRound64(double(objects * values) / fillS)},
            {QStringLiteral("query_1h_raw_ms"), median(rawMs)},
            {QStringLiteral("query_1h_1000_ms"), median(downMs)},
            {QStringLiteral("server_points"), serverPoints},
            {QStringLiteral("server_query_1h_raw_ms"), median(serverRawMs)},
            {QStringLiteral("server_query_1h_1000_ms"), median(serverDownMs)}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("is-history: %lld objects x %lld values of %d numeric attributes\n", objects, values,
                    attributes);
        std::printf(
            "  %.0f bytes per object, %.0f bytes per numeric attribute (%.2f encoded bytes per value); "
            "%.0f appends/s\n",
            perObject, perAttribute, encodedPerValue, double(objects * values) / fillS);
        std::printf("  query of 1 h at 1 Hz (3600 values), in process: %.3f ms raw, %.3f ms in 1000 points\n",
                    median(rawMs), median(downMs));
        std::printf(
            "  through the IS server (%lld values): %.2f ms raw, %.2f ms in 1000 points (median of 20)\n",
            qlonglong(serverPoints), median(serverRawMs), median(serverDownMs));
    }
    return 0;
}

int benchArchive(const QStringList &args)
{
    const QString verb = QStringLiteral("bench archive");
    qint64 values = 4000000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "dialog-archiver's store in a temporary directory: values inserted per second (10,000 series), then "
        "a week "
        "of 1 Hz values of one series and the time of the query \"that week in 1,000 points\"."));
    p.add(Option::integer(QStringLiteral("values"), QStringLiteral("n"),
                          QStringLiteral("Values inserted (default 4000000)."), &values, 10000, 1000000000));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    QTemporaryDir dir;
    if (!dir.isValid())
        return fail(verb, QStringLiteral("cannot create a temporary directory"));
    QProcess proc;
    proc.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    proc.start(
        ChildProcesses::binary(QStringLiteral("dialog-archiver")),
        {QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--bench-store"), QString::number(values)});
    if (!proc.waitForFinished(600000) || proc.exitCode() != 0)
        return fail(verb, QStringLiteral("dialog-archiver --bench-store failed"));
    const QJsonObject r = QJsonDocument::fromJson(proc.readAllStandardOutput()).object();
    if (p.isSet(QStringLiteral("json"))) {
        QJsonObject j = r;
        j.insert(QStringLiteral("test"), QStringLiteral("archive"));
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
        return 0;
    }
    std::printf("archive: %.0f values inserted per second (%lld values of %lld series, %lld dropped)\n",
                r.value(QStringLiteral("insertsPerSecond")).toDouble(),
                qlonglong(r.value(QStringLiteral("samples")).toDouble()),
                qlonglong(r.value(QStringLiteral("series")).toDouble()),
                qlonglong(r.value(QStringLiteral("dropped")).toDouble()));
    std::printf(
        "  a week at 1 Hz of one series: %.0f values/s; the week in %lld points: %.1f ms (median of 20, max "
        "%.1f)\n",
        r.value(QStringLiteral("weekInsertsPerSecond")).toDouble(),
        qlonglong(r.value(QStringLiteral("weekQueryPoints")).toDouble()),
        r.value(QStringLiteral("weekQueryMsMedian")).toDouble(),
        r.value(QStringLiteral("weekQueryMsMax")).toDouble());
    return 0;
}

} // namespace dialog::tool
