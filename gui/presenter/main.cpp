// dialog-presenter: the histogram presenter. Pages of IS histograms (a pages file), each drawn with
// its reference and coloured by its data-quality check, live.
#include "presenterwindow.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("dialog-presenter"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "The histogram presenter: configured pages of IS histograms (1D and 2D, log scales), each with its "
        "reference overlaid and coloured by its data-quality check (dialog-dqm), updated live."));
    p.addHelpOption();
    p.addOption({QStringLiteral("pages"), QStringLiteral("The pages file (JSON, docs/presenter.md)."),
                 QStringLiteral("file")});
    p.addOption({QStringLiteral("references"),
                 QStringLiteral("dialog-dqm's reference directory: the references of the pages' checks."),
                 QStringLiteral("dir")});
    p.addOption({QStringLiteral("page"),
                 QStringLiteral("The page to show first (\"sub-system: page\" or its name)."),
                 QStringLiteral("name")});
    dialog::ClientOptions::addParserOptions(p);
    p.process(app);
    if (!p.isSet(QStringLiteral("pages"))) {
        std::fprintf(stderr, "dialog-presenter: --pages FILE is required\n");
        return 1;
    }
    dialog::presenter::PageSet pages;
    if (const QString error = dialog::presenter::PageSet::load(p.value(QStringLiteral("pages")),
                                                               p.value(QStringLiteral("references")), &pages);
        !error.isEmpty()) {
        std::fprintf(stderr, "dialog-presenter: %s\n", qPrintable(error));
        return 1;
    }
    dialog::ClientOptions o = dialog::ClientOptions::fromEnvironment(
        QStringLiteral("DIALOG.Presenter.%1").arg(QCoreApplication::applicationPid()));
    if (const dialog::Status st = o.applyParser(p); !st.isOk()) {
        std::fprintf(stderr, "dialog-presenter: %s\n", qPrintable(st.message()));
        return 1;
    }
    dialog::quitOnTerminationSignals();
    dialog::presenter::PresenterWindow w(o, pages);
    if (p.isSet(QStringLiteral("page")) && !w.showPage(p.value(QStringLiteral("page")))) {
        std::fprintf(stderr, "dialog-presenter: no page \"%s\"\n",
                     qPrintable(p.value(QStringLiteral("page"))));
        return 1;
    }
    w.show();
    dialog::installMessageHandler();
    dialog::startReporting(w.client());
    return app.exec();
}
