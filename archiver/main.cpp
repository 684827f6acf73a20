// dialog-archiver: the long-term archive of an IS server's numeric attributes (SQLite).
#include "archiver.h"

#include "dialog/application.h"
#include "dialog/handoff.h"
#include "dialog/report.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace {

// `dialog bench archive` runs this: the store's insert rate and the time of a one-week query.
int benchStore(const QString &dir, qint64 samples, int seriesCount)
{
    using namespace dialog::archiver;
    ArchiveStore::Options o;
    o.path = dir + QStringLiteral("/bench.archive.sqlite");
    o.capacity = samples + 1000000;
    o.maintenanceMs = 3600 * 1000;
    QList<SeriesName> none;
    QString error;
    if (!ArchiveStore::readSeries(o.path, &none, &error)) {
        std::fprintf(stderr, "dialog-archiver: %s\n", qPrintable(error));
        return 1;
    }
    ArchiveStore store(o);
    QThread thread;
    store.moveToThread(&thread);
    dialog::handoff::startThread(thread);
    dialog::handoff::callBlocking(&store, [&store] { store.open(); });
    const qint64 nowUs = QDateTime::currentMSecsSinceEpoch() * 1000;
    QList<SeriesName> names;
    for (int s = 1; s <= seriesCount + 1; ++s)
        names.append(
            SeriesName{s, QStringLiteral("Bench.Object%1").arg(s / 10), QStringLiteral("a%1").arg(s % 10)});

    // Phase 1: values of many series at 1 Hz, as an IS server's subscription delivers them (batches
    // of 10,000, time order).
    QElapsedTimer t;
    t.start();
    const qint64 perSeries = qMax<qint64>(1, samples / seriesCount);
    const qint64 start = nowUs - perSeries * 1000000;
    std::vector<Sample> batch;
    bool first = true;
    qint64 sent = 0;
    for (qint64 i = 0; i < perSeries; ++i) {
        for (int s = 1; s <= seriesCount; ++s) {
            batch.push_back(Sample{s, start + i * 1000000 + s, std::sin(double(i + s) / 50.0) * 100 + s});
            if (batch.size() >= 10000) {
                store.enqueue(first ? names : QList<SeriesName>(), std::exchange(batch, {}));
                first = false;
            }
            ++sent;
        }
    }
    store.enqueue(first ? names : QList<SeriesName>(), std::exchange(batch, {}));
    while (store.storedCount() + store.droppedCount() < quint64(sent))
        QThread::msleep(2);
    const double insertS = t.nsecsElapsed() / 1e9;

    // Phase 2: one series, a week at 1 Hz, then the query "the last week in 1,000 points".
    const int week = seriesCount + 1;
    const qint64 weekSamples = 7LL * 86400;
    t.restart();
    for (qint64 i = 0; i < weekSamples; ++i) {
        batch.push_back(
            Sample{week, nowUs - (weekSamples - i) * 1000000, 1000 + std::sin(double(i) / 3600.0) * 200});
        if (batch.size() >= 10000)
            store.enqueue({}, std::exchange(batch, {}));
    }
    store.enqueue({}, std::exchange(batch, {}));
    while (store.storedCount() + store.droppedCount() < quint64(sent + weekSamples))
        QThread::msleep(2);
    const double weekS = t.nsecsElapsed() / 1e9;
    dialog::handoff::callBlocking(&store, [&store] { store.flushAll(); });
    QList<double> times;
    qsizetype points = 0;
    for (int q = 0; q < 20; ++q) {
        QList<dialog::is::HistoryPoint> out;
        t.restart();
        if (!ArchiveStore::query(o.path, QStringLiteral("bench-read"), week, nowUs - weekSamples * 1000000,
                                 nowUs, 1000, o, &out, &error)) {
            std::fprintf(stderr, "dialog-archiver: query failed: %s\n", qPrintable(error));
            return 1;
        }
        times.append(t.nsecsElapsed() / 1e6);
        points = out.size();
    }
    std::sort(times.begin(), times.end());
    thread.quit();
    thread.wait();
    const QJsonObject result{
        {QStringLiteral("samples"), sent},
        {QStringLiteral("series"), seriesCount},
        {QStringLiteral("insertsPerSecond"), std::round(double(sent) / insertS)},
        {QStringLiteral("weekSamples"), weekSamples},
        {QStringLiteral("weekInsertsPerSecond"), std::round(double(weekSamples) / weekS)},
        {QStringLiteral("dropped"), qint64(store.droppedCount())},
        {QStringLiteral("weekQueryPoints"), qint64(points)},
        {QStringLiteral("weekQueryMsMedian"), times.at(times.size() / 2)},
        {QStringLiteral("weekQueryMsMax"), times.last()},
    };
    std::puts(QJsonDocument(result).toJson(QJsonDocument::Compact).constData());
    return 0;
}

} // namespace

