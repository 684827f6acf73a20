#include "options.h"

#include <QCoreApplication>
#include <QDir>
#include <QLoggingCategory>
#include <QTimer>
#include <csignal>
#include <unistd.h>

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

void addCommonOptions(QCommandLineParser &p, bool misbehaviour)
{
    p.addHelpOption();
    ClientOptions::addParserOptions(p);
    p.addOption({QStringLiteral("is-types"), QStringLiteral("Directory of the IS type XML files."),
                 QStringLiteral("dir"), defaultIsTypesDir()});
    p.addOption({QStringLiteral("run-params-server"),
                 QStringLiteral("IS server of the RunCtrl.<name> state objects (default RunParams)."),
                 QStringLiteral("name"), QStringLiteral("RunParams")});
    p.addOption({QStringLiteral("no-is"), QStringLiteral("Do not publish to IS.")});
    if (!misbehaviour)
        return;
    p.addOption({QStringLiteral("fail-on"),
                 QStringLiteral("For tests: these transitions fail (comma-separated, e.g. configure)."),
                 QStringLiteral("transitions")});
    p.addOption({QStringLiteral("hang-on"),
                 QStringLiteral("For tests: these transitions never complete (until a reset)."),
                 QStringLiteral("transitions")});
    p.addOption({QStringLiteral("crash-after-s"),
                 QStringLiteral("For tests: die abruptly (SIGKILL) this many seconds after starting."),
                 QStringLiteral("s")});
}

bool numberOption(const QCommandLineParser &p, const QString &name, double min, double max, double *out,
                  QString *error)
{
    if (!p.isSet(name))
        return true;
    bool ok = false;
    const double v = p.value(name).toDouble(&ok);
    if (!ok || v < min || v > max) {
        *error =
            QStringLiteral("invalid --%1 '%2' (expected %3..%4)").arg(name, p.value(name)).arg(min).arg(max);
        return false;
    }
    *out = v;
    return true;
}

bool applyCommonOptions(const QCommandLineParser &p, ControllableOptions *o, bool misbehaviour,
                        QString *error)
{
    if (!o->client.applyParser(p, error))
        return false;
    o->isTypesDir = p.value(QStringLiteral("is-types"));
    o->runParamsServer = p.value(QStringLiteral("run-params-server"));
    o->publishToIs = !p.isSet(QStringLiteral("no-is"));
    if (!misbehaviour)
        return true;
    if (p.isSet(QStringLiteral("fail-on")) &&
        !parseTransitionList(p.value(QStringLiteral("fail-on")), &o->failOn, error)) {
        *error = QStringLiteral("--fail-on: ") + *error;
        return false;
    }
    if (p.isSet(QStringLiteral("hang-on")) &&
        !parseTransitionList(p.value(QStringLiteral("hang-on")), &o->hangOn, error)) {
        *error = QStringLiteral("--hang-on: ") + *error;
        return false;
    }
    return true;
}

bool armCrash(const QCommandLineParser &p, QString *error)
{
    double s = 0;
    if (!numberOption(p, QStringLiteral("crash-after-s"), 0.001, 86400, &s, error))
        return false;
    if (s > 0)
        QTimer::singleShot(int(s * 1000), qApp, [] {
            qCWarning(lcOptions) << "crashing as requested (--crash-after-s)";
            ::kill(::getpid(), SIGKILL);
        });
    return true;
}

} // namespace dialog::daq
