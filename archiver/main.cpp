// dialog-archiver: the long-term archive of an IS server's numeric attributes (SQLite).
#include "archiver.h"

#include "dialog/daemon.h"
#include "dialog/handoff.h"
#include "dialog/options.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>
#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;

namespace {

// `dialogctl bench archive` runs this: the store's insert rate and the time of a one-week query.
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

// The rows of dialog-archiver's own options, written to @p o (and @p benchValues).
void addOptions(OptionTable &t, dialog::archiver::ArchiverOptions &o, qint64 *benchValues)
{
    t.add(
        {Option::text(u"server"_s, u"name"_s, u"The IS server to archive (required)."_s, &o.server),
         Option::text(u"criteria"_s, u"regex"_s,
                      u"Archive only the objects whose name matches this regex (default: every one)."_s,
                      &o.criteria),
         Option::text(u"data-dir"_s, u"dir"_s, u"Directory of the archive file (required)."_s, &o.dataDir)
             .required(),
         Option::integer(u"buffer"_s, u"n"_s,
                         u"Values buffered for writing at most; more are dropped and counted (default "
                         "2000000)."_s,
                         &o.store.capacity, 1, qint64(1) << 40),
         Option::integer(u"raw-days"_s, u"days"_s, u"Days raw values are kept (default 1)."_s,
                         &o.store.rawDays, 1, 100000),
         Option::integer(u"minute-days"_s, u"days"_s,
                         u"Days 1-minute buckets are kept (default 30; 1-hour buckets are kept for ever)."_s,
                         &o.store.minuteDays, 1, 100000),
         Option::integer(u"bench-store"_s, u"n"_s,
                         u"Benchmark the store in --data-dir with this many values and exit (dialogctl bench "
                         "archive)."_s,
                         benchValues, 10000, qint64(1) << 40)});
}

} // namespace

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-archiver"_s);
    OptionTable t(
        u"dialog-archiver"_s,
        u"Archives the numeric attributes of an IS server's objects in SQLite "
        "(<data-dir>/<server>.archive.sqlite): raw values, 1-minute and 1-hour mean/min/max; answers "
        "history queries beyond the server's ring."_s);
    dialog::archiver::ArchiverOptions o;
    qint64 benchValues = 0;
    o.client = dialog::ClientOptions::fromEnvironment();
    o.client.exitOnRefusal = true; // one archiver per IS server
    addOptions(t, o, &benchValues);
    o.client.addTo(t);
    if (!t.process(app.arguments()))
        return 1;
    if (benchValues > 0)
        return benchStore(o.dataDir, benchValues, 10000);
    if (o.server.isEmpty())
        return t.fail(u"--server is required"_s);
    if (o.store.minuteDays < o.store.rawDays)
        return t.fail(u"invalid --minute-days '%1' (at least --raw-days, %2)"_s.arg(o.store.minuteDays)
                          .arg(o.store.rawDays));
    o.client.name = u"Archiver."_s + o.server;

    // Its messages (archiving, not reachable, values not stored) go to the message log too.
    app.beginService();
    dialog::archiver::Archiver archiver(o);
    QString why;
    if (!archiver.start(&why))
        return t.fail(why);
    app.serviceReady(archiver.client());
    const int rc = app.exec();
    archiver.stop();
    return rc;
}
