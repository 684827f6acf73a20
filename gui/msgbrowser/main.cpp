// dialog-msgbrowser: the message browser GUI (history from dialog-logger and live messages).
#include "msgbrowserwindow.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dialog-msgbrowser"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "The message browser: the messages stored by dialog-logger and the live ones in one table, newest "
        "first; filters by time, severity, process, host, run and text; details of a message; CSV export."));
    p.addHelpOption();
    dialog::ClientOptions::addParserOptions(p);
    p.process(app);
    dialog::ClientOptions o = dialog::ClientOptions::fromEnvironment(
        QStringLiteral("MsgBrowser.GUI.%1").arg(QCoreApplication::applicationPid()));
    if (const dialog::Status st = o.applyParser(p); !st.isOk()) {
        std::fprintf(stderr, "dialog-msgbrowser: %s\n", qPrintable(st.message()));
        return 1;
    }
    dialog::quitOnTerminationSignals();
    dialog::msgbrowser::MsgBrowserWindow w(o);
    w.show();
    dialog::installMessageHandler();
    dialog::startReporting(w.client());
    return app.exec();
}
