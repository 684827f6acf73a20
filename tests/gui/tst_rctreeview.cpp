// The run-control GUI's tree against a real master, two segment controllers and their slaves on
// loopback, offscreen: the tree with state colours, a segment taken out of the run with its check
// box, taken and released with the button and driven by its owner from its context menu, a segment's events
// summed from its readout, a removable slave removed during the run and recovered with the button, a refusal
// shown with the master's reason, and the screenshot of the run with one segment out and one node removed.
#include "rcfixture.h"
#include "runcontrolwindow.h"
#include "treeview.h"
#include "widgetscreenshot.h"

#include <QJsonArray>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QTreeWidget>
#include <QtTest>
#include <csignal>

using namespace dialog;
using namespace dialog::runcontrol;
using namespace dialog::test;

class tst_RcTreeView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void treeDrivesSegmentsInAndOutAndRecoversARemovedSlave();

private:
    QProcess *startSlave(const QString &name, const QString &controller);
    /// The text of @p column of @p node's row in the GUI's tree ("" without such a row).
    QString cell(const QString &node, int column) const;

    RcBed m_bed;
    std::unique_ptr<RunControlWindow> m_window;
    QHash<QString, QProcess *> m_slaves;
};

void tst_RcTreeView::init()
{
    QVERIFY(m_bed.start(QStringLiteral("rctreeview-test")));
    auto node = [](const char *name, const char *kind, bool removable = false) {
        return QJsonObject{{QStringLiteral("name"), QLatin1String(name)},
                           {QStringLiteral("kind"), QLatin1String(kind)},
                           {QStringLiteral("removable"), removable}};
    };
    const QString partition = m_bed.writePartition(
        QStringLiteral("guitree"),
        QJsonArray{node("RO1", "readout"), node("FE1", "control", true), node("FE2", "control"),
                   node("FE3", "control")},
        3000, false,
        {{QStringLiteral("segments"),
          QJsonArray{
              QJsonObject{{QStringLiteral("name"), QStringLiteral("TRK")},
                          {QStringLiteral("slaves"),
                           QJsonArray{QStringLiteral("RO1"), QStringLiteral("FE1"), QStringLiteral("FE2")}}},
              QJsonObject{{QStringLiteral("name"), QStringLiteral("CAL")},
                          {QStringLiteral("slaves"), QJsonArray{QStringLiteral("FE3")}}}}}});
    m_bed.fx->start(QStringLiteral("dialog-master"),
                    {QStringLiteral("--config"), partition, QStringLiteral("--no-is")});
    for (const QString &segment : {QStringLiteral("TRK"), QStringLiteral("CAL")})
        m_bed.fx->start(QStringLiteral("dialog-master"),
                        {QStringLiteral("--config"), partition, QStringLiteral("--no-is"),
                         QStringLiteral("--segment"), segment});
    startSlave(QStringLiteral("RO1"), QStringLiteral("TRK"));
    startSlave(QStringLiteral("FE1"), QStringLiteral("TRK"));
    startSlave(QStringLiteral("FE2"), QStringLiteral("TRK"));
    startSlave(QStringLiteral("FE3"), QStringLiteral("CAL"));
    ClientOptions o = m_bed.fx->clientOptions(QStringLiteral("rctreeview-gui"));
    o.heartbeatMs = 200;
    m_window = std::make_unique<RunControlWindow>(o, QStringLiteral("Master"), true);
    m_window->resize(1000, 760);
    m_window->show();
    m_window->setConfirmation([](const QString &) { return true; });
}

void tst_RcTreeView::cleanup()
{
    m_window.reset();
    m_slaves.clear();
    m_bed.stop();
}

QProcess *tst_RcTreeView::startSlave(const QString &name, const QString &controller)
{
    QProcess *p =
        m_bed.fx->start(QStringLiteral("dialog-slave"),
                        QStringList{QStringLiteral("--kind"),
                                    name.startsWith(QLatin1String("RO")) ? QStringLiteral("readout")
                                                                         : QStringLiteral("control"),
                                    QStringLiteral("--name"), name, QStringLiteral("--no-is"),
                                    QStringLiteral("--master"), controller} +
                            kRcHeartbeat);
    m_slaves.insert(name, p);
    return p;
}

