// dialog-configdb's web page (--http-port): its JSON (/api/…) answers what CONFIG.<name> answers and
// refuses bad requests with the reason; the page, in headless Chromium, lists the runs, shows a
// run's record with its processes' software versions, a document at a version and the diff of two
// versions. Saves configweb.png.
#include "chromium.h"
#include "processfixture.h"
#include "screenshot.h"

#include "dialog/client.h"
#include "dialog/config.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog::test;

class tst_ConfigWeb : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void apiAnswersAndRefuses();
    void pageShowsRunsDocumentsAndDiffsInChromium();

private:
    int ctl(const QStringList &args, QByteArray *out = nullptr)
    {
        return m_fx->run(QStringLiteral("dialogctl"), args, out);
    }
    QString file(const QString &name, const QByteArray &content)
    {
        const QString path = m_dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
            qWarning() << "cannot write" << path;
        return path;
    }
    /// A CONFIG request of the run registry; the answer, or {} on a refusal.
    QJsonObject call(const QJsonObject &request)
    {
        dialog::config::ConfigClient config(m_client.get());
        std::optional<QJsonObject> answer;
        config.call(request, [&](const dialog::Status &st, const QJsonObject &a) {
            if (!st.isOk())
                qWarning() << st.toString();
            answer = st.isOk() ? a : QJsonObject();
        });
        return waitUntil([&] { return answer.has_value(); }, 15000) ? *answer : QJsonObject();
    }
    static QJsonObject json(const HttpReply &r) { return QJsonDocument::fromJson(r.body).object(); }

    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<dialog::Client> m_client;
    QTemporaryDir m_dir;
    quint16 m_http = 0;
};

void tst_ConfigWeb::initTestCase()
{
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
    QProcess *db = m_fx->start(QStringLiteral("dialog-configdb"),
                               {QStringLiteral("--data-dir"), m_dir.filePath(QStringLiteral("data")),
                                QStringLiteral("--http-port"), QStringLiteral("0")});
    m_http = ProcessFixture::waitForListening(
        db, QRegularExpression(QStringLiteral("web page on http://127\\.0\\.0\\.1:(\\d+)/")), 20000);
    QVERIFY(m_http != 0);
    // Version 1, tagged; version 2 changes FE1's registers and adds RO1.
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE1"),
                  file(QStringLiteral("fe1.json"), "{\n    \"registers\": 8\n}\n")}),
             0);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("tag"), QStringLiteral("cosmics-1")}), 0);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE1"),
                  file(QStringLiteral("fe1b.json"), "{\n    \"registers\": 16\n}\n")}),
             0);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("readout/RO1"),
                  file(QStringLiteral("ro1.json"), "{\"threads\": 2}\n")}),
             0);
    m_client = std::make_unique<dialog::Client>(m_fx->clientOptions(QStringLiteral("configWebTest")));
    QVERIFY(m_client->start());
    // Two runs of partition "east": 1 with version 1 (the tag), 2 with version 3, going on; 2's start
    // ended 1, which never ended, as "master lost".
    const QJsonArray processes{QJsonObject{{QStringLiteral("name"), QStringLiteral("FE1")},
                                           {QStringLiteral("host"), QStringLiteral("daq-fe1")},
                                           {QStringLiteral("pid"), 4242},
                                           {QStringLiteral("version"), QStringLiteral("0.1.0")}},
                               QJsonObject{{QStringLiteral("name"), QStringLiteral("RO1")},
                                           {QStringLiteral("host"), QStringLiteral("daq-ro1")},
                                           {QStringLiteral("pid"), 4343}}};
    for (int version : {1, 3})
        QVERIFY(!call({{QStringLiteral("op"), QStringLiteral("run-start")},
                       {QStringLiteral("run"),
                        QJsonObject{{QStringLiteral("partition"), QStringLiteral("east")},
                                    {QStringLiteral("run_type"), QStringLiteral("Physics")},
                                    {QStringLiteral("config_version"), version},
                                    {QStringLiteral("config_tag"),
                                     version == 1 ? QStringLiteral("cosmics-1") : QString()},
                                    {QStringLiteral("operator"), QStringLiteral("shifter@cr-03")},
                                    {QStringLiteral("master"), QStringLiteral("Master")},
                                    {QStringLiteral("processes"), processes}}}})
                     .isEmpty());
}

