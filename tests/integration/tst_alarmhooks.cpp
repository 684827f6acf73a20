// dialog-alarmserver's notification hooks (a rule's "on_raise"): a command run with the alarm in its
// environment (it writes a file the test reads), a command that hangs (killed with its process
// group after --hook-timeout-s while the server goes on evaluating and answering; a raise while
// --hook-max-running hooks run is dropped and counted), a POST of the alarm as JSON to a QTcpServer
// of the test on 127.0.0.1, a POST to a closed port (counted as failed), and rules with a bad hook
// refused at start with the line and the reason.
#include "isfixture.h"

#include "dialog/request.h"

#include <QJsonArray>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace dialog;
using namespace dialog::test;

class tst_AlarmHooks : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase() { tearDownIs(); }
    void commandSeesTheAlarm();
    void hangingCommandIsKilledAndTheServerGoesOn();
    void postsTheAlarmAsJson();
    void badHookRefusedWithLineAndReason_data();
    void badHookRefusedWithLineAndReason();

private:
    QString path(const QString &name) const { return m_tmp.filePath(name); }
    QString write(const QString &name, const QByteArray &content)
    {
        QFile f(path(name));
        if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
            qWarning() << "cannot write" << name;
        return path(name);
    }
    QString stateOf(const QString &alarm)
    {
        QByteArray out;
        m_fx->run(QStringLiteral("dialogctl"),
                  {QStringLiteral("alarm"), QStringLiteral("ls"), QStringLiteral("--all"), QStringLiteral("--json")},
                  &out);
        for (const QJsonObject &o : jsonLines(out))
            if (o.value(QStringLiteral("path")).toString() == alarm)
                return o.value(QStringLiteral("state")).toString();
        return {};
    }
    /// `dialogctl alarm ls` (the text, with the hooks' line).
    QByteArray table()
    {
        QByteArray out;
        m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("alarm"), QStringLiteral("ls")}, &out);
        return out;
    }
    /// The hooks' figures of the table, as ALARM.Server answers "ls" (empty when it does not answer).
    QJsonObject hooks()
    {
        QJsonObject answer;
        bool done = false;
        m_client->request(QStringLiteral("ALARM.Server"), R"({"op": "ls"})", 5000, this, [&](const Reply &r) {
            answer = QJsonDocument::fromJson(r.data()).object().value(QStringLiteral("hooks")).toObject();
            done = true;
        });
        waitUntil([&] { return done; }, 6000);
        return answer;
    }
    void setTemperature(const QString &object, float t)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("FrontEndStatus"));
        QVERIFY(o.set(QStringLiteral("temperature"), t).isOk());
        QVERIFY(m_dict->updateSync(object, o).isOk());
    }
    static QByteArray readAll(const QString &file)
    {
        QFile f(file);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    QTemporaryDir m_tmp;
    QTcpServer m_http;
    QList<QByteArray> m_posts; ///< the requests the test's HTTP server received, whole
    quint16 m_closedPort = 0;
};

