// dialog-monitor with the real binaries: two readout slaves as samplers (one with a dead front-end
// channel), the monitor turning their samples into IS histograms, and an IS server summing them
// over the farm with --sum.
#include "isfixture.h"
#include "readouts.h"

#include <QtTest>

using namespace dialog;
using namespace dialog::test;

class tst_Monitor : public QObject, public IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(setUpIs(QStringLiteral("monitor-test"))); }
    void cleanup() { tearDownIs(); }

    void histogramsPerReadoutAndSummedOverTheFarm();
    void badOptionsAreRefused();

private:
    QList<double> contents(const QString &object, quint64 *entries = nullptr);
};

QList<double> tst_Monitor::contents(const QString &object, quint64 *entries)
{
    is::Entry e;
    if (!m_dict->getSync(object, &e).isOk())
        return {};
    if (entries)
        *entries = e.object.get<quint64>(QStringLiteral("entries"));
    return e.object.get<QList<double>>(QStringLiteral("contents"));
}

void tst_Monitor::histogramsPerReadoutAndSummedOverTheFarm()
{
    startServer(QStringLiteral("Monitor"),
                {QStringLiteral("--sum"), QStringLiteral("RO[0-9]+\\.occupancy"), QStringLiteral("--into"),
                 QStringLiteral("Monitor.All.occupancy"), QStringLiteral("--sum"),
                 QStringLiteral("RO[0-9]+\\.hitMap"), QStringLiteral("--into"), QStringLiteral("Monitor.All.hitMap")});
    QVERIFY(waitForServer(QStringLiteral("Monitor")));
    // The monitor first: start order does not matter.
    m_fx->start(QStringLiteral("dialog-monitor"),
                {QStringLiteral("--readout"), QStringLiteral("RO1,RO2"), QStringLiteral("--criteria"),
                 QStringLiteral("every=5"), QStringLiteral("--publish-ms"), QStringLiteral("200")})
        ->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QVERIFY(startReadout(*m_fx, *m_client, QStringLiteral("RO1")));
    QVERIFY(startReadout(*m_fx, *m_client, QStringLiteral("RO2"), {QStringLiteral("--dead-channels"), QStringLiteral("17")}));

    quint64 entries = 0;
    QTRY_VERIFY_WITH_TIMEOUT((contents(QStringLiteral("Monitor.RO2.occupancy"), &entries), entries > 50000), 20000);
    const QList<double> ro2 = contents(QStringLiteral("Monitor.RO2.occupancy"));
    QCOMPARE(ro2.size(), 256);
    QCOMPARE(ro2.at(17), 0.0); // the dead channel
    for (int c : {0, 16, 18, 255})
        QVERIFY2(ro2.at(c) > 0, qPrintable(QString::number(c)));
    QTRY_VERIFY_WITH_TIMEOUT(contents(QStringLiteral("Monitor.RO1.occupancy")).value(17) > 0, 10000);

    is::Entry map;
    QVERIFY(m_dict->getSync(QStringLiteral("Monitor.RO2.hitMap"), &map).isOk());
    QCOMPARE(map.object.typeName(), QStringLiteral("Histogram2D"));
    QCOMPARE(map.object.get<quint32>(QStringLiteral("xBins")), 16u);
    QCOMPARE(map.object.get<quint32>(QStringLiteral("yBins")), 16u);
    const QList<double> cells = map.object.get<QList<double>>(QStringLiteral("contents"));
    QCOMPARE(cells.value(1 * 16 + 1), 0.0); // channel 17 at (1, 1)
    QVERIFY(cells.value(1 * 16 + 2) > 0);

    quint64 sizeEntries = 0;
    const QList<double> sizes = contents(QStringLiteral("Monitor.RO1.eventSize"), &sizeEntries);
    QVERIFY(sizeEntries > 0);
    // Events of ~1024 bytes (+-25 %) in bins of 32 bytes: bins 24..40 only.
    QCOMPARE(std::accumulate(sizes.begin() + 24, sizes.begin() + 40, 0.0), double(sizeEntries));

    // The farm's: the sum of both, bin by bin (read when no update came in between).
    const auto farmIsTheSum = [&] {
            const QList<double> a = contents(QStringLiteral("Monitor.RO1.occupancy")),
                                b = contents(QStringLiteral("Monitor.RO2.occupancy")),
                                all = contents(QStringLiteral("Monitor.All.occupancy"));
            if (a.size() != 256 || b.size() != 256 || all.size() != 256)
                return false;
            for (int c = 0; c < 256; ++c)
                if (all.at(c) != a.at(c) + b.at(c))
                    return false;
            return all.at(17) == a.at(17) && all.at(17) > 0;
    };
    QTRY_VERIFY_WITH_TIMEOUT(farmIsTheSum(), 20000);
    QTRY_VERIFY_WITH_TIMEOUT(contents(QStringLiteral("Monitor.All.hitMap")).size() == 256, 10000);
}

void tst_Monitor::badOptionsAreRefused()
{
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-monitor"), {}, nullptr, &err), 1);
    QVERIFY2(err.contains("--readout is required"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialog-monitor"),
                       {QStringLiteral("--readout"), QStringLiteral("RO1"), QStringLiteral("--criteria"),
                        QStringLiteral("colour=red")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("unknown criterion 'colour'"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialog-slave"),
                       {QStringLiteral("--kind"), QStringLiteral("readout"), QStringLiteral("--name"),
                        QStringLiteral("RO9"), QStringLiteral("--dead-channels"), QStringLiteral("300")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("invalid channel '300'"), err.constData());
}

QTEST_GUILESS_MAIN(tst_Monitor)
#include "tst_monitor.moc"
