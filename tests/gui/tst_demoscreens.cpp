// Screenshots of the three monitoring GUIs with real data: brings the demo partition
// (resources/partitions/demo.json) up on a free port with `dialogctl up`, starts a run through the
// master, opens the inspector, the IS monitor and OMD (resources/omd/demo.json) offscreen, waits
// until each shows live data, saves *-demo.png (screenshot.h), asks each IS server's web IS (the
// demo's fixed ports) for its servers and Monitor's for a readout's occupancy framed by its
// dead-channel check, and takes the partition down again.
#include "inspectorwindow.h"
#include "ismonitorwindow.h"
#include "omdwindow.h"
#include "launchrecord.h"
#include "processfixture.h"
#include "widgetscreenshot.h"
#include "histogrampainter.h"
#include "isweb.h"

#include "histogramview.h"
#include "omdchart.h"

#include <QDir>
#include <QLabel>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>

using namespace dialog;
using namespace dialog::test;

class tst_DemoScreens : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void inspector();
    void ismonitor();
    void omd();
    void webPictures();

private:
    ClientOptions options(const QString &name) const;
    QString runState() const;
    static void save(QWidget *w, const QString &file);

    std::unique_ptr<ProcessFixture> m_fx;
    QTemporaryDir m_runDir;
    quint16 m_port = 0;
    QList<qint64> m_pids; // of the partition's processes, as `dialogctl up` recorded them
    std::unique_ptr<Client> m_client;
    Subscription *m_master = nullptr;
    std::unique_ptr<omd::OmdWindow> m_omd;
};

namespace {
const QString kPartition = QStringLiteral(DIALOG_SOURCE_DIR "/resources/partitions/demo.json");
}

ClientOptions tst_DemoScreens::options(const QString &name) const
{
    ClientOptions o;
    o.name = name;
    o.controlServers = {QStringLiteral("127.0.0.1:%1").arg(m_port)};
    o.heartbeatMs = 500;
    o.secretFile = m_runDir.filePath(QStringLiteral("secret")); // made by dialogctl up
    return o;
}

QString tst_DemoScreens::runState() const
{
    if (!m_master || m_master->lastMessage().data().isEmpty())
        return {};
    return QJsonDocument::fromJson(m_master->lastMessage().data())
        .object()
        .value(QStringLiteral("state"))
        .toString();
}

void tst_DemoScreens::save(QWidget *w, const QString &file)
{
    QVERIFY2(saveScreenshot(w, file), qPrintable(screenshotPath(file)));
    QVERIFY(QFileInfo(screenshotPath(file)).size() > 20000);
}

