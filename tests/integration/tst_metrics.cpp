// GET /metrics of dialog-isserver: the OpenMetrics text, and a real Prometheus server scraping it
// and answering PromQL queries with the values the test wrote.
#include "statuscheck.h"
#include "isweb.h"

#include "dialog/is/dictionary.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUrlQuery>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

class tst_Metrics : public IsWebTest
{
    Q_OBJECT

private Q_SLOTS:
    void init() { setUpFixture(); }
    void cleanup() { tearDownFixture(); }
    void openMetricsText();
    void exportedObjectsAreBounded();
    void noCriteriaExportsNoObject();
    void badCriteriaIsRefused();
    void prometheusScrapesAndAnswersPromQL();

private:
    void writeReadout(const QString &name, double rate, quint32 errors);
};

void tst_Metrics::writeReadout(const QString &name, double rate, quint32 errors)
{
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
    QVERIFY_OK(o.set(QStringLiteral("rate"), rate));
    QVERIFY_OK(o.set(QStringLiteral("errors"), errors));
    QVERIFY_OK(o.set(QStringLiteral("host"), QStringLiteral("pc\"1\\")));
    QVERIFY_OK(o.set(QStringLiteral("queueDepths"), QList<quint32>{1, 2, 3}));
    QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.") + name, o).isOk());
}

void tst_Metrics::openMetricsText()
{
    startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--metrics-criteria"), QStringLiteral("RO.*")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_http != 0);
    writeReadout(QStringLiteral("RO1"), 12.5, 3);
    writeReadout(QStringLiteral("RO\"2"), 0.25, 0);
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.Other"),
                             is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats")))
                .isOk());

    HttpReply r = httpGet(m_http, "/metrics");
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("content-type"),
             QByteArray("application/openmetrics-text; version=1.0.0; charset=utf-8"));
    QVERIFY2(r.body.endsWith("# EOF\n"), r.body.right(200));
    const QByteArray ro1 = "server=\"DAQ\",object=\"RO1\",type=\"ReadoutStats\"";
    QVERIFY2(r.body.contains("dialog_is_value{" + ro1 + ",attribute=\"rate\"} 12.5\n"), r.body);
    QVERIFY2(r.body.contains("dialog_is_value{" + ro1 + ",attribute=\"errors\"} 3\n"), r.body);
    // Nested objects flattened; times in seconds; label values escaped.
    QVERIFY2(r.body.contains("dialog_is_value{" + ro1 + ",attribute=\"eventSize.bins\"} 0\n"), r.body);
    QVERIFY2(r.body.contains("dialog_is_value{" + ro1 + ",attribute=\"updateTime\"} 0\n"), r.body);
    QVERIFY2(r.body.contains("object=\"RO\\\"2\",type=\"ReadoutStats\",attribute=\"rate\"} 0.25\n"), r.body);
    QVERIFY2(r.body.contains("dialog_is_updates_total{" + ro1 + "} 0\n"), r.body);
    // Strings and vectors are not numbers to Prometheus; objects outside the criteria are left out.
    QVERIFY(!r.body.contains("attribute=\"host\""));
    QVERIFY(!r.body.contains("attribute=\"queueDepths"));
    QVERIFY(!r.body.contains("object=\"Other\""));
    // The server's own figures.
    QVERIFY2(r.body.contains("# TYPE dialog_isserver_changes counter\n"), r.body);
    QVERIFY2(r.body.contains("dialog_isserver_objects{server=\"DAQ\"} "), r.body);
    QVERIFY(r.body.contains("dialog_isserver_requests_total{server=\"DAQ\"} "));
    // Each family's samples together, a TYPE line before them, no family twice.
    QSet<QByteArray> families;
    for (const QByteArray &line : r.body.split('\n')) {
        if (!line.startsWith("# TYPE "))
            continue;
        const QByteArray name = line.split(' ').at(2);
        QVERIFY2(!families.contains(name), line);
        families.insert(name);
    }

    // Every process's communication figures arrive once DIALOG.Statistics was subscribed.
    QTRY_VERIFY_WITH_TIMEOUT(
        httpGet(m_http, "/metrics")
            .body.contains("dialog_process_messages_out_total{process=\"IS.Server.DAQ\"}"),
        10000);
    r = httpGet(m_http, "/metrics");
    QVERIFY2(r.body.contains("dialog_process_received_bytes_total{process=\"isweb-test\"} "), r.body);

    // An update is seen at the next scrape.
    writeReadout(QStringLiteral("RO1"), 99, 4);
    r = httpGet(m_http, "/metrics");
    QVERIFY2(r.body.contains("dialog_is_value{" + ro1 + ",attribute=\"rate\"} 99\n"), r.body);
    QVERIFY2(r.body.contains("dialog_is_updates_total{" + ro1 + "} 1\n"), r.body);

    // The scrape time for 1,000 exported objects, printed (not asserted).
    for (int i = 0; i < 1000; ++i) {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
        o.set(QStringLiteral("rate"), double(i));
        if (i < 999)
            m_dict->update(QStringLiteral("DAQ.ROx%1").arg(i), o); // in order, before the last one
        else
            QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.ROx%1").arg(i), o).isOk());
    }
    QElapsedTimer t;
    t.start();
    r = httpGet(m_http, "/metrics");
    const qint64 us = t.nsecsElapsed() / 1000;
    QCOMPARE(r.status, 200);
    QVERIFY(r.body.contains("object=\"ROx999\""));
    QVERIFY2(r.body.contains("dialog_is_objects_omitted{server=\"DAQ\"} 0\n"), r.body.right(2000));
    qInfo("GET /metrics with 1002 objects: %lld us, %lld bytes", us, qlonglong(r.body.size()));
}

