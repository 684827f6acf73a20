// The run registry of dialog-configdb: run numbers allocated atomically (one sequence for every
// partition sharing the database) and, per run, what it ran with and how it ended.
#pragma once

#include "configdatabase.h"

#include <QJsonObject>

namespace dialog::configdb {

/// Used in one thread (the one its database connection was opened in). Runs are JSON objects on
/// the wire: number, partition, run_type, config_version, config_tag, operator, master, processes
/// (an array of {name, host, pid, version}), start_time, end_time, events, bytes, end_reason
/// ("normal", "error", "master lost"; absent while the run goes on), end_message, messages (the
/// warnings and errors by process and severity, as the message log had them at the end), out (the
/// nodes of the run-control tree out of the run: {node, segment, out "disabled" or "removed",
/// reason, time_ms, recovered_ms when a removed node came back}; absent when nothing was out).
class RunRegistry
{
public:
    explicit RunRegistry(ConfigDatabase *db) : m_db(db) {}

    /// Records a new run from @p run (partition, run_type, config_version, config_tag, operator,
    /// master, processes, out: what is out at its start) and gives it the next number. The
    /// partition's runs that never ended are ended first as "master lost": a master that allocates
    /// a number has not taken them over.
    Status start(const QJsonObject &run, QJsonObject *out);
    /// Ends run @p number: @p reason "normal" or "error" (with @p message), the events and bytes,
    /// @p messages, the warnings and errors of the run by process ({"FE1": {"warning": 2}}), and
    /// @p outOfRun, what was out of the run (an array replaces the start's list; undefined keeps it).
    /// NotFound for an unknown run; AlreadyExists for one that has ended.
    Status end(qint64 number, const QString &reason, const QString &message, qint64 events, qint64 bytes,
               const QJsonObject &messages, const QJsonValue &outOfRun, QJsonObject *out);
    /// The run numbered @p number.
    Status show(qint64 number, QJsonObject *out);
    /// The newest runs first: started at or after @p sinceMs, of @p runType and @p partition when
    /// not empty, at most @p limit, numbered below @p before when not 0.
    Status list(qint64 sinceMs, const QString &runType, const QString &partition, int limit, qint64 before,
                QList<QJsonObject> *out);

private:
    Status lostMaster(const QString &partition, qint64 nowMs);

    ConfigDatabase *m_db;
};

} // namespace dialog::configdb
