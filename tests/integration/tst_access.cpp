// Who may command what, end to end: a Control Server and an IS server with an access list and an
// audit file; refused commands and IS writes reach their senders as a clear error, are logged by
// the daemon and never reach the registrant / the repository; `dialogctl audit` shows who sent what,
// from the audit files and from the message log (dialog-logger).
#include "statuscheck.h"
#include "isweb.h"
#include "processfixture.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "dialog/rc/staterecord.h"
#include "dialog/subscription.h"

#include <QHostInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <pwd.h>
#include <unistd.h>

using namespace dialog;
using namespace dialog::test;

namespace {

const QByteArray AccessJson = R"({
  "rules": [
    { "allow": "command", "name": "RunCtrl.*.Command", "process": "Master" },
    { "deny":  "command", "name": "RunCtrl.*.Command" },
    { "allow": "is-write", "name": "RunParams.*", "process": "Writer" },
    { "deny":  "is-write", "name": "RunParams.*" }
  ]
})";

struct ToolRun
{
    int exitCode = -1;
    QByteArray out, err;
};

ToolRun runDialog(const QString &controlServer, const QStringList &args)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), controlServer);
    p.setProcessEnvironment(env);
    p.start(bin(QStringLiteral("dialogctl")), args);
    ToolRun r;
    if (!p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished(5000);
        return r;
    }
    r.exitCode = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QString userName()
{
    const struct passwd *pw = ::getpwuid(::geteuid());
    return pw ? QString::fromLocal8Bit(pw->pw_name) : QString::number(::geteuid());
}

} // namespace

class tst_Access : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void commandRefusedAtSenderAndAudited();
    void isWriteRefusedAtWriterAndAudited();
    void transitionRequestRefusedByTheMasterAndAudited();
    void auditReadFromTheMessageLog();
    void badAccessListStopsTheDaemon();

private:
    QString writeAccessFile()
    {
        const QString path = m_dir->filePath(QStringLiteral("access.json"));
        QFile f(path);
        if (f.open(QIODevice::WriteOnly))
            f.write(AccessJson);
        return path;
    }
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<ProcessFixture> m_fx;
};

void tst_Access::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_fx = std::make_unique<ProcessFixture>();
}

void tst_Access::cleanup()
{
    m_fx.reset();
    m_dir.reset();
}

