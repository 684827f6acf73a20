// Partition files: the demo validates; every malformed input is refused naming the field.
#include "dialog/rc/partition.h"

#include <QHostInfo>
#include <QNetworkInterface>
#include <QFile>
#include <QtTest>

using namespace dialog::rc;
using dialog::Status;

class tst_Partition : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void demoPartitionIsValid();
    void minimalPartitionGetsDefaults();
    void isTypesDefaultBesideThePartitionElseInstalled();
    void localHostsAreThisHostsNamesAndAddresses();
    void malformed_data();
    void malformed();
    void processArguments();
    void programOfItsOwn();
    void servicesOutsideRunControl();
    void standbyControlServers();
    void secretAndTlsFilesAreHandedToEveryProcess();
    void noSecretOnlyWhenSaidSo();
    void restartPolicy();
    void accessListAndAuditDirReachTheDaemons();
    void treeOfSegments();
    void badTree_data();
    void badTree();
};

void tst_Partition::demoPartitionIsValid()
{
    Partition p;
    Status st;
    QVERIFY2((st = Partition::load(QStringLiteral(DIALOG_SOURCE_DIR "/resources/partitions/demo.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    QCOMPARE(p.name, QStringLiteral("demo"));
    QCOMPARE(p.controlServerAddress(), QStringLiteral("127.0.0.1:3425"));
    QCOMPARE(p.isServers.size(), 4);
    QCOMPARE(p.isServers.at(0).name, QStringLiteral("RunParams"));
    QCOMPARE(p.isServers.at(1).name, QStringLiteral("DAQ"));
    QCOMPARE(p.isServers.at(2).name, QStringLiteral("Monitor"));
    QCOMPARE(p.isServers.at(3).name, QStringLiteral("DQM"));
    // Each with its web IS on a port of its own (the histograms' PNGs: docs/web.md).
    QSet<QString> webPorts;
    for (const ProcessSpec &s : p.isServers) {
        const qsizetype at = s.args.indexOf(QStringLiteral("--http-port"));
        QVERIFY2(at >= 0 && at + 1 < s.args.size(), qPrintable(s.name));
        QVERIFY2(s.args.at(at + 1).toUInt() > 1024, qPrintable(s.args.at(at + 1)));
        webPorts.insert(s.args.at(at + 1));
    }
    QCOMPARE(webPorts.size(), 4);
    // The alarm server, the event monitor and the data-quality checks, with their files.
    QCOMPARE(p.services.size(), 3);
    QCOMPARE(p.services.at(0).program(), QStringLiteral("dialog-alarmserver"));
    QVERIFY(QFile::exists(p.services.at(0).args.at(1)));
    QCOMPARE(p.services.at(2).program(), QStringLiteral("dialog-dqm"));
    QVERIFY(QFile::exists(p.services.at(2).args.at(1)));
    QCOMPARE(p.master.name, QStringLiteral("Master"));
    int control = 0, readout = 0;
    for (const ProcessSpec &s : p.slaves)
        (s.kind == QLatin1String("control") ? control : readout)++;
    QCOMPARE(control, 4);
    QCOMPARE(readout, 2);
    QCOMPARE(p.isTypesDir, QDir::cleanPath(QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")));
    QCOMPARE(p.loggers.size(), 1);
    QCOMPARE(p.loggers.first().program(), QStringLiteral("dialog-logger"));
    QCOMPARE(p.loggers.first().arguments(p),
             (QStringList{QStringLiteral("--name"), QStringLiteral("Logger")}));
    QCOMPARE(p.processes().size(), 1 + 1 + 1 + 4 + 3 + 1 + 6);
    QCOMPARE(p.processes().first().role, ProcessSpec::Role::ControlServer);
    QCOMPARE(p.processes().at(1).role, ProcessSpec::Role::Logger);
    // The configuration database next: the master configures from it.
    QCOMPARE(p.processes().at(2).role, ProcessSpec::Role::ConfigDb);
    QCOMPARE(p.processes().at(2).program(), QStringLiteral("dialog-configdb"));
    QCOMPARE(p.configDb, QStringLiteral("configdb"));
    QVERIFY(p.master.arguments(p)
                .join(QLatin1Char(' '))
                .contains(QLatin1String("--configdb configdb --config-ref head")));
}

void tst_Partition::minimalPartitionGetsDefaults()
{
    Partition p;
    Status st;
    QVERIFY2((st = Partition::parse(R"({"name":"t","control_server":{"port":4000},"master":{"name":"M"},
                                  "slaves":[{"name":"S1","kind":"readout"}]})",
                                    QStringLiteral("/tmp/x/t.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    QCOMPARE(p.controlServerHost, QStringLiteral("localhost"));
    QVERIFY(p.startControlServer);
    QCOMPARE(p.transitionTimeoutMs, 10000);
    QCOMPARE(p.slaves.first().host, QStringLiteral("localhost"));
    QVERIFY(p.slaves.first().isLocal());
    QCOMPARE(p.file, QStringLiteral("/tmp/x/t.json"));
    // No ../is-types beside /tmp/x: the installed IS types.
    QVERIFY2(QDir::fromNativeSeparators(p.isTypesDir).endsWith(QLatin1String("/share/dialog/is-types")),
             qPrintable(p.isTypesDir));
    QCOMPARE(p.sshCommand.first(), QStringLiteral("ssh"));
}

void tst_Partition::localHostsAreThisHostsNamesAndAddresses()
{
    ProcessSpec s;
    for (const QString &local :
         {QStringLiteral("localhost"), QStringLiteral("127.0.0.1"), QStringLiteral("127.0.1.1"),
          QStringLiteral("::1"), QHostInfo::localHostName()}) {
        s.host = local;
        QVERIFY2(s.isLocal(), qPrintable(local));
    }
    for (const QHostAddress &a : QNetworkInterface::allAddresses()) {
        s.host = a.toString();
        QVERIFY2(s.isLocal(), qPrintable(s.host));
    }
    // Documentation addresses (RFC 5737) and a name that is not this host's: over ssh.
    for (const QString &remote : {QStringLiteral("192.0.2.17"), QStringLiteral("daq-pc2.example")}) {
        s.host = remote;
        QVERIFY2(!s.isLocal(), qPrintable(remote));
    }
}

void tst_Partition::isTypesDefaultBesideThePartitionElseInstalled()
{
    // A partition kept anywhere (no ../is-types next to it) uses the installed types; one in a tree
    // with ../is-types (the source layout) uses those.
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("partitions")));
    const QString file = dir.filePath(QStringLiteral("partitions/t.json"));
    const char *json =
        R"({"name":"t","control_server":{"port":4000},"master":{"name":"M"},"slaves":[{"name":"S1","kind":"readout"}]})";
    Partition p;
    Status st;
    QVERIFY2((st = Partition::parse(json, file, &p)).isOk(), qPrintable(st.message()));
    QVERIFY2(p.isTypesDir.endsWith(QLatin1String("/share/dialog/is-types")), qPrintable(p.isTypesDir));
    QVERIFY(!p.isTypesDir.startsWith(dir.path()));

    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("is-types")));
    QVERIFY2((st = Partition::parse(json, file, &p)).isOk(), qPrintable(st.message()));
    QCOMPARE(p.isTypesDir, QDir::cleanPath(dir.filePath(QStringLiteral("is-types"))));

    // Given explicitly, it is used as it is (relative to the partition file).
    QVERIFY2((st = Partition::parse(R"({"name":"t","control_server":{"port":4000},"master":{"name":"M"},
                                  "slaves":[{"name":"S1","kind":"readout"}],"is_types_dir":"/opt/types"})",
                                    file, &p))
                 .isOk(),
             qPrintable(st.message()));
    QCOMPARE(p.isTypesDir, QStringLiteral("/opt/types"));
}

void tst_Partition::servicesOutsideRunControl()
{
    // "services": daemons started after the IS servers and before the master, with --name, their
    // args ({partition_dir} the partition file's folder) and a program found like a slave's.
    Partition p;
    Status st;
    QVERIFY2((st = Partition::parse(
                  R"({"name":"t","control_server":{"port":4000},"master":{"name":"M"},"is_servers":[{"name":"DAQ"}],
                      "services":[{"name":"Alarms","program":"dialog-alarmserver",
                                   "args":["--rules","{partition_dir}/alarms.json"],"restart":"on-failure"},
                                  {"name":"Mine","program":"bin/mine","host":"daq07"}],
                      "slaves":[{"name":"FE1","kind":"control"}]})",
                  QStringLiteral("/p/t.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    QCOMPARE(p.services.size(), 2);
    const ProcessSpec alarms = p.services.at(0);
    QCOMPARE(alarms.role, ProcessSpec::Role::Service);
    QCOMPARE(alarms.program(), QStringLiteral("dialog-alarmserver"));
    QCOMPARE(alarms.arguments(p),
             (QStringList{"--name", "Alarms", "--rules", "/p/alarms.json"}));
    QCOMPARE(alarms.restart, ProcessSpec::Restart::OnFailure);
    QCOMPARE(p.services.at(1).program(), QStringLiteral("/p/bin/mine"));
    QCOMPARE(p.services.at(1).host, QStringLiteral("daq07"));
    QStringList order;
    for (const ProcessSpec &s : p.processes())
        order << s.name;
    QCOMPARE(order, (QStringList{"ControlServer", "DAQ", "Alarms", "Mine", "M", "FE1"}));

    // A service without a program, a name taken by a slave, unknown keys: refused with the field.
    const auto refused = [](const QByteArray &services, const char *why) {
        Partition q;
        const Status s = Partition::parse(R"({"name":"t","control_server":{},"master":{"name":"M"},
                                              "slaves":[{"name":"FE1","kind":"control"}],"services":)" +
                                              services + "}",
                                          QStringLiteral("/p/t.json"), &q);
        if (s.isOk() || !s.message().contains(QLatin1String(why)))
            qWarning() << s.message();
        return !s.isOk() && s.message().contains(QLatin1String(why));
    };
    QVERIFY(refused(R"([{"name":"A"}])", "services[0].program: missing"));
    QVERIFY(refused(R"([{"name":"FE1","program":"x"}])", "'FE1' is used twice"));
    QVERIFY(refused(R"([{"name":"A","program":"x","kind":"control"}])", "unknown field"));
    QVERIFY(refused(R"({"name":"A"})", "services: expected an array"));
}

void tst_Partition::malformed_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("message");
    const QByteArray base = R"("name":"t","control_server":{},"master":{"name":"M"})";
    QTest::newRow("not-json") << QByteArray("{\n\"name\": ,}") << "p.json: line 2: invalid JSON";
    QTest::newRow("array") << QByteArray("[]") << "p.json: the partition must be a JSON object";
    QTest::newRow("no-name") << QByteArray(R"({"control_server":{},"master":{"name":"M"},"slaves":[]})")
                             << "p.json: name: missing";
    QTest::newRow("no-slaves") << "{" + base + "}"
                               << "p.json: slaves: missing (an array is required)";
    QTest::newRow("empty-slaves") << "{" + base + R"(,"slaves":[]})"
                                  << "p.json: slaves: a partition needs at least one slave";
    QTest::newRow("bad-kind")
        << "{" + base + R"(,"slaves":[{"name":"A","kind":"control"},{"name":"B","kind":"trigger"}]})"
        << "p.json: slaves[1].kind: 'trigger': expected \"control\" or \"readout\"";
    QTest::newRow("missing-kind") << "{" + base + R"(,"slaves":[{"name":"A"}]})"
                                  << "p.json: slaves[0]: needs \"kind\" (control or readout) or \"program\"";
    QTest::newRow("kind-and-program")
        << "{" + base + R"(,"slaves":[{"name":"A","kind":"control","program":"/bin/myslave"}]})"
        << "p.json: slaves[0]: \"kind\" and \"program\" exclude each other: give one";
    QTest::newRow("empty-program") << "{" + base + R"(,"slaves":[{"name":"A","program":" "}]})"
                                   << "p.json: slaves[0].program: expected a non-empty string";
    QTest::newRow("program-not-string") << "{" + base + R"(,"slaves":[{"name":"A","program":["x"]}]})"
                                        << "p.json: slaves[0].program: expected a non-empty string";
    QTest::newRow("typo-field") << "{" + base + R"(,"slaves":[{"name":"A","kind":"control","agrs":[]}]})"
                                << "p.json: slaves[0].agrs: unknown field";
    QTest::newRow("bad-port")
        << QByteArray(
               R"({"name":"t","control_server":{"port":70000},"master":{"name":"M"},"slaves":[{"name":"A","kind":"control"}]})")
        << "p.json: control_server.port: expected an integer in 1..65535";
    QTest::newRow("args-not-strings")
        << "{" + base + R"(,"slaves":[{"name":"A","kind":"control","args":[1]}]})"
        << "p.json: slaves[0].args[0]: expected a string";
    QTest::newRow("duplicate") << "{" + base + R"(,"slaves":[{"name":"M","kind":"control"}]})"
                               << "p.json: name: 'M' is used twice";
    QTest::newRow("bad-name") << "{" + base + R"(,"slaves":[{"name":"A B","kind":"control"}]})"
                              << "p.json: slaves[0].name: 'A B' is not a valid process name";
    QTest::newRow("no-master")
        << QByteArray(R"({"name":"t","control_server":{},"slaves":[{"name":"A","kind":"control"}]})")
        << "p.json: master: missing (an object is required)";
    QTest::newRow("timeout")
        << QByteArray(
               R"({"name":"t","control_server":{},"master":{"name":"M","transition_timeout_ms":"x"},"slaves":[{"name":"A","kind":"control"}]})")
        << "p.json: master.transition_timeout_ms: expected an integer";
    QTest::newRow("bad-restart") << "{" + base +
                                        R"(,"slaves":[{"name":"A","kind":"control","restart":"always"}]})"
                                 << "p.json: slaves[0].restart: 'always': expected \"no\" or \"on-failure\"";
    QTest::newRow("bad-restart-limit")
        << "{" + base + R"(,"slaves":[{"name":"A","kind":"control","restart_limit":0}]})"
        << "p.json: slaves[0].restart_limit: expected an integer in 1..1000";
    QTest::newRow("host-and-hosts")
        << "{" + base + R"(,"slaves":[{"name":"A","kind":"control","host":"a","hosts":["a","b"]}]})"
        << "p.json: slaves[0]: \"host\" and \"hosts\" exclude each other: give one";
    QTest::newRow("hosts-twice")
        << "{" + base + R"(,"slaves":[{"name":"A","kind":"control","hosts":["a","a"]}]})"
        << "p.json: slaves[0].hosts: expected different non-empty host names";
    QTest::newRow("migrate-one-host")
        << "{" + base + R"(,"slaves":[{"name":"A","kind":"control","hosts":["a"],"migrate":true}]})"
        << "p.json: slaves[0].migrate: needs \"hosts\" with a fallback host";
    QTest::newRow("bad-loss-interval")
        << "{" + base + R"(,"slaves":[{"name":"A","kind":"control","hosts":["a","b"],"migrate":true,"loss_interval_ms":10}]})"
        << "p.json: slaves[0].loss_interval_ms: expected an integer in 200..600000";
    QTest::newRow("empty-server-list")
        << QByteArray(R"({"name":"t","control_server":[],"master":{"name":"M"},"slaves":[{"name":"A","kind":"control"}]})")
        << "p.json: control_server: the list names no Control Server";
    QTest::newRow("same-server-twice")
        << QByteArray(
               R"({"name":"t","control_server":[{"port":4000},{"host":"127.0.0.1","port":4000}],"master":{"name":"M"},"slaves":[{"name":"A","kind":"control"}]})")
        << "p.json: control_server[1]: 127.0.0.1:4000 is already a Control Server of the partition";
    QTest::newRow("standby-start")
        << QByteArray(
               R"({"name":"t","control_server":[{"port":4000},{"port":4001,"start":false}],"master":{"name":"M"},"slaves":[{"name":"A","kind":"control"}]})")
        << "p.json: control_server[1].start: unknown field";
    QTest::newRow("tls-incomplete") << "{" + base +
                                           R"(,"tls_cert":"c.pem","slaves":[{"name":"A","kind":"control"}]})"
                                    << "p.json: tls_cert: TLS needs all of tls_cert, tls_key and tls_ca";
    QTest::newRow("secret-not-none") << "{" + base + R"(,"secret":"off","slaves":[{"name":"A","kind":"control"}]})"
                                     << "p.json: secret: 'off': the only value is \"none\"";
    QTest::newRow("secret-none-and-file")
        << "{" + base + R"(,"secret":"none","secret_file":"s","slaves":[{"name":"A","kind":"control"}]})"
        << "p.json: secret: \"none\" and a \"secret_file\" contradict each other";
}

void tst_Partition::malformed()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, message);
    Partition p;
    Status st;
    QVERIFY(!(st = Partition::parse(json, QStringLiteral("/somewhere/p.json"), &p)).isOk());
    QVERIFY2(st.message().startsWith(message), qPrintable(st.message()));
}

