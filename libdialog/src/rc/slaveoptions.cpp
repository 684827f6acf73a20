// The options of run-control processes, the configuration database's parameters and runSlave().
#include "dialog/config.h"
#include "dialog/daemon.h"
#include "dialog/rc/slave.h"

#include <QCoreApplication>
#include <QDir>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QTimer>
#include <csignal>
#include <unistd.h>

using namespace Qt::StringLiterals;

Q_LOGGING_CATEGORY(lcSlaveOptions, "dialog.runcontrol.options", QtInfoMsg)

namespace dialog::rc {

QString defaultIsTypesDir()
{
    // Installed next to the binaries first, else the source tree of a build tree, else where the
    // build was configured to install them.
    const QString beside =
        QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("../share/dialog/is-types"));
    if (QDir(beside).exists())
        return QDir::cleanPath(beside);
    const QString source = QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types");
    if (QDir(source).exists())
        return source;
    return QStringLiteral(DIALOG_INSTALLED_DATADIR "/is-types");
}

Status parseTransitionList(const QString &text, QSet<Transition> *out)
{
    QSet<Transition> parsed;
    for (const QString &part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const auto t = transitionFromName(part);
        if (!t)
            return Status(Status::Code::BadRequest,
                          QStringLiteral("unknown transition '%1' (known: %2)")
                              .arg(part.trimmed(), allTransitionNames().join(QStringLiteral(", "))));
        parsed.insert(*t);
    }
    out->unite(parsed);
    return {};
}

namespace {

// A comma-separated list of transitions into @p out.
Option transitions(const QString &name, const QString &help, QSet<Transition> *out)
{
    return Option::custom(name, u"transitions"_s, help,
                          [out](const QString &v) { return parseTransitionList(v, out); });
}

} // namespace

void addCommonOptions(OptionTable &t, SlaveOptions *o)
{
    o->client.addTo(t);
    o->isTypesDir = defaultIsTypesDir();
    t.add({Option::text(u"is-types"_s, u"dir"_s, u"Directory of the IS type XML files."_s, &o->isTypesDir),
           Option::text(u"run-params-server"_s, u"name"_s,
                        u"IS server of the RunCtrl.<name> state objects (default RunParams)."_s,
                        &o->runParamsServer),
           Option::flag(u"no-is"_s, u"Do not publish to IS."_s, &o->publishToIs, false)});
}

void addSlaveOptions(OptionTable &t, SlaveOptions *o)
{
    t.add({Option::text(u"name"_s, u"name"_s, u"Process name (unique in the DIALOG system)."_s,
                        &o->client.name),
           Option::text(u"daq-server"_s, u"name"_s,
                        u"IS server of the statistics object DAQ.<name> (default DAQ)."_s, &o->daqServer),
           Option::text(u"master"_s, u"name"_s,
                        u"Take transitions as requests only from this process, the partition's master "
                        u"(default: from any process)."_s,
                        &o->master),
           Option::custom(u"transition-timeout-ms"_s, u"ms"_s,
                          u"Fail a transition that has not completed within this time (default: none of "
                          u"its own, the master's applies)."_s,
                          [o](const QString &v) {
                              bool ok = false;
                              const int ms = v.toInt(&ok);
                              if (!ok || ms < 1 || ms > 3600000)
                                  return Option::refuse(u"expected milliseconds from 1 to 3600000"_s);
                              for (const QString &n : allTransitionNames())
                                  o->timeoutMs.insert(*transitionFromName(n), ms);
                              return Status();
                          }),
           transitions(u"fail-on"_s,
                       u"For tests: these transitions fail (comma-separated, e.g. configure)."_s, &o->failOn),
           transitions(u"hang-on"_s, u"For tests: these transitions never complete (until a reset)."_s,
                       &o->hangOn),
           Option::number(u"crash-after-s"_s, u"s"_s,
                          u"For tests: die abruptly (SIGKILL) this many seconds after starting."_s,
                          &o->crashAfterS, 0.001, 86400, OptionUnit::Seconds)});
}

void armCrash(double seconds)
{
    if (seconds > 0)
        QTimer::singleShot(int(seconds * 1000), qApp, [] {
            qCWarning(lcSlaveOptions) << "crashing as requested (--crash-after-s)";
            ::kill(::getpid(), SIGKILL);
        });
}

Status parseParameters(const QJsonObject &parameters, const std::function<void(OptionTable &)> &declare)
{
    OptionTable t(u"parameters"_s);
    declare(t);
    const QStringList args = config::slaveArguments(QJsonDocument(parameters).toJson(QJsonDocument::Compact));
    if (!t.parse(QStringList{u"parameters"_s} + args))
        return Status(Status::Code::BadRequest, t.errorText());
    return {};
}

int runSlave(int argc, char *argv[], const SlaveProgram &program)
{
    DaemonApplication app(argc, argv, program.program);
    OptionTable t(program.program, program.description);
    SlaveOptions o;
    o.client = ClientOptions::fromEnvironment();
    o.client.exitOnRefusal = true; // a second slave of that name must not run
    o.kind = program.kind;
    addCommonOptions(t, &o);
    addSlaveOptions(t, &o);
    if (program.addOptions)
        program.addOptions(t);
    if (!t.process(app.arguments()))
        return 1;
    if (o.client.name.isEmpty() || !Client::isValidName(o.client.name))
        return t.fail(u"--name is required"_s);
    if (!program.create)
        return t.fail(u"no slave to create (SlaveProgram::create is empty)"_s);
    armCrash(o.crashAfterS);

    app.beginService();
    std::unique_ptr<Slave> slave;
    if (const Status st = program.create(o, &slave); !st.isOk())
        return t.fail(st.message().isEmpty() ? st.toString() : st.message());
    if (!slave)
        return t.fail(u"the slave could not be created"_s);
    if (const Status st = slave->openAccess(); !st.isOk())
        return t.fail(st.message());
    if (!slave->client()->start())
        return t.fail(slave->client()->errorString());
    app.serviceReady(slave->client());
    return app.exec();
}

} // namespace dialog::rc