void tst_Access::commandRefusedAtSenderAndAudited()
{
    const QString audit = m_dir->filePath(QStringLiteral("audit/controlserver.audit"));
    QVERIFY(m_fx->startControlServer(
        {QStringLiteral("--access"), writeAccessFile(), QStringLiteral("--audit-file"), audit}));

    Client slave(m_fx->clientOptions(QStringLiteral("Slave1")));
    QSignalSpy received(&slave, &Client::commandReceived);
    slave.registerCommand(QStringLiteral("RunCtrl.Slave1.Command"));
    QVERIFY(slave.start());
    Client master(m_fx->clientOptions(QStringLiteral("Master")));
    Client intruder(m_fx->clientOptions(QStringLiteral("Intruder")));
    QSignalSpy intruderErrors(&intruder, &Client::errorOccurred);
    QVERIFY(master.start());
    QVERIFY(intruder.start());
    QTRY_VERIFY_WITH_TIMEOUT(slave.state() == Client::State::Connected &&
                                 master.state() == Client::State::Connected &&
                                 intruder.state() == Client::State::Connected,
                             10000);
    QTRY_VERIFY_WITH_TIMEOUT(
        !m_fx->processEntry(QStringLiteral("Slave1")).value(QLatin1String("commands")).toArray().isEmpty(),
        10000);

    // Refused: the sender is told, the registrant never gets it.
    QVERIFY(intruder.sendCommand(QStringLiteral("RunCtrl.Slave1.Command"), "stop"));
    QTRY_VERIFY_WITH_TIMEOUT(!intruderErrors.isEmpty(), 10000);
    QCOMPARE(intruderErrors.first().first().value<Status::Code>(), Status::Code::PermissionDenied);
    QVERIFY2(intruder.errorString().contains(QLatin1String("RunCtrl.Slave1.Command")) &&
                 intruder.errorString().contains(QLatin1String("permission denied")),
             qPrintable(intruder.errorString()));
    // Allowed: the master's reaches it (and is the only one that does).
    QVERIFY(master.sendCommand(QStringLiteral("RunCtrl.Slave1.Command"), "start"));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 1, 10000);
    QCOMPARE(received.first().first().value<Command>().origin(), QStringLiteral("Master"));

    // dialogctl send: a distinct exit code and a clear line.
    const ToolRun denied =
        runDialog(m_fx->controlServer(), {QStringLiteral("send"), QStringLiteral("RunCtrl.Slave1.Command")});
    QCOMPARE(denied.exitCode, 4);
    QVERIFY2(denied.err.contains("denied: permission denied"), denied.err.constData());
    QVERIFY(expectNothingFor(
        200, [&received] { return received.size() != 1; }, "a denied command delivered"));

    // The Control Server logged each refusal with the origin and the rule.
    QByteArray csErr;
    QTRY_VERIFY_WITH_TIMEOUT((csErr += m_fx->controlServerProcess()->readAllStandardError())
                                     .count("refused by rules[1] of the access list") == 2,
                             5000);
    QVERIFY2(csErr.contains("command RunCtrl.Slave1.Command from Intruder user " + userName().toUtf8()),
             csErr.constData());

    // The audit trail: who sent each command, allowed or not.
    const ToolRun a = runDialog(m_fx->controlServer(),
                                {QStringLiteral("audit"), QStringLiteral("--since"), QStringLiteral("1h"),
                                 QStringLiteral("--json"), QStringLiteral("--file"), audit});
    QCOMPARE(a.exitCode, 0);
    const QList<QJsonObject> records = jsonLines(a.out);
    QCOMPARE(records.size(), 3);
    QCOMPARE(records.at(0).value(QLatin1String("process")).toString(), QStringLiteral("Intruder"));
    QCOMPARE(records.at(0).value(QLatin1String("outcome")).toString(), QStringLiteral("refused"));
    QCOMPARE(records.at(0).value(QLatin1String("rule")).toString(), QStringLiteral("rules[1]"));
    QCOMPARE(records.at(1).value(QLatin1String("process")).toString(), QStringLiteral("Master"));
    QCOMPARE(records.at(1).value(QLatin1String("outcome")).toString(), QStringLiteral("allowed"));
    QCOMPARE(records.at(2).value(QLatin1String("outcome")).toString(), QStringLiteral("refused"));
    for (const QJsonObject &r : records) {
        QCOMPARE(r.value(QLatin1String("kind")).toString(), QStringLiteral("command"));
        QCOMPARE(r.value(QLatin1String("name")).toString(), QStringLiteral("RunCtrl.Slave1.Command"));
        QCOMPARE(r.value(QLatin1String("user")).toString(), userName());
        QCOMPARE(r.value(QLatin1String("host")).toString(), QSysInfo::machineHostName());
        QCOMPARE(r.value(QLatin1String("address")).toString(), QStringLiteral("127.0.0.1"));
    }
    // The text form names the same.
    const ToolRun text = runDialog(m_fx->controlServer(), {QStringLiteral("audit"), QStringLiteral("--file"),
                                                           audit, QStringLiteral("--refused")});
    QCOMPARE(text.exitCode, 0);
    QCOMPARE(text.out.count('\n'), 2);
    QVERIFY2(text.out.contains("REFUSED command RunCtrl.Slave1.Command send by Intruder user " +
                               userName().toUtf8()),
             text.out.constData());
}