void tst_Partition::processArguments()
{
    Partition p;
    Status st;
    QVERIFY((st = Partition::parse(
                 R"({"name":"t","control_server":{"port":4000},"heartbeat_ms":200,"master":{"name":"M"},
                               "slaves":[{"name":"S1","kind":"readout","args":["--threads","2"]}]})",
                 QStringLiteral("/p/t.json"), &p))
                .isOk());
    const ProcessSpec s = p.slaves.first();
    QCOMPARE(s.program(), QStringLiteral("dialog-slave"));
    const QStringList a = s.arguments(p);
    QCOMPARE(a.mid(0, 4), (QStringList{"--kind", "readout", "--name", "S1"}));
    QVERIFY(a.contains(QStringLiteral("--heartbeat-ms")));
    QCOMPARE(a.mid(a.size() - 2), (QStringList{"--threads", "2"}));
    QCOMPARE(p.master.arguments(p).mid(0, 2), (QStringList{"--config", "/p/t.json"}));
}

void tst_Partition::programOfItsOwn()
{
    // "program" instead of "kind": a path from the partition file's folder, or a name kept for
    // the launcher to find; the arguments of every slave (no --kind), then "args".
    Partition p;
    Status st;
    QVERIFY2((st = Partition::parse(
                  R"({"name":"t","control_server":{"port":4000},"master":{"name":"M"},
                      "slaves":[{"name":"HV1","program":"bin/myslave","args":["--voltage","900"]},
                                {"name":"HV2","program":"myslave"},{"name":"FE1","kind":"control"}]})",
                  QStringLiteral("/p/t.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    const ProcessSpec hv1 = p.slaves.at(0);
    QCOMPARE(hv1.program(), QStringLiteral("/p/bin/myslave"));
    QCOMPARE(hv1.kind, QString());
    const QStringList a = hv1.arguments(p);
    QVERIFY2(!a.contains(QStringLiteral("--kind")), qPrintable(a.join(' ')));
    QCOMPARE(a.mid(0, 2), (QStringList{"--name", "HV1"}));
    QVERIFY(a.contains(QStringLiteral("--master")) && a.contains(QStringLiteral("--daq-server")));
    QCOMPARE(a.mid(a.size() - 2), (QStringList{"--voltage", "900"}));
    QCOMPARE(p.slaves.at(1).program(), QStringLiteral("myslave"));
    QCOMPARE(p.slaves.at(2).program(), QStringLiteral("dialog-slave"));
}

void tst_Partition::standbyControlServers()
{
    Partition p;
    Status st;
    QVERIFY2((st = Partition::parse(
                  R"({"name":"t","control_server":[{"host":"pc1","port":4000},{"host":"pc2","port":4001,"args":["--bind","0.0.0.0"]}],
                      "master":{"name":"M"},"slaves":[{"name":"S1","kind":"control"}]})",
                  QStringLiteral("/p/t.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    // Every process is given both, the primary first.
    QCOMPARE(p.controlServerAddresses(), (QStringList{"pc1:4000", "pc2:4001"}));
    QCOMPARE(p.controlServerAddress(), QStringLiteral("pc1:4000"));
    const QList<ProcessSpec> all = p.processes();
    QCOMPARE(all.at(0).name, QStringLiteral("ControlServer"));
    QCOMPARE(all.at(0).arguments(p).mid(0, 2), (QStringList{"--port", "4000"}));
    QVERIFY(!all.at(0).arguments(p).contains(QStringLiteral("--standby-of")));
    const ProcessSpec &standby = all.at(1);
    QCOMPARE(standby.role, ProcessSpec::Role::ControlServer);
    QCOMPARE(standby.name, QStringLiteral("Standby"));
    QCOMPARE(standby.host, QStringLiteral("pc2"));
    QCOMPARE(standby.arguments(p), (QStringList{"--port", "4001", "--standby-of", "pc1:4000", "--bind", "0.0.0.0"}));
    QCOMPARE(all.at(2).role, ProcessSpec::Role::Master);
    // One object is one server, as before.
    QVERIFY((st = Partition::parse(R"({"name":"t","control_server":{"port":4000},"master":{"name":"M"},
                                       "slaves":[{"name":"S1","kind":"control"}]})",
                                   QStringLiteral("/p/t.json"), &p))
                .isOk());
    QCOMPARE(p.controlServerAddresses(), QStringList{"127.0.0.1:4000"});
    QVERIFY(p.standbyControlServers.isEmpty());
}

void tst_Partition::accessListAndAuditDirReachTheDaemons()
{
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("t.json"));
    QFile access(dir.filePath(QStringLiteral("access.json")));
    QVERIFY(access.open(QIODevice::WriteOnly));
    access.write(R"({"rules": [{"deny": "command", "name": "RunCtrl.*"}]})");
    access.close();
    const QByteArray json = R"({"name":"t","control_server":{"port":4000},"master":{"name":"M"},
        "is_servers":[{"name":"RunParams"}],"slaves":[{"name":"S1","kind":"readout"}],
        "access":"access.json","audit_dir":"audit"})";
    Partition p;
    Status st;
    QVERIFY2((st = Partition::parse(json, file, &p)).isOk(), qPrintable(st.message()));
    QCOMPARE(p.accessFile, access.fileName());
    QList<ProcessSpec> procs = p.processes();
    const QStringList cs = procs.first().arguments(p);
    QVERIFY2(cs.join(' ').contains(
                 QStringLiteral("--access %1 --audit-file %2")
                     .arg(access.fileName(), dir.filePath(QStringLiteral("audit/controlserver.audit")))),
             qPrintable(cs.join(' ')));
    const QStringList is = p.isServers.first().arguments(p);
    QVERIFY2(
        is.join(' ').contains(
            QStringLiteral("--audit-file %1").arg(dir.filePath(QStringLiteral("audit/is-RunParams.audit")))),
        qPrintable(is.join(' ')));
    QVERIFY(!p.slaves.first().arguments(p).contains(QStringLiteral("--access")));
    // The master checks the transitions asked of it (kind "transition") and audits them.
    const QStringList master = p.master.arguments(p);
    QVERIFY2(master.join(' ').contains(
                 QStringLiteral("--access %1 --audit-file %2")
                     .arg(access.fileName(), dir.filePath(QStringLiteral("audit/master.audit")))),
             qPrintable(master.join(' ')));

    // A bad access list stops the partition from loading, with the file and the rule.
    QVERIFY(access.open(QIODevice::WriteOnly | QIODevice::Truncate));
    access.write(R"({"rules": [{"deny": "everything"}]})");
    access.close();
    QVERIFY(!(st = Partition::parse(json, file, &p)).isOk());
    QVERIFY2(st.message().contains(QLatin1String("access")) &&
                 st.message().contains(QLatin1String("rules[0]")),
             qPrintable(st.message()));
}

