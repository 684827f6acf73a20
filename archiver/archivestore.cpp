#include "archivestore.h"
#include "archivedb.h"

#include "sqldatabase.h"

#include "dialog/handoff.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <QSqlError>
#include <QSqlQuery>
#include <algorithm>
#include <sqlite3.h>

Q_LOGGING_CATEGORY(lcStore, "dialog.archiver.store", QtInfoMsg)

namespace dialog::archiver {

void ArchiveStore::Bucket::add(double v)
{
    if (count == 0) {
        min = max = v;
        sum = 0;
    }
    sum += v;
    min = qMin(min, v);
    max = qMax(max, v);
    ++count;
}

ArchiveStore::ArchiveStore(const Options &options)
    : m_options(options), m_connection(QStringLiteral("archive-%1").arg(quintptr(this)))
{
}

ArchiveStore::~ArchiveStore()
{
    if (!m_open)
        return; // closed by flushAll(), in the store's thread
    sql::closeConnection(m_connection);
}

bool ArchiveStore::readSeries(const QString &path, QList<SeriesName> *out, QString *error)
{
    const QString connection = QStringLiteral("archive-series-%1").arg(quintptr(out));
    bool ok = false;
    {
        QSqlDatabase db = openArchive(path, connection, error);
        if (db.isOpen()) {
            QSqlQuery q(db);
            ok = q.exec(QStringLiteral("SELECT id, object, attribute FROM series ORDER BY id"));
            if (!ok)
                *error = q.lastError().text();
            while (ok && q.next())
                out->append(SeriesName{q.value(0).toInt(), q.value(1).toString(), q.value(2).toString()});
            db.close();
        }
    }
    QSqlDatabase::removeDatabase(connection);
    return ok;
}

qint64 ArchiveStore::bufferedCount() const
{
    QMutexLocker lock(&m_lock);
    return qint64(m_pending.size());
}

QString ArchiveStore::lastError() const
{
    QMutexLocker lock(&m_lock);
    return m_lastError;
}

void ArchiveStore::open()
{
    if (!m_timer) {
        m_timer = new QTimer(this);
        connect(m_timer, &QTimer::timeout, this, &ArchiveStore::maintain);
        m_timer->start(m_options.maintenanceMs);
    }
    QString error;
    {
        QSqlDatabase db = openArchive(m_options.path, m_connection, &error);
        m_open = db.isOpen();
    }
    if (!m_open) {
        sql::closeConnection(m_connection);
        QMutexLocker lock(&m_lock);
        m_lastError = QStringLiteral("cannot open %1: %2").arg(m_options.path, error);
    }
}

void ArchiveStore::enqueue(const QList<SeriesName> &fresh, const std::vector<Sample> &samples)
{
    bool wake = false;
    {
        QMutexLocker lock(&m_lock);
        m_fresh.append(fresh); // series definitions are never dropped: later samples need them
        const size_t room = size_t(qMax<qint64>(0, m_options.capacity - qint64(m_pending.size())));
        const size_t taken = qMin(room, samples.size());
        m_pending.insert(m_pending.end(), samples.begin(), samples.begin() + qint64(taken));
        if (taken < samples.size())
            m_dropped += quint64(samples.size() - taken);
        wake = !m_scheduled;
        m_scheduled = true;
    }
    // One wake-up per burst: everything that arrives meanwhile goes into the same transaction.
    if (wake)
        handoff::post(this, [this] { writePending(); }); // from the caller's thread to the store's
}

void ArchiveStore::writePending()
{
    for (;;) {
        std::vector<Sample> samples;
        QList<SeriesName> fresh;
        {
            QMutexLocker lock(&m_lock);
            samples.swap(m_pending);
            fresh.swap(m_fresh);
            if (samples.empty() && fresh.isEmpty()) {
                m_scheduled = false;
                return;
            }
        }
        if (!m_open)
            open();
        QString error;
        const bool ok = m_open && writeBatch(fresh, samples, &error);
        if (!m_open)
            error = lastError();
        {
            QMutexLocker lock(&m_lock);
            m_lastError = ok ? QString() : error;
            if (!ok)
                m_fresh = fresh + m_fresh; // kept for the next attempt
        }
        if (ok) {
            m_stored += quint64(samples.size());
        } else {
            if (m_open) {
                sql::closeConnection(m_connection);
                m_open = false;
            }
            m_dropped += quint64(samples.size());
            qCWarning(lcStore).noquote()
                << QStringLiteral("%1 values not stored (%2); %3 dropped since start")
                       .arg(samples.size())
                       .arg(error)
                       .arg(m_dropped.load());
            return; // retried with the next batch
        }
    }
}

bool ArchiveStore::writeBatch(const QList<SeriesName> &fresh, const std::vector<Sample> &input,
                              QString *error)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    if (!db.transaction()) {
        *error = db.lastError().text();
        return false;
    }
    const auto fail = [&](const QString &why) {
        *error = why;
        db.rollback();
        return false;
    };
    {
        Statement series(db, "INSERT OR IGNORE INTO series (id, object, attribute) VALUES (?, ?, ?)");
        Statement raw(db, "INSERT OR REPLACE INTO raw (series, t, v) VALUES (?, ?, ?)");
        Statement minute(
            db, "INSERT OR REPLACE INTO minute (series, t, mean, min, max, n) VALUES (?, ?, ?, ?, ?, ?)");
        Statement hour(
            db, "INSERT OR REPLACE INTO hour (series, t, mean, min, max, n) VALUES (?, ?, ?, ?, ?, ?)");
        if (!series.isValid() || !raw.isValid() || !minute.isValid() || !hour.isValid())
            return fail(series.error());
        for (const SeriesName &s : fresh) {
            const QByteArray object = s.object.toUtf8(), attribute = s.attribute.toUtf8();
            sqlite3_bind_int(series.get(), 1, s.id);
            sqlite3_bind_text(series.get(), 2, object.constData(), int(object.size()), SQLITE_STATIC);
            sqlite3_bind_text(series.get(), 3, attribute.constData(), int(attribute.size()), SQLITE_STATIC);
            if (!series.step())
                return fail(series.error());
        }
        // In (series, time) order: the inserts walk the clustered index once.
        std::vector<Sample> samples = input;
        std::stable_sort(samples.begin(), samples.end(), [](const Sample &a, const Sample &b) {
            return a.series < b.series || (a.series == b.series && a.timeUs < b.timeUs);
        });
        for (const Sample &s : samples) {
            sqlite3_bind_int(raw.get(), 1, s.series);
            sqlite3_bind_int64(raw.get(), 2, s.timeUs);
            sqlite3_bind_double(raw.get(), 3, s.value);
            if (!raw.step())
                return fail(raw.error());
            if (s.series < 0)
                continue;
            if (size_t(s.series) >= m_aggregates.size())
                m_aggregates.resize(size_t(s.series) + 1);
            Aggregate &a = m_aggregates[size_t(s.series)];
            // A value of a later bucket closes the current one.
            const qint64 m = s.timeUs - s.timeUs % MinuteUs, h = s.timeUs - s.timeUs % HourUs;
            if (a.minute.count && a.minute.start != m) {
                if (!insertBucket(minute, s.series, a.minute.start, a.minute.sum / a.minute.count,
                                  a.minute.min, a.minute.max, a.minute.count))
                    return fail(minute.error());
                a.minute.count = 0;
            }
            if (a.hour.count && a.hour.start != h) {
                if (!insertBucket(hour, s.series, a.hour.start, a.hour.sum / a.hour.count, a.hour.min,
                                  a.hour.max, a.hour.count))
                    return fail(hour.error());
                a.hour.count = 0;
            }
            a.minute.start = m;
            a.hour.start = h;
            a.minute.add(s.value);
            a.hour.add(s.value);
        }
    }
    if (!db.commit())
        return fail(db.lastError().text());
    return true;
}

