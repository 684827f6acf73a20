// Write-ahead journal of an IS repository (journal_p.h; format in docs/is-journal.md).
#include "journal_p.h"

#include "dialog/handoff.h"
#include "dialog/is/codec.h"
#include "dialog/is/typeregistry.h"

#include <QDir>
#include <QFile>
#include <QHash>
#include <QLoggingCategory>
#include <QMetaObject>
#include <QObject>
#include <QRegularExpression>
#include <QSet>
#include <QtEndian>
#include <array>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcJournal, "dialog.is.journal", QtInfoMsg)

namespace dialog::is {

namespace journalformat {

namespace {
constexpr char Magic[8] = {'D', 'I', 'A', 'L', 'O', 'G', 'I', 'J'};
// kind, time, name length, value length: the smallest payload.
constexpr quint32 MinPayload = 1 + 8 + 4 + 4;

template <typename T> void put(QByteArray &out, T v)
{
    char b[sizeof(T)];
    qToLittleEndian(v, b);
    out.append(b, sizeof(T));
}

// Reads little-endian values from a view; every get fails once the bytes run out.
struct Reader
{
    QByteArrayView bytes;
    qsizetype pos = 0;
    qsizetype left() const { return bytes.size() - pos; }
    template <typename T> bool get(T &v)
    {
        if (left() < qsizetype(sizeof(T)))
            return false;
        v = qFromLittleEndian<T>(bytes.data() + pos);
        pos += sizeof(T);
        return true;
    }
    bool take(qsizetype n, QByteArrayView &out)
    {
        if (n < 0 || left() < n)
            return false;
        out = bytes.sliced(pos, n);
        pos += n;
        return true;
    }
};
} // namespace

QByteArray encodeHeader(const QString &serverName, quint64 segment)
{
    const QByteArray name = serverName.toUtf8();
    QByteArray out;
    out.append(Magic, sizeof(Magic));
    put<quint32>(out, FormatVersion);
    put<quint32>(out, quint32(sizeof(Magic) + 4 + 4 + 2 + name.size() + 8 + 4)); // header length
    put<quint16>(out, quint16(name.size()));
    out.append(name);
    put<quint64>(out, segment);
    put<quint32>(out, crc32(out));
    return out;
}

namespace {
void appendRaw(QByteArray &out, RecordKind kind, qint64 timeUs, const QByteArray &name, const QByteArray &value)
{
    const quint32 payload = MinPayload + quint32(name.size()) + quint32(value.size());
    const qsizetype start = out.size();
    put<quint32>(out, payload);
    put<quint32>(out, 0); // CRC, filled in below
    const qsizetype body = out.size();
    put<quint8>(out, quint8(kind));
    put<qint64>(out, timeUs);
    put<quint32>(out, quint32(name.size()));
    out.append(name);
    put<quint32>(out, quint32(value.size()));
    out.append(value);
    qToLittleEndian(crc32(QByteArrayView(out).sliced(body)), out.data() + start + 4);
}
} // namespace

void appendRecord(QByteArray &out, const Change &change)
{
    const QByteArray value = change.kind == Change::Kind::Removed ? QByteArray() : encode(change.object);
    const RecordKind kind = change.kind == Change::Kind::Created   ? RecordKind::Created
                            : change.kind == Change::Kind::Updated ? RecordKind::Updated
                                                                   : RecordKind::Removed;
    appendRaw(out, kind, change.time.microsecondsSinceEpoch(), change.name.toUtf8(), value);
}

void appendLayoutRecord(QByteArray &out, const Layouts &layouts)
{
    appendRaw(out, RecordKind::Layout, 0, QByteArray(), layouts.encode());
}

Decoded decodeSegment(QByteArrayView bytes, const QString &serverName,
                      const std::function<void(const Record &)> &onRecord)
{
    Decoded d;
    Reader r{bytes};
    QByteArrayView magic;
    quint32 version = 0, headerLength = 0, headerCrc = 0;
    quint16 nameLength = 0;
    QByteArrayView name;
    if (!r.take(sizeof(Magic), magic) || magic != QByteArrayView(Magic, sizeof(Magic))) {
        d.error = QStringLiteral("not a journal segment (bad magic)");
        d.droppedBytes = bytes.size();
        return d;
    }
    if (!r.get(version) || version == 0 || version > FormatVersion) {
        d.error =
            QStringLiteral("journal format version %1 (this build reads %2)").arg(version).arg(FormatVersion);
        d.droppedBytes = bytes.size();
        return d;
    }
    if (!r.get(headerLength) || !r.get(nameLength) || !r.take(nameLength, name) || !r.get(d.segment) ||
        headerLength != quint32(r.pos + 4) || !r.get(headerCrc) ||
        crc32(bytes.first(headerLength - 4)) != headerCrc) {
        d.error = QStringLiteral("damaged segment header");
        d.droppedBytes = bytes.size();
        return d;
    }
    if (QString::fromUtf8(name) != serverName) {
        d.error =
            QStringLiteral("a journal of IS server '%1', not '%2'").arg(QString::fromUtf8(name), serverName);
        d.droppedBytes = bytes.size();
        return d;
    }
    d.headerOk = true;
    d.goodBytes = r.pos;
    while (r.left() > 0) {
        quint32 length = 0, crc = 0;
        QByteArrayView payload;
        if (!r.get(length) || !r.get(crc)) {
            d.error = QStringLiteral("incomplete record header (torn tail)");
            break;
        }
        if (length < MinPayload || length > MaxRecordPayload) {
            d.error = QStringLiteral("record length %1 out of bounds (damaged)").arg(length);
            break;
        }
        if (!r.take(length, payload)) {
            d.error = QStringLiteral("record of %1 bytes with %2 present (torn tail)")
                          .arg(length)
                          .arg(bytes.size() - d.goodBytes - 8);
            break;
        }
        if (crc32(payload) != crc) {
            d.error = QStringLiteral("record CRC mismatch (damaged or torn)");
            break;
        }
        Reader p{payload};
        quint8 kind = 0;
        quint32 len = 0;
        QByteArrayView recordName, value;
        Record rec;
        if (!p.get(kind) || kind < quint8(RecordKind::Created) || kind > quint8(RecordKind::Layout) ||
            !p.get(rec.timeUs) || !p.get(len) || !p.take(len, recordName) || !p.get(len) ||
            !p.take(len, value) || p.left() != 0) {
            d.error = QStringLiteral("malformed record with a valid CRC");
            break;
        }
        rec.kind = RecordKind(kind);
        rec.name = QString::fromUtf8(recordName);
        rec.value = value.toByteArray();
        d.goodBytes = r.pos;
        ++d.records;
        onRecord(rec);
    }
    d.droppedBytes = bytes.size() - d.goodBytes;
    return d;
}

} // namespace journalformat

using namespace journalformat;

JournalPrivate::JournalPrivate(const QString &dir, const QString &serverName, Sync sync)
    : m_dir(dir), m_serverName(serverName), m_sync(sync)
{
    if (m_sync == Sync::Batch)
        m_syncThread = std::thread([this] { syncLoop(); });
}

JournalPrivate::~JournalPrivate()
{
    if (m_syncThread.joinable()) {
        {
            std::lock_guard<std::mutex> g(m_lock);
            m_stop = true;
        }
        m_wake.notify_all();
        m_syncThread.join();
    }
    close();
}

void JournalPrivate::syncLoop()
{
    std::unique_lock<std::mutex> lk(m_lock);
    for (;;) {
        m_wake.wait(lk, [this] { return m_stop || !m_queue.empty(); });
        if (m_queue.empty())
            return; // stopping, and everything queued is done
        std::deque<SyncItem> items;
        items.swap(m_queue);
        m_busy = true;
        lk.unlock();
        // Everything queued meanwhile is covered by one fdatasync of its segment.
        QList<int> synced;
        QHash<int, QString> failed;
        for (const SyncItem &item : items) {
            if (item.fd < 0 || !item.ok || synced.contains(item.fd) || failed.contains(item.fd))
                continue;
            if (::fdatasync(item.fd) == 0) {
                synced << item.fd;
                m_syncs.fetch_add(1);
            } else {
                failed.insert(
                    item.fd,
                    QStringLiteral("fdatasync: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
                m_syncFailed.store(true);
            }
        }
        for (SyncItem &item : items) {
            bool ok = item.ok;
            QString error = item.error;
            if (ok && failed.contains(item.fd)) {
                ok = false;
                error = QStringLiteral("journal segment of IS server %1: %2")
                            .arg(m_serverName, failed.value(item.fd));
            }
            if (item.done)
                QMetaObject::invokeMethod(
                    item.context,
                    handoff::handOff([done = std::move(item.done), ok, error] {
                        done(ok ? Status() : Status(Status::Code::StorageError, error));
                    }),
                    Qt::QueuedConnection);
        }
        lk.lock();
        m_busy = false;
        m_idle.notify_all();
    }
}

void JournalPrivate::drain()
{
    if (!m_syncThread.joinable())
        return;
    std::unique_lock<std::mutex> lk(m_lock);
    m_idle.wait(lk, [this] { return m_queue.empty() && !m_busy; });
}

void JournalPrivate::commitAsync(QObject *context, Done done)
{
    if (m_sync != Sync::Batch) {
        QString error;
        const bool ok = commit(&error);
        if (done)
            done(ok ? Status() : Status(Status::Code::StorageError, error));
        return;
    }
    SyncItem item;
    item.context = context;
    item.done = std::move(done);
    const bool hadRecords = !m_pending.isEmpty();
    item.ok = writePending(&item.error);
    if (item.ok && hadRecords)
        item.fd = m_fd;
    {
        std::lock_guard<std::mutex> g(m_lock);
        m_queue.push_back(std::move(item));
    }
    m_wake.notify_one();
}

QString JournalPrivate::segmentPath(const QString &dir, const QString &serverName, quint64 segment)
{
    return QDir(dir).filePath(serverName + QStringLiteral(".is.journal.") + QString::number(segment));
}

QList<quint64> JournalPrivate::segments(const QString &dir, const QString &serverName)
{
    const QString prefix = serverName + QStringLiteral(".is.journal.");
    static const QRegularExpression digits(QStringLiteral("^[0-9]{1,19}$"));
    QList<quint64> out;
    for (const QString &f : QDir(dir).entryList({prefix + QLatin1Char('*')}, QDir::Files)) {
        const QString tail = f.mid(prefix.size());
        bool ok = false;
        const quint64 n = tail.toULongLong(&ok);
        if (ok && n > 0 && digits.match(tail).hasMatch())
            out << n;
    }
    std::sort(out.begin(), out.end());
    return out;
}

bool JournalPrivate::parseSync(const QString &text, Sync *sync)
{
    if (text == QLatin1String("none"))
        *sync = Sync::None;
    else if (text == QLatin1String("batch"))
        *sync = Sync::Batch;
    else if (text == QLatin1String("always"))
        *sync = Sync::Always;
    else
        return false;
    return true;
}

QString JournalPrivate::syncName(Sync sync)
{
    switch (sync) {
    case Sync::None:
        return QStringLiteral("none");
    case Sync::Batch:
        return QStringLiteral("batch");
    case Sync::Always:
        return QStringLiteral("always");
    }
    return {};
}

JournalPrivate::ReplayResult JournalPrivate::replay(Repository &repository, const QString &dir,
                                                   const Conversions &conversions)
{
    ReplayResult result;
    const QString server = repository.serverName();
    QSet<QString> logged;
    for (quint64 n : segments(dir, server)) {
        const QString path = segmentPath(dir, server, n);
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) {
            result.problems << QStringLiteral("%1: cannot read: %2 (skipped)").arg(path, f.errorString());
            continue;
        }
        const QByteArray bytes = f.readAll();
        ++result.segments;
        qsizetype bad = 0;
        QString firstBad;
        Layouts layouts; // of this segment
        qsizetype changes = 0;
        std::unique_ptr<Evolution> evolution;
        const Decoded d = decodeSegment(bytes, server, [&](const Record &rec) {
            if (rec.kind == RecordKind::Layout) {
                Layouts more;
                if (const Status st = Layouts::decode(rec.value, &more); !st.isOk()) {
                    result.problems << QStringLiteral("%1: %2 (values decoded with the current types)")
                                           .arg(path, st.message());
                    return;
                }
                layouts.merge(more);
                evolution = std::make_unique<Evolution>(repository.registry(), layouts, conversions);
                for (const QString &line : evolution->changes()) {
                    if (!logged.contains(line)) // once per type and replay
                        qCInfo(lcJournal).noquote() << dir << ":" << line;
                    logged.insert(line);
                }
                return;
            }
            ++changes;
            const Status res = apply(repository, rec, evolution.get());
            if (res.isOk())
                ++result.applied;
            else if (!(rec.kind == RecordKind::Removed && res.code() == Status::Code::NotFound) && bad++ == 0)
                firstBad = QStringLiteral("%1: %2").arg(rec.name, res.message());
        });
        result.records += changes;
        if (!d.headerOk)
            result.problems << QStringLiteral("%1: %2 (segment skipped)").arg(path, d.error);
        else if (d.droppedBytes > 0)
            result.problems << QStringLiteral("%1: %2: the last %3 bytes dropped after %4 complete records")
                                   .arg(path, d.error)
                                   .arg(d.droppedBytes)
                                   .arg(d.records);
        if (bad > 0)
            result.problems
                << QStringLiteral("%1: %2 records not applied (first: %3)").arg(path).arg(bad).arg(firstBad);
    }
    return result;
}

Status JournalPrivate::apply(Repository &repository, const Record &rec, const Evolution *evolution)
{
    if (rec.kind == RecordKind::Layout)
        return {};
    Change c;
    c.kind = rec.kind == RecordKind::Created   ? Change::Kind::Created
             : rec.kind == RecordKind::Updated ? Change::Kind::Updated
                                               : Change::Kind::Removed;
    // The full name: an object name may hold dots.
    c.name = repository.serverName() + QLatin1Char('.') + rec.name;
    c.time = Time(rec.timeUs);
    if (c.kind != Change::Kind::Removed) {
        const Status st =
            evolution ? evolution->decode(rec.value, c.object) : decode(rec.value, repository.registry(), c.object);
        if (!st.isOk())
            return Status(Status::Code::InvalidObject, st.message());
    }
    return repository.mirror(c);
}

bool JournalPrivate::open(QString *error)
{
    const QList<quint64> present = segments(m_dir, m_serverName);
    const quint64 next = qMax(m_segment, present.isEmpty() ? 0 : present.last()) + 1;
    return openSegment(next, error);
}

bool JournalPrivate::openSegment(quint64 segment, QString *error)
{
    const QString path = segmentPath(m_dir, m_serverName, segment);
    const int fd =
        ::open(QFile::encodeName(path).constData(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        *error =
            QStringLiteral("%1: cannot create: %2").arg(path, QString::fromLocal8Bit(std::strerror(errno)));
        return false;
    }
    QByteArray header = encodeHeader(m_serverName, segment);
    // Every layout this journal has written so far, so that the segment is readable on its own.
    if (!m_known.isEmpty())
        appendLayoutRecord(header, m_known);
    const ssize_t w = ::write(fd, header.constData(), size_t(header.size()));
    if (w != ssize_t(header.size()) || (m_sync != Sync::None && ::fdatasync(fd) != 0)) {
        *error =
            QStringLiteral("%1: cannot write: %2")
                .arg(path,
                     QString::fromLocal8Bit(std::strerror(w < 0 || w == header.size() ? errno : ENOSPC)));
        ::close(fd);
        ::unlink(QFile::encodeName(path).constData());
        return false;
    }
    if (m_sync != Sync::None) {
        // The new name must survive a power cut too.
        const int dfd = ::open(QFile::encodeName(m_dir).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            ::fsync(dfd);
            ::close(dfd);
        }
    }
    close();
    m_fd = fd;
    m_segment = segment;
    m_size = header.size();
    m_broken = false;
    m_written = m_known;
    return true;
}

void JournalPrivate::close()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
}

void JournalPrivate::append(const Change &change)
{
    const QString type = change.object.typeName();
    if (change.kind != Change::Kind::Removed && !m_written.contains(type) && !m_pendingLayouts.contains(type)) {
        Layouts all, fresh;
        all.add(change.object);
        for (const QString &t : all.typeNames()) {
            if (!m_written.contains(t) && !m_pendingLayouts.contains(t))
                fresh.add(t, all.attributes(t));
        }
        appendLayoutRecord(m_pending, fresh);
        m_pendingLayouts.merge(fresh);
        m_known.merge(fresh);
    }
    appendRecord(m_pending, change);
}

bool JournalPrivate::commit(QString *error)
{
    if (!writePending(error))
        return false;
    if (m_sync == Sync::Batch) {
        // Durable once every queued sync is done, and this one.
        drain();
        if (m_fd >= 0 && ::fdatasync(m_fd) != 0) {
            *error = QStringLiteral("%1: fdatasync: %2")
                         .arg(segmentPath(m_dir, m_serverName, m_segment),
                              QString::fromLocal8Bit(std::strerror(errno)));
            m_broken = true;
            return false;
        }
        m_syncs.fetch_add(1);
    }
    return true;
}

bool JournalPrivate::writePending(QString *error)
{
    if (m_pending.isEmpty())
        return true;
    const QByteArray bytes = std::exchange(m_pending, {});
    const Layouts layouts = std::exchange(m_pendingLayouts, {});
    if (m_syncFailed.exchange(false))
        m_broken = true;
    if (m_fd < 0 || m_broken) {
        drain(); // the sync thread may still use the old descriptor
        QString why;
        if (!open(&why)) {
            *error = why;
            return false;
        }
    }
    const QString path = segmentPath(m_dir, m_serverName, m_segment);
    qsizetype done = 0;
    int err = 0;
    while (done < bytes.size()) {
        const ssize_t w = ::write(m_fd, bytes.constData() + done, size_t(bytes.size() - done));
        if (w < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        done += w;
    }
    if (err == 0 && m_sync == Sync::Always) {
        if (::fdatasync(m_fd) != 0)
            err = errno;
        else
            m_syncs.fetch_add(1);
    }
    if (err != 0) {
        *error =
            QStringLiteral("%1: cannot append: %2").arg(path, QString::fromLocal8Bit(std::strerror(err)));
        // Cut the partial records off, so that later records are not hidden behind them; if that
        // fails too, the next commit starts a new segment.
        if (::ftruncate(m_fd, m_size) != 0 || ::lseek(m_fd, m_size, SEEK_SET) != m_size)
            m_broken = true;
        return false;
    }
    m_size += bytes.size();
    m_bytesWritten += quint64(bytes.size());
    m_written.merge(layouts);
    return true;
}

quint64 JournalPrivate::rotate(QString *error)
{
    if (!commit(error))
        return 0;
    drain();
    const quint64 closed = m_segment;
    if (!openSegment(m_segment + 1, error))
        return 0;
    return closed;
}

void JournalPrivate::removeUpTo(quint64 segment)
{
    for (quint64 n : segments(m_dir, m_serverName)) {
        if (n > segment || n == m_segment)
            continue;
        const QString path = segmentPath(m_dir, m_serverName, n);
        if (!QFile::remove(path))
            qCWarning(lcJournal).noquote() << "cannot remove" << path;
    }
}

Journal::Journal(const QString &dir, const QString &serverName, Sync sync)
    : d(std::make_unique<JournalPrivate>(dir, serverName, sync))
{
}

Journal::~Journal() = default;

QString Journal::segmentPath(const QString &dir, const QString &serverName, quint64 segment)
{
    return JournalPrivate::segmentPath(dir, serverName, segment);
}

QList<quint64> Journal::segments(const QString &dir, const QString &serverName)
{
    return JournalPrivate::segments(dir, serverName);
}

Journal::ReplayResult Journal::replay(Repository &repository, const QString &dir, const Conversions &conversions)
{
    return JournalPrivate::replay(repository, dir, conversions);
}

bool Journal::parseSync(const QString &text, Sync *sync)
{
    return JournalPrivate::parseSync(text, sync);
}

QString Journal::syncName(Sync sync)
{
    return JournalPrivate::syncName(sync);
}

Journal::Sync Journal::sync() const
{
    return d->sync();
}

Status Journal::open()
{
    QString error;
    if (!d->open(&error))
        return Status(Status::Code::StorageError, error);
    return {};
}

bool Journal::isOpen() const
{
    return d->isOpen();
}

quint64 Journal::segment() const
{
    return d->segment();
}

void Journal::append(const Change &change)
{
    d->append(change);
}

bool Journal::hasPending() const
{
    return d->hasPending();
}

void Journal::commitAsync(QObject *context, Done done)
{
    d->commitAsync(context, std::move(done));
}

void Journal::drain()
{
    d->drain();
}

Status Journal::commit()
{
    QString error;
    if (!d->commit(&error))
        return Status(Status::Code::StorageError, error);
    return {};
}

Status Journal::rotate(quint64 *closed)
{
    QString error;
    const quint64 segment = d->rotate(&error);
    if (segment == 0)
        return Status(Status::Code::StorageError, error);
    if (closed)
        *closed = segment;
    return {};
}

void Journal::removeUpTo(quint64 segment)
{
    d->removeUpTo(segment);
}

quint64 Journal::bytesWritten() const
{
    return d->bytesWritten();
}

quint64 Journal::syncs() const
{
    return d->syncs();
}

} // namespace dialog::is