void tst_ConfigWeb::cleanupTestCase()
{
    m_client.reset();
    m_fx.reset();
}

void tst_ConfigWeb::apiAnswersAndRefuses()
{
    HttpReply r = httpGet(m_http, "/api/runs");
    QCOMPARE(r.status, 200);
    const QJsonArray runs = json(r).value(QStringLiteral("runs")).toArray();
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs.at(0).toObject().value(QStringLiteral("number")).toInt(), 2);
    QCOMPARE(runs.at(1).toObject().value(QStringLiteral("end_reason")).toString(),
             QStringLiteral("master lost"));
    r = httpGet(m_http, "/api/runs?type=Cosmics");
    QCOMPARE(json(r).value(QStringLiteral("runs")).toArray().size(), 0);
    r = httpGet(m_http, "/api/doc?path=slaves/FE1&ref=cosmics-1");
    QCOMPARE(r.status, 200);
    QCOMPARE(json(r).value(QStringLiteral("version")).toInt(), 1);
    QVERIFY2(json(r).value(QStringLiteral("content")).toString().contains(QLatin1String("\"registers\": 8")),
             r.body);
    r = httpGet(m_http, "/api/diff?from=1&to=head");
    QCOMPARE(json(r).value(QStringLiteral("changes")).toArray().size(), 2);

    // Bad input: the reason, with the status that fits.
    r = httpGet(m_http, "/api/run?number=99");
    QCOMPARE(r.status, 404);
    QCOMPARE(json(r).value(QStringLiteral("error")).toString(), QStringLiteral("unknown run 99"));
    r = httpGet(m_http, "/api/doc?path=slaves/FE1&ref=physics-2099");
    QCOMPARE(r.status, 404);
    QCOMPARE(json(r).value(QStringLiteral("error")).toString(), QStringLiteral("unknown tag 'physics-2099'"));
    r = httpGet(m_http, "/api/doc?path=slaves/FE9");
    QCOMPARE(r.status, 404);
    QVERIFY2(json(r).value(QStringLiteral("error")).toString().contains(QLatin1String("slaves/FE9")), r.body);
    r = httpGet(m_http, "/api/run?number=two");
    QCOMPARE(r.status, 400);
    QCOMPARE(json(r).value(QStringLiteral("error")).toString(),
             QStringLiteral("number: 'two' is not a non-negative integer"));
    r = httpGet(m_http, "/api/diff?from=1");
    QCOMPARE(r.status, 400);
    r = httpGet(m_http, "/api/commit");
    QCOMPARE(r.status, 404);
    r = httpGet(m_http, "/api/runs", {}, "POST");
    QCOMPARE(r.status, 405);
}