void tst_Partition::secretAndTlsFilesAreHandedToEveryProcess()
{
    Partition p;
    Status st;
    QVERIFY2((st = Partition::parse(R"({"name":"t","control_server":{"port":4000},"secret_file":"secret",
                                  "tls_cert":"/etc/dialog/node.pem","tls_key":"node.key","tls_ca":"ca.pem",
                                  "master":{"name":"M"},"slaves":[{"name":"S1","kind":"readout"}]})",
                                    QStringLiteral("/p/t.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    QCOMPARE(p.secretFile, QStringLiteral("/p/secret")); // relative to the partition file
    QVERIFY(!p.noSecret);
    QCOMPARE(p.tlsCert, QStringLiteral("/etc/dialog/node.pem"));
    for (const ProcessSpec &s : p.processes()) {
        const QStringList a = s.arguments(p);
        QVERIFY2(a.join(QLatin1Char(' '))
                     .contains(QLatin1String("--secret-file /p/secret --tls-cert /etc/dialog/node.pem "
                                             "--tls-key /p/node.key --tls-ca /p/ca.pem")),
                 qPrintable(s.name + QLatin1String(": ") + a.join(QLatin1Char(' '))));
    }
}

void tst_Partition::noSecretOnlyWhenSaidSo()
{
    // "secret": "none" is the opt-out of the secret dialogctl up would give the partition; nothing
    // is handed to the processes.
    Partition p;
    Status st;
    QVERIFY2((st = Partition::parse(R"({"name":"t","control_server":{"port":4000},"secret":"none",
                                  "master":{"name":"M"},"slaves":[{"name":"S1","kind":"readout"}]})",
                                    QStringLiteral("/p/t.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    QVERIFY(p.noSecret);
    QVERIFY(p.secretFile.isEmpty());
    for (const ProcessSpec &s : p.processes())
        QVERIFY(!s.arguments(p).contains(QStringLiteral("--secret-file")));
    QVERIFY((st = Partition::parse(R"({"name":"t","control_server":{"port":4000},
                                  "master":{"name":"M"},"slaves":[{"name":"S1","kind":"readout"}]})",
                                   QStringLiteral("/p/t.json"), &p))
                .isOk());
    QVERIFY(!p.noSecret);
}

void tst_Partition::restartPolicy()
{
    Partition p;
    Status st;
    QVERIFY2((st = Partition::parse(
                  R"({"name":"t","control_server":{},"master":{"name":"M","restart":"on-failure"},
                                  "is_servers":[{"name":"DAQ","restart":"on-failure","restart_limit":2}],
                                  "slaves":[{"name":"S1","kind":"readout"},
                                            {"name":"S2","kind":"control","restart":"on-failure",
                                             "restart_limit":7,"restart_delay_ms":50}]})",
                  QStringLiteral("/tmp/x/t.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    QCOMPARE(p.slaves.at(0).restart, ProcessSpec::Restart::Never); // the default
    QCOMPARE(p.slaves.at(1).restart, ProcessSpec::Restart::OnFailure);
    QCOMPARE(p.slaves.at(1).restartLimit, 7);
    QCOMPARE(p.slaves.at(1).restartDelayMs, 50);
    QCOMPARE(p.master.restart, ProcessSpec::Restart::OnFailure);
    QCOMPARE(p.master.restartLimit, 5);
    QCOMPARE(p.master.restartDelayMs, 1000);
    QCOMPARE(p.isServers.first().restartLimit, 2);
    // The policy is the launcher's: it is not handed to the program.
    QVERIFY(!p.slaves.at(1).arguments(p).join(QLatin1Char(' ')).contains(QLatin1String("restart")));

    // Migration: "hosts" (the first is the host) and "migrate", for the agents.
    QVERIFY2((st = Partition::parse(
                  R"({"name":"t","control_server":{},"master":{"name":"M"},
                      "slaves":[{"name":"R","kind":"readout","hosts":["daq03","daq07"],"migrate":true,
                                 "loss_interval_ms":2000},
                                {"name":"C","kind":"control","hosts":["daq05"]}]})",
                  QStringLiteral("/tmp/x/t.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    QCOMPARE(p.slaves.at(0).host, QStringLiteral("daq03"));
    QCOMPARE(p.slaves.at(0).hosts, (QStringList{QStringLiteral("daq03"), QStringLiteral("daq07")}));
    QVERIFY(p.slaves.at(0).migrate);
    QCOMPARE(p.slaves.at(0).lossIntervalMs, 2000);
    QCOMPARE(p.slaves.at(1).host, QStringLiteral("daq05"));
    QVERIFY(!p.slaves.at(1).migrate);
    QCOMPARE(p.slaves.at(1).lossIntervalMs, 5000);
}

namespace {
// A partition of slaves A..E with @p segments (the JSON of the "segments" list).
QByteArray treePartition(const QByteArray &segments)
{
    return R"({"name":"t","control_server":{},"master":{"name":"M"},"slaves":[
        {"name":"A","kind":"readout"},{"name":"B","kind":"control","removable":true,"recover":"auto"},
        {"name":"C","kind":"control"},{"name":"D","kind":"control"},{"name":"E","kind":"readout"}],
        "segments":)" +
           segments + "}";
}
} // namespace

void tst_Partition::treeOfSegments()
{
    Partition p;
    Status st;
    // Listed child before parent, and a configuration database's segment document beside them.
    QVERIFY2((st = Partition::parse(treePartition(R"(["segments/tracker",
                 {"name":"FE","slaves":["C","D"],"removable":true},
                 {"name":"DET","slaves":["B"],"segments":["FE"],"host":"localhost"}])"),
                                    QStringLiteral("/p/t.json"), &p))
                 .isOk(),
             qPrintable(st.message()));
    QCOMPARE(p.segments, QStringList{QStringLiteral("segments/tracker")});
    QCOMPARE(p.tree.size(), 2);
    QCOMPARE(p.tree.at(0).name, QStringLiteral("DET")); // parents first
    QCOMPARE(p.tree.at(1).name, QStringLiteral("FE"));
    QVERIFY(p.tree.at(1).controller.removable);
    QVERIFY(!p.tree.at(0).controller.removable);
    QVERIFY(p.slave(QStringLiteral("B"))->removable);
    QVERIFY(p.slave(QStringLiteral("B"))->autoRecover);
    QVERIFY(!p.slave(QStringLiteral("C"))->autoRecover);
    QCOMPARE(p.childrenOf(QStringLiteral("M")), (QStringList{"A", "E", "DET"}));
    QCOMPARE(p.childrenOf(QStringLiteral("DET")), (QStringList{"B", "FE"}));
    QCOMPARE(p.childrenOf(QStringLiteral("FE")), (QStringList{"C", "D"}));
    QCOMPARE(p.parentOf(QStringLiteral("C")), QStringLiteral("FE"));
    QCOMPARE(p.parentOf(QStringLiteral("FE")), QStringLiteral("DET"));
    QCOMPARE(p.parentOf(QStringLiteral("A")), QStringLiteral("M"));
    QVERIFY(p.node(QStringLiteral("FE")));
    QVERIFY(!p.node(QStringLiteral("M")));
    // The launcher starts the segment controllers after the master, parents first, then the slaves,
    // each slave taking requests from its own controller.
    QStringList order;
    for (const ProcessSpec &s : p.processes())
        order << s.name;
    QCOMPARE(order, (QStringList{"ControlServer", "M", "DET", "FE", "A", "B", "C", "D", "E"}));
    const QStringList fe = p.segment(QStringLiteral("FE"))->controller.arguments(p);
    QCOMPARE(p.segment(QStringLiteral("FE"))->controller.program(), QStringLiteral("dialog-master"));
    QCOMPARE(fe.mid(0, 4), (QStringList{"--config", "/p/t.json", "--segment", "FE"}));
    QVERIFY(!fe.contains(QStringLiteral("--configdb")));
    // With a configuration database, a segment controller reads its slaves' parameters from the
    // master's version.
    Partition withDb = p;
    withDb.configDb = QStringLiteral("configdb");
    withDb.configRef = QStringLiteral("physics-2026");
    const QStringList feDb = withDb.segment(QStringLiteral("FE"))->controller.arguments(withDb);
    QVERIFY2(feDb.join(QLatin1Char(' ')).contains(QLatin1String("--configdb configdb --config-ref physics-2026")),
             qPrintable(feDb.join(QLatin1Char(' '))));
    const QStringList c = p.slave(QStringLiteral("C"))->arguments(p);
    QCOMPARE(c.at(c.indexOf(QStringLiteral("--master")) + 1), QStringLiteral("FE"));
    const QStringList a = p.slave(QStringLiteral("A"))->arguments(p);
    QCOMPARE(a.at(a.indexOf(QStringLiteral("--master")) + 1), QStringLiteral("M"));
}

void tst_Partition::badTree_data()
{
    QTest::addColumn<QByteArray>("segments");
    QTest::addColumn<QString>("message");
    QTest::newRow("cycle") << QByteArray(R"([{"name":"S1","segments":["S2"]},{"name":"S2","segments":["S3"]},
                                             {"name":"S3","segments":["S1"]}])")
                           << "p.json: segments: cycle: S1 -> S2 -> S3 -> S1";
    QTest::newRow("self") << QByteArray(R"([{"name":"S1","segments":["S1"]}])")
                          << "p.json: segments: cycle: S1 -> S1";
    QTest::newRow("missing-slave") << QByteArray(R"([{"name":"S1","slaves":["A","Z"]}])")
                                   << "p.json: segments[0].slaves: segment 'S1' names slave 'Z', which the "
                                      "partition does not have";
    QTest::newRow("missing-segment") << QByteArray(R"([{"name":"S1","segments":["S9"]}])")
                                     << "p.json: segments[0].segments: segment 'S1' names segment 'S9'";
    QTest::newRow("two-parents") << QByteArray(
                                        R"([{"name":"S1","slaves":["A"]},{"name":"S2","slaves":["A"]}])")
                                 << "p.json: segments[1].slaves: 'A' is in segment 'S1' and in segment 'S2'";
    QTest::newRow("segment-twice") << QByteArray(R"([{"name":"S1","slaves":["A"]},{"name":"S1"}])")
                                   << "p.json: segments[1].name: 'S1' is used twice";
    QTest::newRow("segment-named-as-slave")
        << QByteArray(R"([{"name":"B","slaves":["A"]}])") << "p.json: name: 'B' is used twice";
    QTest::newRow("bad-recover") << QByteArray(R"([{"name":"S1","recover":"later"}])")
                                 << "p.json: segments[0].recover: 'later': expected \"manual\" or \"auto\"";
    QTest::newRow("not-an-object") << QByteArray(R"([3])")
                                   << "p.json: segments[0]: expected a document path (a string) or a segment";
    QTest::newRow("typo") << QByteArray(R"([{"name":"S1","slave":["A"]}])")
                          << "p.json: segments[0].slave: unknown field";
}

void tst_Partition::badTree()
{
    QFETCH(QByteArray, segments);
    QFETCH(QString, message);
    Partition p;
    const Status st = Partition::parse(treePartition(segments), QStringLiteral("/somewhere/p.json"), &p);
    QVERIFY(!st.isOk());
    QVERIFY2(st.message().startsWith(message), qPrintable(st.message()));
}

QTEST_GUILESS_MAIN(tst_Partition)
#include "tst_partition.moc"
