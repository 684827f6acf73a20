// dialogctl runs: the run registry of dialog-configdb — ls, show, diff.
#include "configsetup.h"

#include "dialog/logrecord.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>

namespace dialog::tool {

namespace {

const char *runsUsage =
    "usage: dialogctl runs <ls|show|diff> [options]\n"
    "\n"
    "  ls          the runs, newest first (--since, --type, --partition, --limit, --json)\n"
    "  show N      everything recorded about run N\n"
    "  diff N M    the configuration, the processes and what was out of two runs, compared\n";

QString timeText(const QJsonValue &ms)
{
    return ms.isDouble() ? QDateTime::fromMSecsSinceEpoch(ms.toInteger())
                               .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                         : QStringLiteral("-");
}

QString endText(const QJsonObject &r)
{
    if (!r.contains(QStringLiteral("end_reason")))
        return QStringLiteral("running");
    QString t = r.value(QStringLiteral("end_reason")).toString();
    if (r.contains(QStringLiteral("end_message")))
        t += QStringLiteral(": ") + r.value(QStringLiteral("end_message")).toString();
    return t;
}

/// node → what kept it out of @p run ("disabled", "removed: lost"; several removals joined by "; ").
QMap<QString, QString> outOf(const QJsonObject &run)
{
    QMap<QString, QString> out;
    for (const QJsonValue &ov : run.value(QStringLiteral("out")).toArray()) {
        const QJsonObject o = ov.toObject();
        const QString what = o.value(QStringLiteral("out")).toString();
        QString text = what == QLatin1String("removed")
                           ? QStringLiteral("removed: %1").arg(o.value(QStringLiteral("reason")).toString())
                           : what;
        QString &entry = out[o.value(QStringLiteral("node")).toString()];
        entry = entry.isEmpty() ? text : entry + QStringLiteral("; ") + text;
    }
    return out;
}

struct RunsVerb
{
    QString name;
    OptionTable table;
    QString database;
    qint64 timeoutMs = 10000;
    ConfigSession session;

    explicit RunsVerb(const QString &verb) : name(verb), table(program(verb)) {}
    bool parse(const QStringList &args)
    {
        addConfigOptions(table, &database, &timeoutMs);
        table.add(Option::flag(QStringLiteral("json"), QStringLiteral("JSON (one object per line).")));
        return tool::parse(table, args);
    }
    bool open(QString *error) { return session.open(table, name, database, timeoutMs, error); }
    bool json() const { return table.isSet(QStringLiteral("json")); }

