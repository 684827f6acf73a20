// Write-ahead journal of an IS repository: the changes made since the last checkpoint, appended
// before a write is acknowledged and replayed on top of the checkpoint at start. The byte format
// is documented in docs/is-journal.md.
#pragma once

#include "dialog/is/evolution.h"
#include "dialog/is/repository.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <functional>
#include <memory>

class QObject;

namespace dialog::is {

class JournalPrivate;

/// The journal files of one IS server in a data directory: segments
/// `DIR/SERVER.is.journal.N` (DIR the data directory, SERVER the server's name, N = 1, 2, … in decimal), each a header and records.
/// A new segment is started at every start of the server and at every checkpoint (rotate()); a
/// segment is deleted once two later checkpoints are written (the one before the latest is
/// `.previous`, which the checkpoint loader may fall back to).
///
/// Not thread-safe: one thread appends, commits, rotates (the IS server's main thread). With
/// Sync::Batch a thread of its own runs the fdatasyncs (commitAsync()).
class Journal
{
public:
    /// When the records written are made durable (fdatasync).
    enum class Sync
    {
        None,   ///< written to the kernel before the acknowledgement; survives a crash of the
                ///< process, not of the machine (power cut, kernel panic)
        Batch,  ///< one fdatasync per batch of writes, before their acknowledgements (group commit)
        Always, ///< one fdatasync per acknowledged write
    };

    /// What replay() found and did.
    struct ReplayResult
    {
        int segments = 0;      ///< segment files read
        qsizetype records = 0; ///< complete change records read (the layout records not counted)
        qsizetype applied = 0; ///< of which applied (a removal of a missing object is not)
        QStringList problems;  ///< one line per damaged segment, torn tail or unusable record
    };

    /// A journal of server @p serverName in directory @p dir; nothing is opened before open().
    Journal(const QString &dir, const QString &serverName, Sync sync);
    /// Stops the sync thread (after the syncs queued) and closes the segment.
    ~Journal();
    Journal(const Journal &) = delete;
    Journal &operator=(const Journal &) = delete;

    /// The path of segment @p segment of server @p serverName in @p dir.
    static QString segmentPath(const QString &dir, const QString &serverName, quint64 segment);
    /// The numbers of the segment files present, ascending.
    static QList<quint64> segments(const QString &dir, const QString &serverName);
    /// Applies every record of every segment, oldest first, to @p repository (Repository::mirror,
    /// keeping each change's time). Never fails and never stops the server: a damaged header, a
    /// torn tail or a record of an unknown type is skipped and described in problems.
    /// Values written with an older layout of their type are converted (dialog::is::Evolution,
    /// each segment carries its layouts), with @p conversions for what evolution alone refuses.
    static ReplayResult replay(Repository &repository, const QString &dir, const Conversions &conversions = {});

    /// Reads "none", "batch" or "always" into @p sync; false for anything else.
    static bool parseSync(const QString &text, Sync *sync);
    /// "none", "batch" or "always".
    static QString syncName(Sync sync);

    /// The sync policy given at construction.
    Sync sync() const;
    /// Opens a new segment, numbered after the newest one present. Status::Code::StorageError with
    /// the file's name and the reason when it cannot be created.
    Status open();
    /// Whether a segment is open.
    bool isOpen() const;
    /// The number of the open segment (0 before open()).
    quint64 segment() const;

    /// Adds the record of @p change to the records not written yet. The value's bytes are those
    /// the object carries (is::decode of a QByteArray), not a new encoding.
    void append(const Change &change);
    /// Whether records were appended and not written yet.
    bool hasPending() const;
    /// Called once per commitAsync() with its outcome: Ok, or Status::Code::StorageError with the
    /// reason (a write or an fdatasync that failed).
    using Done = std::function<void(const Status &status)>;
    /// Writes the pending records to the segment now; with Sync::Batch the fdatasync runs on the
    /// journal's sync thread (one fdatasync for every commit queued meanwhile: group commit) and
    /// @p done is called in @p context's thread once the records are durable, or failed; with the
    /// other policies it is commit() and @p done is called before this returns. The @p done of
    /// successive commits are called in commit order.
    void commitAsync(QObject *context, Done done);
    /// Until every commitAsync() queued so far is synced and its @p done posted.
    void drain();
    /// Writes the pending records to the segment and, by the policy, fdatasyncs it. On failure
    /// (full disk, I/O error) returns Status::Code::StorageError with the reason: the pending records
    /// are dropped, the segment is cut back to its last complete record, and the next commit starts
    /// a new segment if that is not possible.
    Status commit();
    /// Commits, then continues in a new segment, setting @p closed (if given) to the number of the
    /// segment closed (every change appended before the call is in it or an earlier one).
    /// Status::Code::StorageError with a reason if the commit failed or no new segment could be opened
    /// (the journal then continues in the current one; @p closed untouched).
    Status rotate(quint64 *closed = nullptr);
    /// Deletes the segments numbered <= @p segment (never the open one).
    void removeUpTo(quint64 segment);

    /// Bytes written to segments since construction.
    quint64 bytesWritten() const;
    /// fdatasync calls made since construction. Any thread.
    quint64 syncs() const;

private:
    std::unique_ptr<JournalPrivate> const d;
};

} // namespace dialog::is
