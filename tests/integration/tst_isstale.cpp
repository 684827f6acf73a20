// Stale IS objects with the real daemons: an object of a type declaring expected_interval_s="1"
// that is no longer written becomes stale (with its age) in `dialogctl is get`, `dialogctl is ls
// --stale`, the IS API, the web IS and /metrics, and fresh again at its next write; an object
// whose writer is killed is stale for that reason.
#include "isweb.h"

#include "dialog/is/dictionary.h"

#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTimer>
#include <QWebSocket>
#include <QtTest>
#include <csignal>
#include <cstdio>

using namespace dialog;
using namespace dialog::test;

namespace {

// Beat is expected every second; Note declares no interval (it is stale only when its writer is lost).
const QByteArray TypesXml = R"(<?xml version="1.0" encoding="UTF-8"?>
<is-types>
  <type name="Beat" description="Written every 200 ms by the test" expected_interval_s="1">
    <attribute name="n" type="u32" description="Counter"/>
  </type>
  <type name="SubBeat" base="Beat" description="Inherits the interval"/>
  <type name="Note" description="Written once">
    <attribute name="text" type="string" description="Text"/>
  </type>
</is-types>
)";

is::Object note(const is::TypeRegistry &types, const QString &text)
{
    is::Object o = is::Object::create(types, QStringLiteral("Note"));
    o.set(QStringLiteral("text"), text);
    return o;
}

/// The provider mode of this executable (DIALOG_STALE_PROVIDER=Server.Object): writes one Note
/// and stays until killed.
int provider(const QString &name)
{
    Client client(ClientOptions::fromEnvironment(QStringLiteral("stale-provider")));
    if (!client.start())
        return 2;
    is::Dictionary dict(&client);
    if (!dict.fetchTypesSync(name.section(QLatin1Char('.'), 0, 0)).isOk())
        return 3;
    const is::Status s = dict.updateSync(name, note(dict.types(), QStringLiteral("from the provider")));
    std::printf("written %s\n", qPrintable(s.toString()));
    std::fflush(stdout);
    return QCoreApplication::exec();
}

} // namespace

class tst_IsStale : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup() { tearDownIs(); }
    void overdueObjectIsStaleUntilWrittenAgain();
    void killedWriterMakesItsObjectStale();

private:
    /// `dialogctl is get NAME --json`, parsed (empty if it failed).
    QJsonObject toolGet(const QString &name, QByteArray *text = nullptr)
    {
        QByteArray out, err;
        if (m_fx->run(QStringLiteral("dialogctl"),
                      {QStringLiteral("is"), QStringLiteral("get"), name, QStringLiteral("--json")}, &out,
                      &err) != 0) {
            qWarning() << "dialogctl is get failed:" << err;
            return {};
        }
        if (text)
            m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("is"), QStringLiteral("get"), name}, text);
        return QJsonDocument::fromJson(out).object();
    }
    QJsonObject webGet(const QByteArray &name)
    {
        return QJsonDocument::fromJson(httpGet(m_http, "/is/DAQ/" + name + "?format=json").body).object();
    }
    void startDaq()
    {
        QVERIFY(m_types.isValid());
        QFile f(m_types.filePath(QStringLiteral("stale.xml")));
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(TypesXml) == TypesXml.size());
        f.close();
        // The later --types wins: the server knows only the test's types (and the built-in ones).
        QProcess *server =
            startServer(QStringLiteral("DAQ"),
                        {QStringLiteral("--types"), m_types.path(), QStringLiteral("--http-port"),
                         QStringLiteral("0"), QStringLiteral("--metrics-criteria"), QStringLiteral(".*")});
        m_http = httpPortOf(server);
        QVERIFY(m_http != 0);
        QVERIFY(waitForServer(QStringLiteral("DAQ")));
        QVERIFY(m_dict->fetchTypesSync(QStringLiteral("DAQ")).isOk());
    }

    QTemporaryDir m_types;
    quint16 m_http = 0;
};

void tst_IsStale::init()
{
    QVERIFY(setUpIs(QStringLiteral("stale-test")));
}