void tst_Access::isWriteRefusedAtWriterAndAudited()
{
    QVERIFY(m_fx->startControlServer());
    const QString audit = m_dir->filePath(QStringLiteral("is-RunParams.audit"));
    QProcess *server = m_fx->start(QStringLiteral("dialog-isserver"),
                                   {QStringLiteral("--name"), QStringLiteral("RunParams"),
                                    QStringLiteral("--types"), isTypesDir(), QStringLiteral("--access"),
                                    writeAccessFile(), QStringLiteral("--audit-file"), audit});
    Client writerClient(m_fx->clientOptions(QStringLiteral("Writer")));
    Client otherClient(m_fx->clientOptions(QStringLiteral("Other")));
    QVERIFY(writerClient.start());
    QVERIFY(otherClient.start());
    is::Dictionary writer(&writerClient), other(&otherClient);
    QVERIFY_OK(writer.types().loadDirectory(isTypesDir()));
    QVERIFY_OK(other.types().loadDirectory(isTypesDir()));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            is::Entry e;
            return writer.getSync(QStringLiteral("RunParams.Statistics"), &e).isOk();
        }(),
        10000);

    is::Object run = is::Object::create(writer.types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), 1));
    QVERIFY(writer.insertSync(QStringLiteral("RunParams.RunInfo"), run).isOk());

    // Refused: a clear status at the writer, the object unchanged.
    QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), 666));
    const is::Status s =
        other.updateSync(QStringLiteral("RunParams.RunInfo"), run, is::Dictionary::UpdateMode::MustExist);
    QCOMPARE(s.code(), Status::Code::PermissionDenied);
    QVERIFY2(s.toString().startsWith(QLatin1String("permission denied: the access list (rules[3])")),
             qPrintable(s.toString()));
    QCOMPARE(other.removeSync(QStringLiteral("RunParams.RunInfo")).code(), Status::Code::PermissionDenied);
    is::Entry e;
    QVERIFY(writer.getSync(QStringLiteral("RunParams.RunInfo"), &e).isOk());
    QCOMPARE(e.object.get<quint32>(QStringLiteral("runNumber")), 1u);
    // The server logged the refusal.
    QByteArray err;
    QTRY_VERIFY_WITH_TIMEOUT(
        (err += server->readAllStandardError()).contains("refused by rules[3] of the access list"), 5000);
    QVERIFY2(err.contains("update RunParams.RunInfo from Other"), err.constData());

    const ToolRun a = runDialog(m_fx->controlServer(),
                                {QStringLiteral("audit"), QStringLiteral("--json"), QStringLiteral("--kind"),
                                 QStringLiteral("is-write"), QStringLiteral("--file"), audit});
    QCOMPARE(a.exitCode, 0);
    const QList<QJsonObject> records = jsonLines(a.out);
    QCOMPARE(records.size(), 3);
    QCOMPARE(records.at(0).value(QLatin1String("operation")).toString(), QStringLiteral("insert"));
    QCOMPARE(records.at(0).value(QLatin1String("process")).toString(), QStringLiteral("Writer"));
    QCOMPARE(records.at(0).value(QLatin1String("outcome")).toString(), QStringLiteral("allowed"));
    QCOMPARE(records.at(1).value(QLatin1String("operation")).toString(), QStringLiteral("update"));
    QCOMPARE(records.at(1).value(QLatin1String("process")).toString(), QStringLiteral("Other"));
    QCOMPARE(records.at(1).value(QLatin1String("outcome")).toString(), QStringLiteral("refused"));
    QCOMPARE(records.at(2).value(QLatin1String("operation")).toString(), QStringLiteral("remove"));
    for (const QJsonObject &r : records) {
        QCOMPARE(r.value(QLatin1String("name")).toString(), QStringLiteral("RunParams.RunInfo"));
        QCOMPARE(r.value(QLatin1String("user")).toString(), userName());
        QCOMPARE(r.value(QLatin1String("daemon")).toString(), QStringLiteral("IS.Server.RunParams"));
    }
}

