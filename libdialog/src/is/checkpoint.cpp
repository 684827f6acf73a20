// Checkpoint files of an IS repository; the format is documented in dialog/is/checkpoint.h.
#include "dialog/is/checkpoint.h"

#include "dialog/is/codec.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include "checkpointformat_p.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSaveFile>

#ifdef Q_OS_UNIX
#include <fcntl.h>
#include <unistd.h>
#endif

Q_LOGGING_CATEGORY(lcCheckpoint, "dialog.is.checkpoint", QtInfoMsg)

namespace dialog::is {

namespace {

using namespace checkpointformat;

Parsed readCheckpoint(const QString &path, const Repository &repository, QList<StoredObject> &out,
                      const Checkpoint::LoadOptions &options, QStringList *evolved)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {Problem::Io, QStringLiteral("%1: cannot read: %2").arg(path, file.errorString())};
    const QByteArray bytes = file.readAll();
    if (file.error() != QFileDevice::NoError)
        return {Problem::Io, QStringLiteral("%1: cannot read: %2").arg(path, file.errorString())};
    return decode(bytes, path, repository.serverName(), repository.registry(), out, options.skipObjects,
                  options.conversions, evolved);
}

bool writeAtomically(const QString &path, QByteArrayView bytes, QString *error)
{
    QSaveFile out(path);
    // QSaveFile::commit() flushes, fsyncs and renames the temporary file over @p path.
    if (!out.open(QIODevice::WriteOnly) || out.write(bytes.data(), bytes.size()) != bytes.size() ||
        !out.commit()) {
        if (error)
            *error = QStringLiteral("%1: cannot write: %2").arg(path, out.errorString());
        out.cancelWriting();
        return false;
    }
    return true;
}

// Makes the renames durable; best effort.
void syncDirectory(const QString &dir)
{
#ifdef Q_OS_UNIX
    const int fd = ::open(QFile::encodeName(dir).constData(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
#else
    Q_UNUSED(dir);
#endif
}

} // namespace

QString Checkpoint::filePath(const QString &dir, const QString &serverName)
{
    return QDir(dir).filePath(serverName + QStringLiteral(".is"));
}

QString Checkpoint::previousFilePath(const QString &dir, const QString &serverName)
{
    return filePath(dir, serverName) + QStringLiteral(".previous");
}

Status Checkpoint::save(const Repository &repository, const QString &dir)
{
    const auto failed = [](const QString &why) { return Status(Status::Code::StorageError, why); };
    QString error;
    if (!QFileInfo(dir).isDir())
        return failed(QStringLiteral("%1: cannot save checkpoint: not a directory").arg(dir));
    const QByteArray bytes = encode(repository.serverName(), repository.objects(), &error);
    if (bytes.isEmpty())
        return failed(error);
    const QString latest = filePath(dir, repository.serverName());
    const QString previous = previousFilePath(dir, repository.serverName());

    // Write the new file completely first, so that a full disk fails before anything is touched.
    QSaveFile out(latest);
    if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size()) {
        error = QStringLiteral("%1: cannot write: %2").arg(latest, out.errorString());
        out.cancelWriting();
        return failed(error);
    }
    // Keep the current checkpoint as .previous, but only if it is sound: never replace a good
    // .previous with a damaged file.
    QFile current(latest);
    if (current.exists()) {
        const QByteArray old = current.open(QIODevice::ReadOnly) ? current.readAll() : QByteArray();
        const Parsed p = checkIntegrity(old, latest);
        if (p.problem == Problem::None) {
            if (!writeAtomically(previous, old, &error)) {
                out.cancelWriting();
                return failed(error);
            }
        } else {
            qCWarning(lcCheckpoint).noquote() << p.error << "- not kept as" << previous;
        }
    }
    if (!out.commit())
        return failed(QStringLiteral("%1: cannot write: %2").arg(latest, out.errorString()));
    syncDirectory(dir);
    return Status();
}

Status Checkpoint::load(Repository &repository, const QString &dir)
{
    return load(repository, dir, LoadOptions(), nullptr);
}

namespace {
// A process killed while QSaveFile writes leaves its temporary file (PATH.XXXXXX) behind; nobody
// else writes these names, so at start they are removed.
void removeLeftoverTemporaries(const QString &latest, const QString &previous)
{
    const QFileInfo info(latest);
    QDir dir = info.absoluteDir();
    static const QRegularExpression suffix(QStringLiteral("^[A-Za-z0-9]{6}$"));
    for (const QString &base : {info.fileName(), QFileInfo(previous).fileName()}) {
        const QStringList found =
            dir.entryList({base + QStringLiteral(".??????")}, QDir::Files | QDir::Hidden);
        for (const QString &name : found) {
            if (!suffix.match(name.mid(base.size() + 1)).hasMatch())
                continue;
            if (dir.remove(name))
                qCInfo(lcCheckpoint).noquote()
                    << "removed" << dir.filePath(name) << "left by an interrupted write";
            else
                qCWarning(lcCheckpoint).noquote() << "cannot remove" << dir.filePath(name);
        }
    }
}
} // namespace

Status Checkpoint::load(Repository &repository, const QString &dir, const LoadOptions &options,
                        LoadResult *result)
{
    LoadResult r;
    const QString latest = filePath(dir, repository.serverName());
    const QString previous = previousFilePath(dir, repository.serverName());
    removeLeftoverTemporaries(latest, previous);
    const auto finish = [&](bool ok, const QString &message) {
        if (!ok)
            r.status = LoadStatus::Failed;
        if (result)
            *result = r;
        return ok ? Status() : Status(Status::Code::StorageError, message);
    };
    const auto apply = [&](const QString &path, const QList<StoredObject> &objects, LoadStatus status,
                           const QStringList &evolved) {
        if (const Status st = repository.replaceAll(objects); !st.isOk())
            return finish(false, QStringLiteral("%1: %2").arg(path, st.message()));
        r.status = status;
        r.file = path;
        r.objects = objects.size();
        r.evolved = evolved;
        for (const QString &line : evolved) // once per type and load
            qCInfo(lcCheckpoint).noquote() << path << ":" << line;
        return finish(true, QString());
    };

    QList<StoredObject> objects;
    if (!QFileInfo::exists(latest)) {
        if (!QFileInfo::exists(previous)) {
            r.status = LoadStatus::NoCheckpoint;
            return finish(true, QString());
        }
        if (!options.fallbackToPrevious)
            return finish(false,
                          QStringLiteral("%1: missing, but %2 exists (load it with fallbackToPrevious)")
                              .arg(latest, previous));
        r.latestError = QStringLiteral("%1: missing").arg(latest);
    } else {
        QStringList evolved;
        const Parsed p = readCheckpoint(latest, repository, objects, options, &evolved);
        if (p.problem == Problem::None)
            return apply(latest, objects, LoadStatus::Loaded, evolved);
        // Only a damaged file is renamed or skipped: an intact file this build cannot use must
        // not make the server start from older data.
        if (p.problem != Problem::Corrupt)
            return finish(false, p.error);
        r.latestError = p.error;
        if (options.renameCorrupt) {
            const QString renamed =
                latest + QStringLiteral(".corrupt-") +
                QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMddTHHmmss"));
            if (QFile::rename(latest, renamed))
                r.corruptRenamed = renamed;
            else
                qCWarning(lcCheckpoint).noquote() << "cannot rename" << latest << "to" << renamed;
        }
        if (!options.fallbackToPrevious || !QFileInfo::exists(previous))
            return finish(false, p.error);
        qCWarning(lcCheckpoint).noquote() << p.error << "- loading" << previous;
    }
    objects.clear();
    QStringList evolved;
    const Parsed p = readCheckpoint(previous, repository, objects, options, &evolved);
    if (p.problem != Problem::None)
        return finish(false, r.latestError + QStringLiteral("; ") + p.error);
    return apply(previous, objects, LoadStatus::LoadedFromPrevious, evolved);
}

} // namespace dialog::is
