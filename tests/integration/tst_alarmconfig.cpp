// dialog-alarmserver with its rules from the configuration database (--rules config:alarms/NAME@REF):
// the document committed with dialogctl config put is checked by dialog-configdb for its shape, read
// by the alarm server at the version asked for (a tag, or the newest), and refused at start with the
// document, its version, the line and the reason when a rule is wrong; an unknown document and a
// path of another kind are refused too.
#include "processfixture.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {

const QByteArray RulesV1 = R"({"alarms": [
  {"path": "DAQ/Processes/FE9", "severity": "major", "condition": {"process": "FE9", "when": "lost"}}
]}
)";
const QByteArray RulesV2 = R"({"alarms": [
  {"path": "DAQ/Processes/FE9", "severity": "major", "condition": {"process": "FE9", "when": "lost"}},
  {"path": "DAQ/Processes/FE8", "severity": "minor", "condition": {"process": "FE8", "when": "lost"}}
]}
)";
const QByteArray BadRule = R"({"alarms": [
  {"path": "A/ok", "condition": {"process": "P"}},
  {"path": "A/bad", "latching": true,
   "condition": {"process": "P"}}
]}
)";

} // namespace

class tst_AlarmConfig : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase() { m_fx.reset(); }
    void rulesFromATaggedVersion();
    void refusedWithDocumentVersionLineAndReason_data();
    void refusedWithDocumentVersionLineAndReason();

private:
    int ctl(const QStringList &args, QByteArray *out = nullptr, QByteArray *err = nullptr)
    {
        return m_fx->run(QStringLiteral("dialogctl"), args, out, err);
    }
    QString file(const QString &name, const QByteArray &content)
    {
        const QString path = m_tmp.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
            qWarning() << "cannot write" << path;
        return path;
    }
    QStringList paths()
    {
        QByteArray out;
        ctl({QStringLiteral("alarm"), QStringLiteral("ls"), QStringLiteral("--all"), QStringLiteral("--json")}, &out);
        QStringList p;
        for (const QJsonObject &o : jsonLines(out))
            p << o.value(QStringLiteral("path")).toString();
        p.sort();
        return p;
    }

    std::unique_ptr<ProcessFixture> m_fx;
    QTemporaryDir m_tmp;
};

void tst_AlarmConfig::initTestCase()
{
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
    m_fx->start(QStringLiteral("dialog-configdb"), {QStringLiteral("--data-dir"), m_tmp.filePath(QStringLiteral("config"))});
    QVERIFY(waitUntil([&] { return ctl({QStringLiteral("config"), QStringLiteral("tag")}) == 0; }, 20000, 50));
    QByteArray out, err;
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("alarms/daq"),
                  file(QStringLiteral("v1.json"), RulesV1)},
                 &out, &err),
             0);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("tag"), QStringLiteral("alarms-v1")}, &out, &err), 0);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("alarms/daq"),
                  file(QStringLiteral("v2.json"), RulesV2)},
                 &out, &err),
             0);
    // The database checks the shape of an alarms document.
    QVERIFY(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("alarms/nolist"),
                 file(QStringLiteral("nolist.json"), R"({"rules": []})")},
                &out, &err) != 0);
    QVERIFY2(err.contains("alarms/nolist: unknown key \"rules\""), err.constData());
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("alarms/bad"),
                  file(QStringLiteral("bad.json"), BadRule)},
                 &out, &err),
             0);
}

void tst_AlarmConfig::rulesFromATaggedVersion()
{
    QProcess *server = m_fx->start(QStringLiteral("dialog-alarmserver"),
                                   {QStringLiteral("--rules"), QStringLiteral("config:alarms/daq@alarms-v1"),
                                    QStringLiteral("--data-dir"), m_tmp.filePath(QStringLiteral("data1"))});
    QVERIFY(waitUntil([&] { return !paths().isEmpty(); }, 20000, 100));
    QCOMPARE(paths(), QStringList{QStringLiteral("DAQ/Processes/FE9")});
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
    QVERIFY2(server->readAllStandardError().contains("1 alarms from config:alarms/daq@1"), "source not named");
    // Without @REF: the newest version.
    server = m_fx->start(QStringLiteral("dialog-alarmserver"),
                         {QStringLiteral("--rules"), QStringLiteral("config:alarms/daq"), QStringLiteral("--data-dir"),
                          m_tmp.filePath(QStringLiteral("data2"))});
    QVERIFY(waitUntil([&] { return paths().size() == 2; }, 20000, 100));
    QCOMPARE(paths(), (QStringList{QStringLiteral("DAQ/Processes/FE8"), QStringLiteral("DAQ/Processes/FE9")}));
    // --check reads the document without serving (and without taking the server's name).
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-alarmserver"),
                       {QStringLiteral("--rules"), QStringLiteral("config:alarms/daq@alarms-v1"), QStringLiteral("--check")},
                       &out, &err),
             0);
    QVERIFY2(out.contains("config:alarms/daq@1: 1 alarms, valid"), out + err);
    QCOMPARE(paths().size(), 2);
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
}

void tst_AlarmConfig::refusedWithDocumentVersionLineAndReason_data()
{
    QTest::addColumn<QString>("rules");
    QTest::addColumn<QString>("expected");
    QTest::newRow("bad rule") << QStringLiteral("config:alarms/bad")
                              << QStringLiteral("config:alarms/bad@3:3: alarms[1] (A/bad): unknown key \"latching\"");
    QTest::newRow("unknown document") << QStringLiteral("config:alarms/none")
                                      << QStringLiteral("--rules config:alarms/none: no document alarms/none in version 3");
    QTest::newRow("unknown tag") << QStringLiteral("config:alarms/daq@no-such-tag")
                                 << QStringLiteral("--rules config:alarms/daq@no-such-tag: unknown tag 'no-such-tag'");
    QTest::newRow("another kind") << QStringLiteral("config:slaves/FE1")
                                  << QStringLiteral("--rules config:slaves/FE1: expected config:alarms/NAME");
}

void tst_AlarmConfig::refusedWithDocumentVersionLineAndReason()
{
    QFETCH(QString, rules);
    QFETCH(QString, expected);
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-alarmserver"),
                       {QStringLiteral("--rules"), rules, QStringLiteral("--data-dir"), m_tmp.filePath(QStringLiteral("d"))},
                       &out, &err),
             1);
    QVERIFY2(QString::fromUtf8(err).contains(expected), err.constData());
}

QTEST_GUILESS_MAIN(tst_AlarmConfig)
#include "tst_alarmconfig.moc"