void tst_IsStale::overdueObjectIsStaleUntilWrittenAgain()
{
    startDaq();
    // The type's interval reaches clients with the server's types; a subtype inherits it.
    QCOMPARE(m_dict->types().expectedIntervalS(QStringLiteral("Beat")), 1.0);
    QCOMPARE(m_dict->types().expectedIntervalS(QStringLiteral("SubBeat")), 1.0);

    // A provider (a DIALOG process of its own) writes DAQ.Beat every 200 ms while its timer runs.
    Client providerClient(m_fx->clientOptions(QStringLiteral("BeatProvider")));
    QVERIFY(providerClient.start());
    is::Dictionary provider(&providerClient);
    QVERIFY(provider.fetchTypesSync(QStringLiteral("DAQ")).isOk());
    quint32 n = 0;
    const auto beat = [&] {
        is::Object o = is::Object::create(provider.types(), QStringLiteral("SubBeat"));
        o.set(QStringLiteral("n"), ++n);
        provider.update(QStringLiteral("DAQ.Beat"), o);
    };
    QVERIFY(
        provider.updateSync(QStringLiteral("DAQ.Quiet"), note(provider.types(), QStringLiteral("x"))).isOk());
    beat();
    QTimer writer;
    connect(&writer, &QTimer::timeout, this, beat);
    writer.start(200);
    QTRY_VERIFY_WITH_TIMEOUT(m_dict->getSync(QStringLiteral("DAQ.Beat"), nullptr).isOk(), 5000);

    // While written: not stale, its age and the interval said.
    QJsonObject got = toolGet(QStringLiteral("DAQ.Beat"));
    QCOMPARE(got.value(QLatin1String("stale")), QJsonValue(false));
    QVERIFY2(got.value(QLatin1String("age_s")).isDouble(), QJsonDocument(got).toJson());
    QCOMPARE(got.value(QLatin1String("expected_interval_s")).toDouble(), 1.0);
    QVERIFY(!got.contains(QLatin1String("stale_reason")));
    QCOMPARE(webGet("DAQ.Beat").value(QLatin1String("stale")), QJsonValue(false));
    // An object without a declared interval is never stale for being old.
    QCOMPARE(toolGet(QStringLiteral("DAQ.Quiet")).value(QLatin1String("stale")), QJsonValue(false));

    // It stops writing: after more than a second, stale with its age everywhere.
    writer.stop();
    QTRY_COMPARE_WITH_TIMEOUT(toolGet(QStringLiteral("DAQ.Beat")).value(QLatin1String("stale")),
                              QJsonValue(true), 10000);
    QByteArray text;
    got = toolGet(QStringLiteral("DAQ.Beat"), &text);
    QCOMPARE(got.value(QLatin1String("stale")), QJsonValue(true));
    QVERIFY2(got.value(QLatin1String("age_s")).toDouble() > 1.0, QJsonDocument(got).toJson());
    QVERIFY2(
        got.value(QLatin1String("stale_reason")).toString().startsWith(QLatin1String("not updated for ")),
        QJsonDocument(got).toJson());
    QVERIFY2(
        got.value(QLatin1String("stale_reason")).toString().endsWith(QLatin1String("(expected every 1 s)")),
        QJsonDocument(got).toJson());
    QVERIFY2(text.contains("\n  STALE: not updated for "), text);
    QVERIFY2(text.contains("s ago"), text);

    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("DAQ.Beat"), &e).isOk());
    QVERIFY(e.staleness.isStale());
    QVERIFY(e.staleness.overdue);
    QVERIFY(!e.staleness.writerLost);
    QVERIFY(e.staleness.ageUs > 1000000);
    QCOMPARE(e.staleness.expectedIntervalS, 1.0);
    QList<is::Entry> staleOnes;
    QVERIFY(m_dict->listStaleSync(QStringLiteral("DAQ"), is::Criteria(), &staleOnes).isOk());
    QCOMPARE(staleOnes.size(), 1);
    QCOMPARE(staleOnes.first().name, QStringLiteral("DAQ.Beat"));
    QByteArray ls;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("ls"), QStringLiteral("DAQ"),
                        QStringLiteral("--stale")},
                       &ls),
             0);
    QVERIFY2(ls.startsWith("DAQ.Beat ") && ls.count('\n') == 1 && ls.contains("STALE (not updated for "), ls);

    const QJsonObject web = webGet("DAQ.Beat");
    QCOMPARE(web.value(QLatin1String("stale")), QJsonValue(true));
    QVERIFY(web.value(QLatin1String("age_s")).toDouble() > 1.0);
    const QByteArray xml = httpGet(m_http, "/is/DAQ/DAQ.Beat").body;
    QVERIFY2(xml.contains(" stale=\"1\" stale_reason=\"not updated for "), xml);
    const QByteArray metrics = httpGet(m_http, "/metrics").body;
    QVERIFY2(metrics.contains("dialog_is_stale{server=\"DAQ\",object=\"Beat\",type=\"SubBeat\"} 1\n"),
             metrics);
    QVERIFY2(metrics.contains("dialog_is_stale{server=\"DAQ\",object=\"Quiet\",type=\"Note\"} 0\n"), metrics);
    // A WebSocket subscriber is told with the current value.
    WsClient ws;
    ws.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_VERIFY_WITH_TIMEOUT(ws.socket.state() == QAbstractSocket::ConnectedState, 5000);
    ws.socket.sendTextMessage(QStringLiteral(R"({"server": "DAQ", "regex": "Beat|Quiet"})"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("synced")) >= 0, 5000);
    const int beatAt = ws.indexOf(QStringLiteral("value"), QStringLiteral("DAQ.Beat"));
    const int quietAt = ws.indexOf(QStringLiteral("value"), QStringLiteral("DAQ.Quiet"));
    QVERIFY(beatAt >= 0 && quietAt >= 0);
    QCOMPARE(ws.received.at(beatAt).value(QLatin1String("stale")), QJsonValue(true));
    QVERIFY(ws.received.at(beatAt).value(QLatin1String("age_s")).toDouble() > 1.0);
    QCOMPARE(ws.received.at(quietAt).value(QLatin1String("stale")), QJsonValue(false));
    ws.socket.close();

    // It writes again: fresh at once.
    writer.start(200);
    QTRY_COMPARE_WITH_TIMEOUT(toolGet(QStringLiteral("DAQ.Beat")).value(QLatin1String("stale")),
                              QJsonValue(false), 10000);
    QVERIFY(m_dict->listStaleSync(QStringLiteral("DAQ"), is::Criteria(), &staleOnes).isOk());
    QVERIFY(staleOnes.isEmpty());
    writer.stop();
}

