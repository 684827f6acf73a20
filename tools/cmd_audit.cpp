// dialogctl audit: who sent which command and wrote which IS object, and whether it was allowed — from
// the message log (dialog-logger) or from the audit files of the daemons (--file).
#include "clientsetup.h"
#include "commands.h"

#include "dialog/audit.h"
#include "dialog/logrecord.h"
#include "dialog/security.h"

#include <QDateTime>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cstdio>

namespace dialog::tool {

namespace {

/// The exit code when a chain is broken: the trail was tampered with, or records were lost.
constexpr int ChainBroken = 5;

void printAudit(const AuditRecord &r, AuditVerdict verdict, bool json)
{
    QByteArray line;
    if (json) {
        QJsonObject o = r.toJson();
        o.insert(QStringLiteral("verified"), auditVerdictName(verdict));
        line = QJsonDocument(o).toJson(QJsonDocument::Compact);
    } else {
        line = QStringLiteral("%1 %2 %3 %4 %5 by %6 user %7 host %8 (%9) [%10]")
                   .arg(QDateTime::fromMSecsSinceEpoch(r.timeMs).toString(
                            QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")),
                        r.allowed ? QStringLiteral("ALLOWED") : QStringLiteral("REFUSED"),
                        accessKindName(r.kind), r.name, r.operation, r.origin.process,
                        r.origin.user.isEmpty() ? QStringLiteral("?") : r.origin.user,
                        r.origin.host.isEmpty() ? QStringLiteral("?") : r.origin.host, r.origin.address)
                   .arg(r.because.isEmpty() ? r.daemon : r.daemon + QLatin1Char(' ') + r.because)
                   .toUtf8();
        if (verdict != AuditVerdict::Verified)
            line += ' ' + auditVerdictName(verdict).toUpper().toUtf8();
    }
    std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
    std::fputc('\n', stdout);
}

/// The audit records of the message log at or after @p sinceMs (oldest first), paging through it.
bool fromLogger(Client &client, qint64 sinceMs, qint64 untilMs, int timeoutMs, QList<AuditRecord> *out,
                QString *error)
{
    LogQuery q;
    q.sinceMs = sinceMs;
    q.untilMs = untilMs;
    q.category = auditCategory();
    q.limit = 10000;
    for (;;) {
        Reply answer;
        QEventLoop loop;
        client.request(logservice::service(), QByteArray(1, logservice::QueryKind) + q.encode(), timeoutMs,
                       &loop, [&](const Reply &r) {
                           answer = r;
                           loop.quit();
                       });
        loop.exec();
        if (!answer.isOk()) {
            *error = answer.error() == Status::Code::Timeout
                         ? QStringLiteral("no answer from %1 within %2 ms (is dialog-logger running? Without "
                                          "one, read the daemons' audit files with --file)")
                               .arg(logservice::service())
                               .arg(timeoutMs)
                         : answer.errorString();
            return false;
        }
        LogPage page;
        if (const Status read = LogPage::decode(answer.data(), &page); !read.isOk()) {
            *error = read.message();
            return false;
        }
        for (const LogRecord &rec : page.records)
            if (const auto a = AuditRecord::fromValues(rec.values, rec.timeMs))
                out->append(*a);
        if (!page.more || page.records.isEmpty())
            return true;
        q.beforeId = page.records.last().id;
    }
}

/// The partition's secret (--secret-file, $DIALOG_SECRET_FILE), which keyed chains are checked with.
bool secretOf(const OptionTable &p, QByteArray *secret, QString *error)
{
    ClientOptions o = ClientOptions::fromEnvironment(QStringLiteral("dialogctl-audit"));
    if (const Status st = o.applyParser(p.parser()); !st.isOk()) {
        *error = st.message();
        return false;
    }
    if (o.secretFile.isEmpty())
        return true;
    const Status st = security::readSecretFile(o.secretFile, secret);
    if (!st.isOk())
        *error = st.message();
    return st.isOk();
}

/// One line on stderr: how many records were verified, and every break; the exit code.
int summarize(const AuditCheck &check, bool haveSecret)
{
    int counts[4] = {};
    for (AuditVerdict v : check.verdicts)
        ++counts[int(v)];
    std::fprintf(stderr,
                 "dialogctl audit: %d records verified, %d chained without a key, %d unverified, %d broken "
                 "(%d chains%s)\n",
                 counts[int(AuditVerdict::Verified)], counts[int(AuditVerdict::Chained)],
                 counts[int(AuditVerdict::Unverified)], counts[int(AuditVerdict::Broken)], check.chains,
                 haveSecret ? "" : "; no secret: keyed records cannot be checked");
    for (const QString &b : check.breaks)
        std::fprintf(stderr, "dialogctl audit: chain broken: %s\n", qPrintable(b));
    return check.breaks.isEmpty() ? 0 : ChainBroken;
}

} // namespace

int audit(const QStringList &args)
{
    const QString verb = QStringLiteral("audit");
    qint64 timeout = 5000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Shows the audit trail: every command the Control Server relayed or refused and every IS write an IS "
        "server applied or refused, with its origin (process, user, host, address) and the access-list rule "
        "that decided. Read from the message log (dialog-logger), or with --file from the audit files of the "
        "daemons (--audit-file; rotated generations PATH.1 … included). Oldest first. Each daemon chains its "
        "records (each holds the hash of the one before, keyed by the partition's secret): a record that is "
        "not \"verified\" is marked at the end of its line (chained: consistent but unkeyed; unverified: no "
        "chain or no secret to check it; broken). A summary goes to stderr; exit code 5 when a chain is "
        "broken (records altered, inserted, back-dated or removed)."));
    p.add(
        Option::text(QStringLiteral("since"), QStringLiteral("time"),
                     QStringLiteral(
                         "From this time: 1h, 30m, 2026-11-23T18:00:00 or ms since the epoch (default 1h)."))
            .defaultValue(QStringLiteral("1h")));
    p.add(Option::text(QStringLiteral("until"), QStringLiteral("time"),
                       QStringLiteral("Up to this time (same forms).")));
    p.add(Option::text(
        QStringLiteral("file"), QStringLiteral("path"),
        QStringLiteral("Read this audit file (and its rotated generations) instead of the message log; "
                       "may be repeated.")));
    p.add(Option::text(QStringLiteral("kind"), QStringLiteral("kind"),
                       QStringLiteral("Only \"command\", \"is-write\" or \"transition\" records.")));
    p.add(Option::flag(QStringLiteral("refused"), QStringLiteral("Only refused actions.")));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per line.")));
    p.add(Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                           QStringLiteral("Wait this long for the logger (default 5000)."), &timeout,
                           OptionUnit::Milliseconds, 1, 3600000));
    if (!parseOptionsOnly(p, args))
        return 1;
    const auto since = parseLogTime(p.value(QStringLiteral("since")));
    if (!since)
        return fail(verb, QStringLiteral("invalid --since '%1' (e.g. 1h, 30m, 2026-11-23T18:00:00)")
                              .arg(p.value(QStringLiteral("since"))));
    qint64 until = 0;
    if (p.isSet(QStringLiteral("until"))) {
        const auto u = parseLogTime(p.value(QStringLiteral("until")));
        if (!u)
            return fail(verb, QStringLiteral("invalid --until '%1'").arg(p.value(QStringLiteral("until"))));
        until = *u;
    }
    const QString kind = p.value(QStringLiteral("kind"));
    if (!kind.isEmpty() && !accessKindFromName(kind))
        return fail(verb, QStringLiteral("invalid --kind '%1' (command, is-write or transition)").arg(kind));
    QList<AuditRecord> records;
    QString error;
    const QStringList files = p.values(QStringLiteral("file"));
    if (!files.isEmpty()) {
        for (const QString &f : files) {
            if (!QFile::exists(f))
                return fail(verb, QStringLiteral("no audit file %1").arg(f));
            int skipped = 0;
            records += AuditTrail::read(f, *since, &skipped);
            if (skipped)
                std::fprintf(stderr, "dialogctl audit: %s: %d unreadable lines skipped\n", qPrintable(f),
                             skipped);
        }
    } else {
        auto client = makeClient(p, verb, &error);
        if (!client)
            return fail(verb, error);
        if (!fromLogger(*client, *since, until, int(timeout), &records, &error))
            return fail(verb, error);
    }
    std::stable_sort(records.begin(), records.end(),
                     [](const AuditRecord &a, const AuditRecord &b) { return a.timeMs < b.timeMs; });
    QByteArray secret;
    if (!secretOf(p, &secret, &error))
        return fail(verb, error);
    const AuditCheck check = verifyAuditChains(records, secret);
    const bool json = p.isSet(QStringLiteral("json"));
    for (qsizetype i = 0; i < records.size(); ++i) {
        const AuditRecord &r = records.at(i);
        if ((until && r.timeMs > until) || (!kind.isEmpty() && accessKindName(r.kind) != kind) ||
            (p.isSet(QStringLiteral("refused")) && r.allowed))
            continue;
        printAudit(r, check.verdicts.at(i), json);
    }
    std::fflush(stdout);
    return summarize(check, !secret.isEmpty());
}

} // namespace dialog::tool
