// The system side of a managed process: fork and execve without a shell (its own session, its
// output appended to its log file by itself, RLIMIT_CORE set), a pidfd to learn of its end whether
// or not it is the agent's child, and its start time in /proc to know it again after a restart of
// the agent.
#pragma once

#include <QString>
#include <QStringList>

namespace dialog::agent {

/// What spawn() needs; every string is converted before the fork.
struct SpawnRequest
{
    QString program;         ///< absolute path
    QStringList arguments;   ///< argv[1…]
    QStringList environment; ///< the complete environment, "NAME=VALUE"
    QString directory;       ///< its working directory
    int outputFd = -1;       ///< its stdout and stderr (-1: /dev/null)
    qint64 coreLimitBytes = 0;
};

/// A started process: its PID, a pidfd on it, and the read end of the pipe through which the
/// child reports a failed execve (closed by a successful one).
struct Spawned
{
    qint64 pid = 0;
    int pidfd = -1;
    int execErrorFd = -1;
};

/// Forks and execs @p request. False with @p error when it cannot fork (nothing runs then).
bool spawn(const SpawnRequest &request, Spawned *out, QString *error);
/// The errno the child reported for its execve, read from @p fd without waiting (0: none, the
/// exec succeeded or the answer is not there yet). Closes @p fd.
int takeExecError(int fd);
/// A pidfd on @p pid (-1 with errno).
int openPidfd(qint64 pid);
/// Signal through a pidfd: never reaches a process that took the PID over.
bool signalPidfd(int pidfd, int signal);
/// The start time of @p pid in clock ticks since boot (/proc/PID/stat field 22; 0: no such process).
quint64 processStartTime(qint64 pid);

/// How a process that ended is known to have ended.
struct WaitResult
{
    bool known = false;  ///< false: not the agent's child (adopted), its status went to its new parent
    bool signaled = false;
    int code = 0;        ///< exit code, or signal number when signaled
};
/// Reaps the ended process behind @p pidfd when it is the agent's child.
WaitResult reapPidfd(int pidfd);

} // namespace dialog::agent
