#include "persistence.h"
#include "statistics.h"

#include "dialog/handoff.h"
#include "dialog/is/checkpoint.h"
#include "dialog/is/evolution.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSaveFile>
#include <QThreadPool>
#include <QTimer>

Q_LOGGING_CATEGORY(lcPersist, "dialog.is.persist")

namespace dialog::isd {

Persistence::Persistence(const ServerOptions &options, is::TypeRegistry &types, is::Repository &repository,
                         QThreadPool &pool, QObject *parent)
    : QObject(parent), m_options(options), m_types(types), m_repository(repository), m_pool(pool)
{
}

Persistence::~Persistence() = default;

QString Persistence::typesFile() const
{
    return QDir(m_options.dataDir).filePath(m_options.name + QStringLiteral(".types.json"));
}

bool Persistence::loadTypes(QString *error)
{
    if (m_options.dataDir.isEmpty())
        return true;
    QFile f(typesFile());
    if (!f.exists())
        return true;
    QList<is::TypeInfo> declared;
    QStringList kept;
    QJsonParseError pe;
    const QJsonDocument doc =
        f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll(), &pe) : QJsonDocument();
    Status st(Status::Code::StorageError, pe.errorString());
    if (doc.isArray() && (st = is::typesFromJson(doc.array(), &declared)).isOk())
        st = is::declareNewTypes(m_types, declared, &kept);
    if (!st.isOk()) {
        *error = QStringLiteral("cannot load the declared types %1: %2").arg(f.fileName(), st.message());
        return false;
    }
    // The type files win over a definition kept from an earlier run (objects are converted).
    for (const QString &name : std::as_const(kept))
        qCInfo(lcPersist).noquote() << f.fileName() << ": type" << name
                                        << "has another definition in the type files, which is used";
    m_declared = declared;
    return true;
}

bool Persistence::addDeclaredTypes(const QList<is::TypeInfo> &types, QString *error)
{
    m_declared += types;
    return saveDeclaredTypes(error);
}

bool Persistence::saveDeclaredTypes(QString *error)
{
    if (m_options.dataDir.isEmpty())
        return true;
    QJsonArray arr;
    for (const is::TypeInfo &t : std::as_const(m_declared))
        arr.append(is::typeToJson(t));
    QSaveFile f(typesFile());
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(arr).toJson()) < 0 || !f.commit()) {
        *error =
            QStringLiteral("cannot save the declared types to %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    return true;
}

bool Persistence::load(QString *error)
{
    if (m_options.dataDir.isEmpty())
        return true;
    if (!QDir().mkpath(m_options.dataDir)) {
        *error = QStringLiteral("cannot create the data directory %1").arg(m_options.dataDir);
        return false;
    }
    if (!loadCheckpoint(error))
        return false;
    // A mirror's content comes from its master: it keeps no journal.
    if (m_options.journal && m_options.mirrorOf.isEmpty() && m_options.mirrorListenPort < 0)
        startJournal();
    return true;
}

bool Persistence::loadCheckpoint(QString *error)
{
    is::Checkpoint::LoadOptions lo;
    lo.fallbackToPrevious = true;
    lo.renameCorrupt = true;
    lo.skipObjects = {ServerStatistics::objectName()}; // made afresh every second; its type may have grown
    is::Checkpoint::LoadResult lr;
    const Status loaded = is::Checkpoint::load(m_repository, m_options.dataDir, lo, &lr);
    if (!loaded.isOk()) {
        *error = QStringLiteral("cannot load the checkpoint: %1 (no checkpoint is deleted; move the "
                                "file away to start empty)")
                     .arg(loaded.message());
        return false;
    }
    if (lr.status == is::Checkpoint::LoadStatus::LoadedFromPrevious)
        qCWarning(lcPersist, "%s: the latest checkpoint is unusable (%s)%s; loaded %lld objects from %s",
                  qPrintable(m_options.name), qPrintable(lr.latestError),
                  lr.corruptRenamed.isEmpty() ? ""
                                              : qPrintable(QStringLiteral(", kept as ") + lr.corruptRenamed),
                  qlonglong(lr.objects), qPrintable(lr.file));
    else if (lr.status == is::Checkpoint::LoadStatus::Loaded)
        qCInfo(lcPersist, "%s: loaded %lld objects from %s", qPrintable(m_options.name),
               qlonglong(lr.objects), qPrintable(lr.file));
    return true;
}

void Persistence::startJournal()
{
    // The changes acknowledged since the checkpoint, on top of it. A damaged journal never stops
    // the server: what can be read is applied, the rest is said.
    const is::Journal::ReplayResult rr = is::Journal::replay(m_repository, m_options.dataDir);
    for (const QString &problem : rr.problems)
        qCWarning(lcPersist, "%s: journal: %s", qPrintable(m_options.name), qPrintable(problem));
    if (rr.segments > 0)
        qCInfo(lcPersist, "%s: replayed %lld changes (%lld records) from %d journal segments",
               qPrintable(m_options.name), qlonglong(rr.applied), qlonglong(rr.records), rr.segments);
    m_journal = std::make_unique<is::Journal>(m_options.dataDir, m_options.name, m_options.journalSync);
    const Status opened = m_journal->open();
    if (opened.isOk()) {
        qCInfo(lcPersist, "%s: journal %s (sync %s)", qPrintable(m_options.name),
               qPrintable(is::Journal::segmentPath(m_options.dataDir, m_options.name, m_journal->segment())),
               qPrintable(is::Journal::syncName(m_options.journalSync)));
    } else {
        // A full disk must not keep the server from serving reads; every write is refused (each
        // commit tries a new segment) until the journal can be written again.
        qCWarning(lcPersist, "%s: journal: %s; writes are refused until it can be written",
                  qPrintable(m_options.name), qPrintable(opened.message()));
        m_journalFailing = true;
    }
    m_repository.addListener([this](const is::Change &c) {
        if (c.name == ServerStatistics::objectName())
            return; // the server's own figures are made afresh at start
        m_journal->append(c);
        scheduleCommit();
    });
}

bool Persistence::holdsAcknowledgements() const
{
    return m_journal && (m_journal->hasPending() || !m_pending.isEmpty() || m_inFlight > 0);
}

void Persistence::afterJournal(bool applied, Acknowledge acknowledge)
{
    m_pending.append({applied, std::move(acknowledge)});
    if (m_options.journalSync == is::Journal::Sync::Always)
        commit();
    else
        scheduleCommit();
}

void Persistence::scheduleCommit()
{
    if (m_commitScheduled)
        return;
    m_commitScheduled = true;
    // After the requests of the current batch: one write (and one fdatasync) for all of them.
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_commitScheduled = false;
            commit();
        },
        Qt::QueuedConnection);
}

