// dialog-dqm: data-quality checks on IS histograms (chi2 and Kolmogorov-Smirnov against a
// reference, mean and RMS in a range, dead and noisy bins, too few entries: Undefined), each
// result published to the IS; references kept as files (dialogctl dqm reference set).
#include "dqmserver.h"

#include "dialog/daemon.h"
#include "dialog/options.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <cstdio>

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;

namespace {

dialog::Status readChecks(const QString &path, QList<dialog::dqm::Check> *out)
{
    using dialog::Status;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return Status(Status::Code::StorageError, u"%1: %2"_s.arg(path, f.errorString()));
    QJsonParseError e;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &e);
    if (e.error != QJsonParseError::NoError)
        return Status(Status::Code::BadRequest, u"%1: %2 at offset %3"_s.arg(path, e.errorString()).arg(e.offset));
    QList<dialog::dqm::Check> checks;
    QSet<QString> names;
    for (const QJsonValue &v : doc.object().value(u"checks"_s).toArray()) {
        dialog::dqm::Check c;
        if (const Status s = dialog::dqm::Check::fromJson(v.toObject(), &c); !s.isOk())
            return Status(s.code(), u"%1: %2"_s.arg(path, s.message()));
        if (names.contains(c.name))
            return Status(Status::Code::BadRequest, u"%1: check '%2' twice"_s.arg(path, c.name));
        names.insert(c.name);
        checks.append(c);
    }
    if (checks.isEmpty())
        return Status(Status::Code::BadRequest, u"%1: no \"checks\""_s.arg(path));
    *out = checks;
    return {};
}

/// The alarm server's rules for every check (dialog-alarmserver --rules): <area>/<check>/bad, a
/// major alarm while the check is Bad, and <area>/<check>/warning, a minor one while it is Warning.
QByteArray alarmRules(const QList<dialog::dqm::Check> &checks, const QString &isServer, const QString &area)
{
    QJsonArray alarms;
    for (const dialog::dqm::Check &c : checks) {
        const auto rule = [&](const char *leaf, const char *severity, const char *status) {
            return QJsonObject{
                {u"path"_s, u"%1/%2/%3"_s.arg(area, c.name, QLatin1String(leaf))},
                {u"severity"_s, QLatin1String(severity)},
                {u"description"_s, u"Data quality: %1 (%2 of %3) is %4."_s.arg(c.name, c.algorithm, c.object,
                                                                                QLatin1String(status))},
                {u"guidance"_s, u"Look at %1 in the histogram presenter; the result's details say why."_s.arg(c.object)},
                {u"condition"_s, QJsonObject{{u"is"_s, isServer + QLatin1Char('.') + c.name},
                                             {u"type"_s, u"DQResult"_s},
                                             {u"attribute"_s, u"status"_s},
                                             {u"equals"_s, QLatin1String(status)}}}};
        };
        alarms.append(rule("bad", "major", "Bad"));
        alarms.append(rule("warning", "minor", "Warning"));
    }
    return QJsonDocument(QJsonObject{{u"alarms"_s, alarms}}).toJson();
}

} // namespace

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-dqm"_s);
    OptionTable t(u"dialog-dqm"_s,
                  u"Data-quality checks on IS histograms, every --period-ms: chi2 and Kolmogorov-Smirnov "
                  "against a reference histogram, mean or RMS in a range, dead or noisy bins; too few "
                  "entries, a missing histogram, one of another type or a reference of another binning "
                  "give Undefined with the reason. Each result (Good, Warning, Bad, Undefined, the value "
                  "and the details) is the IS object <is-server>.<check> (DQResult). References are "
                  "files <references>/<check>.json, taken with dialogctl dqm reference set."_s);
    dialog::dqm::ServerOptions o;
    QString checks, name = u"DQM"_s, alarmArea = u"DQ"_s;
    qint64 periodMs = 1000, keepRuns = 50;
    dialog::ClientOptions co = dialog::ClientOptions::fromEnvironment();
    t.add({Option::text(u"checks"_s, u"file"_s, u"The checks (JSON, see docs/dqm.md). Required."_s, &checks),
           Option::text(u"references"_s, u"dir"_s, u"Directory of the reference histograms. Required."_s,
                        &o.referenceDir),
           Option::text(u"is-server"_s, u"name"_s, u"IS server of the results (default DQM)."_s, &o.isServer),
           Option::duration(u"period-ms"_s, u"ms"_s, u"How often every check runs (default 1000)."_s, &periodMs,
                            dialog::OptionUnit::Milliseconds, 50, 3600000),
           Option::text(u"run-info"_s, u"Server.Object"_s,
                        u"The run's IS object (RunInfo: runNumber, state; default RunParams.RunInfo): at the "
                        "end of each run the checked histograms are kept in <references>/runs/<run>/, for "
                        "dialogctl dqm reference set CHECK --from-run N. Empty: none kept."_s,
                        &o.runInfo),
           Option::integer(u"keep-runs"_s, u"n"_s,
                           u"Runs whose histograms are kept (default 50; the oldest are removed)."_s, &keepRuns, 1,
                           100000),
           Option::text(u"name"_s, u"name"_s, u"Process name (default DQM)."_s, &name),
           Option::flag(u"print-alarm-rules"_s,
                        u"Print the rules of dialog-alarmserver for every check (<area>/<check>/bad: major while "
                        "it is Bad; <area>/<check>/warning: minor while it is Warning) and exit."_s),
           Option::text(u"alarm-area"_s, u"path"_s, u"The area of those alarms in the alarm tree (default DQ)."_s,
                        &alarmArea)});
    co.addTo(t);
    if (!t.process(app.arguments()))
        return 1;
    const bool printRules = t.isSet(u"print-alarm-rules"_s);
    if (checks.isEmpty() || (o.referenceDir.isEmpty() && !printRules))
        return t.fail(u"--checks FILE and --references DIR are required"_s);
    if (const dialog::Status s = readChecks(checks, &o.checks); !s.isOk())
        return t.fail(s.message());
    if (printRules) {
        std::fputs(alarmRules(o.checks, o.isServer, alarmArea).constData(), stdout);
        return 0;
    }
    o.periodMs = int(periodMs);
    o.keepRuns = int(keepRuns);
    if (QString server, object; !o.runInfo.isEmpty() && !dialog::is::Dictionary::splitName(o.runInfo, &server, &object))
        return t.fail(u"--run-info must name an IS object as Server.Object (got '%1')"_s.arg(o.runInfo));
    co.name = name;
    co.exitOnRefusal = true; // one dialog-dqm serves DQM.Server

    app.beginService();
    dialog::Client client(co);
    dialog::dqm::DqmServer server(&client, o);
    if (!client.start())
        return t.fail(client.errorString());
    server.start();
    app.serviceReady(&client);
    return app.exec();
}