void tst_DemoScreens::initTestCase()
{
    QElapsedTimer clock;
    clock.start();
    QVERIFY(m_runDir.isValid());
    m_fx = std::make_unique<ProcessFixture>();
    m_port = freePort(); // `dialogctl up` is told the port of the partition's Control Server
    QByteArray out, err;
    const int up = m_fx->run(QStringLiteral("dialogctl"),
                             {QStringLiteral("up"), kPartition, QStringLiteral("--run-dir"), m_runDir.path(),
                              QStringLiteral("--port"), QString::number(m_port)},
                             &out, &err);
    // Remember what was started before anything can fail: cleanup stops it whatever happens.
    QSet<qint64> pids;
    launchRecord(m_runDir.path(), &pids);
    m_pids << QList<qint64>(pids.cbegin(), pids.cend());
    QVERIFY2(up == 0, (out + err).constData());
    // The demo names no secret: dialogctl up made one and says how to join the partition.
    const QString secret = m_runDir.filePath(QStringLiteral("secret"));
    QVERIFY2(out.contains("export DIALOG_SECRET_FILE=" + secret.toUtf8() + '\n'), out.constData());
    qputenv("DIALOG_SECRET_FILE", secret.toUtf8()); // for the dialogctl runs below
    // Control Server, logger, configuration database, 4 IS servers, the alarm server, the event
    // monitor and the data-quality checks (the partition's services), master, 6 slaves.
    QCOMPARE(m_pids.size(), 17);
    // The IS server Monitor and the service Monitor (dialog-monitor) each keep their own log.
    for (const char *log : {"logs/is-Monitor.log", "logs/Monitor.log", "logs/is-DQM.log", "logs/DQM.log"})
        QVERIFY2(QFile::exists(m_runDir.filePath(QLatin1String(log))), log);
    // As ./run.sh demo does: the slaves' parameters come from the configuration database.
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("config"), QStringLiteral("import"),
                        QStringLiteral(DIALOG_SOURCE_DIR "/resources"), QStringLiteral("--message"),
                        QStringLiteral("tst_demoscreens"), QStringLiteral("--control-server"),
                        QStringLiteral("127.0.0.1:%1").arg(m_port)},
                       &out, &err),
             0);

    // A run, started as an operator would: configure, then start, through the master's command.
    m_client = std::make_unique<Client>(options(QStringLiteral("test.demoscreens")));
    m_master = m_client->subscribe(QStringLiteral("RunCtrl.Master.State"));
    m_client->start();
    // The master accepts transitions once it sees all its slaves.
    const auto allPresent = [this] {
        const QJsonArray slaves = QJsonDocument::fromJson(m_master->lastMessage().data())
                                      .object()
                                      .value(QStringLiteral("slaves"))
                                      .toArray();
        return slaves.size() == 6 && std::all_of(slaves.begin(), slaves.end(), [](const QJsonValue &v) {
                   return v.toObject().value(QStringLiteral("present")).toBool();
               });
    };
    QTRY_VERIFY_WITH_TIMEOUT(m_master && runState() == QLatin1String("Initial") && allPresent(), 15000);
    const QList<QPair<QString, QString>> transitions{
        {QStringLiteral("configure"), QStringLiteral("Configured")},
        {QStringLiteral("start"), QStringLiteral("Running")}};
    for (const auto &[command, state] : transitions) {
        // As the run-control GUI does: a request to the master, answered when the transition is done.
        bool answered = false;
        Reply reply;
        m_client->request(QStringLiteral("RunCtrl.Master.State"), command.toUtf8(), 15000, this,
                          [&](const Reply &r) {
                              reply = r;
                              answered = true;
                          });
        QTRY_VERIFY_WITH_TIMEOUT(answered, 20000); // the request times out by itself after 15 s
        QVERIFY2(reply.isOk(), qPrintable(command + QStringLiteral(": ") + reply.errorString()));
        QTRY_COMPARE_WITH_TIMEOUT(runState(), state, 5000);
    }

    qInfo("partition up and running after %lld ms", clock.elapsed());
    // OMD first: its time series need a few seconds of points.
    m_omd = std::make_unique<omd::OmdWindow>(options(QStringLiteral("DIALOG.OMD.demo")));
    QString error;
    QVERIFY2(m_omd->loadLayout(QStringLiteral(DIALOG_SOURCE_DIR "/resources/omd/demo.json"), &error),
             qPrintable(error));
    m_omd->setWindowSeconds(60); // the last minute: the test's half minute of data fills half of it
    m_omd->resize(1400, 900);
    m_omd->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_omd.get()));
}

void tst_DemoScreens::cleanupTestCase()
{
    QElapsedTimer clock;
    clock.start();
    m_omd.reset();
    m_client.reset();
    if (m_port) {
        m_fx->run(QStringLiteral("dialogctl"),
                  {QStringLiteral("down"), kPartition, QStringLiteral("--run-dir"), m_runDir.path(),
                   QStringLiteral("--port"), QString::number(m_port)});
    }
    // Whatever `dialogctl down` left (it should leave nothing) is killed: no test leaves processes behind.
    for (qint64 pid : std::as_const(m_pids)) {
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains(DIALOG_BIN_DIR)) {
            qWarning("partition process %lld survived `dialogctl down`: killed", pid);
            ::kill(pid_t(pid), SIGKILL);
        }
    }
    m_fx.reset();
    qInfo("partition down after %lld ms", clock.elapsed());
}