void tst_Access::transitionRequestRefusedByTheMasterAndAudited()
{
    QVERIFY(m_fx->startControlServer());
    const QString accessFile = m_dir->filePath(QStringLiteral("transitions.json"));
    {
        QFile f(accessFile);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({ "rules": [
            { "allow": "transition", "name": "RunCtrl.Master.State", "process": "RunControl*" },
            { "deny":  "transition", "name": "RunCtrl.*" } ] })");
    }
    const QJsonObject partition{
        {QStringLiteral("name"), QStringLiteral("acl")},
        {QStringLiteral("control_server"), QJsonObject{{QStringLiteral("host"), QStringLiteral("localhost")},
                                                       {QStringLiteral("port"), m_fx->port()},
                                                       {QStringLiteral("start"), false}}},
        {QStringLiteral("master"),
         QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                     {QStringLiteral("run_number_file"), m_dir->filePath(QStringLiteral("runnumber"))}}},
        {QStringLiteral("slaves"),
         QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("FE1")},
                                {QStringLiteral("kind"), QStringLiteral("control")}}}}};
    const QString partitionFile = m_dir->filePath(QStringLiteral("acl.json"));
    {
        QFile f(partitionFile);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(partition).toJson());
    }
    m_fx->start(QStringLiteral("dialog-slave"),
                {QStringLiteral("--kind"), QStringLiteral("control"), QStringLiteral("--name"),
                 QStringLiteral("FE1"), QStringLiteral("--no-is"), QStringLiteral("--master"),
                 QStringLiteral("Master")});
    const QString audit = m_dir->filePath(QStringLiteral("audit/master.audit"));
    QProcess *master =
        m_fx->start(QStringLiteral("dialog-master"),
                    {QStringLiteral("--config"), partitionFile, QStringLiteral("--no-is"),
                     QStringLiteral("--access"), accessFile, QStringLiteral("--audit-file"), audit});

    Client intruder(m_fx->clientOptions(QStringLiteral("Intruder")));
    Client gui(m_fx->clientOptions(QStringLiteral("RunControl.GUI")));
    QVERIFY(intruder.start());
    QVERIFY(gui.start());
    Subscription *state = gui.subscribe(QStringLiteral("RunCtrl.Master.State"));
    const auto masterState = [&] {
        return QJsonDocument::fromJson(state->lastMessage().data())
            .object()
            .value(QLatin1String("state"))
            .toString();
    };
    const auto slavePresent = [&] {
        const QJsonArray slaves = QJsonDocument::fromJson(state->lastMessage().data())
                                      .object()
                                      .value(QLatin1String("slaves"))
                                      .toArray();
        return !slaves.isEmpty() && slaves.first().toObject().value(QLatin1String("present")).toBool();
    };
    QTRY_VERIFY_WITH_TIMEOUT(masterState() == QLatin1String("Initial") && slavePresent(), 20000);
    rc::TransitionRequest configure;
    configure.transition = rc::Transition::Configure;
    const auto ask = [&](Client &from) {
        Reply answer;
        bool answered = false;
        from.request(QStringLiteral("RunCtrl.Master.State"), configure.toJson(), 10000, &from,
                     [&](const Reply &r) {
                         answer = r;
                         answered = true;
                     });
        return waitUntil([&] { return answered; }, 15000) ? answer : Reply();
    };

    // Refused: the requester is told why, and the master does not move.
    const Reply refused = ask(intruder);
    QVERIFY(!refused.isOk());
    QVERIFY2(
        refused.errorString().contains(
            QStringLiteral("permission denied: the access list (rules[1]) does not let Intruder (user '%1'")
                .arg(userName())) &&
            refused.errorString().contains(QStringLiteral("request 'configure' of RunCtrl.Master.State")),
        qPrintable(refused.errorString()));
    QCOMPARE(masterState(), QStringLiteral("Initial"));
    // Allowed: the run-control GUI's.
    const Reply done = ask(gui);
    QVERIFY2(done.isOk(), qPrintable(done.errorString()));
    QVERIFY(done.data().contains("Configured"));

    QByteArray err;
    QTRY_VERIFY_WITH_TIMEOUT(
        (err += master->readAllStandardError()).contains("refused by rules[1] of the access list"), 5000);
    QVERIFY2(err.contains("transition configure of RunCtrl.Master.State from Intruder"), err.constData());

    const ToolRun a = runDialog(m_fx->controlServer(),
                                {QStringLiteral("audit"), QStringLiteral("--json"), QStringLiteral("--kind"),
                                 QStringLiteral("transition"), QStringLiteral("--file"), audit});
    QCOMPARE(a.exitCode, 0);
    const QList<QJsonObject> records = jsonLines(a.out);
    QCOMPARE(records.size(), 2);
    QCOMPARE(records.at(0).value(QLatin1String("process")).toString(), QStringLiteral("Intruder"));
    QCOMPARE(records.at(0).value(QLatin1String("outcome")).toString(), QStringLiteral("refused"));
    QCOMPARE(records.at(0).value(QLatin1String("rule")).toString(), QStringLiteral("rules[1]"));
    QCOMPARE(records.at(1).value(QLatin1String("process")).toString(), QStringLiteral("RunControl.GUI"));
    QCOMPARE(records.at(1).value(QLatin1String("outcome")).toString(), QStringLiteral("allowed"));
    QCOMPARE(records.at(1).value(QLatin1String("rule")).toString(), QStringLiteral("rules[0]"));
    for (const QJsonObject &r : records) {
        QCOMPARE(r.value(QLatin1String("kind")).toString(), QStringLiteral("transition"));
        QCOMPARE(r.value(QLatin1String("name")).toString(), QStringLiteral("RunCtrl.Master.State"));
        QCOMPARE(r.value(QLatin1String("operation")).toString(), QStringLiteral("configure"));
        QCOMPARE(r.value(QLatin1String("daemon")).toString(), QStringLiteral("Master"));
        QCOMPARE(r.value(QLatin1String("user")).toString(), userName());
        QCOMPARE(r.value(QLatin1String("address")).toString(), QStringLiteral("127.0.0.1"));
    }
}

