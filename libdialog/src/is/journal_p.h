// Write-ahead journal of an IS repository: the changes made since the last checkpoint, appended
// before a write is acknowledged and replayed on top of the checkpoint at start. The byte format
// is documented in docs/is-journal.md; encodeRecord()/decodeSegment() take and return bytes, so
// they are tested and fuzzed without a disk.
#pragma once

#include "crc32_p.h"
#include "dialog/is/evolution.h"
#include "dialog/is/journal.h"
#include "dialog/is/repository.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>
#include <QStringList>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

class QObject;

namespace dialog::is {

class TypeRegistry;

namespace journalformat {

/// Version 2 added Layout records; version 1 segments are still read.
constexpr quint32 FormatVersion = 2;
/// Largest record payload accepted by the decoder (a longer length field is damage).
constexpr quint32 MaxRecordPayload = 256u * 1024 * 1024;

enum class RecordKind : quint8
{
    Created = 1,
    Updated = 2,
    Removed = 3,
    Layout = 4, ///< the type layouts (Layouts::encode()) of the records after it in the segment
};

/// One decoded record: the change as it was applied (object still encoded).
struct Record
{
    RecordKind kind = RecordKind::Created;
    qint64 timeUs = 0;
    QString name;     ///< object name, without the server prefix
    QByteArray value; ///< dialog::is::encode() of the object; empty for Removed; Layouts for Layout
};

/// What decodeSegment() found.
struct Decoded
{
    bool headerOk = false;
    QString error;              ///< header problem, or why the records stop before the end of the bytes
    quint64 segment = 0;        ///< number from the header
    qsizetype records = 0;      ///< complete records handed to the callback
    qsizetype goodBytes = 0;    ///< bytes up to the end of the last complete record
    qsizetype droppedBytes = 0; ///< bytes after it (a torn or damaged tail)
};

using dialog::is::crc32; // crc32_p.h
/// The segment header of server @p serverName, segment number @p segment.
QByteArray encodeHeader(const QString &serverName, quint64 segment);
/// Appends the record of @p change to @p out.
void appendRecord(QByteArray &out, const Change &change);
/// Appends a Layout record of @p layouts to @p out.
void appendLayoutRecord(QByteArray &out, const Layouts &layouts);
/// Decodes the bytes of a segment file: its header, then every complete record with a matching
/// CRC, handed to @p onRecord in order. Stops at the first incomplete or damaged record (the
/// rest is counted in droppedBytes). Never throws, whatever the bytes.
Decoded decodeSegment(QByteArrayView bytes, const QString &serverName,
                      const std::function<void(const Record &)> &onRecord);

} // namespace journalformat

/// The implementation of Journal (dialog/is/journal.h), whose contract it keeps; also apply(),
/// the replay of one record, for tests and the fuzzer.
class JournalPrivate
{
public:
    using Sync = Journal::Sync;
    using ReplayResult = Journal::ReplayResult;
    using Done = Journal::Done;

    JournalPrivate(const QString &dir, const QString &serverName, Sync sync);
    ~JournalPrivate();
    JournalPrivate(const JournalPrivate &) = delete;
    JournalPrivate &operator=(const JournalPrivate &) = delete;

    static QString segmentPath(const QString &dir, const QString &serverName, quint64 segment);
    /// The numbers of the segment files present, ascending.
    static QList<quint64> segments(const QString &dir, const QString &serverName);
    /// Applies every record of every segment, oldest first, to @p repository (Repository::mirror,
    /// keeping each change's time). Never fails and never stops the server: a damaged header, a
    /// torn tail or a record of an unknown type is skipped and described in problems.
    static ReplayResult replay(Repository &repository, const QString &dir, const Conversions &conversions = {});
    /// Applies one record to @p repository (Repository::mirror with the record's time). Ok, or
    /// NotFound for the removal of a missing object (harmless in a replay), or the failure with
    /// its status (InvalidObject for an undecodable value, the codes of Repository::mirror()).
    /// Values are decoded with @p evolution (the segment's layouts) when given. A Layout record
    /// changes nothing.
    static Status apply(Repository &repository, const journalformat::Record &record,
                        const Evolution *evolution = nullptr);

    static bool parseSync(const QString &text, Sync *sync);
    static QString syncName(Sync sync);

    Sync sync() const { return m_sync; }
    /// Opens a new segment, numbered after the newest one present. False with a reason.
    bool open(QString *error);
    bool isOpen() const { return m_fd >= 0; }
    quint64 segment() const { return m_segment; }

    /// Adds the record of @p change to the records not written yet.
    void append(const Change &change);
    bool hasPending() const { return !m_pending.isEmpty(); }
    /// Writes the pending records to the segment now; with Sync::Batch the fdatasync runs on the
    /// journal's sync thread (one fdatasync for every commit queued meanwhile: group commit) and
    /// @p done is called in @p context's thread once the records are durable, or failed; with the
    /// other policies it is commit() and @p done is called before this returns. The @p done of
    /// successive commits are called in commit order. False if the records could not be written.
    void commitAsync(QObject *context, Done done);
    /// Until every commitAsync() queued so far is synced and its @p done posted.
    void drain();
    /// Writes the pending records to the segment and, by the policy, fdatasyncs it. On failure
    /// (full disk, I/O error) returns false with the reason: the pending records are dropped, the
    /// segment is cut back to its last complete record, and the next commit starts a new segment
    /// if that is not possible.
    bool commit(QString *error);
    /// Commits, then continues in a new segment. Returns the number of the segment closed (every
    /// change appended before the call is in it or an earlier one), or 0 with a reason if no new
    /// segment could be opened (the journal then continues in the current one).
    quint64 rotate(QString *error);
    /// Deletes the segments numbered <= @p segment (never the open one).
    void removeUpTo(quint64 segment);

    quint64 bytesWritten() const { return m_bytesWritten; }
    quint64 syncs() const { return m_syncs.load(); }

private:
    bool openSegment(quint64 segment, QString *error);
    void close();
    /// write() of the pending records; false with the reason (the segment cut back). No sync.
    bool writePending(QString *error);
    void syncLoop();

    struct SyncItem
    {
        int fd = -1; // -1: nothing to sync (a failure or a commit without records)
        bool ok = true;
        QString error;
        QObject *context = nullptr;
        Done done;
    };

    QString m_dir;
    QString m_serverName;
    Sync m_sync;
    int m_fd = -1;
    quint64 m_segment = 0;
    qint64 m_size = 0;     // bytes of complete records (and the header) in the open segment
    bool m_broken = false; // the open segment may end in a partial record: start a new one
    QByteArray m_pending;
    // Layout records: every type appended so far, those written to the open segment, and those in
    // m_pending (written with it, or dropped with it).
    Layouts m_known, m_written, m_pendingLayouts;
    quint64 m_bytesWritten = 0;
    std::atomic<quint64> m_syncs{0};

    // Sync::Batch: the sync thread and its queue.
    std::thread m_syncThread;
    std::mutex m_lock;
    std::condition_variable m_wake, m_idle;
    std::deque<SyncItem> m_queue;
    bool m_busy = false, m_stop = false;
    std::atomic<bool> m_syncFailed{false}; // an fdatasync failed: start a new segment
};

} // namespace dialog::is
