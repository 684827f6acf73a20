#include "runregistry.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcRunRegistry, "dialog.configdb.runs", QtInfoMsg)

namespace dialog::configdb {

namespace {

const char *const columns =
    "number, partition, run_type, config_version, config_tag, operator, master, processes, "
    "start_time, end_time, events, bytes, end_reason, end_message, messages, out_of_run";

QJsonObject runFrom(const QSqlQuery &q)
{
    QJsonObject r{{QStringLiteral("number"), q.value(0).toLongLong()},
                  {QStringLiteral("partition"), q.value(1).toString()},
                  {QStringLiteral("run_type"), q.value(2).toString()},
                  {QStringLiteral("config_version"), q.value(3).toLongLong()},
                  {QStringLiteral("config_tag"), q.value(4).toString()},
                  {QStringLiteral("operator"), q.value(5).toString()},
                  {QStringLiteral("master"), q.value(6).toString()},
                  {QStringLiteral("processes"), QJsonDocument::fromJson(q.value(7).toByteArray()).array()},
                  {QStringLiteral("start_time"), q.value(8).toLongLong()},
                  {QStringLiteral("events"), q.value(10).toLongLong()},
                  {QStringLiteral("bytes"), q.value(11).toLongLong()}};
    if (!q.isNull(9))
        r.insert(QStringLiteral("end_time"), q.value(9).toLongLong());
    if (!q.isNull(12))
        r.insert(QStringLiteral("end_reason"), q.value(12).toString());
    if (!q.isNull(13) && !q.value(13).toString().isEmpty())
        r.insert(QStringLiteral("end_message"), q.value(13).toString());
    if (!q.isNull(14))
        r.insert(QStringLiteral("messages"), QJsonDocument::fromJson(q.value(14).toByteArray()).object());
    if (!q.isNull(15))
        r.insert(QStringLiteral("out"), QJsonDocument::fromJson(q.value(15).toByteArray()).array());
    return r;
}

Status badRun(const QString &why)
{
    return Status(Status::Code::BadRequest, QStringLiteral("run record: ") + why);
}

/// The out_of_run column's value for @p out: NULL for nothing out, else the array as JSON.
QVariant outColumn(const QJsonArray &out)
{
    return out.isEmpty() ? QVariant(QMetaType::fromType<QString>())
                         : QVariant(QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Compact)));
}

} // namespace

Status RunRegistry::lostMaster(const QString &partition, qint64 nowMs)
{
    QSqlQuery q = m_db->query();
    if (Status st =
            m_db->exec(q, QStringLiteral("SELECT number FROM runs WHERE partition = ? AND end_time IS NULL"),
                       {partition}, "reading unfinished runs");
        !st.isOk())
        return st;
    QList<qint64> lost;
    while (q.next())
        lost << q.value(0).toLongLong();
    for (qint64 n : std::as_const(lost)) {
        if (Status st = m_db->exec(
                q,
                QStringLiteral("UPDATE runs SET end_time = ?, end_reason = 'master lost', end_message = ? "
                               "WHERE number = ?"),
                {nowMs, QStringLiteral("the run never ended: a new run of the partition started"), n},
                "ending a lost run");
            !st.isOk())
            return st;
        qCWarning(lcRunRegistry).noquote() << "run" << n << "of" << partition << "ended as master lost";
    }
    return {};
}

