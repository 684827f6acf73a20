// Reads the Control Server's directory and statistics messages in a thread of its own: with
// thousands of processes the directory is megabytes of JSON (about 0.1 s to read), which in the GUI
// thread would freeze the window each time anything changes anywhere.
#pragma once

#include "dialog/directory.h"

#include <QByteArray>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace dialog::inspector {

class SnapshotReader
{
public:
    /// @p ready is called in @p context's thread when a newer snapshot can be taken (once until it
    /// is taken). @p context outlives this reader (the reader is a member of it).
    SnapshotReader(QObject *context, std::function<void()> ready);
    ~SnapshotReader();
    SnapshotReader(const SnapshotReader &) = delete;
    SnapshotReader &operator=(const SnapshotReader &) = delete;

    /// Queue a DIALOG.Directory message (one page of it) / a DIALOG.Statistics message. Pages are
    /// read in order; of the statistics only the newest waiting one is read.
    void addDirectory(const QByteArray &message);
    void addStatistics(const QByteArray &message);

    /// The newest complete directory / statistics read since the last take, if any.
    std::optional<DirectorySnapshot> takeDirectory();
    std::optional<StatisticsSnapshot> takeStatistics();
    /// Hands a snapshot that is no longer needed to the reader's thread to be freed there (thousands
    /// of entries take milliseconds to free).
    void discard(DirectorySnapshot &&old);
    /// Messages that could not be read (malformed), and the last reason.
    quint64 unreadable() const;
    QString lastError() const;

private:
    void run();
    void notifyLocked();

    QObject *m_context;
    std::function<void()> m_ready;
    mutable std::mutex m_lock;
    std::condition_variable m_wake;
    // Under m_lock:
    std::deque<QByteArray> m_pages;
    QByteArray m_statistics;
    std::optional<DirectorySnapshot> m_directory;
    std::optional<StatisticsSnapshot> m_stats;
    std::vector<DirectorySnapshot> m_discarded;
    quint64 m_unreadable = 0;
    QString m_error;
    bool m_notified = false;
    bool m_stop = false;
    // The reader thread's own:
    DirectoryAssembler m_assembler;
    std::thread m_thread;
};

} // namespace dialog::inspector
