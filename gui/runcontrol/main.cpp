// dialog-runcontrol: the run-control GUI.
#include "runcontrolwindow.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dialog-runcontrol"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "The run-control GUI: the master's state, run number and duration, the slaves and their rates, "
        "the processes' messages, and buttons for the legal transitions. Control mode is exclusive in the "
        "whole system (a second GUI falls back to monitoring); --monitor never takes control."));
    p.addHelpOption();
    dialog::ClientOptions::addParserOptions(p);
    p.addOption({QStringLiteral("master"), QStringLiteral("Name of the master (default Master)."),
                 QStringLiteral("name"), QStringLiteral("Master")});
    p.addOption({QStringLiteral("monitor"), QStringLiteral("Monitoring mode only (read-only).")});
    p.addOption(
        {QStringLiteral("alarms-server"),
         QStringLiteral("Show the active alarms of this IS server (dialog-isserver --alarms) in a banner."),
         QStringLiteral("server")});
    p.addOption(
        {QStringLiteral("configdb"),
         QStringLiteral("Show a Runs tab: the run registry of this configuration database (dialog-configdb "
                        "serving CONFIG.<name>)."),
         QStringLiteral("name")});
    p.process(app);
    dialog::ClientOptions o = dialog::ClientOptions::fromEnvironment(
        QStringLiteral("RunControl.GUI.%1").arg(QCoreApplication::applicationPid()));
    if (const dialog::Status st = o.applyParser(p); !st.isOk()) {
        std::fprintf(stderr, "dialog-runcontrol: %s\n", qPrintable(st.message()));
        return 1;
    }
    dialog::quitOnTerminationSignals();
    dialog::runcontrol::RunControlWindow w(o, p.value(QStringLiteral("master")),
                                           !p.isSet(QStringLiteral("monitor")));
    if (p.isSet(QStringLiteral("alarms-server")))
        w.watchAlarms(p.value(QStringLiteral("alarms-server")));
    if (p.isSet(QStringLiteral("configdb")))
        w.showRuns(p.value(QStringLiteral("configdb")));
    w.show();
    dialog::installMessageHandler();
    dialog::startReporting(w.client());
    return app.exec();
}
