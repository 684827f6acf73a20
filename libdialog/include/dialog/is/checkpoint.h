#pragma once

#include "dialog/is/evolution.h"
#include "dialog/status.h"

#include <QString>
#include <QStringList>

namespace dialog::is {

class Repository;

/// Persistence of a Repository to a directory: one file `<dir>/<ServerName>.is`, plus the
/// checkpoint before it as `<ServerName>.is.previous`.
///
/// File format (all integers little-endian):
///   header  := magic "DIALOGIS" (8 bytes) | u32 format version (FormatVersion)
///              | u32 header length (bytes from the start of the file up to the payload)
///              | u16 server name length | UTF-8 server name | u64 object count
///              | s64 creation time (µs since the epoch, UTC) | u64 payload size (uncompressed)
///              | u64 compressed size | u32 CRC-32 of the compressed payload
///              | u32 CRC-32 of every header byte before it
///   payload := one zstd frame (with its content checksum) of
///              u32 layouts length | dialog::is::Layouts::encode() of the objects' types | object*
///              (version 1: object* alone, read against the current types only)
///   object  := u32 name length | UTF-8 object name (no server prefix) | s64 last-update time (µs)
///              | u64 update count | u32 encoded length | dialog::is::encode() of the object
/// A reader rejects a newer format version before looking at the rest of the header, so a later
/// version may change everything after the version field.
///
/// save() writes atomically (QSaveFile: temporary file in the same directory, fsync, rename), so
/// the file at `<ServerName>.is` is always a complete checkpoint. Before the new file replaces it,
/// a valid current checkpoint is copied (atomically as well) to `<ServerName>.is.previous`.
///
/// Both functions run in the calling thread and block on disk I/O; save() holds the repository's
/// read lock only while it copies the object list (objects are implicitly shared).
class Checkpoint
{
public:
    /// The version of the file format save() writes and load() reads.
    static constexpr quint32 FormatVersion = 2;

    /// What load() did.
    enum class LoadStatus
    {
        Loaded,             ///< the latest checkpoint was loaded
        LoadedFromPrevious, ///< the latest one was corrupt (or missing); `.previous` was loaded
        NoCheckpoint,       ///< no checkpoint file at all: a fresh start, nothing loaded
        Failed,             ///< nothing loaded, the repository is unchanged; see the error
    };

    /// How load() treats a corrupt or missing latest file and which objects it skips.
    struct LoadOptions
    {
        /// Load `<ServerName>.is.previous` when the latest file is corrupt or missing.
        bool fallbackToPrevious = false;
        /// Rename a corrupt latest file to `<file>.corrupt-<UTC yyyyMMddTHHmmss>` (default: leave
        /// it alone, so a later save() does not replace it while someone still wants to look).
        bool renameCorrupt = false;
        /// Objects (names without the server prefix) left out unread: what the loader makes afresh
        /// anyway, such as an IS server's own `Statistics`, whose type may have gained attributes
        /// since the checkpoint was written.
        QStringList skipObjects;
        /// How values that type evolution refuses are converted ("Type.attribute" -> Conversion);
        /// without one such a value fails the load with the way out (`dialogctl is migrate`).
        Conversions conversions;
    };

    /// What load() did, from which file, and why it fell back.
    struct LoadResult
    {
        /// Loaded, LoadedFromPrevious, NoCheckpoint or Failed.
        LoadStatus status = LoadStatus::Failed;
        QString file;           ///< path of the file loaded (empty if none)
        qsizetype objects = 0;  ///< number of objects loaded
        QString latestError;    ///< with LoadedFromPrevious: why the latest file was not used
        QString corruptRenamed; ///< new path of the corrupt latest file, if renamed
        /// One line per type whose layout changed since the file was written (Evolution::changes()).
        QStringList evolved;
    };

    /// `<dir>/<serverName>.is`
    static QString filePath(const QString &dir, const QString &serverName);
    /// `<dir>/<serverName>.is.previous`: the checkpoint before the latest.
    static QString previousFilePath(const QString &dir, const QString &serverName);

    /// Writes every object of @p repository. On failure returns Status::Code::StorageError with the
    /// reason, and the existing checkpoint files are untouched (or, at worst, `.previous` holds the
    /// current one).
    static Status save(const Repository &repository, const QString &dir);

    /// Replaces the content of @p repository by the checkpoint in @p dir (Repository::replaceAll,
    /// no listener calls). Returns Ok for Loaded, LoadedFromPrevious and NoCheckpoint. Any
    /// problem with the file (unreadable, truncated, checksum mismatch, bad magic, newer format,
    /// another server's file, unknown type, undecodable object, a type change that evolution
    /// refuses) fails the whole load with an
    /// error naming the file (Status::Code::StorageError), leaves @p repository unchanged and never
    /// deletes the file.
    static Status load(Repository &repository, const QString &dir, const LoadOptions &options,
                       LoadResult *result = nullptr);
    /// load() with the default options.
    static Status load(Repository &repository, const QString &dir);
};

} // namespace dialog::is
