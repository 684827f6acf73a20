// What the master keeps on disk about the current run, so that a master restarted mid-run takes it
// over with its number, start time and data-taking time.
#pragma once

#include <QHash>
#include <QString>
#include <QStringList>
#include <QtGlobal>

namespace dialog::daq {

/// The run-number file: one field per line, replaced atomically, so a reader sees either the old
/// record or the new one whole. A file of an older layout (the number alone, or the number and the
/// start time) reads with the missing fields 0 (and no node disabled or taken).
struct RunRecord
{
    quint32 number = 0;        ///< of the current (or last) run
    qint64 startMs = 0;        ///< when that run started, ms since the epoch; 0 if unknown
    qint64 activeMsBefore = 0; ///< data-taking time up to runningSinceMs, pauses excluded
    qint64 runningSinceMs =
        0; ///< when data taking last (re)started, ms since the epoch; 0 if it is not running
    /// The controller's children left out of the run (`dialogctl rc disable`): a restarted
    /// controller keeps them out. Written as one line of names separated by spaces.
    QStringList disabled;
    /// Who took which of those children (`dialogctl rc take`): a restarted controller keeps them
    /// taken. Written as one line of JSON, {"CAL": {"owner": "alice@cr-03", "since_ms": 1764…,
    /// "run": 12}} (run: the owner's run open in the run registry, if any).
    struct Owner
    {
        QString owner;
        qint64 sinceMs = 0;
        quint32 run = 0;
    };
    QHash<QString, Owner> owners;

    /// The record in @p file; an absent file is a record of zeros. False with @p error if the file
    /// cannot be read or its first line is not a run number (then @p out is a record of zeros).
    static bool read(const QString &file, RunRecord *out, QString *error);
    /// Replaces @p file (creating its folder) with this record; false with @p error if it cannot.
    bool write(const QString &file, QString *error) const;
    /// The data-taking time at @p nowMs: what ran before, plus the current stretch if it runs.
    qint64 activeMsAt(qint64 nowMs) const;
};

} // namespace dialog::daq