void tst_ConfigWeb::pageShowsRunsDocumentsAndDiffsInChromium()
{
    if (HeadlessChromium::executable().isEmpty())
        QSKIP("chromium is not installed (Debian package 'chromium'; ./run.sh installs it)");
    HeadlessChromium browser;
    DevTools dt;
    const QString error =
        openPage(browser, dt, QStringLiteral("http://127.0.0.1:%1/").arg(m_http), 1100, 420);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    // The runs, newest first.
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.querySelectorAll('#runrows tr.run').length")).toInt(), 2, 15000);
    QCOMPARE(dt.eval(QStringLiteral("document.querySelector('#runrows tr.run').dataset.number")).toString(),
             QStringLiteral("2"));
    QCOMPARE(dt.eval(QStringLiteral("document.querySelector('#runrows tr[data-number=\"1\"] td.reason')"
                                    ".textContent"))
                 .toString()
                 .left(11),
             QStringLiteral("master lost"));
    // A run's record: its configuration version and tag, its processes with their software.
    dt.eval(QStringLiteral("document.querySelector('#runrows tr[data-number=\"1\"]').click(); 1"));
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.getElementById('runconfig').textContent")).toString(),
        QStringLiteral("version 1 (cosmics-1)"), 10000);
    const QString processCell =
        QStringLiteral("(() => { const tr = document.querySelector('#processrows tr[data-process=\"%1\"]'); "
                       "return tr ? Array.from(tr.cells).map(c => c.textContent).join(' ') : ''; })()");
    QCOMPARE(dt.eval(processCell.arg(QStringLiteral("FE1"))).toString(),
             QStringLiteral("FE1 daq-fe1 4242 0.1.0"));
    QCOMPARE(dt.eval(processCell.arg(QStringLiteral("RO1"))).toString(),
             QStringLiteral("RO1 daq-ro1 4343 unknown"));
    QVERIFY(!dt.eval(QStringLiteral("document.getElementById('run').hidden")).toBool());
    // Its configuration: the documents of version 1, and one of them at that version.
    dt.eval(QStringLiteral("document.querySelector('#runconfig a').click(); 1"));
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.querySelectorAll('#docrows tr').length")).toInt(), 1, 10000);
    dt.eval(QStringLiteral("document.querySelector('#docrows tr[data-path=\"slaves/FE1\"] a').click(); 1"));
    QTRY_VERIFY_WITH_TIMEOUT(dt.eval(QStringLiteral("document.getElementById('content').textContent"))
                                 .toString()
                                 .contains(QStringLiteral("\"registers\": 8")),
                             10000);
    QCOMPARE(dt.eval(QStringLiteral("document.getElementById('doctitle').textContent")).toString(),
             QStringLiteral("slaves/FE1 at version 1 (last changed in version 1)"));
    // An unknown tag says so on the page.
    dt.eval(QStringLiteral("location.hash = '#/doc/slaves/FE1@physics-2099'; 1"));
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.getElementById('error').textContent")).toString(),
        QStringLiteral("unknown tag 'physics-2099'"), 10000);
    // The diff of version 1 and the newest: FE1's changed line, RO1 added.
    dt.eval(QStringLiteral("location.hash = '#/diff/cosmics-1/head'; 1"));
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.querySelectorAll('#diffs pre').length")).toInt(), 2, 10000);
    const QString lines = QStringLiteral("Array.from(document.querySelectorAll('#diffs pre[data-path=\"%1\"] "
                                         "span.%2')).map(s => s.textContent)"
                                         ".join('|')");
    QCOMPARE(dt.eval(lines.arg(QStringLiteral("slaves/FE1"), QStringLiteral("del"))).toString(),
             QStringLiteral("-    \"registers\": 8"));
    QCOMPARE(dt.eval(lines.arg(QStringLiteral("slaves/FE1"), QStringLiteral("add"))).toString(),
             QStringLiteral("+    \"registers\": 16"));
    QCOMPARE(dt.eval(lines.arg(QStringLiteral("readout/RO1"), QStringLiteral("add"))).toString(),
             QStringLiteral("+{\"threads\": 2}"));
    QCOMPARE(dt.eval(QStringLiteral("document.getElementById('difftitle').textContent")).toString(),
             QStringLiteral("From version 1 to version 3: 2 documents"));
    QCOMPARE(dt.eval(QStringLiteral("document.getElementById('error').textContent")).toString(), QString());
    // Back to the runs list for the screenshot.
    dt.eval(QStringLiteral("location.hash = '#/runs'; 1"));
    QTRY_COMPARE_WITH_TIMEOUT(dt.eval(QStringLiteral("document.getElementById('runs').hidden")).toBool(),
                              false, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.querySelectorAll('#runrows tr.run').length")).toInt(), 2, 10000);
    const QString saved = savePagePng(dt, screenshotPath(QStringLiteral("configweb.png")));
    QVERIFY2(saved.isEmpty(), qPrintable(saved));
    QVERIFY2(dt.pageErrors().isEmpty(), qPrintable(dt.pageErrors().join(QLatin1Char('\n'))));
    closeBrowser(browser, dt);
}

QTEST_GUILESS_MAIN(tst_ConfigWeb)
#include "tst_configweb.moc"