void tst_DemoScreens::inspector()
{
    inspector::InspectorWindow w(options(QStringLiteral("DIALOG.Inspector.demo")));
    w.resize(1600, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto *model = w.processModel();
    const QStringList partition{QStringLiteral("Master"),       QStringLiteral("FE1"),
                                QStringLiteral("FE2"),          QStringLiteral("FE3"),
                                QStringLiteral("FE4"),          QStringLiteral("RO1"),
                                QStringLiteral("RO2"),          QStringLiteral("IS.Server.RunParams"),
                                QStringLiteral("IS.Server.DAQ")};
    // Every process with its figures and rates (two statistics snapshots).
    const auto ready = [&] {
        for (const QString &p : partition) {
            const inspector::ProcessFigures *f = model->figures(p);
            if (model->rowOf(p) < 0 || !f || f->messagesOutPerSecond < 0)
                return false;
        }
        return true;
    };
    QTRY_VERIFY_WITH_TIMEOUT(ready(), 15000);
    const inspector::ProcessRow ro1 = model->row(model->rowOf(QStringLiteral("RO1")));
    QVERIFY(!ro1.services.isEmpty());
    QVERIFY(model->figures(QStringLiteral("IS.Server.DAQ"))->messagesIn > 0); // the readouts' IS updates
    w.selectProcess(QStringLiteral("RO1"));
    // Its status service (about once a second).
    QVERIFY(ro1.services.contains(QStringLiteral("RunCtrl.RO1.Status")));
    w.listenToService(QStringLiteral("RunCtrl.RO1.Status"));
    QTRY_VERIFY_WITH_TIMEOUT(w.listenModel()->rowCount() >= 5, 10000);
    w.refresh();
    w.listenModel()->flush();
    save(&w, QStringLiteral("inspector-demo.png"));
}

void tst_DemoScreens::ismonitor()
{
    ismonitor::IsMonitorWindow w(options(QStringLiteral("DIALOG.ISMonitor.demo")));
    w.resize(1400, 820);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTRY_VERIFY_WITH_TIMEOUT(w.servers().contains(QStringLiteral("DAQ")), 10000);
    w.selectServer(QStringLiteral("DAQ"));
    QTRY_VERIFY_WITH_TIMEOUT(w.isLoaded() && w.objectModel()->rowOf(QStringLiteral("RO1")) >= 0 &&
                                 w.objectModel()->rowOf(QStringLiteral("FE4")) >= 0,
                             10000);
    w.selectObject(QStringLiteral("RO1"));
    // The event-size histogram of a running readout has entries.
    QTRY_VERIFY_WITH_TIMEOUT(w.histogramView()->isVisible() && w.histogramView()->pointCount() > 0, 10000);
    QVERIFY(w.attributeModel()->rowCount() > 5);
    // The picture shows a value that moves (an update of RO1 after it was selected) and a status
    // bar that counts what the table holds.
    const auto updatesOfRo1 = [&] {
        return w.objectModel()->row(w.objectModel()->rowOf(QStringLiteral("RO1"))).updates;
    };
    const quint64 seen = updatesOfRo1();
    QTRY_VERIFY_WITH_TIMEOUT(updatesOfRo1() > seen, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(
        w.countsLabel()->text().startsWith(QStringLiteral("%1 objects").arg(w.objectModel()->rowCount())) &&
            w.countsLabel()->text().endsWith(QLatin1String(" connected")),
        5000);
    w.refresh();
    save(&w, QStringLiteral("ismonitor-demo.png"));
}

void tst_DemoScreens::omd()
{
    QCOMPARE(m_omd->chartCount(), 6);
    // Every time series has 20 s of every series (a few spills of the readouts), every bar chart
    // its bars, and the readouts are in a spill (the rate bars are not at zero).
    const auto ready = [&] {
        for (int i = 0; i < m_omd->chartCount(); ++i) {
            if (auto *t = m_omd->timeSeries(i)) {
                for (int s = 0; s < t->seriesCount(); ++s)
                    if (t->points(s).size() < 2 || t->points(s).last().x() - t->points(s).first().x() < 20000)
                        return false;
            } else if (auto *b = m_omd->barChart(i)) {
                if (b->categories().size() < 2)
                    return false;
            }
        }
        const QList<double> rates = m_omd->barChart(1)->barValues();
        return rates.size() == 2 && rates.at(0) > 1000 && rates.at(1) > 1000;
    };
    // A refresh draws what the charts hold; a spill that ended meanwhile (the rate bars at zero) is
    // waited out, a few times at most.
    for (int attempt = 0; attempt < 5; ++attempt) {
        QTRY_VERIFY_WITH_TIMEOUT(ready(), 40000);
        m_omd->refresh();
        QCoreApplication::sendPostedEvents();
        if (ready())
            break;
    }
    QVERIFY(ready());
    save(m_omd.get(), QStringLiteral("omd-demo.png"));
}

void tst_DemoScreens::webPictures()
{
    // Every IS server of the demo has its web IS; Monitor's draws the sampled occupancy of RO1
    // framed green by dialog-dqm's dead-channel check (RO1 has none dead).
    for (const quint16 port : {8425, 8426, 8427, 8428}) {
        const HttpReply r = httpGet(port, "/is?format=json");
        QVERIFY2(r.status == 200 && r.body.contains("\"Monitor\""), QByteArray::number(port) + ": " + r.body);
    }
    const QByteArray path = "/is/Monitor/Monitor.RO1.occupancy.png?width=400&height=260&check=DQM.RO1.dead";
    HttpReply png;
    const auto frame = [&] {
        png = httpGet(8427, path);
        const QImage im = QImage::fromData(png.body, "PNG");
        return im.isNull() ? QColor() : im.pixelColor(1, 1);
    };
    QTRY_COMPARE_WITH_TIMEOUT(frame(), presenter::HistogramPainter::qualityColor(presenter::Quality::Good), 30000);
    QFile out(screenshotPath(QStringLiteral("isweb-png-demo.png")));
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(png.body);
}

QTEST_MAIN(tst_DemoScreens)
#include "tst_demoscreens.moc"