// A scrape over 100,000 objects was 40 MB (783 MB at 16 scrapes): the objects exported are bounded,
// the rest counted.
void tst_Metrics::exportedObjectsAreBounded()
{
    startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--metrics-criteria"), QStringLiteral("RO.*"),
                                           QStringLiteral("--metrics-max-objects"), QStringLiteral("5")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    for (int i = 0; i < 8; ++i)
        writeReadout(QStringLiteral("RO%1").arg(i), i, 0);
    const HttpReply r = httpGet(m_http, "/metrics");
    QCOMPARE(r.status, 200);
    QCOMPARE(r.body.count("dialog_is_updates_total{"), 5);
    QVERIFY(r.body.contains("object=\"RO4\""));
    QVERIFY(!r.body.contains("object=\"RO5\""));
    QVERIFY2(r.body.contains("# TYPE dialog_is_objects_omitted gauge\n"), r.body);
    QVERIFY2(r.body.contains("dialog_is_objects_omitted{server=\"DAQ\"} 3\n"), r.body);
    QVERIFY(r.body.endsWith("# EOF\n"));
}

void tst_Metrics::noCriteriaExportsNoObject()
{
    startWebServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeReadout(QStringLiteral("RO1"), 12.5, 3);
    const HttpReply r = httpGet(m_http, "/metrics");
    QCOMPARE(r.status, 200);
    QVERIFY(!r.body.contains("dialog_is_value{"));
    // Published once a second: 2 objects (with DAQ.Statistics) at the latest at the next second.
    QTRY_VERIFY_WITH_TIMEOUT(
        httpGet(m_http, "/metrics").body.contains("dialog_isserver_objects{server=\"DAQ\"} 2\n"), 5000);
    QVERIFY(r.body.endsWith("# EOF\n"));
}

void tst_Metrics::badCriteriaIsRefused()
{
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       {QStringLiteral("--name"), QStringLiteral("DAQ"), QStringLiteral("--http-port"),
                        QStringLiteral("0"), QStringLiteral("--metrics-criteria"), QStringLiteral("RO(")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("invalid --metrics-criteria 'RO('"), err);
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       {QStringLiteral("--name"), QStringLiteral("DAQ"), QStringLiteral("--metrics-criteria"),
                        QStringLiteral("RO.*")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("--metrics-criteria needs --http-port"), err);
}