void tst_Access::auditReadFromTheMessageLog()
{
    // No audit file: the Control Server's audit records go to the message log only.
    QVERIFY(m_fx->startControlServer({QStringLiteral("--audit")}));
    m_fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--data-dir"), m_dir->path()});
    Client slave(m_fx->clientOptions(QStringLiteral("Slave2")));
    slave.registerCommand(QStringLiteral("RunCtrl.Slave2.Command"));
    QSignalSpy received(&slave, &Client::commandReceived);
    QVERIFY(slave.start());
    Client master(m_fx->clientOptions(QStringLiteral("Master")));
    QVERIFY(master.start());
    QTRY_VERIFY_WITH_TIMEOUT(master.state() == Client::State::Connected &&
                                 !m_fx->processEntry(QStringLiteral("Slave2"))
                                      .value(QLatin1String("commands"))
                                      .toArray()
                                      .isEmpty(),
                             10000);
    QVERIFY(master.sendCommand(QStringLiteral("RunCtrl.Slave2.Command"), "stop"));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 1, 10000);
    QList<QJsonObject> records;
    QVERIFY(waitUntil(
        [&] {
            const ToolRun a =
                runDialog(m_fx->controlServer(),
                          {QStringLiteral("audit"), QStringLiteral("--since"), QStringLiteral("1h"),
                           QStringLiteral("--json"), QStringLiteral("--timeout-ms"), QStringLiteral("2000")});
            records = jsonLines(a.out);
            return a.exitCode == 0 && !records.isEmpty();
        },
        20000, 250));
    QCOMPARE(records.size(), 1);
    QCOMPARE(records.first().value(QLatin1String("process")).toString(), QStringLiteral("Master"));
    QCOMPARE(records.first().value(QLatin1String("name")).toString(),
             QStringLiteral("RunCtrl.Slave2.Command"));
    QCOMPARE(records.first().value(QLatin1String("user")).toString(), userName());
    QCOMPARE(records.first().value(QLatin1String("outcome")).toString(), QStringLiteral("allowed"));
}

void tst_Access::badAccessListStopsTheDaemon()
{
    const QString path = m_dir->filePath(QStringLiteral("bad.json"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"rules": [{"allow": "commands", "name": "X"}]})");
    f.close();
    QProcess *cs =
        m_fx->start(QStringLiteral("dialog-controlserver"),
                    {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--access"), path});
    QVERIFY(cs->waitForFinished(10000));
    QCOMPARE(cs->exitCode(), 1);
    const QByteArray err = cs->readAllStandardError();
    QVERIFY2(err.contains("--access: ") && err.contains("rules[0]") &&
                 err.contains("\"command\", \"is-write\""),
             err.constData());
}

QTEST_GUILESS_MAIN(tst_Access)
#include "tst_access.moc"