void Persistence::commit()
{
    if (!m_journal || (!m_journal->hasPending() && m_pending.isEmpty()))
        return;
    ++m_inFlight;
    // With --journal-sync batch the fdatasync runs on the journal's thread while this one goes on
    // with the next requests; the acknowledgements come back here, in order, once the records are
    // durable.
    m_journal->commitAsync(this, [this, pending = std::exchange(m_pending, {})](const Status &st) {
        --m_inFlight;
        committed(pending, st.isOk(), st.message());
    });
}

void Persistence::committed(const QList<Pending> &pending, bool ok, const QString &why)
{
    if (!ok) {
        quint64 refused = 0;
        for (const Pending &p : pending)
            refused += p.applied;
        m_journalErrors.fetch_add(qMax<quint64>(refused, 1));
        if (!m_journalFailing)
            qCWarning(lcPersist,
                      "%s: journal append failed: %s; %llu writes refused (StorageError), until the journal "
                      "can be written again",
                      qPrintable(m_options.name), qPrintable(why), qulonglong(refused));
        m_journalFailing = true;
    } else if (m_journalFailing && !pending.isEmpty()) {
        m_journalFailing = false;
        qCInfo(lcPersist, "%s: journal appends succeed again (%llu writes refused so far)",
               qPrintable(m_options.name), qulonglong(m_journalErrors.load()));
    }
    for (const Pending &p : pending)
        p.acknowledge(ok, why);
}

void Persistence::startCheckpoints()
{
    if (m_options.dataDir.isEmpty() || m_options.checkpointS <= 0)
        return;
    m_timer = new QTimer(this);
    connect(m_timer, &QTimer::timeout, this, &Persistence::checkpoint);
    m_timer->start(m_options.checkpointS * 1000);
}

void Persistence::checkpoint()
{
    if (m_saving.exchange(true))
        return; // the previous one is still being written
    // Every change made so far is in segment `closed` or before; the checkpoint taken after this
    // holds them all (and maybe some of the next segment: replaying those again is harmless,
    // each record sets an object's whole value).
    quint64 closed = 0;
    if (m_journal) {
        commit();
        if (const Status st = m_journal->rotate(&closed); !st.isOk())
            qCWarning(lcPersist, "%s: journal: cannot start a new segment: %s", qPrintable(m_options.name),
                      qPrintable(st.message()));
    }
    handoff::startIn(m_pool, [this, closed] {
        const Status saved = is::Checkpoint::save(m_repository, m_options.dataDir);
        if (saved.isOk()) {
            m_lastCheckpointUs.store(is::Time::currentTime().microsecondsSinceEpoch());
            if (closed > 0)
                handoff::post(this, [this, closed] {
                    // Keep what `.previous` (the checkpoint before) needs, drop the older ones.
                    m_journal->removeUpTo(m_checkpointedSegment);
                    m_checkpointedSegment = closed;
                });
        } else {
            m_checkpointErrors.fetch_add(1);
            qCWarning(lcPersist, "%s: checkpoint failed: %s (the previous one is kept)",
                      qPrintable(m_options.name), qPrintable(saved.message()));
        }
        m_saving.store(false);
    });
}

bool Persistence::saveNow(QString *error)
{
    handoff::waitForDone(m_pool);
    if (m_options.dataDir.isEmpty())
        return true;
    if (m_journal) {
        commit();
        m_journal->drain();
        QCoreApplication::sendPostedEvents(this, QEvent::MetaCall); // the last acknowledgements
    }
    const Status saved = is::Checkpoint::save(m_repository, m_options.dataDir);
    if (!saved.isOk())
        *error = saved.message();
    else if (m_journal)
        m_journal->removeUpTo(m_checkpointedSegment);
    if (m_journal)
        qCInfo(lcPersist, "%s: journal: %llu bytes written, %llu fdatasyncs, %llu writes refused",
               qPrintable(m_options.name), qulonglong(m_journal->bytesWritten()),
               qulonglong(m_journal->syncs()), qulonglong(m_journalErrors.load()));
    return saved.isOk();
}

} // namespace dialog::isd