QString tst_RcTreeView::cell(const QString &node, int column) const
{
    const QTreeWidgetItem *it = m_window->treeView()->item(node);
    return it ? it->text(column) : QString();
}

void tst_RcTreeView::treeDrivesSegmentsInAndOutAndRecoversARemovedSlave()
{
    TreeView *view = m_window->treeView();
    QTRY_COMPARE_WITH_TIMEOUT(m_window->mode(), RunControlWindow::Mode::Control, 10000);
    for (const QString &n : {"RO1", "TRK", "FE1", "FE2", "CAL", "FE3"})
        QTRY_COMPARE_WITH_TIMEOUT(cell(n, TreeView::ColState), QStringLiteral("Initial"), 15000);
    QVERIFY(view->isVisible()); // the partition has segments
    // Slaves below their segment, with the colour of their state.
    QCOMPARE(view->item(QStringLiteral("FE3"))->parent(), view->item(QStringLiteral("CAL")));
    QCOMPARE(view->item(QStringLiteral("FE3"))->background(TreeView::ColState).color(),
             stateColor(rc::State::Initial, false));

    // CAL out of the run with its check box.
    view->item(QStringLiteral("CAL"))->setCheckState(TreeView::ColNode, Qt::Unchecked);
    QTRY_VERIFY_WITH_TIMEOUT(
        cell(QStringLiteral("CAL"), TreeView::ColDetails).contains(QLatin1String("disabled")), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(view->answerLabel()->text(), QStringLiteral("disable CAL: done"), 5000);
    QVERIFY(m_window->requestTransition(rc::Transition::Configure));
    QTRY_COMPARE_WITH_TIMEOUT(cell(QStringLiteral("FE1"), TreeView::ColState), QStringLiteral("Configured"),
                              15000);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->button(rc::Transition::Start)->isEnabled(), 10000);
    QVERIFY(m_window->requestTransition(rc::Transition::Start));
    QTRY_COMPARE_WITH_TIMEOUT(cell(QStringLiteral("FE2"), TreeView::ColState), QStringLiteral("Running"),
                              15000);
    QCOMPARE(cell(QStringLiteral("FE3"), TreeView::ColState), QStringLiteral("Initial"));
    QCOMPARE(view->item(QStringLiteral("FE2"))->background(TreeView::ColState).color(),
             stateColor(rc::State::Running, false));
    // The readout's events, and TRK's: the sum of its readouts; CAL has none.
    QTRY_VERIFY_WITH_TIMEOUT(
        cell(QStringLiteral("RO1"), TreeView::ColEvents).remove(QLatin1Char(',')).toLongLong() > 0, 15000);
    QCOMPARE(cell(QStringLiteral("TRK"), TreeView::ColEvents),
             cell(QStringLiteral("RO1"), TreeView::ColEvents));
    QCOMPARE(cell(QStringLiteral("CAL"), TreeView::ColEvents), QString());
    // The header's rate counts the readouts below the segments.
    QTRY_VERIFY2_WITH_TIMEOUT(m_window->rateLabel()->text().endsWith(QLatin1String("MB/s)")) &&
                                  !m_window->rateLabel()->text().startsWith(QLatin1String("0 events")),
                              qPrintable(m_window->rateLabel()->text()), 10000);

    // Refused during the run, with the master's reason.
    view->item(QStringLiteral("CAL"))->setCheckState(TreeView::ColNode, Qt::Checked);
    QTRY_VERIFY_WITH_TIMEOUT(view->answerLabel()->text().contains(QLatin1String("between runs only")), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(view->item(QStringLiteral("CAL"))->checkState(TreeView::ColNode), Qt::Unchecked,
                              5000);

    // CAL taken from the GUI (it is out of the run), then given back.
    view->tree()->setCurrentItem(view->item(QStringLiteral("CAL")));
    QTRY_VERIFY_WITH_TIMEOUT(view->takeButton()->isEnabled(), 5000);
    QCOMPARE(view->takeButton()->text(), QStringLiteral("Take"));
    view->takeButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(
        cell(QStringLiteral("CAL"), TreeView::ColDetails).contains(QLatin1String("taken by ")), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(view->takeButton()->text(), QStringLiteral("Release"), 5000);
    // Its owner drives it from its context menu (the master checks the owner), beside the main run.
    QVERIFY(QScopedPointer<QMenu>(view->nodeMenu(QStringLiteral("TRK")))->isEmpty()); // nobody took TRK
    view->setRunNumberAsker([](const QString &) { return std::optional<quint32>(900); });
    const auto drive = [&](const char *transition, const char *state) {
        QScopedPointer<QMenu> menu(view->nodeMenu(QStringLiteral("CAL")));
        QAction *a = menu->findChild<QAction *>(QLatin1String(transition));
        QVERIFY2(a && a->isEnabled(), transition);
        a->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(view->answerLabel()->text(),
                                  QStringLiteral("%1 CAL: done").arg(QLatin1String(transition)), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(cell(QStringLiteral("FE3"), TreeView::ColState), QLatin1String(state),
                                  10000);
        QTRY_COMPARE_WITH_TIMEOUT(cell(QStringLiteral("CAL"), TreeView::ColState), QLatin1String(state),
                                  10000);
    };
    drive("configure", "Configured");
    QVERIFY(!QScopedPointer<QMenu>(view->nodeMenu(QStringLiteral("CAL")))
                 ->findChild<QAction *>(QStringLiteral("configure"))
                 ->isEnabled()); // not from Configured
    drive("start", "Running");
    QCOMPARE(m_window->stateLabel()->text(), QStringLiteral("RUNNING")); // the main run, as it was
    QVERIFY(saveScreenshot(m_window.get(), QStringLiteral("runcontrol-tree-commissioning.png")));
    drive("stop", "Configured");
    drive("unconfigure", "Initial");
    view->takeButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(
        !cell(QStringLiteral("CAL"), TreeView::ColDetails).contains(QLatin1String("taken by")), 5000);
    QCOMPARE(view->answerLabel()->text(), QStringLiteral("release CAL: done"));
    view->tree()->setCurrentItem(nullptr);

    // FE1 (removable) killed: removed, the run goes on; the picture of the run with CAL out and FE1 removed.
    ::kill(pid_t(m_slaves.value(QStringLiteral("FE1"))->processId()), SIGKILL);
    QTRY_VERIFY_WITH_TIMEOUT(
        cell(QStringLiteral("FE1"), TreeView::ColDetails).contains(QLatin1String("REMOVED: lost")), 10000);
    QCOMPARE(m_window->stateLabel()->text(), QStringLiteral("RUNNING"));
    QVERIFY(!view->recoverButton()->isEnabled()); // nothing recoverable selected
    QVERIFY(saveScreenshot(m_window.get(), QStringLiteral("runcontrol-tree.png")));

    // Back, selected, recovered with the button.
    startSlave(QStringLiteral("FE1"), QStringLiteral("TRK"));
    QTRY_COMPARE_WITH_TIMEOUT(cell(QStringLiteral("FE1"), TreeView::ColState), QStringLiteral("Initial"),
                              10000);
    view->tree()->setCurrentItem(view->item(QStringLiteral("FE1")));
    QTRY_VERIFY_WITH_TIMEOUT(view->recoverButton()->isEnabled(), 5000);
    view->recoverButton()->click();
    QTRY_COMPARE_WITH_TIMEOUT(cell(QStringLiteral("FE1"), TreeView::ColState), QStringLiteral("Running"),
                              10000);
    QTRY_VERIFY_WITH_TIMEOUT(
        !cell(QStringLiteral("FE1"), TreeView::ColDetails).contains(QLatin1String("REMOVED")), 5000);
    QCOMPARE(view->answerLabel()->text(), QStringLiteral("recover FE1: done"));
    QCOMPARE(m_window->stateLabel()->text(), QStringLiteral("RUNNING"));
}

QTEST_MAIN(tst_RcTreeView)
#include "tst_rctreeview.moc"