void tst_AlarmHooks::initTestCase()
{
    QVERIFY(setUpIs(QStringLiteral("alarmhooks-test")));
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    // The test's web server: collects each request, answers 200 once the body is in.
    QVERIFY(m_http.listen(QHostAddress::LocalHost, 0));
    connect(&m_http, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *s = m_http.nextPendingConnection()) {
            auto buffer = std::make_shared<QByteArray>();
            connect(s, &QTcpSocket::readyRead, s, [this, s, buffer] {
                *buffer += s->readAll();
                const qsizetype end = buffer->indexOf("\r\n\r\n");
                if (end < 0)
                    return;
                const QRegularExpression length(QStringLiteral("(?i)content-length:\\s*(\\d+)"));
                const auto m = length.match(QString::fromLatin1(buffer->left(end)));
                if (!m.hasMatch() || buffer->size() < end + 4 + m.captured(1).toLongLong())
                    return;
                m_posts << *buffer;
                s->write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                s->disconnectFromHost();
            });
            connect(s, &QTcpSocket::disconnected, s, &QObject::deleteLater);
        }
    });
    {
        QTcpServer closed; // a port that nothing listens on once closed
        QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
        m_closedPort = closed.serverPort();
    }
    const QString out = path(QStringLiteral("hook.out"));
    const QByteArray rules =
        QStringLiteral(R"({"alarms": [
  {"path": "Hooks/file", "severity": "major", "description": "writes a file",
   "condition": {"is": "DAQ.FE3", "attribute": "temperature", "above": 40},
   "on_raise": {"run": ["sh", "-c", "printf '%s|%s|%s|%s' \"$DIALOG_ALARM_PATH\" \"$DIALOG_ALARM_SEVERITY\" \"$DIALOG_ALARM_VALUE\" \"$1\" > %1.tmp && mv %1.tmp %1", "hook", "an argument"]}},
  {"path": "Hooks/hang", "severity": "minor",
   "condition": {"is": "DAQ.FE4", "attribute": "temperature", "above": 40},
   "on_raise": {"run": ["sh", "-c", "echo $$ > %2; exec sleep 60"]}},
  {"path": "Hooks/dropped", "severity": "minor",
   "condition": {"is": "DAQ.FE5", "attribute": "temperature", "above": 40},
   "on_raise": {"run": ["true"]}},
  {"path": "Hooks/post", "severity": "invalid", "guidance": "see the pager",
   "condition": {"is": "DAQ.FE6", "attribute": "temperature", "above": 40},
   "on_raise": {"post": "http://127.0.0.1:%3/alarm"}},
  {"path": "Hooks/postfails", "severity": "minor",
   "condition": {"is": "DAQ.FE7", "attribute": "temperature", "above": 40},
   "on_raise": {"post": "http://127.0.0.1:%4/alarm"}}
]}
)")
            .arg(out, path(QStringLiteral("hang.pid")))
            .arg(m_http.serverPort())
            .arg(m_closedPort)
            .toUtf8();
    write(QStringLiteral("rules.json"), rules);
    m_fx->start(QStringLiteral("dialog-alarmserver"),
                {QStringLiteral("--rules"), path(QStringLiteral("rules.json")), QStringLiteral("--data-dir"),
                 path(QStringLiteral("data")), QStringLiteral("--hook-timeout-s"), QStringLiteral("2"),
                 QStringLiteral("--hook-max-running"), QStringLiteral("1")});
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("Hooks/file")) == u"normal"; }, 20000, 100));
    for (const char *o : {"DAQ.FE3", "DAQ.FE4", "DAQ.FE5", "DAQ.FE6", "DAQ.FE7"})
        setTemperature(QString::fromLatin1(o), 20);
}

void tst_AlarmHooks::commandSeesTheAlarm()
{
    const QString out = path(QStringLiteral("hook.out"));
    QVERIFY(!QFile::exists(out));
    setTemperature(QStringLiteral("DAQ.FE3"), 45.5);
    QVERIFY(waitUntil([&] { return QFile::exists(out); }, 10000));
    QCOMPARE(QString::fromUtf8(readAll(out)),
             QStringLiteral("Hooks/file|major|DAQ.FE3.temperature = 45.5|an argument"));
    // Once per raise: cleared and raised again, it runs again.
    QFile::remove(out);
    setTemperature(QStringLiteral("DAQ.FE3"), 20);
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("Hooks/file")) == u"normal"; }, 10000));
    QVERIFY(!QFile::exists(out));
    setTemperature(QStringLiteral("DAQ.FE3"), 41);
    QVERIFY(waitUntil([&] { return QFile::exists(out); }, 10000));
    QVERIFY2(readAll(out).contains("= 41"), readAll(out).constData());
    // The file is written before the command ends: the next test needs it ended (one hook at a time).
    QVERIFY(waitUntil([&] { return hooks().value(QStringLiteral("run")).toObject().value(QStringLiteral("succeeded")).toInt() == 2; },
                      10000));
    QCOMPARE(hooks().value(QStringLiteral("running")).toInt(), 0);
}

void tst_AlarmHooks::hangingCommandIsKilledAndTheServerGoesOn()
{
    const QString pidFile = path(QStringLiteral("hang.pid"));
    setTemperature(QStringLiteral("DAQ.FE4"), 50);
    qint64 pid = 0;
    QVERIFY(waitUntil([&] { return (pid = readAll(pidFile).trimmed().toLongLong()) > 0; }, 10000));
    QVERIFY(::kill(pid_t(pid), 0) == 0); // it hangs
    // Meanwhile the server evaluates and answers; the one hook allowed is running: the next raise's
    // hook is dropped.
    setTemperature(QStringLiteral("DAQ.FE5"), 50);
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("Hooks/dropped")) == u"active"; }, 10000));
    QVERIFY2(table().contains("hooks (run): 3 started, 0 failed (0 timed out), 1 dropped"), table().constData());
    // Killed after its time-out (2 s), counted.
    QVERIFY(waitUntil([&] { return ::kill(pid_t(pid), 0) != 0; }, 15000));
    QVERIFY(waitUntil([&] { return table().contains("hooks (run): 3 started, 1 failed (1 timed out), 1 dropped"); },
                      10000));
    QCOMPARE(hooks().value(QStringLiteral("running")).toInt(), 0);
}

