// dialog-ismonitor: the IS browser.
#include "ismonitorwindow.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dialog-ismonitor"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("The IS browser: IS servers, their objects (live, filtered by "
                                               "regex and type), attribute values and histograms."));
    p.addHelpOption();
    p.addOption(
        {QStringLiteral("server"), QStringLiteral("IS server to show first."), QStringLiteral("name")});
    p.addOption({QStringLiteral("regex"),
                 QStringLiteral("Initial object-name filter (POSIX regex, whole name)."),
                 QStringLiteral("regex")});
    p.addOption({QStringLiteral("type"), QStringLiteral("Initial type filter (with subtypes)."),
                 QStringLiteral("type")});
    p.addOption({QStringLiteral("object"), QStringLiteral("Object to select (without the server prefix)."),
                 QStringLiteral("name")});
    dialog::ClientOptions::addParserOptions(p);
    p.process(app);
    dialog::ClientOptions o = dialog::ClientOptions::fromEnvironment(
        QStringLiteral("DIALOG.ISMonitor.%1").arg(QCoreApplication::applicationPid()));
    if (const dialog::Status st = o.applyParser(p); !st.isOk()) {
        std::fprintf(stderr, "dialog-ismonitor: %s\n", qPrintable(st.message()));
        return 1;
    }
    dialog::quitOnTerminationSignals();
    dialog::ismonitor::IsMonitorWindow w(o);
    if (p.isSet(QStringLiteral("regex")) || p.isSet(QStringLiteral("type")))
        w.setFilter(p.value(QStringLiteral("regex")), p.value(QStringLiteral("type")));
    if (p.isSet(QStringLiteral("server")))
        w.selectServer(p.value(QStringLiteral("server")));
    if (p.isSet(QStringLiteral("object")))
        w.selectObject(p.value(QStringLiteral("object")));
    w.show();
    dialog::installMessageHandler();
    dialog::startReporting(w.client());
    return app.exec();
}