bool ArchiveStore::closeBuckets(qint64 beforeUs, QString *error)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    if (!db.transaction()) {
        *error = db.lastError().text();
        return false;
    }
    {
        Statement minute(
            db, "INSERT OR REPLACE INTO minute (series, t, mean, min, max, n) VALUES (?, ?, ?, ?, ?, ?)");
        Statement hour(
            db, "INSERT OR REPLACE INTO hour (series, t, mean, min, max, n) VALUES (?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < m_aggregates.size(); ++i) {
            Aggregate &a = m_aggregates[i];
            // An open bucket is written as it is (and replaced when it completes), so the tiers
            // also hold the newest minute and hour.
            if (a.minute.count)
                insertBucket(minute, qint32(i), a.minute.start, a.minute.sum / a.minute.count, a.minute.min,
                             a.minute.max, a.minute.count);
            if (a.minute.count && a.minute.start + MinuteUs <= beforeUs)
                a.minute.count = 0;
            if (a.hour.count)
                insertBucket(hour, qint32(i), a.hour.start, a.hour.sum / a.hour.count, a.hour.min, a.hour.max,
                             a.hour.count);
            if (a.hour.count && a.hour.start + HourUs <= beforeUs)
                a.hour.count = 0;
        }
    }
    if (!db.commit()) {
        *error = db.lastError().text();
        db.rollback();
        return false;
    }
    return true;
}

void ArchiveStore::maintain()
{
    writePending();
    if (!m_open)
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch() * 1000;
    QString error;
    if (!closeBuckets(now, &error)) {
        QMutexLocker lock(&m_lock);
        m_lastError = error;
        return;
    }
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QSqlQuery q(db);
    q.prepare(QStringLiteral("DELETE FROM raw WHERE t < ?"));
    q.addBindValue(now - qint64(m_options.rawDays) * DayUs);
    q.exec();
    q.prepare(QStringLiteral("DELETE FROM minute WHERE t < ?"));
    q.addBindValue(now - qint64(m_options.minuteDays) * DayUs);
    q.exec();
}

void ArchiveStore::flushAll()
{
    // At exit: no more maintenance (the timer belongs to this thread, the store is deleted in another).
    delete m_timer;
    m_timer = nullptr;
    writePending();
    if (m_open) {
        QString error;
        closeBuckets(QDateTime::currentMSecsSinceEpoch() * 1000, &error);
        sql::closeConnection(m_connection);
        m_open = false;
    }
}

bool ArchiveStore::query(const QString &path, const QString &connection, qint32 series, qint64 fromUs,
                         qint64 toUs, qsizetype maxPoints, const Options &options,
                         QList<is::HistoryPoint> *out, QString *error)
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch() * 1000;
    const qint64 span = toUs - fromUs;
    const char *table = "hour";
    if (fromUs >= now - qint64(options.rawDays) * DayUs && (span <= 6 * HourUs || maxPoints <= 0))
        table = "raw";
    else if (fromUs >= now - qint64(options.minuteDays) * DayUs)
        table = "minute";
    QList<is::HistoryPoint> points;
    if (!readPoints(path, connection, table, series, fromUs, toUs, &points, error))
        return false;
    *out = is::downsample(points, maxPoints);
    return true;
}

} // namespace dialog::archiver