Status RunRegistry::start(const QJsonObject &run, QJsonObject *out)
{
    const QString partition = run.value(QStringLiteral("partition")).toString();
    if (partition.isEmpty())
        return badRun(QStringLiteral("no partition"));
    const QString runType = run.value(QStringLiteral("run_type")).toString();
    if (runType.isEmpty())
        return badRun(QStringLiteral("no run_type"));
    if (!run.value(QStringLiteral("processes")).isArray() && run.contains(QStringLiteral("processes")))
        return badRun(QStringLiteral("processes: expected an array"));
    if (!run.value(QStringLiteral("out")).isArray() && run.contains(QStringLiteral("out")))
        return badRun(QStringLiteral("out: expected an array"));
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (Status st = m_db->begin(); !st.isOk())
        return st;
    QSqlQuery q = m_db->query();
    Status st = lostMaster(partition, now);
    if (st.isOk())
        st = m_db->exec(q, QStringLiteral("SELECT max(number) FROM runs"), {}, "allocating a run number");
    const qint64 number = st.isOk() && q.next() ? q.value(0).toLongLong() + 1 : 0;
    const QByteArray processes =
        QJsonDocument(run.value(QStringLiteral("processes")).toArray()).toJson(QJsonDocument::Compact);
    if (st.isOk())
        st = m_db->exec(
            q,
            QStringLiteral(
                "INSERT INTO runs (number, partition, run_type, config_version, config_tag, operator, "
                "master, processes, start_time, out_of_run) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
            {number, partition, runType, run.value(QStringLiteral("config_version")).toInteger(),
             run.value(QStringLiteral("config_tag")).toString(),
             run.value(QStringLiteral("operator")).toString(), run.value(QStringLiteral("master")).toString(),
             QString::fromUtf8(processes), now, outColumn(run.value(QStringLiteral("out")).toArray())},
            "recording the run");
    if (!st.isOk()) {
        m_db->rollback();
        return st;
    }
    if (st = m_db->commit(); !st.isOk())
        return st;
    qCInfo(lcRunRegistry).noquote() << "run" << number << "of" << partition << "started";
    return show(number, out);
}

Status RunRegistry::end(qint64 number, const QString &reason, const QString &message, qint64 events,
                        qint64 bytes, const QJsonObject &messages, const QJsonValue &outOfRun,
                        QJsonObject *out)
{
    if (reason != QLatin1String("normal") && reason != QLatin1String("error"))
        return badRun(QStringLiteral("end_reason '%1': expected normal or error").arg(reason));
    if (!outOfRun.isUndefined() && !outOfRun.isArray())
        return badRun(QStringLiteral("out: expected an array"));
    if (Status st = m_db->begin(); !st.isOk())
        return st;
    QSqlQuery q = m_db->query();
    Status st = m_db->exec(q, QStringLiteral("SELECT end_reason FROM runs WHERE number = ?"), {number},
                           "reading the run");
    if (st.isOk() && !q.next())
        st = Status(Status::Code::NotFound, QStringLiteral("unknown run %1").arg(number));
    else if (st.isOk() && !q.isNull(0))
        st = Status(Status::Code::AlreadyExists,
                    QStringLiteral("run %1 has ended already (%2)").arg(number).arg(q.value(0).toString()));
    if (st.isOk() && outOfRun.isArray())
        st = m_db->exec(q, QStringLiteral("UPDATE runs SET out_of_run = ? WHERE number = ?"),
                        {outColumn(outOfRun.toArray()), number}, "recording what was out of the run");
    if (st.isOk())
        st = m_db->exec(
            q,
            QStringLiteral(
                "UPDATE runs SET end_time = ?, end_reason = ?, end_message = ?, events = ?, bytes = ?, "
                "messages = ? WHERE number = ?"),
            {QDateTime::currentMSecsSinceEpoch(), reason, message, events, bytes,
             messages.isEmpty()
                 ? QVariant(QMetaType::fromType<QString>())
                 : QVariant(QString::fromUtf8(QJsonDocument(messages).toJson(QJsonDocument::Compact))),
             number},
            "ending the run");
    if (!st.isOk()) {
        m_db->rollback();
        return st;
    }
    if (st = m_db->commit(); !st.isOk())
        return st;
    return show(number, out);
}

Status RunRegistry::show(qint64 number, QJsonObject *out)
{
    QSqlQuery q = m_db->query();
    if (Status st =
            m_db->exec(q, QStringLiteral("SELECT %1 FROM runs WHERE number = ?").arg(QLatin1String(columns)),
                       {number}, "reading the run");
        !st.isOk())
        return st;
    if (!q.next())
        return Status(Status::Code::NotFound, QStringLiteral("unknown run %1").arg(number));
    *out = runFrom(q);
    return {};
}

Status RunRegistry::list(qint64 sinceMs, const QString &runType, const QString &partition, int limit,
                         qint64 before, QList<QJsonObject> *out)
{
    QSqlQuery q = m_db->query();
    q.setForwardOnly(true);
    // Newest first along the primary key; the filters are checked on the way (a page of `limit`).
    const QString sql =
        QStringLiteral(
            "SELECT %1 FROM runs WHERE number < ? AND start_time >= ? AND (? = '' OR run_type = ?) "
            "AND (? = '' OR partition = ?) ORDER BY number DESC LIMIT ?")
            .arg(QLatin1String(columns));
    if (Status st = m_db->exec(q, sql,
                               {before > 0 ? before : std::numeric_limits<qint64>::max(), sinceMs, runType,
                                runType, partition, partition, limit},
                               "listing runs");
        !st.isOk())
        return st;
    while (q.next())
        out->append(runFrom(q));
    return {};
}

} // namespace dialog::configdb
