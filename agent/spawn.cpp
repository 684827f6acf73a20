#include "spawn.h"

#include <QFile>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace dialog::agent {

namespace {
constexpr int PidfdIdType = 3; // P_PIDFD of <linux/wait.h>, not in every libc's idtype_t

std::vector<char *> pointers(std::vector<QByteArray> &strings)
{
    std::vector<char *> p;
    p.reserve(strings.size() + 1);
    for (QByteArray &s : strings)
        p.push_back(s.data());
    p.push_back(nullptr);
    return p;
}
} // namespace

bool spawn(const SpawnRequest &r, Spawned *out, QString *error)
{
    // Everything the child needs, made before the fork: after it only async-signal-safe calls.
    std::vector<QByteArray> argv{QFile::encodeName(r.program)}, envp;
    for (const QString &a : r.arguments)
        argv.push_back(a.toLocal8Bit());
    for (const QString &e : r.environment)
        envp.push_back(e.toLocal8Bit());
    std::vector<char *> argp = pointers(argv), envpp = pointers(envp);
    const QByteArray dir = QFile::encodeName(r.directory);
    const int outputFd = r.outputFd;
    const rlim_t coreLimit = rlim_t(qMax<qint64>(0, r.coreLimitBytes));
    int errPipe[2];
    if (::pipe2(errPipe, O_CLOEXEC) != 0)
        return *error = QStringLiteral("pipe: %1").arg(QString::fromLocal8Bit(std::strerror(errno))), false;
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int e = errno;
        ::close(errPipe[0]);
        ::close(errPipe[1]);
        return *error = QStringLiteral("fork: %1").arg(QString::fromLocal8Bit(std::strerror(e))), false;
    }
    if (pid == 0) {
        // Its own session and process group: a stop reaches what it starts, a terminal's hang-up
        // and the agent's end do not.
        ::setsid();
        struct rlimit rl {};
        if (::getrlimit(RLIMIT_CORE, &rl) == 0) {
            rl.rlim_cur = (rl.rlim_max != RLIM_INFINITY && coreLimit > rl.rlim_max) ? rl.rlim_max : coreLimit;
            ::setrlimit(RLIMIT_CORE, &rl);
        }
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int s = 1; s < NSIG; ++s)
            ::sigaction(s, &dfl, nullptr);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        const int nul = ::open("/dev/null", O_RDWR);
        ::dup2(nul, 0);
        ::dup2(outputFd >= 0 ? outputFd : nul, 1);
        ::dup2(outputFd >= 0 ? outputFd : nul, 2);
        // Nothing of the agent's (sockets, other logs) goes on into the program.
        ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
        int e = 0;
        if (::chdir(dir.constData()) != 0)
            e = errno;
        else {
            ::execve(argp[0], argp.data(), envpp.data());
            e = errno;
        }
        [[maybe_unused]] const ssize_t n = ::write(errPipe[1], &e, sizeof e);
        ::_exit(127);
    }
    ::close(errPipe[1]);
    out->pid = pid;
    out->pidfd = openPidfd(pid); // its child: the PID cannot go to another process before it is reaped
    out->execErrorFd = errPipe[0];
    if (out->pidfd < 0) {
        const int e = errno;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        ::close(errPipe[0]);
        return *error = QStringLiteral("pidfd_open: %1").arg(QString::fromLocal8Bit(std::strerror(e))), false;
    }
    return true;
}

int takeExecError(int fd)
{
    if (fd < 0)
        return 0;
    int e = 0;
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    const ssize_t n = ::read(fd, &e, sizeof e);
    ::close(fd);
    return n == ssize_t(sizeof e) ? e : 0;
}

int openPidfd(qint64 pid)
{
    return int(::syscall(SYS_pidfd_open, pid_t(pid), 0u));
}

bool signalPidfd(int pidfd, int signal)
{
    return ::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0u) == 0;
}

quint64 processStartTime(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray stat = f.readAll();
    // "PID (comm) state …": comm may hold spaces and parentheses; the fields go on after the last ')'.
    const qsizetype close = stat.lastIndexOf(')');
    if (close < 0)
        return 0;
    const QList<QByteArray> fields = stat.mid(close + 2).split(' ');
    return fields.size() > 19 ? fields.at(19).toULongLong() : 0; // field 22, the 20th after comm
}

WaitResult reapPidfd(int pidfd)
{
    WaitResult r;
    siginfo_t info {};
    if (::waitid(idtype_t(PidfdIdType), id_t(pidfd), &info, WEXITED | WNOHANG) != 0 || info.si_pid == 0)
        return r;
    r.known = true;
    r.signaled = info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
    r.code = info.si_status;
    return r;
}

} // namespace dialog::agent