int main(int argc, char *argv[])
{
    dialog::preferLowLatencyEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dialog-archiver"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Archives the numeric attributes of an IS server's objects in SQLite "
        "(<data-dir>/<server>.archive.sqlite): "
        "raw values, 1-minute and 1-hour mean/min/max; answers history queries beyond the server's ring."));
    p.addHelpOption();
    p.addOption({QStringLiteral("server"), QStringLiteral("The IS server to archive (required)."),
                 QStringLiteral("name")});
    p.addOption(
        {QStringLiteral("criteria"),
         QStringLiteral("Archive only the objects whose name matches this regex (default: every one)."),
         QStringLiteral("regex")});
    p.addOption({QStringLiteral("data-dir"), QStringLiteral("Directory of the archive file (required)."),
                 QStringLiteral("dir")});
    p.addOption({QStringLiteral("buffer"),
                 QStringLiteral("Values buffered for writing at most; more are dropped and counted (default "
                                "2000000)."),
                 QStringLiteral("n"), QStringLiteral("2000000")});
    p.addOption({QStringLiteral("raw-days"), QStringLiteral("Days raw values are kept (default 1)."),
                 QStringLiteral("days"), QStringLiteral("1")});
    p.addOption(
        {QStringLiteral("minute-days"),
         QStringLiteral("Days 1-minute buckets are kept (default 30; 1-hour buckets are kept for ever)."),
         QStringLiteral("days"), QStringLiteral("30")});
    p.addOption(
        {QStringLiteral("bench-store"),
         QStringLiteral("Benchmark the store in --data-dir with this many values and exit (dialog bench "
                        "archive)."),
         QStringLiteral("n")});
    dialog::ClientOptions::addParserOptions(p);
    p.process(app);
    auto fail = [](const QString &why) {
        std::fprintf(stderr, "dialog-archiver: %s\n", qPrintable(why));
        return 1;
    };
    if (!p.positionalArguments().isEmpty())
        return fail(
            QStringLiteral("unexpected argument '%1' (see --help)").arg(p.positionalArguments().first()));
    dialog::archiver::ArchiverOptions o;
    o.dataDir = p.value(QStringLiteral("data-dir"));
    if (o.dataDir.isEmpty())
        return fail(QStringLiteral("--data-dir is required"));
    bool ok = true;
    if (p.isSet(QStringLiteral("bench-store"))) {
        const qint64 n = p.value(QStringLiteral("bench-store")).toLongLong(&ok);
        if (!ok || n < 10000)
            return fail(QStringLiteral("invalid --bench-store (10000 or more)"));
        return benchStore(o.dataDir, n, 10000);
    }
    o.server = p.value(QStringLiteral("server"));
    if (o.server.isEmpty())
        return fail(QStringLiteral("--server is required"));
    o.criteria = p.value(QStringLiteral("criteria"));
    o.store.capacity = p.value(QStringLiteral("buffer")).toLongLong(&ok);
    if (!ok || o.store.capacity < 1)
        return fail(QStringLiteral("invalid --buffer '%1'").arg(p.value(QStringLiteral("buffer"))));
    o.store.rawDays = p.value(QStringLiteral("raw-days")).toInt(&ok);
    if (!ok || o.store.rawDays < 1)
        return fail(
            QStringLiteral("invalid --raw-days '%1' (1 or more)").arg(p.value(QStringLiteral("raw-days"))));
    o.store.minuteDays = p.value(QStringLiteral("minute-days")).toInt(&ok);
    if (!ok || o.store.minuteDays < o.store.rawDays)
        return fail(QStringLiteral("invalid --minute-days '%1' (at least --raw-days)")
                        .arg(p.value(QStringLiteral("minute-days"))));
    o.client = dialog::ClientOptions::fromEnvironment(QStringLiteral("Archiver.") + o.server);
    o.client.exitOnRefusal = true; // one archiver per IS server
    QString why;
    if (!o.client.applyParser(p, &why))
        return fail(why);
    o.client.name = QStringLiteral("Archiver.") + o.server;

    dialog::quitOnTerminationSignals();
    dialog::archiver::Archiver archiver(o);
    if (!archiver.start(&why))
        return fail(why);
    // Its messages (archiving, not reachable, values not stored) go to the message log too.
    dialog::installMessageHandler();
    dialog::startReporting(archiver.client());
    const int rc = app.exec();
    archiver.stop();
    return rc;
}
