#include "dialog/audit.h"

#include "dialog/options.h"
#include "dialog/report.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <algorithm>

namespace dialog {

QJsonObject AuditRecord::toJson() const
{
    return QJsonObject{
        {QStringLiteral("time"), QDateTime::fromMSecsSinceEpoch(timeMs, Qt::UTC).toString(Qt::ISODateWithMs)},
        {QStringLiteral("timeMs"), timeMs},
        {QStringLiteral("daemon"), daemon},
        {QStringLiteral("kind"), accessKindName(kind)},
        {QStringLiteral("name"), name},
        {QStringLiteral("operation"), operation},
        {QStringLiteral("process"), origin.process},
        {QStringLiteral("user"), origin.user},
        {QStringLiteral("host"), origin.host},
        {QStringLiteral("address"), origin.address},
        {QStringLiteral("outcome"), allowed ? QStringLiteral("allowed") : QStringLiteral("refused")},
        {QStringLiteral("rule"), because},
    };
}

std::optional<AuditRecord> AuditRecord::fromJson(const QJsonObject &o)
{
    return fromValues(o.toVariantMap(), o.value(QLatin1String("timeMs")).toVariant().toLongLong());
}

QVariantMap AuditRecord::values() const
{
    QVariantMap v = toJson().toVariantMap();
    v.remove(QStringLiteral("time"));
    v.remove(QStringLiteral("timeMs")); // the message's own time
    return v;
}

std::optional<AuditRecord> AuditRecord::fromValues(const QVariantMap &v, qint64 timeMs)
{
    AuditRecord r;
    const QString kind = v.value(QStringLiteral("kind")).toString();
    const QString outcome = v.value(QStringLiteral("outcome")).toString();
    if ((kind != QLatin1String("command") && kind != QLatin1String("is-write")) ||
        (outcome != QLatin1String("allowed") && outcome != QLatin1String("refused")) || timeMs <= 0)
        return std::nullopt;
    r.timeMs = timeMs;
    r.kind = kind == QLatin1String("command") ? AccessList::Kind::Command : AccessList::Kind::IsWrite;
    r.allowed = outcome == QLatin1String("allowed");
    r.daemon = v.value(QStringLiteral("daemon")).toString();
    r.name = v.value(QStringLiteral("name")).toString();
    r.operation = v.value(QStringLiteral("operation")).toString();
    r.origin.process = v.value(QStringLiteral("process")).toString();
    r.origin.user = v.value(QStringLiteral("user")).toString();
    r.origin.host = v.value(QStringLiteral("host")).toString();
    r.origin.address = v.value(QStringLiteral("address")).toString();
    r.because = v.value(QStringLiteral("rule")).toString();
    return r;
}

QString AuditRecord::text() const
{
    const QString who = QStringLiteral("%1 (%2@%3 %4)")
                            .arg(origin.process, origin.user.isEmpty() ? QStringLiteral("?") : origin.user,
                                 origin.host.isEmpty() ? QStringLiteral("?") : origin.host, origin.address);
    QString t = QStringLiteral("%1 %2 %3 by %4: %5")
                    .arg(accessKindName(kind), name, operation, who,
                         allowed ? QStringLiteral("allowed") : QStringLiteral("refused"));
    if (!because.isEmpty())
        t += QStringLiteral(" (%1)").arg(because);
    return t;
}

bool AuditTrail::open(QString *error)
{
    if (m_options.path.isEmpty())
        return true;
    m_file.setFileName(m_options.path);
    QDir().mkpath(QFileInfo(m_options.path).absolutePath());
    if (!m_file.open(QIODevice::WriteOnly | QIODevice::Append)) {
        *error = QStringLiteral("audit file %1: %2").arg(m_options.path, m_file.errorString());
        return false;
    }
    return true;
}

void AuditTrail::rotate()
{
    m_file.close();
    const QString &p = m_options.path;
    QFile::remove(QStringLiteral("%1.%2").arg(p).arg(m_options.generations));
    for (int g = m_options.generations - 1; g >= 1; --g)
        QFile::rename(QStringLiteral("%1.%2").arg(p).arg(g), QStringLiteral("%1.%2").arg(p).arg(g + 1));
    if (m_options.generations > 0)
        QFile::rename(p, p + QStringLiteral(".1"));
    else
        QFile::remove(p);
    if (!m_file.open(QIODevice::WriteOnly | QIODevice::Append))
        ++m_writeFailures;
}

void AuditTrail::record(const AuditRecord &r)
{
    // The sequence number keeps identical actions apart in the message log (which collapses
    // identical messages).
    dialog::report(r.allowed ? Severity::Info : Severity::Warning, auditCategory(),
                   QStringLiteral("%1 #%2").arg(r.text()).arg(++m_sequence), r.values());
    if (m_options.path.isEmpty())
        return;
    const QByteArray line = QJsonDocument(r.toJson()).toJson(QJsonDocument::Compact) + '\n';
    if (m_file.isOpen() && m_file.size() > 0 && m_file.size() + line.size() > m_options.maxBytes)
        rotate();
    if (!m_file.isOpen() || m_file.write(line) != line.size() || !m_file.flush())
        ++m_writeFailures;
}

namespace {

// The rows of the audit trail's bounds, written to @p trail.
QList<Option> trailRows(AuditTrail::Options *trail)
{
    return {Option::size(QStringLiteral("audit-file-bytes"), QStringLiteral("n"),
                         QStringLiteral("Size past which the audit file rotates (default 10485760)."),
                         &trail->maxBytes, 4096, qint64(1) << 40),
            Option::integer(QStringLiteral("audit-files"), QStringLiteral("n"),
                            QStringLiteral("Rotated audit files kept: PATH.1 … PATH.N (default 5)."),
                            &trail->generations, 0, 1000)};
}

} // namespace

void AccessOptions::addParserOptions(QCommandLineParser &p)
{
    p.addOption(
        {QStringLiteral("access"),
         QStringLiteral("Access list (JSON): which processes, users and hosts may send which commands "
                        "and write which IS objects; refusals are logged (default: everything allowed)."),
         QStringLiteral("file")});
    p.addOption(
        {QStringLiteral("audit"),
         QStringLiteral("Keep an audit trail of every command / IS write (origin, outcome) in the message "
                        "log (category dialog.audit).")});
    p.addOption(
        {QStringLiteral("audit-file"),
         QStringLiteral("Also write the audit trail to this file (JSON lines, rotated); implies --audit."),
         QStringLiteral("path")});
    AuditTrail::Options unused;
    for (const Option &row : trailRows(&unused))
        p.addOption(row.commandLineOption());
}

bool AccessOptions::applyParser(const QCommandLineParser &p, QString *error)
{
    if (p.isSet(QStringLiteral("access"))) {
        if (const Status st = AccessList::load(p.value(QStringLiteral("access")), &access); !st.isOk()) {
            if (error)
                *error = QStringLiteral("--access: %1").arg(st.message());
            return false;
        }
    }
    trail.path = p.value(QStringLiteral("audit-file"));
    audit = p.isSet(QStringLiteral("audit")) || !trail.path.isEmpty();
    const QList<Option> rows = trailRows(&trail);
    for (const Option &row : rows) {
        if (const Status st = row.apply(p); !st.isOk()) {
            if (error)
                *error = st.message();
            return false;
        }
    }
    return true;
}

QList<AuditRecord> AuditTrail::read(const QString &path, qint64 sinceMs, int *skipped)
{
    QStringList files;
    for (int g = 1; QFileInfo::exists(QStringLiteral("%1.%2").arg(path).arg(g)); ++g)
        files.prepend(QStringLiteral("%1.%2").arg(path).arg(g)); // oldest first
    files.append(path);
    QList<AuditRecord> out;
    int bad = 0;
    for (const QString &file : std::as_const(files)) {
        QFile f(file);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        while (!f.atEnd()) {
            const QByteArray line = f.readLine(1024 * 1024).trimmed();
            if (line.isEmpty())
                continue;
            const QJsonDocument doc = QJsonDocument::fromJson(line);
            const auto r = doc.isObject() ? AuditRecord::fromJson(doc.object()) : std::nullopt;
            if (!r) {
                ++bad;
                continue;
            }
            if (r->timeMs >= sinceMs)
                out.append(*r);
        }
    }
    if (skipped)
        *skipped = bad;
    return out;
}

} // namespace dialog
