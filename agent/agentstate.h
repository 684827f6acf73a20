// The agent's state file: what a restarted agent needs to adopt the processes of the one before
// (each one's spec, restart policy, state, PID and /proc start time), rewritten atomically.
#pragma once

#include "managedprocess.h"
#include "restartpolicy.h"

#include "dialog/status.h"

#include <QJsonArray>
#include <QList>

namespace dialog::agent {

/// One process as the state file keeps it.
struct ProcessRecord
{
    ProcessSpec spec;
    RestartPolicy policy;
    int restarts = 0;
    QString state;        ///< running, stopping, restarting, stopped, exited, failed
    qint64 pid = 0;       ///< 0: not running
    quint64 startTime = 0; ///< /proc/PID/stat field 22
    qint64 startedMs = 0;
    QJsonObject lastExit;

    QJsonObject toJson() const;
    static Status fromJson(const QJsonObject &o, ProcessRecord *out);
};

/// Writes @p records to @p path (mode 0600: the environment may name key files) through a
/// temporary file renamed over it.
Status writeAgentState(const QString &path, const QList<ProcessRecord> &records);
/// Reads @p path; a missing file is no records. A record that cannot be read is skipped and named
/// in @p problems.
Status readAgentState(const QString &path, QList<ProcessRecord> *records, QStringList *problems);

} // namespace dialog::agent
