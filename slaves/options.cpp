#include "options.h"

#include <QCoreApplication>
#include <QDir>
#include <QLoggingCategory>
#include <QTimer>
#include <csignal>
#include <unistd.h>

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionUnit;

Q_LOGGING_CATEGORY(lcOptions, "dialog.daq.options", QtInfoMsg)

namespace dialog::daq {

QString defaultIsTypesDir()
{
    // Installed next to the binaries first, else the source tree this was built from.
    const QString beside =
        QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("../share/dialog/is-types"));
    if (QDir(beside).exists())
        return QDir::cleanPath(beside);
    return QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types");
}

namespace {

// A comma-separated list of transitions into @p out.
Option transitions(const QString &name, const QString &help, QSet<rc::Transition> *out)
{
    return Option::custom(name, u"transitions"_s, help, [out](const QString &v) {
        QString why;
        return parseTransitionList(v, out, &why) ? dialog::Status() : Option::refuse(why);
    });
}

} // namespace

void addCommonOptions(dialog::OptionTable &t, ControllableOptions *o, double *crashAfterS)
{
    o->client.addTo(t);
    o->isTypesDir = defaultIsTypesDir();
    t.add({Option::text(u"is-types"_s, u"dir"_s, u"Directory of the IS type XML files."_s, &o->isTypesDir),
           Option::text(u"run-params-server"_s, u"name"_s,
                        u"IS server of the RunCtrl.<name> state objects (default RunParams)."_s,
                        &o->runParamsServer),
           Option::flag(u"no-is"_s, u"Do not publish to IS."_s, &o->publishToIs, false)});
    if (!crashAfterS)
        return;
    t.add(
        Option::text(u"master"_s, u"name"_s,
                     u"Take transitions as requests only from this process, the partition's master (default: "
                     u"from any process)."_s,
                     &o->master));
    t.add({transitions(u"fail-on"_s,
                       u"For tests: these transitions fail (comma-separated, e.g. configure)."_s, &o->failOn),
           transitions(u"hang-on"_s, u"For tests: these transitions never complete (until a reset)."_s,
                       &o->hangOn),
           Option::number(u"crash-after-s"_s, u"s"_s,
                          u"For tests: die abruptly (SIGKILL) this many seconds after starting."_s,
                          crashAfterS, 0.001, 86400, OptionUnit::Seconds)});
}

void armCrash(double seconds)
{
    if (seconds > 0)
        QTimer::singleShot(int(seconds * 1000), qApp, [] {
            qCWarning(lcOptions) << "crashing as requested (--crash-after-s)";
            ::kill(::getpid(), SIGKILL);
        });
}

} // namespace dialog::daq