    Status call(const QJsonObject &request, QJsonObject *answer)
    {
        return session.await([&](auto done) {
            session.config->call(request, [&, done](const Status &s, const QJsonObject &a) {
                *answer = a;
                done(s);
            });
        });
    }
    Status run(qint64 number, QJsonObject *out)
    {
        return call({{QStringLiteral("op"), QStringLiteral("run")}, {QStringLiteral("number"), number}}, out);
    }
};

int runsLs(const QStringList &args)
{
    RunsVerb v(QStringLiteral("runs ls"));
    v.table.setDescription(QStringLiteral("Lists the runs, newest first."));
    qint64 since = 0, limit = 50, before = 0;
    QString type, partition;
    v.table.add(
        {Option::custom(QStringLiteral("since"), QStringLiteral("time"),
                        QStringLiteral("Started at or after: 2h, 3d, ISO 8601 or ms."),
                        [&since](const QString &s) {
                            const auto t = parseLogTime(s);
                            if (!t)
                                return Option::refuse(
                                    QStringLiteral("expected e.g. 2h, 3d, 2026-11-23T18:00:00 or ms"));
                            since = *t;
                            return Status();
                        }),
         Option::text(QStringLiteral("type"), QStringLiteral("run type"),
                      QStringLiteral("Only runs of this type."), &type),
         Option::text(QStringLiteral("partition"), QStringLiteral("name"),
                      QStringLiteral("Only runs of this partition."), &partition),
         Option::integer(QStringLiteral("limit"), QStringLiteral("n"),
                         QStringLiteral("At most this many (default 50)."), &limit, 1, 100000),
         Option::integer(QStringLiteral("before"), QStringLiteral("number"),
                         QStringLiteral("Paging: runs below this number."), &before, 1, qint64(1) << 62)});
    if (!v.parse(args))
        return 1;
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    QJsonObject a;
    const Status st = v.call({{QStringLiteral("op"), QStringLiteral("runs")},
                              {QStringLiteral("since"), since},
                              {QStringLiteral("run_type"), type},
                              {QStringLiteral("partition"), partition},
                              {QStringLiteral("limit"), limit},
                              {QStringLiteral("before"), before}},
                             &a);
    if (!st.isOk())
        return fail(v.name, st.message());
    for (const QJsonValue &rv : a.value(QStringLiteral("runs")).toArray()) {
        const QJsonObject r = rv.toObject();
        if (v.json()) {
            print(QJsonDocument(r).toJson(QJsonDocument::Compact) + '\n');
            continue;
        }
        QString config = QStringLiteral("v%1").arg(r.value(QStringLiteral("config_version")).toInteger());
        if (!r.value(QStringLiteral("config_tag")).toString().isEmpty())
            config += QStringLiteral(" (%1)").arg(r.value(QStringLiteral("config_tag")).toString());
        print(QStringLiteral("%1  %2  %3  %4  %5  %6  events %7  %8\n")
                  .arg(r.value(QStringLiteral("number")).toInteger(), 6)
                  .arg(r.value(QStringLiteral("partition")).toString(),
                       r.value(QStringLiteral("run_type")).toString(), config,
                       timeText(r.value(QStringLiteral("start_time"))),
                       timeText(r.value(QStringLiteral("end_time"))))
                  .arg(r.value(QStringLiteral("events")).toInteger())
                  .arg(endText(r))
                  .toUtf8());
    }
    return 0;
}

int runsShow(const QStringList &args)
{
    RunsVerb v(QStringLiteral("runs show"));
    v.table.setDescription(QStringLiteral("Prints everything recorded about a run."));
    v.table.addPositional(QStringLiteral("number"), QStringLiteral("The run number."));
    if (!v.parse(args))
        return 1;
    bool ok = false;
    const qint64 number = v.table.positionalArguments().value(0).toLongLong(&ok);
    if (v.table.positionalArguments().size() != 1 || !ok)
        return fail(v.name, QStringLiteral("expected a run number"));
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    QJsonObject r;
    if (const Status st = v.run(number, &r); !st.isOk())
        return fail(v.name, st.message());
    if (v.json()) {
        print(QJsonDocument(r).toJson(QJsonDocument::Compact) + '\n');
        return 0;
    }
    QString out = QStringLiteral("run %1 of %2 (%3)\n")
                      .arg(number)
                      .arg(r.value(QStringLiteral("partition")).toString(),
                           r.value(QStringLiteral("run_type")).toString());
    out += QStringLiteral("  configuration  version %1 %2\n")
               .arg(r.value(QStringLiteral("config_version")).toInteger())
               .arg(r.value(QStringLiteral("config_tag")).toString());
    out += QStringLiteral("  operator       %1\n  master         %2\n")
               .arg(r.value(QStringLiteral("operator")).toString(),
                    r.value(QStringLiteral("master")).toString());
    out += QStringLiteral("  started        %1\n  ended          %2 (%3)\n")
               .arg(timeText(r.value(QStringLiteral("start_time"))),
                    timeText(r.value(QStringLiteral("end_time"))), endText(r));
    const QJsonObject messages = r.value(QStringLiteral("messages")).toObject();
    for (auto it = messages.begin(); it != messages.end(); ++it) {
        QStringList counts;
        const QJsonObject bySeverity = it.value().toObject();
        for (auto c = bySeverity.begin(); c != bySeverity.end(); ++c)
            counts << QStringLiteral("%1 %2").arg(c.value().toInteger()).arg(c.key());
        out += QStringLiteral("  messages       %1: %2\n").arg(it.key(), counts.join(QStringLiteral(", ")));
    }
    const QJsonArray outOfRun = r.value(QStringLiteral("out")).toArray();
    out += outOfRun.isEmpty() ? QStringLiteral("  out of the run (nothing)\n")
                              : QStringLiteral("  out of the run\n");
    for (const QJsonValue &ov : outOfRun) {
        const QJsonObject o = ov.toObject();
        QString line = QStringLiteral("    %1 %2 (by %3)")
                           .arg(o.value(QStringLiteral("node")).toString(), -16)
                           .arg(o.value(QStringLiteral("out")).toString(),
                                o.value(QStringLiteral("segment")).toString());
        if (o.value(QStringLiteral("out")).toString() == QLatin1String("removed"))
            line += QStringLiteral(" at %1: %2")
                        .arg(timeText(o.value(QStringLiteral("time_ms"))),
                             o.value(QStringLiteral("reason")).toString());
        if (o.contains(QStringLiteral("recovered_ms")))
            line +=
                QStringLiteral("; recovered at %1").arg(timeText(o.value(QStringLiteral("recovered_ms"))));
        out += line + QLatin1Char('\n');
    }
    out += QStringLiteral("  events         %1\n  bytes          %2\n  processes\n")
               .arg(r.value(QStringLiteral("events")).toInteger())
               .arg(r.value(QStringLiteral("bytes")).toInteger());
    for (const QJsonValue &pv : r.value(QStringLiteral("processes")).toArray()) {
        const QJsonObject p = pv.toObject();
        out += QStringLiteral("    %1 %2 pid %3 %4\n")
                   .arg(p.value(QStringLiteral("name")).toString(), -16)
                   .arg(p.value(QStringLiteral("host")).toString())
                   .arg(p.value(QStringLiteral("pid")).toInteger())
                   .arg(p.value(QStringLiteral("version")).toString(QStringLiteral("unknown")));
    }
    print(out.toUtf8());
    return 0;
}

/// name → @p field ("host", "version") of a run's processes ("unknown" when not recorded).
QMap<QString, QString> processesOf(const QJsonObject &run, const QString &field)
{
    QMap<QString, QString> out;
    for (const QJsonValue &pv : run.value(QStringLiteral("processes")).toArray()) {
        const QJsonObject p = pv.toObject();
        out.insert(p.value(QStringLiteral("name")).toString(),
                   p.value(field).toString(QStringLiteral("unknown")));
    }
    return out;
}

/// One line "WHAT KEY: A -> B" per key whose value differs between @p a and @p b, sorted by key;
/// @p absent stands for a key one side does not have.
QString changes(const QString &what, const QMap<QString, QString> &a, const QMap<QString, QString> &b,
                const QString &absent)
{
    QStringList keys = a.keys() + b.keys();
    keys.removeDuplicates();
    keys.sort();
    QString out;
    for (const QString &k : std::as_const(keys))
        if (a.value(k) != b.value(k))
            out += QStringLiteral("%1 %2: %3 -> %4\n").arg(what, k, a.value(k, absent), b.value(k, absent));
    return out;
}

int runsDiff(const QStringList &args)
{
    RunsVerb v(QStringLiteral("runs diff"));
    v.table.setDescription(
        QStringLiteral("Compares two runs: the configuration versions they ran with (a unified "
                       "diff of the documents), their processes' hosts and software versions, and the "
                       "nodes of the run-control tree out of either run."));
    v.table.addPositional(QStringLiteral("n"), QStringLiteral("The first run."));
    v.table.addPositional(QStringLiteral("m"), QStringLiteral("The second run."));
    if (!v.parse(args))
        return 1;
    const QStringList pos = v.table.positionalArguments();
    bool okN = false, okM = false;
    const qint64 n = pos.value(0).toLongLong(&okN), m = pos.value(1).toLongLong(&okM);
    if (pos.size() != 2 || !okN || !okM)
        return fail(v.name, QStringLiteral("expected two run numbers"));
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    QJsonObject a, b;
    if (Status st = v.run(n, &a); !st.isOk())
        return fail(v.name, st.message());
    if (Status st = v.run(m, &b); !st.isOk())
        return fail(v.name, st.message());
    const qint64 va = a.value(QStringLiteral("config_version")).toInteger(),
                 vb = b.value(QStringLiteral("config_version")).toInteger();
    QString out = QStringLiteral("run %1: configuration version %2; run %3: version %4\n")
                      .arg(n)
                      .arg(va)
                      .arg(m)
                      .arg(vb);
    QList<config::DocumentDiff> diffs;
    const Status st = v.session.await([&](auto done) {
        v.session.config->diff(QString::number(va), QString::number(vb),
                               [&, done](const Status &s, const QList<config::DocumentDiff> &d) {
                                   diffs = d;
                                   done(s);
                               });
    });
    if (!st.isOk())
        return fail(v.name, st.message());
    for (const config::DocumentDiff &d : std::as_const(diffs))
        out += config::unifiedDiff(d.path, d.before.value_or(QByteArray()), d.after.value_or(QByteArray()));
    const QString host = QStringLiteral("host"), version = QStringLiteral("version");
    out += changes(QStringLiteral("host of"), processesOf(a, host), processesOf(b, host),
                   QStringLiteral("(absent)"));
    out += changes(QStringLiteral("software of"), processesOf(a, version), processesOf(b, version),
                   QStringLiteral("(absent)"));
    out += changes(QStringLiteral("out of the run"), outOf(a), outOf(b), QStringLiteral("(in)"));
    print(out.toUtf8());
    return 0;
}

} // namespace

int runsVerb(const QStringList &args)
{
    if (args.size() < 2 || args.at(1) == QLatin1String("--help") || args.at(1) == QLatin1String("-h")) {
        std::fputs(runsUsage, args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? 1 : 0;
    }
    const QString sub = args.at(1);
    QStringList rest = args;
    rest.removeAt(1);
    rest[0] = program(QStringLiteral("runs ") + sub);
    if (sub == QLatin1String("ls"))
        return runsLs(rest);
    if (sub == QLatin1String("show"))
        return runsShow(rest);
    if (sub == QLatin1String("diff"))
        return runsDiff(rest);
    std::fprintf(stderr, "dialogctl runs: unknown verb '%s'\n\n%s", qPrintable(sub), runsUsage);
    return 1;
}

} // namespace dialog::tool
