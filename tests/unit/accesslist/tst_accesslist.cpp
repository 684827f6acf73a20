// AccessList (dialog/access.h): parsing with clear errors, first match wins, the default, glob
// patterns; AuditTrail (dialog/audit.h): JSON lines that rotate and are read back oldest first.
#include "dialog/access.h"
#include "dialog/audit.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;

class tst_AccessList : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void badListsAreRefusedWithWhere_data();
    void badListsAreRefusedWithWhere();
    void unreadableFileIsAStorageError();
    void emptyListAllowsEverything();
    void firstMatchWins_data();
    void firstMatchWins();
    void defaultDeny();
    void hostMatchesNameOrAddress();
    void auditFileRotatesAndReadsBackInOrder();
};

void tst_AccessList::badListsAreRefusedWithWhere_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error");
    QTest::newRow("not-json") << QByteArray("{") << QStringLiteral("a.json: not JSON");
    QTest::newRow("array") << QByteArray("[]") << QStringLiteral("a.json: an access list is a JSON object");
    QTest::newRow("unknown-key") << QByteArray(R"({"rule": []})")
                                 << QStringLiteral("a.json: rule: unknown key");
    QTest::newRow("bad-default") << QByteArray(R"({"default": "maybe"})")
                                 << QStringLiteral("a.json: default: expected \"allow\" or \"deny\"");
    QTest::newRow("both") << QByteArray(R"({"rules": [{"allow": "command", "deny": "command"}]})")
                          << QStringLiteral("a.json: rules[0]: needs one of \"allow\" and \"deny\"");
    QTest::newRow("bad-kind")
        << QByteArray(R"({"rules": [{"deny": "commands"}]})")
        << QStringLiteral(
               "a.json: rules[0]: \"deny\" must be \"command\", \"is-write\", \"transition\" or \"*\"");
    QTest::newRow("bad-field") << QByteArray(R"({"rules": [{"deny": "*", "proces": "X"}]})")
                               << QStringLiteral("a.json: rules[0].proces: unknown key");
    QTest::newRow("empty-pattern") << QByteArray(R"({"rules": [{"deny": "*"}, {"deny": "*", "user": ""}]})")
                                   << QStringLiteral(
                                          "a.json: rules[1].user: expected a non-empty glob pattern");
}

void tst_AccessList::badListsAreRefusedWithWhere()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, error);
    AccessList list;
    const Status st = AccessList::parse(json, QStringLiteral("a.json"), &list);
    QCOMPARE(st.code(), Status::Code::BadRequest);
    QVERIFY2(st.message().startsWith(error), qPrintable(st.message()));
}

void tst_AccessList::unreadableFileIsAStorageError()
{
    AccessList list;
    const Status st = AccessList::load(QStringLiteral("/nonexistent/access.json"), &list);
    QCOMPARE(st.code(), Status::Code::StorageError);
    QVERIFY2(st.message().startsWith(QLatin1String("/nonexistent/access.json: ")), qPrintable(st.message()));
}

void tst_AccessList::emptyListAllowsEverything()
{
    AccessList list;
    QVERIFY(list.isEmpty());
    QVERIFY(AccessList::parse("{}", QStringLiteral("a.json"), &list).isOk());
    QVERIFY(list.isEmpty());
    const AccessList::Decision d = list.check(AccessList::Kind::Command, QStringLiteral("X"), {});
    QVERIFY(d.allowed);
    QCOMPARE(d.because, QStringLiteral("default"));
}

void tst_AccessList::firstMatchWins_data()
{
    QTest::addColumn<bool>("command");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("process");
    QTest::addColumn<QString>("user");
    QTest::addColumn<bool>("allowed");
    QTest::addColumn<QString>("because");
    QTest::newRow("master-may") << true << "RunCtrl.S1.Command"
                                << "Master"
                                << "x" << true << "rules[0]";
    QTest::newRow("gui-may") << true << "RunCtrl.S1.Command"
                             << "RunControl.GUI.7"
                             << "x" << true << "rules[1]";
    QTest::newRow("gui-prefix-only") << true << "RunCtrl.S1.Command"
                                     << "MyRunControl.GUI"
                                     << "x" << false << "rules[2]";
    QTest::newRow("others-not") << true << "RunCtrl.S1.Command"
                                << "Slave1"
                                << "x" << false << "rules[2]";
    QTest::newRow("other-command") << true << "Echo"
                                   << "Slave1"
                                   << "x" << true << "default";
    QTest::newRow("write-by-daq") << false << "RunParams.RunInfo"
                                  << "Anything"
                                  << "daq" << true << "rules[3]";
    QTest::newRow("write-by-other") << false << "RunParams.RunInfo"
                                    << "Anything"
                                    << "bob" << false << "rules[4]";
    QTest::newRow("write-elsewhere") << false << "DAQ.Readout1"
                                     << "Anything"
                                     << "bob" << true << "default";
    QTest::newRow("question-mark") << false << "DAQ.Secret7"
                                   << "P"
                                   << "bob" << false << "rules[5]";
    QTest::newRow("set") << false << "DAQ.Secret77"
                         << "P"
                         << "bob" << true << "default";
}

