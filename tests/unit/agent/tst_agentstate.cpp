// The agent's system layer and state file without a Control Server: spawn() with its exit status
// through a pidfd, a failed execve, the /proc start time that tells a process again, and the state
// file read back as written (bad records skipped and named).
#include "agentstate.h"
#include "spawn.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cerrno>
#include <csignal>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace dialog::agent;

class tst_AgentState : public QObject
{
    Q_OBJECT

private:
    /// Waits (bounded) until @p pidfd says its process ended.
    static bool ended(int pidfd)
    {
        pollfd p{pidfd, POLLIN, 0};
        return ::poll(&p, 1, 10000) == 1;
    }

private Q_SLOTS:
    void spawnedProcessEndsWithItsStatus()
    {
        QTemporaryDir dir;
        Spawned s;
        QString error;
        QVERIFY2(spawn({QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("echo out; echo err >&2; exit 3")},
                        {QStringLiteral("PATH=/usr/bin:/bin")}, dir.path(), -1, 0},
                       &s, &error),
                 qPrintable(error));
        QVERIFY(s.pid > 0 && s.pidfd >= 0);
        QVERIFY(ended(s.pidfd));
        QCOMPARE(takeExecError(s.execErrorFd), 0);
        const WaitResult w = reapPidfd(s.pidfd);
        QVERIFY(w.known);
        QVERIFY(!w.signaled);
        QCOMPARE(w.code, 3);
        ::close(s.pidfd);
    }

    void outputGoesToTheLogItself()
    {
        QTemporaryDir dir;
        QFile log(dir.filePath(QStringLiteral("output.log")));
        QVERIFY(log.open(QIODevice::WriteOnly | QIODevice::Append));
        Spawned s;
        QString error;
        QVERIFY(spawn({QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("echo out; echo err >&2; pwd")},
                       {}, dir.path(), log.handle(), 0},
                      &s, &error));
        QVERIFY(ended(s.pidfd));
        reapPidfd(s.pidfd);
        ::close(s.pidfd);
        takeExecError(s.execErrorFd);
        log.close();
        QVERIFY(log.open(QIODevice::ReadOnly));
        QCOMPARE(log.readAll(), QByteArray("out\nerr\n") + QFile::encodeName(QDir(dir.path()).canonicalPath()) + '\n');
    }

    void failedExecIsReportedWithItsErrno()
    {
        QTemporaryDir dir;
        Spawned s;
        QString error;
        QVERIFY(spawn({QStringLiteral("/nonexistent/program"), {}, {}, dir.path(), -1, 0}, &s, &error));
        QVERIFY(ended(s.pidfd));
        QCOMPARE(takeExecError(s.execErrorFd), ENOENT);
        QCOMPARE(reapPidfd(s.pidfd).code, 127);
        ::close(s.pidfd);
    }

    void signalThroughPidfdAndStartTime()
    {
        QTemporaryDir dir;
        Spawned s;
        QString error;
        QVERIFY(spawn({QStringLiteral("/bin/sleep"), {QStringLiteral("600")}, {}, dir.path(), -1, 0}, &s, &error));
        const quint64 start = processStartTime(s.pid);
        QVERIFY(start > 0);
        QCOMPARE(processStartTime(s.pid), start); // the same process, the same start time
        QVERIFY(processStartTime(::getpid()) > 0);
        QVERIFY(signalPidfd(s.pidfd, SIGKILL));
        QVERIFY(ended(s.pidfd));
        const WaitResult w = reapPidfd(s.pidfd);
        QVERIFY(w.known && w.signaled);
        QCOMPARE(w.code, SIGKILL);
        QCOMPARE(processStartTime(s.pid), quint64(0)); // reaped: no such process
        QVERIFY(!signalPidfd(s.pidfd, SIGTERM));   // never reaches a process that took the PID
        ::close(s.pidfd);
        takeExecError(s.execErrorFd);
    }

    void stateFileReadBackAsWritten()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral(".agent-state.json"));
        QList<ProcessRecord> none;
        QStringList problems;
        QVERIFY(readAgentState(path, &none, &problems).isOk()); // no file: nothing to adopt
        QVERIFY(none.isEmpty());
        ProcessRecord r;
        r.spec.name = QStringLiteral("RO1");
        r.spec.program = QStringLiteral("/usr/bin/dialog-slave");
        r.spec.arguments = {QStringLiteral("--name"), QStringLiteral("RO1"), QStringLiteral("a; b")};
        r.spec.environment = {QStringLiteral("DIALOG_PROCESS_KEY_FILE=/run/key")};
        r.spec.graceMs = 700;
        r.spec.hosts = {QStringLiteral("daq03"), QStringLiteral("daq07")};
        r.spec.lossMs = 1500;
        r.policy.mode = RestartPolicy::Mode::OnFailure;
        r.restarts = 2;
        r.state = QStringLiteral("running");
        r.pid = 4711;
        r.startTime = 18446744073709551000ull; // beyond a double's exact integers
        r.startedMs = 1764680000000;
        QVERIFY(writeAgentState(path, {r}).isOk());
        QCOMPARE(QFileInfo(path).permissions() & (QFileDevice::ReadOther | QFileDevice::ReadGroup), QFileDevice::Permissions());
        QList<ProcessRecord> back;
        QVERIFY(readAgentState(path, &back, &problems).isOk());
        QCOMPARE(back.size(), 1);
        const ProcessRecord &b = back.first();
        QCOMPARE(b.spec.name, r.spec.name);
        QCOMPARE(b.spec.arguments, r.spec.arguments);
        QCOMPARE(b.spec.environment, r.spec.environment);
        QCOMPARE(b.spec.graceMs, 700);
        QCOMPARE(b.spec.hosts, r.spec.hosts);
        QCOMPARE(b.spec.lossMs, 1500);
        QCOMPARE(b.policy.mode, RestartPolicy::Mode::OnFailure);
        QCOMPARE(b.restarts, 2);
        QCOMPARE(b.pid, 4711);
        QCOMPARE(b.startTime, r.startTime);
        QCOMPARE(b.startedMs, r.startedMs);

        // A record without a program is skipped and named; another version is refused whole.
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(R"({"version":1,"processes":[{"name":"X"},{"name":"Y","program":"/bin/true","restart":"sometimes"},
                   {"name":"Z","program":"/bin/true"}]})");
        f.close();
        back.clear();
        QVERIFY(readAgentState(path, &back, &problems).isOk());
        QCOMPARE(back.size(), 1);
        QCOMPARE(back.first().spec.name, QStringLiteral("Z"));
        QCOMPARE(problems.size(), 2);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(R"({"version":9,"processes":[]})");
        f.close();
        const dialog::Status st = readAgentState(path, &back, &problems);
        QVERIFY(!st.isOk());
        QVERIFY2(st.message().contains(QStringLiteral("version 9")), qPrintable(st.message()));
    }
};

QTEST_GUILESS_MAIN(tst_AgentState)
#include "tst_agentstate.moc"
