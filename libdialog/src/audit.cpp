#include "dialog/audit.h"

#include "dialog/options.h"
#include "dialog/report.h"
#include "dialog/security.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QMessageAuthenticationCode>
#include <algorithm>

namespace dialog {

QJsonObject AuditRecord::toJson() const
{
    QJsonObject o{
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
    if (sequence > 0) {
        o.insert(QStringLiteral("chain"), chain);
        o.insert(QStringLiteral("seq"), QString::number(sequence)); // a string: no double rounding
        o.insert(QStringLiteral("prev"), previous);
        o.insert(QStringLiteral("hash"), hash);
        o.insert(QStringLiteral("keyed"), keyed);
    }
    return o;
}

std::optional<AuditRecord> AuditRecord::fromJson(const QJsonObject &o)
{
    return fromValues(o.toVariantMap(), o.value(QLatin1String("timeMs")).toVariant().toLongLong());
}

QVariantMap AuditRecord::values() const
{
    QVariantMap v = toJson().toVariantMap();
    v.remove(QStringLiteral("time"));
    v.remove(QStringLiteral("timeMs")); // the message's own time ...
    if (sequence > 0)
        v.insert(QStringLiteral("decidedMs"), QString::number(timeMs)); // ... but the chain's is this
    return v;
}

std::optional<AuditRecord> AuditRecord::fromValues(const QVariantMap &v, qint64 timeMs)
{
    AuditRecord r;
    const auto kind = accessKindFromName(v.value(QStringLiteral("kind")).toString());
    const QString outcome = v.value(QStringLiteral("outcome")).toString();
    if (!kind || (outcome != QLatin1String("allowed") && outcome != QLatin1String("refused")) || timeMs <= 0)
        return std::nullopt;
    r.timeMs = timeMs;
    r.kind = *kind;
    r.allowed = outcome == QLatin1String("allowed");
    r.daemon = v.value(QStringLiteral("daemon")).toString();
    r.name = v.value(QStringLiteral("name")).toString();
    r.operation = v.value(QStringLiteral("operation")).toString();
    r.origin.process = v.value(QStringLiteral("process")).toString();
    r.origin.user = v.value(QStringLiteral("user")).toString();
    r.origin.host = v.value(QStringLiteral("host")).toString();
    r.origin.address = v.value(QStringLiteral("address")).toString();
    r.because = v.value(QStringLiteral("rule")).toString();
    r.chain = v.value(QStringLiteral("chain")).toString();
    r.sequence = v.value(QStringLiteral("seq")).toString().toULongLong();
    r.previous = v.value(QStringLiteral("prev")).toString();
    r.hash = v.value(QStringLiteral("hash")).toString();
    r.keyed = v.value(QStringLiteral("keyed")).toBool();
    if (r.sequence > 0 && v.contains(QStringLiteral("decidedMs")))
        r.timeMs = v.value(QStringLiteral("decidedMs")).toString().toLongLong();
    return r;
}

QString AuditRecord::chainHash(const QByteArray &key) const
{
    // Each field as a netstring (length:bytes,): no field can spill into the next.
    QByteArray content("DIALOG-AUDIT-1\n");
    const auto add = [&content](const QString &field) {
        const QByteArray u = field.toUtf8();
        content += QByteArray::number(u.size()) + ':' + u + ',';
    };
    for (const QString &f :
         {QString::number(timeMs), daemon, accessKindName(kind), name, operation, origin.process, origin.user,
          origin.host, origin.address, allowed ? QStringLiteral("allowed") : QStringLiteral("refused"),
          because, chain, QString::number(sequence), previous,
          keyed ? QStringLiteral("keyed") : QStringLiteral("plain")})
        add(f);
    if (key.isEmpty())
        return QString::fromLatin1(QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex());
    return QString::fromLatin1(
        QMessageAuthenticationCode::hash(content, key, QCryptographicHash::Sha256).toHex());
}

QByteArray AuditRecord::auditKey(const QByteArray &secret, const QString &daemon)
{
    if (secret.isEmpty())
        return {};
    return QMessageAuthenticationCode::hash("DIALOG-AUDIT-1 " + daemon.toUtf8(), secret,
                                            QCryptographicHash::Sha256);
}

AuditTrail::AuditTrail(const Options &options)
    : m_options(options), m_chain(QString::fromLatin1(security::newNonce().left(8).toHex()))
{
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

Status AuditTrail::open()
{
    if (m_options.path.isEmpty())
        return {};
    m_file.setFileName(m_options.path);
    QDir().mkpath(QFileInfo(m_options.path).absolutePath());
    if (!m_file.open(QIODevice::WriteOnly | QIODevice::Append))
        return Status(Status::Code::StorageError,
                      QStringLiteral("audit file %1: %2").arg(m_options.path, m_file.errorString()));
    return {};
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

void AuditTrail::record(AuditRecord r)
{
    r.chain = m_chain;
    r.sequence = ++m_sequence;
    r.previous = m_previous;
    r.keyed = !m_options.secret.isEmpty();
    r.hash = r.chainHash(AuditRecord::auditKey(m_options.secret, r.daemon));
    m_previous = r.hash;
    // The sequence number keeps identical actions apart in the message log (which collapses
    // identical messages).
    dialog::report(r.allowed ? Severity::Info : Severity::Warning, auditCategory(),
                   QStringLiteral("%1 #%2").arg(r.text()).arg(r.sequence), r.values());
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
         QStringLiteral("Access list (JSON): which processes, users and hosts may send which commands, "
                        "write which IS objects and ask for which transitions; refusals are logged "
                        "(default: everything allowed)."),
         QStringLiteral("file")});
    p.addOption(
        {QStringLiteral("audit"),
         QStringLiteral("Keep an audit trail of every command / IS write / transition request (origin, "
                        "outcome) in the message log (category dialog.audit).")});
    p.addOption(
        {QStringLiteral("audit-file"),
         QStringLiteral("Also write the audit trail to this file (JSON lines, rotated); implies --audit."),
         QStringLiteral("path")});
    AuditTrail::Options unused;
    for (const Option &row : trailRows(&unused))
        p.addOption(row.commandLineOption());
}

Status AccessOptions::applyParser(const QCommandLineParser &p)
{
    if (p.isSet(QStringLiteral("access"))) {
        if (const Status st = AccessList::load(p.value(QStringLiteral("access")), &access); !st.isOk())
            return Status(st.code(), QStringLiteral("--access: %1").arg(st.message()));
    }
    trail.path = p.value(QStringLiteral("audit-file"));
    audit = p.isSet(QStringLiteral("audit")) || !trail.path.isEmpty();
    const QList<Option> rows = trailRows(&trail);
    for (const Option &row : rows) {
        if (const Status st = row.apply(p); !st.isOk())
            return st;
    }
    return {};
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

namespace dialog {

QString auditVerdictName(AuditVerdict v)
{
    switch (v) {
    case AuditVerdict::Verified:
        return QStringLiteral("verified");
    case AuditVerdict::Chained:
        return QStringLiteral("chained");
    case AuditVerdict::Unverified:
        return QStringLiteral("unverified");
    case AuditVerdict::Broken:
        break;
    }
    return QStringLiteral("broken");
}

namespace {

/// Why @p r cannot be believed on its own (empty: its hash is right for @p key).
QString hashError(const AuditRecord &r, const QByteArray &key, bool haveSecret)
{
    if (haveSecret && !r.keyed)
        return QStringLiteral("its hash is not keyed although the partition has a secret");
    if (r.keyed && key.isEmpty())
        return {}; // cannot be checked here: unverified, not broken
    if (r.hash != r.chainHash(r.keyed ? key : QByteArray()))
        return QStringLiteral("its hash does not match its content (altered or forged)");
    return {};
}

/// Why @p r does not follow @p before in their chain (empty: it does).
QString linkError(const AuditRecord &r, const AuditRecord *before)
{
    if (!before)
        return r.sequence == 1 && !r.previous.isEmpty()
                   ? QStringLiteral("the first record names a predecessor")
                   : QString();
    if (r.sequence == before->sequence)
        return QStringLiteral("a second record with this number");
    if (r.sequence != before->sequence + 1)
        return QStringLiteral("records %1 to %2 are missing").arg(before->sequence + 1).arg(r.sequence - 1);
    if (r.previous != before->hash)
        return QStringLiteral("it does not follow record %1 (inserted, or that one altered)")
            .arg(before->sequence);
    if (r.timeMs < before->timeMs)
        return QStringLiteral("it is dated before record %1").arg(before->sequence);
    return {};
}

} // namespace

AuditCheck verifyAuditChains(const QList<AuditRecord> &records, const QByteArray &secret)
{
    AuditCheck out;
    out.verdicts.fill(AuditVerdict::Unverified, records.size());
    QHash<QPair<QString, QString>, QList<qsizetype>> chains; // (daemon, chain) -> records
    for (qsizetype i = 0; i < records.size(); ++i)
        if (records.at(i).sequence > 0 && !records.at(i).chain.isEmpty())
            chains[qMakePair(records.at(i).daemon, records.at(i).chain)].append(i);
    out.chains = int(chains.size());
    for (auto it = chains.begin(); it != chains.end(); ++it) {
        QList<qsizetype> &idx = it.value();
        std::stable_sort(idx.begin(), idx.end(), [&](qsizetype a, qsizetype b) {
            return records.at(a).sequence < records.at(b).sequence;
        });
        const QByteArray key = AuditRecord::auditKey(secret, it.key().first);
        const AuditRecord *before = nullptr;
        for (qsizetype i : std::as_const(idx)) {
            const AuditRecord &r = records.at(i);
            const QString bad = hashError(r, key, !secret.isEmpty());
            const QString why = bad.isEmpty() ? linkError(r, before) : bad;
            if (!why.isEmpty()) {
                out.verdicts[i] = AuditVerdict::Broken;
                out.breaks.append(QStringLiteral("%1 chain %2 record %3: %4")
                                      .arg(r.daemon, r.chain)
                                      .arg(r.sequence)
                                      .arg(why));
            } else {
                out.verdicts[i] = !r.keyed        ? AuditVerdict::Chained
                                  : key.isEmpty() ? AuditVerdict::Unverified
                                                  : AuditVerdict::Verified;
            }
            if (bad.isEmpty())
                before = &r; // a forged record does not become the link the next one is checked against
        }
    }
    return out;
}

} // namespace dialog