void tst_Metrics::prometheusScrapesAndAnswersPromQL()
{
    const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
    if (prometheus.isEmpty())
        QSKIP("the prometheus binary is not installed (Debian package prometheus)");
    startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--metrics-criteria"), QStringLiteral("RO.*")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_http != 0);
    writeReadout(QStringLiteral("RO1"), 12.5, 3);

    // A Prometheus of its own: configuration and data in the build tree, a 1 s scrape interval.
    QTemporaryDir dir(
        QDir(QStringLiteral(DIALOG_BIN_DIR "/..")).filePath(QStringLiteral("prometheus-XXXXXX")));
    QVERIFY(dir.isValid());
    const quint16 port = freePort();
    QFile config(dir.filePath(QStringLiteral("prometheus.yml")));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(QStringLiteral("global:\n"
                                "  scrape_interval: 1s\n"
                                "  evaluation_interval: 1s\n"
                                "scrape_configs:\n"
                                "  - job_name: dialog\n"
                                "    static_configs:\n"
                                "      - targets: ['127.0.0.1:%1']\n")
                     .arg(m_http)
                     .toUtf8());
    config.close();
    QProcess prometheusProcess;
    QProcess *prom = &prometheusProcess;
    prom->setProcessChannelMode(QProcess::MergedChannels);
    prom->start(prometheus, {QStringLiteral("--config.file=") + config.fileName(),
                             QStringLiteral("--storage.tsdb.path=") + dir.filePath(QStringLiteral("data")),
                             QStringLiteral("--web.listen-address=127.0.0.1:%1").arg(port)});
    QVERIFY2(prom->waitForStarted(5000), qPrintable(prom->errorString()));
    auto reap = qScopeGuard([prom] {
        if (QTest::currentTestFailed())
            qWarning().noquote() << prom->readAll().right(4000);
        prom->terminate();
        if (!prom->waitForFinished(5000)) {
            prom->kill();
            prom->waitForFinished(3000);
        }
    });

    QNetworkAccessManager net;
    // The first sample of a PromQL instant query, as text ("" while there is none).
    auto query = [&](const QString &promql) -> QString {
        QUrl url(QStringLiteral("http://127.0.0.1:%1/api/v1/query").arg(port));
        url.setQuery(QUrlQuery{{QStringLiteral("query"), promql}});
        QNetworkReply *reply = net.get(QNetworkRequest(url));
        waitUntil([reply] { return reply->isFinished(); }, 5000);
        const QJsonObject answer = QJsonDocument::fromJson(reply->readAll()).object();
        reply->deleteLater();
        const QJsonArray result =
            answer.value(QLatin1String("data")).toObject().value(QLatin1String("result")).toArray();
        return result.isEmpty()
                   ? QString()
                   : result.at(0).toObject().value(QLatin1String("value")).toArray().at(1).toString();
    };
    const QString rate = QStringLiteral("dialog_is_value{server=\"DAQ\",object=\"RO1\",attribute=\"rate\"}");
    QTRY_COMPARE_WITH_TIMEOUT(query(rate), QStringLiteral("12.5"), 20000);
    QCOMPARE(
        query(QStringLiteral("dialog_is_value{object=\"RO1\",attribute=\"errors\",type=\"ReadoutStats\"}")),
        QStringLiteral("3"));
    QCOMPARE(query(QStringLiteral("up{job=\"dialog\"}")), QStringLiteral("1"));
    // A new value written through the IS is what Prometheus answers after its next scrapes.
    writeReadout(QStringLiteral("RO1"), 77.75, 5);
    QTRY_COMPARE_WITH_TIMEOUT(query(rate), QStringLiteral("77.75"), 10000);
    QCOMPARE(query(QStringLiteral("dialog_isserver_objects{server=\"DAQ\"}")), QStringLiteral("2"));
    // The communication figures of the processes, as counters.
    QTRY_VERIFY_WITH_TIMEOUT(
        query(QStringLiteral("dialog_process_messages_out_total{process=\"IS.Server.DAQ\"}")).toLongLong() >
            0,
        10000);
}

QTEST_GUILESS_MAIN(tst_Metrics)
#include "tst_metrics.moc"