void tst_AccessList::firstMatchWins()
{
    QFETCH(bool, command);
    QFETCH(QString, name);
    QFETCH(QString, process);
    QFETCH(QString, user);
    QFETCH(bool, allowed);
    QFETCH(QString, because);
    AccessList list;
    QVERIFY2(AccessList::parse(R"({"rules": [
        {"allow": "command", "name": "RunCtrl.*.Command", "process": "Master"},
        {"allow": "command", "name": "RunCtrl.*.Command", "process": "RunControl.GUI*"},
        {"deny": "command", "name": "RunCtrl.*.Command"},
        {"allow": "is-write", "name": "RunParams.*", "user": "daq"},
        {"deny": "*", "name": "RunParams.*", "comment": "nobody else"},
        {"deny": "is-write", "name": "DAQ.Secret[0-9]"}]})",
                               QStringLiteral("a.json"), &list)
                 .isOk(),
             "the list does not parse");
    QCOMPARE(list.ruleCount(), 6);
    const AccessList::Decision d =
        list.check(command ? AccessList::Kind::Command : AccessList::Kind::IsWrite, name,
                   Origin{process, user, QStringLiteral("h"), QStringLiteral("127.0.0.1")});
    QCOMPARE(d.allowed, allowed);
    QCOMPARE(d.because, because);
}

void tst_AccessList::defaultDeny()
{
    AccessList list;
    QVERIFY(AccessList::parse(R"({"default": "deny", "rules": [{"allow": "*", "user": "daq"}]})",
                              QStringLiteral("a.json"), &list)
                .isOk());
    QVERIFY(!list.isEmpty());
    QVERIFY(list.check(AccessList::Kind::IsWrite, QStringLiteral("A.B"),
                       Origin{QStringLiteral("P"), QStringLiteral("daq"), {}, {}})
                .allowed);
    const AccessList::Decision d = list.check(AccessList::Kind::Command, QStringLiteral("C"),
                                              Origin{QStringLiteral("P"), QStringLiteral("root"), {}, {}});
    QVERIFY(!d.allowed);
    QCOMPARE(d.because, QStringLiteral("default"));
}

void tst_AccessList::hostMatchesNameOrAddress()
{
    AccessList list;
    QVERIFY(AccessList::parse(R"({"default": "deny", "rules": [{"allow": "command", "host": "daq-*"},
                                  {"allow": "command", "host": "10.1.*"}]})",
                              QStringLiteral("a.json"), &list)
                .isOk());
    auto allowed = [&](const QString &host, const QString &address) {
        return list
            .check(AccessList::Kind::Command, QStringLiteral("C"),
                   Origin{QStringLiteral("P"), {}, host, address})
            .allowed;
    };
    QVERIFY(allowed(QStringLiteral("daq-07"), QStringLiteral("192.168.1.2")));
    QVERIFY(allowed(QStringLiteral("laptop"), QStringLiteral("10.1.2.3")));
    QVERIFY(!allowed(QStringLiteral("laptop"), QStringLiteral("192.168.1.2")));
}

void tst_AccessList::auditFileRotatesAndReadsBackInOrder()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("sub/cs.audit"));
    AuditTrail trail(AuditTrail::Options{path, 4096, 2});
    const dialog::Status opened = trail.open();
    QVERIFY2(opened.isOk(), qPrintable(opened.toString()));
    const qint64 t0 = 1'700'000'000'000;
    for (int i = 0; i < 60; ++i) {
        AuditRecord r;
        r.timeMs = t0 + i;
        r.daemon = QStringLiteral("ControlServer");
        r.name = QStringLiteral("RunCtrl.S%1.Command").arg(i);
        r.operation = QStringLiteral("send");
        r.origin = Origin{QStringLiteral("Master"), QStringLiteral("daq"), QStringLiteral("h1"),
                          QStringLiteral("10.0.0.1")};
        r.allowed = i % 3 != 0;
        r.because = QStringLiteral("rules[0]");
        trail.record(r);
    }
    QCOMPARE(trail.writeFailures(), 0u);
    QVERIFY(QFileInfo::exists(path + QStringLiteral(".1")));
    QVERIFY(QFileInfo::exists(path + QStringLiteral(".2")));
    QVERIFY(!QFileInfo::exists(path + QStringLiteral(".3"))); // two generations kept
    for (const QString &f : {path, path + QStringLiteral(".1"), path + QStringLiteral(".2")})
        QVERIFY(QFileInfo(f).size() <= 4096);
    int skipped = -1;
    const QList<AuditRecord> all = AuditTrail::read(path, 0, &skipped);
    QCOMPARE(skipped, 0);
    QVERIFY(all.size() > 10 && all.size() < 60); // the oldest were rotated away
    for (int i = 1; i < all.size(); ++i)
        QCOMPARE(all.at(i).timeMs, all.at(i - 1).timeMs + 1); // oldest first, none missing in between
    QCOMPARE(all.last().name, QStringLiteral("RunCtrl.S59.Command"));
    QCOMPARE(all.last().origin.user, QStringLiteral("daq"));
    QCOMPARE(all.last().origin.address, QStringLiteral("10.0.0.1"));
    QCOMPARE(all.last().allowed, 59 % 3 != 0);
    QCOMPARE(AuditTrail::read(path, t0 + 58).size(), 2);
}

QTEST_GUILESS_MAIN(tst_AccessList)
#include "tst_accesslist.moc"
