// dialog-inspector: the DIALOG communication GUI.
#include "inspectorwindow.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dialog-inspector"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("The DIALOG communication GUI: processes, services, commands; "
                                               "listen and send."));
    p.addHelpOption();
    dialog::ClientOptions::addParserOptions(p);
    p.process(app);
    dialog::ClientOptions o = dialog::ClientOptions::fromEnvironment(
        QStringLiteral("DIALOG.Inspector.%1").arg(QCoreApplication::applicationPid()));
    if (const dialog::Status st = o.applyParser(p); !st.isOk()) {
        std::fprintf(stderr, "dialog-inspector: %s\n", qPrintable(st.message()));
        return 1;
    }
    dialog::quitOnTerminationSignals();
    dialog::inspector::InspectorWindow w(o);
    w.show();
    dialog::installMessageHandler();
    dialog::startReporting(w.client());
    return app.exec();
}
