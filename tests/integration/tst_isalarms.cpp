// dialog-isserver --alarms FILE: rules raised and cleared as IS objects of type Alarm.
#include "statuscheck.h"
#include "isfixture.h"

#include "dialog/is/dictionary.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

class tst_IsAlarms : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(setUpIs(QStringLiteral("alarms-test"))); }
    void cleanup() { tearDownIs(); }
    void raisedAfterDurationAndCleared();
    void globMatchesWholeNamesSumsIncluded();
    void badRulesAreRefusedWithTheLine_data();
    void badRulesAreRefusedWithTheLine();

private:
    QString writeRules(const QByteArray &text)
    {
        QFile f(m_dir.filePath(QStringLiteral("alarms.rules")));
        if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size())
            return {};
        return f.fileName();
    }
    void writeReadout(const QString &name, quint32 errors, double rate)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
        QVERIFY_OK(o.set(QStringLiteral("errors"), errors));
        QVERIFY_OK(o.set(QStringLiteral("rate"), rate));
        QVERIFY(m_dict->updateSync(name, o).isOk());
    }
    bool exists(const QString &name, is::Entry *e = nullptr) { return m_dict->getSync(name, e).isOk(); }

    QTemporaryDir m_dir;
};

void tst_IsAlarms::raisedAfterDurationAndCleared()
{
    const QString rules = writeRules("# readout supervision\n"
                                     "DAQ.RO*.errors > 0 for 1s -> warning \"readout errors\"\n"
                                     "\n"
                                     "DAQ.RO?.rate < 10 → error \"rate too low\"\n");
    QVERIFY(!rules.isEmpty());
    startServer(QStringLiteral("DAQ"), {QStringLiteral("--alarms"), rules});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));

    // Errors: raised only once the condition has held for 1 s.
    writeReadout(QStringLiteral("DAQ.RO1"), 2, 100);
    QVERIFY(!exists(QStringLiteral("DAQ.Alarm.2.RO1")));
    is::Entry e;
    QTRY_VERIFY_WITH_TIMEOUT(exists(QStringLiteral("DAQ.Alarm.2.RO1"), &e), 5000);
    QCOMPARE(e.typeName, QStringLiteral("Alarm"));
    QCOMPARE(e.object.get<QString>(QStringLiteral("severity")), QStringLiteral("warning"));
    QCOMPARE(e.object.get<QString>(QStringLiteral("text")), QStringLiteral("readout errors"));
    QCOMPARE(e.object.get<QString>(QStringLiteral("object")), QStringLiteral("DAQ.RO1"));
    QCOMPARE(e.object.get<double>(QStringLiteral("value")), 2.0);

    // No duration: at once. A condition that stops holding before its duration raises nothing.
    writeReadout(QStringLiteral("DAQ.RO1"), 2, 5);
    QVERIFY(exists(QStringLiteral("DAQ.Alarm.4.RO1"), &e));
    QCOMPARE(e.object.get<QString>(QStringLiteral("severity")), QStringLiteral("error"));
    writeReadout(QStringLiteral("DAQ.RO2"), 1, 100);
    writeReadout(QStringLiteral("DAQ.RO2"), 0, 100);

    // Cleared (removed) when the condition no longer holds, or when the object goes.
    writeReadout(QStringLiteral("DAQ.RO1"), 0, 100);
    QVERIFY(!exists(QStringLiteral("DAQ.Alarm.2.RO1")));
    QVERIFY(!exists(QStringLiteral("DAQ.Alarm.4.RO1")));
    writeReadout(QStringLiteral("DAQ.RO3"), 0, 1);
    QVERIFY(exists(QStringLiteral("DAQ.Alarm.4.RO3")));
    QVERIFY(m_dict->removeSync(QStringLiteral("DAQ.RO3")).isOk());
    QVERIFY(!exists(QStringLiteral("DAQ.Alarm.4.RO3")));
    QVERIFY(expectNothingFor(
        1300, [&] { return exists(QStringLiteral("DAQ.Alarm.2.RO2")); },
        "an alarm for a condition that stopped holding before its duration"));
    QList<is::Entry> alarms;
    QVERIFY(
        m_dict->listSync(QStringLiteral("DAQ"), is::Criteria(QStringLiteral("Alarm\\..*")), &alarms).isOk());
    QCOMPARE(alarms.size(), 0);
}

void tst_IsAlarms::globMatchesWholeNamesSumsIncluded()
{
    // '*' is any characters of the full name: DAQ.RO*.errors takes the farm's sum DAQ.ROAll too,
    // and RO1.sub as well; '?' is exactly one: DAQ.RO?.errors takes RO1 and RO7 only.
    const QString rules = writeRules("DAQ.RO*.errors > 0 -> warning \"any\"\n"
                                     "DAQ.RO?.errors > 0 -> warning \"one readout\"\n");
    startServer(QStringLiteral("DAQ"), {QStringLiteral("--alarms"), rules});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    for (const char *name : {"DAQ.RO1", "DAQ.RO7", "DAQ.ROAll", "DAQ.RO1.sub", "DAQ.XRO1"})
        writeReadout(QString::fromLatin1(name), 1, 100);
    QTRY_VERIFY_WITH_TIMEOUT(exists(QStringLiteral("DAQ.Alarm.1.ROAll")), 5000);
    QVERIFY(exists(QStringLiteral("DAQ.Alarm.1.RO1")));
    QVERIFY(exists(QStringLiteral("DAQ.Alarm.1.RO7")));
    QVERIFY(exists(QStringLiteral("DAQ.Alarm.1.RO1.sub")));
    QVERIFY(!exists(QStringLiteral("DAQ.Alarm.1.XRO1")));
    QVERIFY(exists(QStringLiteral("DAQ.Alarm.2.RO1")));
    QVERIFY(exists(QStringLiteral("DAQ.Alarm.2.RO7")));
    QVERIFY(!exists(QStringLiteral("DAQ.Alarm.2.ROAll")));
    QVERIFY(!exists(QStringLiteral("DAQ.Alarm.2.RO1.sub")));
}

void tst_IsAlarms::badRulesAreRefusedWithTheLine_data()
{
    QTest::addColumn<QByteArray>("rules");
    QTest::addColumn<QByteArray>("message");
    QTest::newRow("no severity") << QByteArray("# ok\nDAQ.RO*.errors > 0\n") << QByteArray(":2: not a rule");
    QTest::newRow("bad operator") << QByteArray("DAQ.RO*.errors => 0 -> warning \"x\"\n")
                                  << QByteArray(":1: not a rule");
    QTest::newRow("bad severity") << QByteArray("DAQ.RO*.errors > 0 -> loud \"x\"\n")
                                  << QByteArray(":1: not a rule");
    QTest::newRow("bad number") << QByteArray("DAQ.RO*.errors > 1.2.3 -> info \"x\"\n")
                                << QByteArray(":1: '1.2.3' is not a number");
}

void tst_IsAlarms::badRulesAreRefusedWithTheLine()
{
    QFETCH(QByteArray, rules);
    QFETCH(QByteArray, message);
    const QString file = writeRules(rules);
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       {QStringLiteral("--name"), QStringLiteral("DAQ"), QStringLiteral("--alarms"), file},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains(("--alarms " + file.toUtf8() + message)), err);
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       {QStringLiteral("--name"), QStringLiteral("DAQ"), QStringLiteral("--alarms"),
                        m_dir.filePath(QStringLiteral("missing"))},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("cannot read --alarms"), err);
}

QTEST_GUILESS_MAIN(tst_IsAlarms)
#include "tst_isalarms.moc"
