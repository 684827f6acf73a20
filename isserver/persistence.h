// Persistence of an IS server: its checkpoint, its write-ahead journal and the types declared at
// run time, in its data directory.
#pragma once

#include "serveroptions.h"

#include "dialog/is/typeinfo.h"

#include <QList>
#include <QObject>
#include <atomic>
#include <functional>
#include <memory>

class QThreadPool;
class QTimer;

namespace dialog::is {
class Repository;
class TypeRegistry;
} // namespace dialog::is

namespace dialog::isd {

/// Keeps the repository of an IS server on disk (ServerOptions::dataDir; without one it does
/// nothing): loads the declared types, the last checkpoint and the journal at start, writes a
/// checkpoint periodically (on @p pool) and at the end, and journals every change before its
/// write is acknowledged. A journal that cannot be written never stops the server: the writes are
/// refused until it can be written again.
///
/// Main thread (the one applying the writes), except where said.
class Persistence : public QObject
{
    Q_OBJECT
public:
    /// Acknowledges one write once its journal record is durable (@p ok) or could not be written
    /// (@p why says why).
    using Acknowledge = std::function<void(bool ok, const QString &why)>;

    /// @p types, @p repository and @p pool must outlive this object.
    Persistence(const ServerOptions &options, is::TypeRegistry &types, is::Repository &repository,
                QThreadPool &pool, QObject *parent = nullptr);
    ~Persistence() override;

    /// Merges the types declared at run time (kept next to the checkpoint) into the registry.
    /// Before load(): the checkpoint's objects need them. False with a reason.
    bool loadTypes(QString *error);
    /// Creates the data directory, loads the last checkpoint (or the one before, if the last is
    /// unusable), replays the journal on top of it and opens a new journal segment. False with a
    /// reason if the checkpoint cannot be read.
    bool load(QString *error);
    /// Starts the periodic checkpoints (ServerOptions::checkpointS).
    void startCheckpoints();

    /// @p types were declared at run time: they are saved with the checkpoint. False with a reason.
    bool addDeclaredTypes(const QList<is::TypeInfo> &types, QString *error);

    /// Whether a write applied now must wait for the journal before it is acknowledged.
    bool holdsAcknowledgements() const;
    /// Calls @p acknowledge once the records of the changes applied so far are written (and
    /// synced, by ServerOptions::journalSync); acknowledgements keep their order. @p applied: the
    /// write changed the repository (a refused one is acknowledged in its turn, but not counted as
    /// refused by the journal).
    void afterJournal(bool applied, Acknowledge acknowledge);

    /// Writes a checkpoint in the background unless one is being written.
    void checkpoint();
    /// The final checkpoint (after every journal record is written). False with a reason.
    bool saveNow(QString *error);

    /// Any thread.
    quint64 checkpointErrors() const { return m_checkpointErrors.load(); }
    qint64 lastCheckpointUs() const { return m_lastCheckpointUs.load(); }
    quint64 journalErrors() const { return m_journalErrors.load(); }

private:
    struct Pending
    {
        bool applied;
        Acknowledge acknowledge;
    };
    QString typesFile() const;
    bool saveDeclaredTypes(QString *error);
    bool loadCheckpoint(QString *error);
    void startJournal();
    void scheduleCommit();
    void commit();
    void committed(const QList<Pending> &pending, bool ok, const QString &why);

    const ServerOptions &m_options;
    is::TypeRegistry &m_types;
    is::Repository &m_repository;
    QThreadPool &m_pool;
    QList<is::TypeInfo> m_declared; // declared at run time, saved with the checkpoint
    QTimer *m_timer = nullptr;
    std::atomic<bool> m_saving{false};
    std::atomic<quint64> m_checkpointErrors{0};
    std::atomic<qint64> m_lastCheckpointUs{0};

    std::unique_ptr<is::Journal> m_journal;
    QList<Pending> m_pending; // acknowledgements whose records are not committed yet, in order
    bool m_commitScheduled = false;
    quint64 m_checkpointedSegment = 0; // newest segment covered by the last checkpoint written
    std::atomic<quint64> m_journalErrors{0};
    bool m_journalFailing = false; // the last commit failed (logged once per episode)
    int m_inFlight = 0;            // commits whose fdatasync (and acknowledgements) are still to come
};

} // namespace dialog::isd