void tst_IsStale::killedWriterMakesItsObjectStale()
{
    startDaq();
    QProcess child;
    QByteArray said;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("DIALOG_STALE_PROVIDER"), QStringLiteral("DAQ.Lost"));
    env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_fx->controlServer());
    child.setProcessEnvironment(env);
    child.setProcessChannelMode(QProcess::MergedChannels);
    child.start(QCoreApplication::applicationFilePath(), {});
    QVERIFY(child.waitForStarted(5000));
    auto reap = qScopeGuard([&child, &said] {
        if (QTest::currentTestFailed())
            qWarning() << "the provider said:" << said;
        child.kill();
        child.waitForFinished(3000);
    });
    QTRY_VERIFY_WITH_TIMEOUT((said += child.readAll()).contains("written ok"), 10000);
    QCOMPARE(toolGet(QStringLiteral("DAQ.Lost")).value(QLatin1String("stale")), QJsonValue(false));

    ::kill(pid_t(child.processId()), SIGKILL);
    QTRY_COMPARE_WITH_TIMEOUT(toolGet(QStringLiteral("DAQ.Lost")).value(QLatin1String("stale")),
                              QJsonValue(true), 15000);
    const QJsonObject got = toolGet(QStringLiteral("DAQ.Lost"));
    QCOMPARE(got.value(QLatin1String("stale_reason")).toString(), QStringLiteral("writer lost"));
    QVERIFY(got.value(QLatin1String("age_s")).isDouble());
    QVERIFY(!got.contains(QLatin1String("expected_interval_s"))); // Note declares none
    QCOMPARE(webGet("DAQ.Lost").value(QLatin1String("stale_reason")).toString(),
             QStringLiteral("writer lost"));
    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("DAQ.Lost"), &e).isOk());
    QVERIFY(e.staleness.writerLost);
    QVERIFY(!e.staleness.overdue);

    // Another writer takes over: fresh again.
    QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.Lost"), note(m_dict->types(), QStringLiteral("again")))
                .isOk());
    QCOMPARE(toolGet(QStringLiteral("DAQ.Lost")).value(QLatin1String("stale")), QJsonValue(false));
}

int main(int argc, char *argv[])
{
    const QString providerName = qEnvironmentVariable("DIALOG_STALE_PROVIDER");
    QCoreApplication app(argc, argv);
    if (!providerName.isEmpty())
        return provider(providerName);
    tst_IsStale tc;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&tc, argc, argv);
}

#include "tst_isstale.moc"
