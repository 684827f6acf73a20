// The rate of messages of a severity from a process as an alarm condition: dialog-alarmserver counts
// what dialog-logger publishes (DIALOG.Logger.Live) over a sliding window. A process reporting errors
// raises the alarm; warnings, or errors from another process, do not; the alarm clears when the
// window has passed; a glob names several processes; a bad "messages" condition is refused at start.
#include "processfixture.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {

const QByteArray Rules = R"({"alarms": [
  {"path": "FrontEnd/FE1/errors", "severity": "major", "description": "FE1 reports errors",
   "condition": {"messages": {"process": "FE1", "severity": "error", "rate_per_min": 22.5, "window_s": 8}}},
  {"path": "FrontEnd/any/fatal", "severity": "invalid",
   "condition": {"messages": {"process": "FE*", "severity": "fatal", "rate_per_min": 1}}}
]}
)";

} // namespace

class tst_AlarmMessages : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase() { m_fx.reset(); }
    void errorRateRaisesAndClears();
    void globAndSeverity();
    void badConditionRefused_data();
    void badConditionRefused();

private:
    void report(const QString &name, const QString &severity, const QString &text)
    {
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("log"), QStringLiteral("report"),
                                                         QStringLiteral("--name"), name, QStringLiteral("--severity"),
                                                         severity, text}),
                 0);
    }
    QJsonObject alarm(const QString &path)
    {
        QByteArray out;
        m_fx->run(QStringLiteral("dialogctl"),
                  {QStringLiteral("alarm"), QStringLiteral("ls"), QStringLiteral("--all"), QStringLiteral("--json")},
                  &out);
        for (const QJsonObject &o : jsonLines(out))
            if (o.value(QStringLiteral("path")).toString() == path)
                return o;
        return {};
    }
    QString stateOf(const QString &path) { return alarm(path).value(QStringLiteral("state")).toString(); }

    std::unique_ptr<ProcessFixture> m_fx;
    QTemporaryDir m_tmp;
};

void tst_AlarmMessages::initTestCase()
{
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
    m_fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--data-dir"), m_tmp.filePath(QStringLiteral("log"))});
    const QString rules = m_tmp.filePath(QStringLiteral("rules.json"));
    QFile f(rules);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(Rules);
    f.close();
    m_fx->start(QStringLiteral("dialog-alarmserver"),
                {QStringLiteral("--rules"), rules, QStringLiteral("--data-dir"), m_tmp.filePath(QStringLiteral("data"))});
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("FrontEnd/FE1/errors")) == u"normal"; }, 20000, 100));
    // The logger is there when a report of a test process is stored (dialogctl log search finds it).
    QVERIFY(waitUntil(
        [&] {
            QByteArray out;
            report(QStringLiteral("Probe"), QStringLiteral("info"), QStringLiteral("probe"));
            m_fx->run(QStringLiteral("dialogctl"),
                      {QStringLiteral("log"), QStringLiteral("search"), QStringLiteral("--process"),
                       QStringLiteral("Probe"), QStringLiteral("--json")},
                      &out);
            return out.contains("probe");
        },
        20000, 200));
}

void tst_AlarmMessages::errorRateRaisesAndClears()
{
    // 22.5 per minute over 8 s: 3 errors of FE1 within 8 s. Warnings of FE1 and errors of FE2 do not count.
    for (int i = 0; i < 3; ++i) {
        report(QStringLiteral("FE1"), QStringLiteral("warning"), QStringLiteral("link %1 slow").arg(i));
        report(QStringLiteral("FE2"), QStringLiteral("error"), QStringLiteral("FE2 error %1").arg(i));
    }
    report(QStringLiteral("FE1"), QStringLiteral("error"), QStringLiteral("readout error 1"));
    report(QStringLiteral("FE1"), QStringLiteral("error"), QStringLiteral("readout error 2"));
    QVERIFY(expectNothingFor(
        1000, [&] { return stateOf(QStringLiteral("FrontEnd/FE1/errors")) != u"normal"; },
        "two errors raised an alarm that needs three"));
    report(QStringLiteral("FE1"), QStringLiteral("fatal"), QStringLiteral("readout error 3")); // fatal counts as error
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("FrontEnd/FE1/errors")) == u"active"; }, 10000, 100));
    QVERIFY2(alarm(QStringLiteral("FrontEnd/FE1/errors"))
                 .value(QStringLiteral("value"))
                 .toString()
                 .contains(QStringLiteral("FE1: 3 or more messages at error or worse in 8 s")),
             qPrintable(alarm(QStringLiteral("FrontEnd/FE1/errors")).value(QStringLiteral("value")).toString()));
    // No more errors: the window slides past them and the alarm clears.
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("FrontEnd/FE1/errors")) == u"normal"; }, 20000, 200));
}

void tst_AlarmMessages::globAndSeverity()
{
    // The fatal of FE1 above raised the glob's alarm too (FE*, one fatal a minute).
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("FrontEnd/any/fatal")) == u"active"; }, 10000, 100));
    QVERIFY2(alarm(QStringLiteral("FrontEnd/any/fatal")).value(QStringLiteral("rule")).toString().contains(
                 QStringLiteral("messages of FE* at fatal or worse")),
             qPrintable(alarm(QStringLiteral("FrontEnd/any/fatal")).value(QStringLiteral("rule")).toString()));
}

void tst_AlarmMessages::badConditionRefused_data()
{
    QTest::addColumn<QByteArray>("condition");
    QTest::addColumn<QString>("expected");
    QTest::newRow("severity") << QByteArray(R"({"messages": {"process": "FE1", "severity": "loud", "rate_per_min": 1}})")
                              << QStringLiteral("messages.severity 'loud': expected debug, info, warning, error or fatal");
    QTest::newRow("rate") << QByteArray(R"({"messages": {"process": "FE1", "rate_per_min": 0}})")
                          << QStringLiteral("messages.rate_per_min: expected a number above 0");
    QTest::newRow("key") << QByteArray(R"({"messages": {"process": "FE1", "rate_per_min": 1, "per": "hour"}})")
                         << QStringLiteral("rules.json:2: alarms[0] (A/x): unknown key \"per\"");
    QTest::newRow("window") << QByteArray(R"({"messages": {"process": "FE1", "rate_per_min": 1, "window_s": 0}})")
                            << QStringLiteral("messages.window_s: expected seconds between 1 and 3600");
    QTest::newRow("process") << QByteArray(R"({"messages": {"rate_per_min": 1}})")
                             << QStringLiteral("messages.process: expected a process name or glob");
}

void tst_AlarmMessages::badConditionRefused()
{
    QFETCH(QByteArray, condition);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("rules.json"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"alarms\": [\n  {\"path\": \"A/x\", \"condition\": " + condition + "}\n]}\n");
    f.close();
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-alarmserver"), {QStringLiteral("--rules"), file, QStringLiteral("--check")},
                       &out, &err),
             1);
    QVERIFY2(QString::fromUtf8(err).contains(expected), err.constData());
}

QTEST_GUILESS_MAIN(tst_AlarmMessages)
#include "tst_alarmmessages.moc"
