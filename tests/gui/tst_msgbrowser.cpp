// The message browser against a real Control Server and dialog-logger (SQLite), offscreen: history
// and live messages in one table, scrolling back fetches older pages, the filters apply to both,
// severity colours, the detail pane, CSV export, a bad filter. Saves the screenshot msgbrowser.png.
#include "msgbrowserwindow.h"
#include "processfixture.h"
#include "widgetscreenshot.h"

#include <QComboBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::msgbrowser;

class tst_MsgBrowser : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<ProcessFixture> m_fx;
    QTemporaryDir m_dir;
    std::unique_ptr<MsgBrowserWindow> m_window;

    void report(const QString &name, const QString &severity, const QStringList &extra)
    {
        QCOMPARE(
            m_fx->run(QStringLiteral("dialogctl"),
                      QStringList{QStringLiteral("log"), QStringLiteral("report"), QStringLiteral("--name"),
                                  name, QStringLiteral("--severity"), severity} +
                          extra),
            0);
    }

    void setField(const QString &name, const QString &value)
    {
        if (auto *e = qobject_cast<QLineEdit *>(m_window->filterField(name)))
            e->setText(value);
        else if (auto *c = qobject_cast<QComboBox *>(m_window->filterField(name)))
            c->setCurrentText(value);
    }

    /// Applies the filter fields and waits for the first page.
    bool apply()
    {
        QSignalSpy loaded(m_window.get(), &MsgBrowserWindow::pageLoaded);
        m_window->applyFilter();
        return loaded.wait(10000) || !loaded.isEmpty();
    }

    QStringList column(int col) const
    {
        QStringList out;
        for (int r = 0; r < m_window->model()->rowCount(); ++r)
            out << m_window->model()->index(r, col).data().toString();
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_fx = std::make_unique<ProcessFixture>();
        // Only what the test reports is in the log (the Control Server's own messages would come in
        // between, as processes connect).
        QVERIFY(m_fx->startControlServer({QStringLiteral("--no-message-log")}));
        m_fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--data-dir"), m_dir.path()});
        QVERIFY(waitUntil(
            [&] {
                return m_fx->run(QStringLiteral("dialogctl"),
                                 {QStringLiteral("log"), QStringLiteral("stats")}) == 0;
            },
            15000, 50));
        // 450 numbered infos of one readout process (three pages), then a few of every severity.
        report(QStringLiteral("RO1"), QStringLiteral("info"),
               {QStringLiteral("--count"), QStringLiteral("450"), QStringLiteral("--numbered"),
                QStringLiteral("--collapse-ms"), QStringLiteral("0"), QStringLiteral("event block written")});
        report(QStringLiteral("FE2"), QStringLiteral("debug"), {QStringLiteral("register scan done")});
        report(QStringLiteral("FE2"), QStringLiteral("warning"),
               {QStringLiteral("--value"), QStringLiteral("register=17"),
                QStringLiteral("register 17 upset, rewritten")});
        report(QStringLiteral("RO2"), QStringLiteral("error"),
               {QStringLiteral("--run"), QStringLiteral("4711"),
                QStringLiteral("buffer overflow, \"12\" events lost")});
        report(QStringLiteral("Master"), QStringLiteral("fatal"),
               {QStringLiteral("configuration database lost")});
        report(QStringLiteral("RO1"), QStringLiteral("warning"),
               {QStringLiteral("link 3: TIMEOUT, retrying")});

        m_window = std::make_unique<MsgBrowserWindow>(m_fx->clientOptions(QStringLiteral("MsgBrowser.test")));
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_fx.reset();
    }

    void historyPagesBackOnScrolling()
    {
        QVERIFY(apply());
        // The first page is the newest 200 (the view may already have pulled more to fill itself).
        QTRY_VERIFY_WITH_TIMEOUT(m_window->model()->rowCount() >= 200 && !m_window->isFetching(), 10000);
        QCOMPARE(m_window->model()->index(0, LogModel::Text).data().toString(),
                 QStringLiteral("link 3: TIMEOUT, retrying"));
        // Older pages remain unless the view already pulled every message (455) to fill itself,
        // which a slow first paint can make it do.
        if (m_window->model()->rowCount() < 455)
            QVERIFY(m_window->hasOlder());
        // Scrolling to the bottom fetches older pages until everything is there.
        for (int i = 0; i < 10 && m_window->hasOlder(); ++i) {
            QScrollBar *bar = m_window->view()->verticalScrollBar();
            bar->setValue(bar->maximum());
            QTRY_VERIFY_WITH_TIMEOUT(!m_window->isFetching(), 10000);
        }
        QVERIFY(!m_window->hasOlder());
        const QStringList texts = column(LogModel::Text);
        QVERIFY(texts.size() >= 455);
        QCOMPARE(texts.count(QStringLiteral("event block written #1")), 1);
        QCOMPARE(texts.count(QStringLiteral("event block written #450")), 1);
        QVERIFY(texts.indexOf(QStringLiteral("event block written #450")) <
                texts.indexOf(QStringLiteral("event block written #1"))); // newest first
    }

    void filtersApplyToHistoryAndLive()
    {
        setField(QStringLiteral("severity"), QStringLiteral("warning"));
        QVERIFY(apply());
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isFetching(), 10000);
        QCOMPARE(column(LogModel::Text), (QStringList{QStringLiteral("link 3: TIMEOUT, retrying"),
                                                      QStringLiteral("configuration database lost"),
                                                      QStringLiteral("buffer overflow, \"12\" events lost"),
                                                      QStringLiteral("register 17 upset, rewritten")}));
        // Colours by severity.
        QCOMPARE(m_window->model()->index(1, 0).data(Qt::BackgroundRole).value<QColor>(),
                 LogModel::severityColor(Severity::Fatal));
        QCOMPARE(m_window->model()->index(0, 0).data(Qt::BackgroundRole).value<QColor>(),
                 LogModel::severityColor(Severity::Warning));

        // Live: a new warning of a readout process shows at the top; an info and another process' warning
        // do not pass the filter.
        setField(QStringLiteral("process"), QStringLiteral("RO*"));
        QVERIFY(apply());
        QTRY_COMPARE_WITH_TIMEOUT(m_window->model()->rowCount(), 2, 10000);
        report(QStringLiteral("RO3"), QStringLiteral("info"), {QStringLiteral("all fine")});
        report(QStringLiteral("FE1"), QStringLiteral("warning"), {QStringLiteral("not a readout")});
        report(QStringLiteral("RO3"), QStringLiteral("warning"), {QStringLiteral("disk 80% full")});
        QTRY_COMPARE_WITH_TIMEOUT(m_window->model()->index(0, LogModel::Text).data().toString(),
                                  QStringLiteral("disk 80% full"), 10000);
        QCOMPARE(column(LogModel::Text),
                 (QStringList{QStringLiteral("disk 80% full"), QStringLiteral("link 3: TIMEOUT, retrying"),
                              QStringLiteral("buffer overflow, \"12\" events lost")}));

        // Run and text.
        setField(QStringLiteral("process"), QString());
        setField(QStringLiteral("run"), QStringLiteral("4711"));
        QVERIFY(apply());
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isFetching(), 10000);
        QCOMPARE(column(LogModel::Text), QStringList{QStringLiteral("buffer overflow, \"12\" events lost")});
        setField(QStringLiteral("run"), QString());
        setField(QStringLiteral("severity"), QStringLiteral("debug"));
        setField(QStringLiteral("text"), QStringLiteral("REGISTER"));
        QVERIFY(apply());
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isFetching(), 10000);
        QCOMPARE(column(LogModel::Text), (QStringList{QStringLiteral("register 17 upset, rewritten"),
                                                      QStringLiteral("register scan done")}));
        setField(QStringLiteral("text"), QString());
    }

    void badFilterIsShown()
    {
        setField(QStringLiteral("since"), QStringLiteral("yesterday"));
        QVERIFY(apply());
        QVERIFY2(m_window->statusText().contains(QLatin1String("invalid since 'yesterday'")),
                 qPrintable(m_window->statusText()));
        QCOMPARE(m_window->model()->rowCount(), 0);
        setField(QStringLiteral("since"), QStringLiteral("1h"));
        setField(QStringLiteral("run"), QStringLiteral("-3"));
        QVERIFY(apply());
        QVERIFY2(m_window->statusText().contains(QLatin1String("invalid run '-3'")),
                 qPrintable(m_window->statusText()));
        setField(QStringLiteral("run"), QString());
    }

    void detailPaneAndCsvExport()
    {
        setField(QStringLiteral("severity"), QStringLiteral("warning"));
        QVERIFY(apply());
        QTRY_VERIFY_WITH_TIMEOUT(m_window->model()->rowCount() >= 5 && !m_window->isFetching(), 10000);
        const int row = column(LogModel::Text).indexOf(QStringLiteral("register 17 upset, rewritten"));
        QVERIFY(row >= 0);
        m_window->view()->selectRow(row);
        const QString details = m_window->detailPane()->toPlainText();
        for (const char *expected : {"Process: FE2", "Severity: warning", "Value: register = 17",
                                     "Category: default", "register 17 upset, rewritten"})
            QVERIFY2(details.contains(QLatin1String(expected)), qPrintable(details));

        // Two selected rows, one of them with a quote and a comma in its text.
        const int other =
            column(LogModel::Text).indexOf(QStringLiteral("buffer overflow, \"12\" events lost"));
        QVERIFY(other >= 0);
        m_window->view()->selectionModel()->select(m_window->model()->index(other, 0),
                                                   QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QTemporaryDir out;
        QString error;
        QVERIFY2(m_window->exportCsv(out.filePath(QStringLiteral("sel.csv")), &error), qPrintable(error));
        QFile f(out.filePath(QStringLiteral("sel.csv")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().split('\n');
        QCOMPARE(lines.size(), 4); // header, two rows, the empty rest after the last CRLF
        QVERIFY(lines.at(0).startsWith("time,severity,process,host,pid,category,run,text,"));
        const QByteArray overflow = lines.at(row < other ? 2 : 1);
        const QByteArray upset = lines.at(row < other ? 1 : 2);
        QVERIFY2(overflow.contains(",error,RO2,") &&
                     overflow.contains(",4711,\"buffer overflow, \"\"12\"\" events lost\","),
                 overflow.constData());
        QVERIFY2(upset.contains(",warning,FE2,") && upset.contains("\"{\"\"register\"\":"),
                 upset.constData());
        QVERIFY(!m_window->exportCsv(QStringLiteral("/proc/no/such/dir/x.csv"), &error));
        QVERIFY2(error.contains(QLatin1String("cannot write /proc/no/such/dir/x.csv")), qPrintable(error));
    }

    void screenshot()
    {
        setField(QStringLiteral("severity"), QStringLiteral("debug"));
        QVERIFY(apply());
        QTRY_VERIFY_WITH_TIMEOUT(m_window->model()->rowCount() > 0 && !m_window->isFetching(), 10000);
        m_window->view()->scrollToTop();
        const int row = column(LogModel::Text).indexOf(QStringLiteral("register 17 upset, rewritten"));
        QVERIFY(row >= 0);
        m_window->view()->selectRow(row);
        m_window->view()->scrollToTop();
        // The picture shows the first page, whole (nothing more being fetched), the upset selected.
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isFetching() &&
                                     m_window->view()->verticalScrollBar()->value() == 0 &&
                                     m_window->view()->selectionModel()->isRowSelected(row, QModelIndex()),
                                 5000);
        QVERIFY(saveScreenshot(m_window.get(), QStringLiteral("msgbrowser.png")));
    }
};

QTEST_MAIN(tst_MsgBrowser)
#include "tst_msgbrowser.moc"
