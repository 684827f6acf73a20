// dialog-alarms: the alarm GUI (the table, the tree and the history of dialog-alarmserver).
#include "alarmswindow.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dialog-alarms"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "The alarm GUI of dialog-alarmserver: the table of the alarms that are not normal (sortable, coloured "
        "by severity, blinking until acknowledged), the tree of areas and systems with the worst alarm below "
        "each node, acknowledge, shelve and unshelve with a comment, guidance and links, and the history of "
        "an alarm or a node within a time range."));
    p.addHelpOption();
    dialog::ClientOptions::addParserOptions(p);
    p.addOption({QStringLiteral("select"), QStringLiteral("Select this node of the tree at start."),
                 QStringLiteral("path")});
    p.process(app);
    dialog::ClientOptions o = dialog::ClientOptions::fromEnvironment(
        QStringLiteral("Alarms.GUI.%1").arg(QCoreApplication::applicationPid()));
    if (const dialog::Status st = o.applyParser(p); !st.isOk()) {
        std::fprintf(stderr, "dialog-alarms: %s\n", qPrintable(st.message()));
        return 1;
    }
    dialog::quitOnTerminationSignals();
    dialog::alarms::AlarmsWindow w(o);
    if (p.isSet(QStringLiteral("select"))) {
        const QString path = p.value(QStringLiteral("select"));
        QObject::connect(w.session(), &dialog::alarms::AlarmSession::treeReceived, &w,
                         [&w, path] { w.selectNode(path); }, Qt::QueuedConnection);
    }
    w.show();
    dialog::installMessageHandler();
    dialog::startReporting(w.client());
    return app.exec();
}
