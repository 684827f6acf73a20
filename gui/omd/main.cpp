// dialog-omd: the operational monitoring display.
#include "omdwindow.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <cstdio>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dialog-omd"));
    QCommandLineParser p;
    p.setApplicationDescription(
        QStringLiteral("Operational monitoring display: time series and bar charts of IS "
                       "attributes, live."));
    p.addHelpOption();
    p.addOption({QStringLiteral("layout"),
                 QStringLiteral("Open this layout (JSON, see resources/omd/demo.json)."),
                 QStringLiteral("file")});
    p.addOption({QStringLiteral("object"),
                 QStringLiteral("Plot the numeric attributes of this IS object (Server.Object); repeatable."),
                 QStringLiteral("name")});
    p.addOption({QStringLiteral("attribute"), QStringLiteral("With --object: plot only this attribute."),
                 QStringLiteral("name")});
    p.addOption({QStringLiteral("window"), QStringLiteral("Time window in seconds: 60, 600 or 3600."),
                 QStringLiteral("s")});
    p.addOption({QStringLiteral("alarms"),
                 QStringLiteral("Alarm rules (the file of dialog-isserver --alarms): each chart draws the "
                                "thresholds of the rules about what it plots."),
                 QStringLiteral("file")});
    dialog::ClientOptions::addParserOptions(p);
    p.process(app);
    dialog::ClientOptions o = dialog::ClientOptions::fromEnvironment(
        QStringLiteral("DIALOG.OMD.%1").arg(QCoreApplication::applicationPid()));
    if (const dialog::Status st = o.applyParser(p); !st.isOk()) {
        std::fprintf(stderr, "dialog-omd: %s\n", qPrintable(st.message()));
        return 1;
    }
    QString error;
    dialog::omd::Layout layout;
    if (p.isSet(QStringLiteral("layout")) &&
        !dialog::omd::Layout::load(p.value(QStringLiteral("layout")), &layout, &error)) {
        std::fprintf(stderr, "dialog-omd: %s\n", qPrintable(error));
        return 1;
    }
    QList<dialog::is::AlarmRule> rules;
    if (p.isSet(QStringLiteral("alarms"))) {
        QFile f(p.value(QStringLiteral("alarms")));
        if (!f.open(QIODevice::ReadOnly)) {
            std::fprintf(stderr, "dialog-omd: cannot read --alarms %s: %s\n", qPrintable(f.fileName()),
                         qPrintable(f.errorString()));
            return 1;
        }
        if (const dialog::Status st = dialog::is::AlarmRule::parse(QString::fromUtf8(f.readAll()), &rules);
            !st.isOk()) {
            std::fprintf(stderr, "dialog-omd: --alarms %s:%s\n", qPrintable(f.fileName()),
                         qPrintable(st.message()));
            return 1;
        }
    }
    const int window = p.value(QStringLiteral("window")).toInt();
    if (p.isSet(QStringLiteral("window")) && window != 60 && window != 600 && window != 3600) {
        std::fprintf(stderr, "dialog-omd: --window must be 60, 600 or 3600\n");
        return 1;
    }
    dialog::quitOnTerminationSignals();
    dialog::omd::OmdWindow w(o);
    w.setAlarmRules(rules);
    if (p.isSet(QStringLiteral("layout")))
        w.applyLayout(layout);
    if (window)
        w.setWindowSeconds(window);
    for (const QString &object : p.values(QStringLiteral("object")))
        w.addObject(object, p.value(QStringLiteral("attribute")));
    w.show();
    dialog::installMessageHandler();
    dialog::startReporting(w.client());
    return app.exec();
}
