// dialog-alarmserver with its history and kept states in a real PostgreSQL server (Debian's
// postgresql, initdb'ed by the test in a temporary directory of the build tree, run as an
// unprivileged user on a free port): an acknowledgement, a shelve and a latched alarm survive a
// restart of the alarm server, and the history written before it is read back after it. Skipped,
// with the reason, when PostgreSQL or Qt's QPSQL driver is not installed.
#include "isfixture.h"
#include "postgres.h"

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {

const QByteArray Rules = R"({"alarms": [
  {"path": "Detector/FE3/temperature", "severity": "major", "latch": true,
   "condition": {"is": "DAQ.FE3", "attribute": "temperature", "above": 40}},
  {"path": "Detector/FE3/warm", "severity": "minor",
   "condition": {"is": "DAQ.FE3", "attribute": "temperature", "above": 35}},
  {"path": "Detector/FE4/hot", "severity": "major",
   "condition": {"is": "DAQ.FE4", "attribute": "temperature", "above": 40}}
]}
)";

} // namespace

class tst_AlarmPg : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase() { tearDownIs(); }
    void restartKeepsStatesAndHistoryInPostgres();

private:
    int ctl(const QStringList &args, QByteArray *out = nullptr, QByteArray *err = nullptr)
    {
        return m_fx->run(QStringLiteral("dialogctl"), QStringList{QStringLiteral("alarm")} + args, out, err);
    }
    QHash<QString, QJsonObject> alarms()
    {
        QByteArray out;
        QHash<QString, QJsonObject> all;
        if (ctl({QStringLiteral("ls"), QStringLiteral("--all"), QStringLiteral("--json")}, &out) != 0)
            return all;
        for (const QJsonObject &o : jsonLines(out))
            all.insert(o.value(QStringLiteral("path")).toString(), o);
        return all;
    }
    bool waitForState(const QString &path, const QString &state)
    {
        const bool ok = waitUntil([&] { return alarms().value(path).value(u"state").toString() == state; },
                                  10000 * SanitizerTimeScale, 100);
        if (!ok)
            qWarning() << path << "is" << alarms().value(path) << "not" << state;
        return ok;
    }
    void setTemperature(const QString &object, float t)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("FrontEndStatus"));
        QVERIFY(o.set(QStringLiteral("temperature"), t).isOk());
        QVERIFY(m_dict->updateSync(object, o).isOk());
    }
    QProcess *startAlarmServer()
    {
        QProcess *p = m_fx->start(QStringLiteral("dialog-alarmserver"),
                                  {QStringLiteral("--rules"), m_rules, QStringLiteral("--db"), m_pg.url()});
        if (!waitUntil([&] { return ctl({QStringLiteral("ls")}) == 0; }, 20000 * SanitizerTimeScale, 50))
            qWarning() << "the alarm server did not answer" << p->readAllStandardError();
        return p;
    }

    PostgresServer m_pg;
    QTemporaryDir m_tmp;
    QString m_rules;
};

void tst_AlarmPg::initTestCase()
{
    const QString binDir = postgresBinDir();
    if (binDir.isEmpty())
        QSKIP("PostgreSQL is not installed (Debian package postgresql: /usr/lib/postgresql/*/bin/initdb)");
    if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QPSQL")))
        QSKIP("Qt's PostgreSQL driver QPSQL is not installed (Debian package libqt6sql6-psql)");
    QString error;
    QVERIFY2(m_pg.create(binDir, &error, QStringLiteral("alarms")), qPrintable(error));
    m_rules = m_tmp.filePath(QStringLiteral("rules.json"));
    QFile f(m_rules);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(Rules);
    f.close();
    QVERIFY(setUpIs(QStringLiteral("alarmpg-test")));
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
}

void tst_AlarmPg::restartKeepsStatesAndHistoryInPostgres()
{
    QProcess *server = startAlarmServer();
    QByteArray out;
    QCOMPARE(ctl({QStringLiteral("ls")}, &out), 0);
    setTemperature(QStringLiteral("DAQ.FE3"), 45);
    setTemperature(QStringLiteral("DAQ.FE4"), 45);
    QVERIFY(waitForState(QStringLiteral("Detector/FE3/temperature"), QStringLiteral("active")));
    QVERIFY(waitForState(QStringLiteral("Detector/FE4/hot"), QStringLiteral("active")));
    setTemperature(QStringLiteral("DAQ.FE3"), 37); // the latched one goes to latched, warm stays active
    QVERIFY(waitForState(QStringLiteral("Detector/FE3/temperature"), QStringLiteral("latched")));
    QCOMPARE(ctl({QStringLiteral("ack"), QStringLiteral("Detector/FE4/hot"), QStringLiteral("--comment"),
                  QStringLiteral("expert called")}),
             0);
    QCOMPARE(ctl({QStringLiteral("shelve"), QStringLiteral("Detector/FE3/warm"), QStringLiteral("--for"),
                  QStringLiteral("8h"), QStringLiteral("--reason"), QStringLiteral("for the night")}),
             0);
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
    QCOMPARE(server->exitCode(), 0);

    startAlarmServer();
    const QHash<QString, QJsonObject> a = alarms();
    QCOMPARE(a.value(QStringLiteral("Detector/FE3/temperature")).value(u"state").toString(),
             QStringLiteral("latched"));
    QCOMPARE(a.value(QStringLiteral("Detector/FE4/hot")).value(u"state").toString(), QStringLiteral("acknowledged"));
    QCOMPARE(a.value(QStringLiteral("Detector/FE4/hot")).value(u"ack_comment").toString(),
             QStringLiteral("expert called"));
    QVERIFY(a.value(QStringLiteral("Detector/FE3/warm")).value(u"shelved").toBool());
    QCOMPARE(a.value(QStringLiteral("Detector/FE3/warm")).value(u"shelve_reason").toString(),
             QStringLiteral("for the night"));
    // The history of the first run, newest first, read back from PostgreSQL by the second.
    QCOMPARE(ctl({QStringLiteral("history"), QStringLiteral("Detector"), QStringLiteral("--json")}, &out), 0);
    QStringList events;
    for (const QJsonObject &row : jsonLines(out))
        events << row.value(u"path").toString() + u' ' + row.value(u"event").toString();
    for (const QString &e : {QStringLiteral("Detector/FE3/warm shelved"), QStringLiteral("Detector/FE4/hot acknowledged"),
                             QStringLiteral("Detector/FE3/temperature latched"),
                             QStringLiteral("Detector/FE3/temperature raised"), QStringLiteral("Detector/FE4/hot raised")})
        QVERIFY2(events.contains(e), qPrintable(events.join(u", ")));
    // The rows are in the server's tables (not in a SQLite file somewhere).
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), QStringLiteral("check"));
        const QUrl url(m_pg.url());
        db.setHostName(url.host());
        db.setPort(url.port());
        db.setUserName(url.userName());
        db.setDatabaseName(url.path().mid(1));
        QVERIFY2(db.open(), qPrintable(db.lastError().text()));
        QSqlQuery q(db);
        QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM alarm_history WHERE path = 'Detector/FE4/hot'")));
        QVERIFY(q.next());
        QVERIFY(q.value(0).toInt() >= 2);
        QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM alarm_state")));
        QVERIFY(q.next());
        QVERIFY(q.value(0).toInt() >= 3);
    }
    QSqlDatabase::removeDatabase(QStringLiteral("check"));
}

QTEST_GUILESS_MAIN(tst_AlarmPg)
#include "tst_alarmpg.moc"
