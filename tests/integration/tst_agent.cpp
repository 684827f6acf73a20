// dialog-agent with the real Control Server, dialog-logger, dialog-isserver and real dialog-slave
// processes: starts through the agent, a SIGSEGV's crash report with a backtrace (message log and
// `dialogctl crashes`) and without gdb, the restart policy, refusals of programs outside --allow and
// by the access list (audited), the grace time of a stop, argument vectors that never meet a
// shell, `dialogctl up`/`down` through the agent, the host figures in IS, a full disk for a log, an
// agent killed and started again adopting the processes it had (same PIDs, one copy, restarted once
// when killed).
#include "processfixture.h"

#include "dialog/is/dictionary.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QScopeGuard>
#include <QTemporaryDir>

#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>

using namespace dialog::test;

class tst_Agent : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<QTemporaryDir> m_dir;
    QProcess *m_agent = nullptr;
    const QString m_host = QStringLiteral("testhost");

    int ctl(const QStringList &args, QByteArray *out = nullptr, QByteArray *err = nullptr)
    {
        return m_fx->run(QStringLiteral("dialogctl"), args, out, err);
    }
    /// `dialogctl agent ls --json` of the agent of @p host (default the test's): its process entry @p name.
    QJsonObject agentProcess(const QString &name, const QString &host = {})
    {
        QByteArray out;
        if (ctl({QStringLiteral("agent"), QStringLiteral("ls"), host.isEmpty() ? m_host : host, QStringLiteral("--json")}, &out) != 0)
            return {};
        for (const QJsonValue &p : QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray())
            if (p.toObject().value(QStringLiteral("name")).toString() == name)
                return p.toObject();
        return {};
    }
    int startThrough(const QStringList &args, QByteArray *out = nullptr, QByteArray *err = nullptr)
    {
        return ctl(QStringList{QStringLiteral("agent"), QStringLiteral("start"), m_host} + args, out, err);
    }
    /// @p pid runs (a zombie, whose reaper may be slow to reap an orphan, does not).
    static bool alive(qint64 pid)
    {
        QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
        if (!f.open(QIODevice::ReadOnly))
            return false;
        const QByteArray stat = f.readAll();
        return stat.mid(stat.lastIndexOf(')') + 2, 1) != "Z";
    }
    /// Messages of the log in @p category (`dialogctl log search`).
    QList<QJsonObject> logged(const QString &category)
    {
        QByteArray out;
        ctl({QStringLiteral("log"), QStringLiteral("search"), QStringLiteral("--json"), QStringLiteral("--category"),
             category, QStringLiteral("--since"), QStringLiteral("1h")},
            &out);
        return jsonLines(out);
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_fx = std::make_unique<ProcessFixture>();
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_fx->startControlServer());
        m_fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("log"))});
        // Without --types: the agent declares its HostFigures type itself.
        m_fx->start(QStringLiteral("dialog-isserver"), {QStringLiteral("--name"), QStringLiteral("Farm"),
                                                         QStringLiteral("--threads"), QStringLiteral("1")});
        // The installed dialog-* programs beside the agent, and the two system programs the tests use.
        m_agent = m_fx->start(QStringLiteral("dialog-agent"),
                              {QStringLiteral("--host-name"), m_host, QStringLiteral("--data-dir"),
                               m_dir->filePath(QStringLiteral("agent")), QStringLiteral("--allow"), bin(QStringLiteral("dialog-*")),
                               QStringLiteral("--allow"), QStringLiteral("/usr/bin/sh"), QStringLiteral("--allow"),
                               QStringLiteral("/bin/sh"), QStringLiteral("--allow"), QStringLiteral("/usr/bin/echo"),
                               QStringLiteral("--allow"), QStringLiteral("/bin/echo"), QStringLiteral("--is-server"),
                               QStringLiteral("Farm"), QStringLiteral("--figures-interval"), QStringLiteral("300"),
                               QStringLiteral("--stop-children")});
        QVERIFY(waitUntil([&] { return !m_fx->processEntry(QStringLiteral("DIALOG.Agent.") + m_host).isEmpty(); },
                          15000 * SanitizerTimeScale, 100));
    }
    void cleanupTestCase() { m_fx.reset(); }

    void startedSlaveRegisters()
    {
        QByteArray out, err;
        QCOMPARE(startThrough({QStringLiteral("Slave1"), QStringLiteral("--restart"), QStringLiteral("on-failure"),
                               QStringLiteral("--"), QStringLiteral("dialog-slave"), QStringLiteral("--kind"),
                               QStringLiteral("control"), QStringLiteral("--name"), QStringLiteral("Slave1")},
                              &out, &err),
                 0);
        QVERIFY2(out.contains("Slave1 started on testhost"), out + err);
        QVERIFY(waitUntil([&] { return !m_fx->processEntry(QStringLiteral("Slave1")).isEmpty(); }, 15000 * SanitizerTimeScale, 100));
        const QJsonObject p = agentProcess(QStringLiteral("Slave1"));
        QCOMPARE(p.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        QCOMPARE(p.value(QStringLiteral("pid")).toInteger(), m_fx->processEntry(QStringLiteral("Slave1")).value(QStringLiteral("pid")).toInteger());
    }

    void segfaultGivesBacktraceAndRestart()
    {
        const qint64 pid = agentProcess(QStringLiteral("Slave1")).value(QStringLiteral("pid")).toInteger();
        QVERIFY(pid > 0);
        QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("signal"), m_host, QStringLiteral("Slave1"), QStringLiteral("SEGV")}), 0);
        // The crash report in the message log names a function of the crashed program (its main()).
        QJsonObject report;
        QVERIFY2(waitUntil(
                     [&] {
                         for (const QJsonObject &m : logged(QStringLiteral("dialog.agent.crash")))
                             if (m.value(QStringLiteral("text")).toString().contains(QStringLiteral("PID %1").arg(pid)))
                                 report = m;
                         return !report.isEmpty();
                     },
                     40000 * SanitizerTimeScale, 200),
                 "no crash report in the message log");
        const QString text = report.value(QStringLiteral("text")).toString();
        QVERIFY2(text.contains(QStringLiteral("SIGSEGV")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("testhost")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("in main (")) && text.contains(QStringLiteral("slave_main.cpp")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("last output:")) && text.contains(QStringLiteral("Slave1")), qPrintable(text));
        // … and in dialogctl crashes.
        QByteArray out;
        QCOMPARE(ctl({QStringLiteral("crashes"), QStringLiteral("--json"), QStringLiteral("--since"), QStringLiteral("1h")}, &out), 0);
        const QList<QJsonObject> crashes = jsonLines(out);
        QVERIFY2(!crashes.isEmpty(), out);
        const QJsonObject c = crashes.last();
        QCOMPARE(c.value(QStringLiteral("pid")).toInteger(), pid);
        QCOMPARE(c.value(QStringLiteral("signal_name")).toString(), QStringLiteral("SIGSEGV"));
        QVERIFY(c.value(QStringLiteral("backtrace")).toString().contains(QStringLiteral("slave_main.cpp")));
        // "restart": "on-failure" brought it back, registered again under its name with a new PID.
        QVERIFY(waitUntil(
            [&] {
                const QJsonObject e = m_fx->processEntry(QStringLiteral("Slave1"));
                return !e.isEmpty() && e.value(QStringLiteral("pid")).toInteger() != pid;
            },
            15000 * SanitizerTimeScale, 100));
        const QJsonObject p = agentProcess(QStringLiteral("Slave1"));
        QCOMPARE(p.value(QStringLiteral("restarts")).toInt(), 1);
        QCOMPARE(p.value(QStringLiteral("last_exit")).toObject().value(QStringLiteral("signal")).toInt(), 11);
        QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("stop"), m_host, QStringLiteral("Slave1")}), 0);
        QCOMPARE(agentProcess(QStringLiteral("Slave1")).value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
    }

    void programOutsideAllowRefused()
    {
        QByteArray out, err;
        QVERIFY(startThrough({QStringLiteral("Intruder"), QStringLiteral("--"), QStringLiteral("/usr/bin/true")}, &out, &err) != 0);
        QVERIFY2(err.contains("not allowed"), err);
        QVERIFY(agentProcess(QStringLiteral("Intruder")).isEmpty());
        // The refusal is in the audit trail.
        QVERIFY2(waitUntil(
                     [&] {
                         for (const QJsonObject &m : logged(QStringLiteral("dialog.audit")))
                             if (m.value(QStringLiteral("text")).toString().contains(QStringLiteral("DIALOG.Agent.testhost.start.Intruder")))
                                 return true;
                         return false;
                     },
                     15000 * SanitizerTimeScale, 200),
                 "the refusal is not audited");
    }

    void accessListDecidesWhoStartsWhat()
    {
        // A second agent, with an access list: nobody starts Denied* on it.
        const QString access = m_dir->filePath(QStringLiteral("access.json"));
        QFile f(access);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"default": "allow", "rules": [{"deny": "command", "name": "DIALOG.Agent.*.start.Denied*"}]})");
        f.close();
        m_fx->start(QStringLiteral("dialog-agent"), {QStringLiteral("--host-name"), QStringLiteral("lockedhost"),
                                                     QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("locked")),
                                                     QStringLiteral("--access"), access, QStringLiteral("--gdb"),
                                                     QStringLiteral("/nonexistent/gdb"), QStringLiteral("--stop-children")});
        QVERIFY(waitUntil([&] { return !m_fx->processEntry(QStringLiteral("DIALOG.Agent.lockedhost")).isEmpty(); },
                          15000 * SanitizerTimeScale, 100));
        QByteArray out, err;
        QVERIFY(ctl({QStringLiteral("agent"), QStringLiteral("start"), QStringLiteral("lockedhost"), QStringLiteral("DeniedOne"),
                     QStringLiteral("--"), QStringLiteral("dialog-slave"), QStringLiteral("--help")},
                    &out, &err) != 0);
        QVERIFY2(err.contains("permission denied") && err.contains("rules[0]"), err);
        QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("start"), QStringLiteral("lockedhost"), QStringLiteral("AllowedOne"),
                      QStringLiteral("--"), QStringLiteral("dialog-slave"), QStringLiteral("--help")}),
                 0);
        // Both decisions audited, with the rule that decided.
        QVERIFY2(waitUntil(
                     [&] {
                         int seen = 0;
                         for (const QJsonObject &m : logged(QStringLiteral("dialog.audit"))) {
                             const QString t = m.value(QStringLiteral("text")).toString();
                             seen += t.contains(QStringLiteral("DIALOG.Agent.lockedhost.start.DeniedOne")) && t.contains(QStringLiteral("rules[0]"));
                             seen += t.contains(QStringLiteral("DIALOG.Agent.lockedhost.start.AllowedOne"));
                         }
                         return seen >= 2;
                     },
                     15000 * SanitizerTimeScale, 200),
                 "the decisions are not audited");
    }

    void withoutGdbReportSaysSo()
    {
        // lockedhost's agent has no gdb: the report still names the signal and the last output.
        QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("start"), QStringLiteral("lockedhost"), QStringLiteral("NoGdb"),
                      QStringLiteral("--"), QStringLiteral("dialog-slave"), QStringLiteral("--kind"), QStringLiteral("control"),
                      QStringLiteral("--name"), QStringLiteral("NoGdb")}),
                 0);
        QVERIFY(waitUntil([&] { return !m_fx->processEntry(QStringLiteral("NoGdb")).isEmpty(); }, 15000 * SanitizerTimeScale, 100));
        QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("signal"), QStringLiteral("lockedhost"), QStringLiteral("NoGdb"),
                      QStringLiteral("SIGSEGV")}),
                 0);
        QJsonObject crash;
        QVERIFY(waitUntil(
            [&] {
                QByteArray out;
                ctl({QStringLiteral("crashes"), QStringLiteral("--host"), QStringLiteral("lockedhost"), QStringLiteral("--json")}, &out);
                const QList<QJsonObject> c = jsonLines(out);
                crash = c.isEmpty() ? QJsonObject() : c.last();
                return !crash.isEmpty();
            },
            30000 * SanitizerTimeScale, 200));
        QCOMPARE(crash.value(QStringLiteral("signal_name")).toString(), QStringLiteral("SIGSEGV"));
        QVERIFY2(crash.value(QStringLiteral("no_backtrace")).toString().contains(QStringLiteral("/nonexistent/gdb not found")),
                 qPrintable(crash.value(QStringLiteral("no_backtrace")).toString()));
        QVERIFY(crash.value(QStringLiteral("last_output")).toString().contains(QStringLiteral("NoGdb")));
        QVERIFY(crash.value(QStringLiteral("backtrace")).toString().isEmpty());
    }

    void sigtermIgnoredKilledAfterGrace()
    {
        // SIG_IGN survives exec: sleep ignores SIGTERM.
        QCOMPARE(startThrough({QStringLiteral("Stubborn"), QStringLiteral("--grace-ms"), QStringLiteral("300"),
                               QStringLiteral("--"), QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                               QStringLiteral("trap '' TERM; exec sleep 600")}),
                 0);
        QByteArray out;
        QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("stop"), m_host, QStringLiteral("Stubborn"), QStringLiteral("--json")}, &out), 0);
        const QJsonObject exit = QJsonDocument::fromJson(out).object().value(QStringLiteral("last_exit")).toObject();
        QCOMPARE(exit.value(QStringLiteral("signal")).toInt(), 9);
        QVERIFY(exit.value(QStringLiteral("requested")).toBool());
    }

    void shellMetacharactersPassedLiterally()
    {
        const QString marker = m_dir->filePath(QStringLiteral("touched"));
        const QStringList args{QStringLiteral("a; touch ") + marker, QStringLiteral("$(touch ") + marker + QLatin1Char(')'),
                               QStringLiteral("`touch ") + marker + QLatin1Char('`'), QStringLiteral("| >x &&")};
        QCOMPARE(startThrough(QStringList{QStringLiteral("Echo"), QStringLiteral("--"), QStringLiteral("/bin/echo")} + args), 0);
        const QString log = m_dir->filePath(QStringLiteral("agent/Echo/output.log"));
        QVERIFY(waitUntil([&] { return agentProcess(QStringLiteral("Echo")).value(QStringLiteral("state")) == QLatin1String("exited"); },
                          15000 * SanitizerTimeScale, 50));
        QFile f(log);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY2(f.readAll().contains('\n' + args.join(QLatin1Char(' ')).toUtf8() + '\n'), qPrintable(log)); // its own line, not the banner
        QVERIFY(!QFile::exists(marker));
        QVERIFY(!QFile::exists(m_dir->filePath(QStringLiteral("agent/Echo/x"))));
    }

    void upAndDownThroughAgent()
    {
        // A partition on the agent's host: dialogctl up starts it through the agent, no ssh at all
        // (the ssh command given does not exist).
        const QJsonObject partition{
            {QStringLiteral("name"), QStringLiteral("viaagent")},
            {QStringLiteral("control_server"), QJsonObject{{QStringLiteral("host"), QStringLiteral("127.0.0.1")},
                                                           {QStringLiteral("port"), m_fx->port()},
                                                           {QStringLiteral("start"), false}}},
            {QStringLiteral("ssh_command"), QJsonArray{QStringLiteral("/nonexistent/ssh")}},
            {QStringLiteral("bin_dir"), QStringLiteral(DIALOG_BIN_DIR)},
            {QStringLiteral("master"), QJsonObject{{QStringLiteral("name"), QStringLiteral("UpMaster")},
                                                   {QStringLiteral("host"), m_host},
                                                   {QStringLiteral("args"), QJsonArray{QStringLiteral("--no-is")}}}},
            {QStringLiteral("slaves"),
             QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("UpSlave")},
                                    {QStringLiteral("kind"), QStringLiteral("control")},
                                    {QStringLiteral("host"), m_host},
                                    {QStringLiteral("args"), QJsonArray{QStringLiteral("--no-is")}}}}}};
        const QString file = m_dir->filePath(QStringLiteral("viaagent.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(partition).toJson());
        f.close();
        const QString runDir = m_dir->filePath(QStringLiteral("run"));
        QByteArray out, err;
        QCOMPARE(ctl({QStringLiteral("up"), file, QStringLiteral("--run-dir"), runDir}, &out, &err), 0);
        QVERIFY2(!m_fx->processEntry(QStringLiteral("UpSlave")).isEmpty(), out + err);
        QCOMPARE(agentProcess(QStringLiteral("UpSlave")).value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        QCOMPARE(agentProcess(QStringLiteral("UpMaster")).value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        QCOMPARE(ctl({QStringLiteral("down"), file, QStringLiteral("--run-dir"), runDir}, &out, &err), 0);
        QCOMPARE(agentProcess(QStringLiteral("UpSlave")).value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
        QCOMPARE(agentProcess(QStringLiteral("UpMaster")).value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
    }

    void hostFiguresInIs()
    {
        dialog::Client client(m_fx->clientOptions(QStringLiteral("tst_agent-is")));
        QVERIFY(client.start());
        dialog::is::Dictionary dict(&client);
        dialog::is::Entry e;
        QVERIFY(waitUntil([&] { return dict.fetchTypesSync(QStringLiteral("Farm")).isOk() &&
                                       dict.getSync(QStringLiteral("Farm.Hosts.testhost"), &e).isOk(); },
                          15000 * SanitizerTimeScale, 100));
        const dialog::is::Object &o = e.object;
        QCOMPARE(e.typeName, QStringLiteral("HostFigures"));
        QCOMPARE(e.staleness.expectedIntervalS, 15.0); // a dead agent's figures show as stale
        QCOMPARE(o.get<QString>(QStringLiteral("host")), QStringLiteral("testhost"));
        QVERIFY(o.get<quint64>(QStringLiteral("memoryTotalBytes")) > 0);
        QVERIFY(o.get<quint64>(QStringLiteral("diskTotalBytes")) > 0);
        QVERIFY(o.get<quint32>(QStringLiteral("managedProcesses")) >= 1); // those of the tests before
        QVERIFY(!o.get<QString>(QStringLiteral("agentVersion")).isEmpty());
    }

    void fullDiskReportedNotFatal()
    {
        // The process's directory on a small file system that its output fills.
        const QString dir = m_dir->filePath(QStringLiteral("agent/Filler"));
        QVERIFY(QDir().mkpath(dir));
        if (!ProcessFixture::mountTmpfs(dir, QStringLiteral("64k")))
            QSKIP("cannot mount a tmpfs here (not root, or no capability)");
        auto unmount = qScopeGuard([&] { QProcess::execute(QStringLiteral("umount"), {QStringLiteral("-l"), dir}); });
        QCOMPARE(startThrough({QStringLiteral("Filler"), QStringLiteral("--"), QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                               QStringLiteral("head -c 300000 /dev/zero | tr '\\0' x; echo; echo still-here; exec sleep 600")}),
                 0);
        QVERIFY2(waitUntil(
                     [&] {
                         for (const QJsonObject &m : logged(QStringLiteral("dialog.agent.processes")))
                             if (m.value(QStringLiteral("text")).toString().contains(QStringLiteral("log of Filler")))
                                 return true;
                         return false;
                     },
                     15000 * SanitizerTimeScale, 200),
                 "the full disk is not reported");
        const QJsonObject p = agentProcess(QStringLiteral("Filler")); // the agent still answers
        QCOMPARE(p.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        QVERIFY(p.contains(QStringLiteral("log_broken_since")));
        QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("stop"), m_host, QStringLiteral("Filler")}), 0);
    }
    void standbyTakesOverWhenHostAndProcessAreGone()
    {
        // A fallback of a host "ghost" that has no agent (a lost host): once the process and the
        // agent of ghost are gone from the directory for --loss-ms, this agent starts it.
        QByteArray out, err;
        QCOMPARE(startThrough({QStringLiteral("Moved"), QStringLiteral("--hosts"), QStringLiteral("ghost"), QStringLiteral("--hosts"),
                               m_host, QStringLiteral("--loss-ms"), QStringLiteral("500"), QStringLiteral("--standby"),
                               QStringLiteral("--"), QStringLiteral("dialog-slave"), QStringLiteral("--kind"),
                               QStringLiteral("control"), QStringLiteral("--name"), QStringLiteral("Moved")},
                              &out, &err),
                 0);
        QVERIFY2(out.contains("Moved standing by on testhost"), out + err);
        QVERIFY(waitUntil([&] { return !m_fx->processEntry(QStringLiteral("Moved")).isEmpty(); }, 15000 * SanitizerTimeScale, 100));
        const QJsonObject p = agentProcess(QStringLiteral("Moved"));
        QCOMPARE(p.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        QCOMPARE(p.value(QStringLiteral("hosts")).toArray().size(), 2);
        QVERIFY2(waitUntil(
                     [&] {
                         for (const QJsonObject &m : logged(QStringLiteral("dialog.agent.processes")))
                             if (m.value(QStringLiteral("text")).toString().contains(QStringLiteral("the agents of ghost")))
                                 return true;
                         return false;
                     },
                     15000 * SanitizerTimeScale, 200),
                 "the takeover is not in the message log");
        // --standby without --hosts is refused before anything is asked.
        QVERIFY(startThrough({QStringLiteral("Lonely"), QStringLiteral("--standby"), QStringLiteral("--"),
                              QStringLiteral("/bin/echo")},
                             &out, &err) != 0);
        QVERIFY2(err.contains("--standby needs --hosts"), err);
        QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("stop"), m_host, QStringLiteral("Moved")}), 0);
        QCOMPARE(agentProcess(QStringLiteral("Moved")).value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
    }

    void restartedAgentAdoptsItsProcesses()
    {
        // An agent of its own, killed with SIGKILL: its processes run on, and the agent started
        // again on the same data directory adopts them (same PIDs) and starts no second copy.
        // The processes the killed agent leaves become the test's (not an init that may never reap
        // them): reaped below once they ended.
        QCOMPARE(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
        auto noSubreaper = qScopeGuard([] { ::prctl(PR_SET_CHILD_SUBREAPER, 0); });
        const QString host = QStringLiteral("adopthost");
        const QStringList args{QStringLiteral("--host-name"), host, QStringLiteral("--data-dir"),
                               m_dir->filePath(QStringLiteral("adopt")), QStringLiteral("--stop-children")};
        const QString service = QStringLiteral("DIALOG.Agent.") + host;
        QProcess *agent = m_fx->start(QStringLiteral("dialog-agent"), args);
        QVERIFY(waitUntil([&] { return !m_fx->processEntry(service).isEmpty(); }, 15000 * SanitizerTimeScale, 100));
        QHash<QString, qint64> pids;
        for (const QString name : {QStringLiteral("Adopt1"), QStringLiteral("Adopt2")}) {
            QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("start"), host, name, QStringLiteral("--restart"),
                          QStringLiteral("on-failure"), QStringLiteral("--"), QStringLiteral("dialog-slave"),
                          QStringLiteral("--kind"), QStringLiteral("control"), QStringLiteral("--name"), name}),
                     0);
            QVERIFY(waitUntil([&] { return !m_fx->processEntry(name).isEmpty(); }, 15000 * SanitizerTimeScale, 100));
            pids[name] = agentProcess(name, host).value(QStringLiteral("pid")).toInteger();
            QVERIFY(pids[name] > 0);
        }
        agent->kill();
        QVERIFY(agent->waitForFinished(10000));
        QVERIFY(waitUntil([&] { return m_fx->processEntry(service).isEmpty(); }, 15000 * SanitizerTimeScale, 100));
        for (auto it = pids.cbegin(); it != pids.cend(); ++it) {
            QVERIFY(alive(it.value())); // without their agent
            QCOMPARE(m_fx->processEntry(it.key()).value(QStringLiteral("pid")).toInteger(), it.value());
        }
        m_fx->start(QStringLiteral("dialog-agent"), args);
        QVERIFY(waitUntil([&] { return !m_fx->processEntry(service).isEmpty(); }, 15000 * SanitizerTimeScale, 100));
        for (auto it = pids.cbegin(); it != pids.cend(); ++it) {
            const QJsonObject p = agentProcess(it.key(), host);
            QCOMPARE(p.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
            QCOMPARE(p.value(QStringLiteral("pid")).toInteger(), it.value());
            QVERIFY(p.value(QStringLiteral("adopted")).toBool());
            QCOMPARE(m_fx->processEntry(it.key()).value(QStringLiteral("pid")).toInteger(), it.value());
        }
        // A second agent on the same data directory is refused at once.
        QByteArray out, err;
        QVERIFY(m_fx->run(QStringLiteral("dialog-agent"), args, &out, &err) != 0);
        QVERIFY2(err.contains("uses the data directory"), err);
        // The adopted Adopt1 killed: its end is seen through its pidfd, and its policy starts it once.
        QCOMPARE(::kill(pid_t(pids[QStringLiteral("Adopt1")]), SIGKILL), 0);
        QJsonObject p;
        QVERIFY(waitUntil(
            [&] {
                p = agentProcess(QStringLiteral("Adopt1"), host);
                return p.value(QStringLiteral("state")) == QLatin1String("running") &&
                       p.value(QStringLiteral("pid")).toInteger() != pids[QStringLiteral("Adopt1")];
            },
            15000 * SanitizerTimeScale, 100));
        QCOMPARE(p.value(QStringLiteral("restarts")).toInt(), 1);
        QVERIFY(!p.value(QStringLiteral("adopted")).toBool());
        QVERIFY(p.value(QStringLiteral("last_exit")).toObject().value(QStringLiteral("status_unknown")).toBool());
        const qint64 newPid = p.value(QStringLiteral("pid")).toInteger();
        QVERIFY(waitUntil([&] { return m_fx->processEntry(QStringLiteral("Adopt1")).value(QStringLiteral("pid")).toInteger() == newPid; },
                          15000 * SanitizerTimeScale, 100));
        QCOMPARE(agentProcess(QStringLiteral("Adopt2"), host).value(QStringLiteral("pid")).toInteger(), pids[QStringLiteral("Adopt2")]);
        // The adopted Adopt2 crashes: its exit status is not the agent's to see, its core is, and
        // the crash report takes the signal from it.
        QCOMPARE(::kill(pid_t(pids[QStringLiteral("Adopt2")]), SIGSEGV), 0);
        QJsonObject crash;
        QVERIFY(waitUntil(
            [&] {
                QByteArray out;
                ctl({QStringLiteral("crashes"), QStringLiteral("--host"), host, QStringLiteral("--json")}, &out);
                for (const QJsonObject &c : jsonLines(out))
                    if (c.value(QStringLiteral("pid")).toInteger() == pids[QStringLiteral("Adopt2")])
                        crash = c;
                return !crash.isEmpty();
            },
            40000 * SanitizerTimeScale, 200));
        QCOMPARE(crash.value(QStringLiteral("signal_name")).toString(), QStringLiteral("SIGSEGV"));
        QVERIFY2(crash.value(QStringLiteral("backtrace")).toString().contains(QStringLiteral("slave_main.cpp")),
                 qPrintable(crash.value(QStringLiteral("no_backtrace")).toString()));
        QVERIFY(waitUntil([&] { return agentProcess(QStringLiteral("Adopt2"), host).value(QStringLiteral("restarts")).toInt() == 1; },
                          15000 * SanitizerTimeScale, 100));
        // Stopped through the agent.
        for (const QString name : {QStringLiteral("Adopt1"), QStringLiteral("Adopt2")})
            QCOMPARE(ctl({QStringLiteral("agent"), QStringLiteral("stop"), host, name}), 0);
        QCOMPARE(agentProcess(QStringLiteral("Adopt2"), host).value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
        for (const qint64 pid : std::as_const(pids))
            QCOMPARE(::waitpid(pid_t(pid), nullptr, 0), pid_t(pid)); // ended: reaped at once
    }
};

QTEST_GUILESS_MAIN(tst_Agent)
#include "tst_agent.moc"