void tst_AlarmHooks::postsTheAlarmAsJson()
{
    setTemperature(QStringLiteral("DAQ.FE6"), 60);
    QVERIFY(waitUntil([&] { return !m_posts.isEmpty(); }, 10000));
    const QByteArray request = m_posts.first();
    QVERIFY2(request.startsWith("POST /alarm HTTP/1.1\r\n"), request.constData());
    QVERIFY2(request.contains("Content-Type: application/json") || request.contains("content-type: application/json"),
             request.constData());
    const QJsonObject body = QJsonDocument::fromJson(request.mid(request.indexOf("\r\n\r\n") + 4)).object();
    QCOMPARE(body.value(u"event").toString(), QStringLiteral("raised"));
    const QJsonObject alarm = body.value(u"alarm").toObject();
    QCOMPARE(alarm.value(u"path").toString(), QStringLiteral("Hooks/post"));
    QCOMPARE(alarm.value(u"severity").toString(), QStringLiteral("invalid"));
    QCOMPARE(alarm.value(u"state").toString(), QStringLiteral("active"));
    QCOMPARE(alarm.value(u"guidance").toString(), QStringLiteral("see the pager"));
    QCOMPARE(alarm.value(u"value").toString(), QStringLiteral("DAQ.FE6.temperature = 60"));
    // Nobody listens: counted as failed, the alarm itself is raised all the same.
    setTemperature(QStringLiteral("DAQ.FE7"), 60);
    QVERIFY(waitUntil([&] { return table().contains("hooks (post): 2 started, 1 failed (0 timed out), 0 dropped"); },
                      10000));
    QCOMPARE(stateOf(QStringLiteral("Hooks/postfails")), QStringLiteral("active"));
    QCOMPARE(m_posts.size(), 1);
}

void tst_AlarmHooks::badHookRefusedWithLineAndReason_data()
{
    QTest::addColumn<QByteArray>("rules");
    QTest::addColumn<QString>("expected");
    const auto rule = [](const QByteArray &hook) {
        return "{\"alarms\": [\n  {\"path\": \"A/x\",\n   \"condition\": {\"process\": \"P\"},\n"
               "   \"on_raise\": " +
               hook + "}\n]}\n";
    };
    QTest::newRow("bad URL") << rule(R"({"post": "ftp://host/x"})")
                             << QStringLiteral("rules.json:2: alarms[0] (A/x): on_raise.post: 'ftp://host/x' is "
                                               "not an http:// or https:// URL with a host");
    QTest::newRow("no host") << rule(R"({"post": "http:///x"})")
                             << QStringLiteral("on_raise.post: 'http:///x' is not an http:// or https:// URL");
    QTest::newRow("unknown key") << rule(R"({"run": ["true"], "mail": "x@y"})")
                                 << QStringLiteral("rules.json:2: alarms[0] (A/x): unknown key \"mail\"");
    QTest::newRow("empty run") << rule(R"({"run": []})")
                               << QStringLiteral("on_raise.run: expected the program then its arguments");
    QTest::newRow("run not strings") << rule(R"({"run": ["echo", 3]})")
                                     << QStringLiteral("on_raise.run: expected a list of strings");
    QTest::newRow("empty") << rule("{}") << QStringLiteral("on_raise: expected \"run\" and/or \"post\"");
}

void tst_AlarmHooks::badHookRefusedWithLineAndReason()
{
    QFETCH(QByteArray, rules);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("rules.json"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(rules);
    f.close();
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-alarmserver"),
                       {QStringLiteral("--rules"), file, QStringLiteral("--data-dir"), dir.path()}, &out, &err),
             1);
    QVERIFY2(QString::fromUtf8(err).contains(expected), err.constData());
}

QTEST_GUILESS_MAIN(tst_AlarmHooks)
#include "tst_alarmhooks.moc"
