// The run-control GUI's tree at a thousand nodes, offscreen and in-process (no daemons): 10
// segments of 100 slaves each, updated in place by state messages (the items stay, their texts
// follow), rebuilt when the tree's shape changes. The time per update is printed, not asserted.
#include "treeview.h"

#include "dialog/client.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QTreeWidget>
#include <QtTest>

using namespace dialog;
using namespace dialog::runcontrol;

namespace {
constexpr int kSegments = 10, kSlaves = 100;

QString slaveName(int segment, int slave)
{
    return QStringLiteral("FE%1_%2").arg(segment).arg(slave);
}

/// The master's state with a tree of kSegments × kSlaves in @p state; slave (s, i) is in
/// @p odd instead when (s + i + round) is odd, FE0_0 removed when @p removed; without @p last the
/// last segment's last slave is left out (a change of shape).
rc::StateRecord stateOf(const QString &state, const QString &odd, int round, bool removed, bool last = true)
{
    rc::StateRecord r;
    r.state = *rc::stateFromName(state);
    for (int s = 0; s < kSegments; ++s) {
        QJsonArray children;
        for (int i = 0; i < kSlaves; ++i) {
            if (!last && s == kSegments - 1 && i == kSlaves - 1)
                continue;
            const bool isRemoved = removed && s == 0 && i == 0;
            children.append(
                QJsonObject{{QStringLiteral("name"), slaveName(s, i)},
                            {QStringLiteral("kind"), QStringLiteral("control")},
                            {QStringLiteral("state"), (s + i + round) % 2 ? odd : state},
                            {QStringLiteral("present"), true},
                            {QStringLiteral("enabled"), true},
                            {QStringLiteral("removable"), true},
                            {QStringLiteral("removed"), isRemoved},
                            {QStringLiteral("reason"), isRemoved ? QStringLiteral("lost") : QString()}});
        }
        r.tree.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("SEG%1").arg(s)},
                                  {QStringLiteral("kind"), QStringLiteral("segment")},
                                  {QStringLiteral("state"), state},
                                  {QStringLiteral("present"), true},
                                  {QStringLiteral("enabled"), s != 3},
                                  {QStringLiteral("children"), children}});
    }
    return r;
}
} // namespace

class tst_RcTreeScale : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void thousandNodesUpdatedInPlace();
};

void tst_RcTreeScale::thousandNodesUpdatedInPlace()
{
    Client client(ClientOptions{}); // never started: the tree has no readout to subscribe to
    TreeView view(&client, QStringLiteral("Master"));
    view.resize(900, 700);
    view.show();
    QElapsedTimer timer;
    timer.start();
    view.setState(stateOf(QStringLiteral("Initial"), QStringLiteral("Initial"), 0, false));
    qInfo("first fill of %d nodes: %.1f ms", kSegments * (kSlaves + 1), double(timer.nsecsElapsed()) / 1e6);
    QCOMPARE(view.tree()->topLevelItemCount(), kSegments);
    QTreeWidgetItem *const fe = view.item(slaveName(4, 42));
    QVERIFY(fe);
    QCOMPARE(fe->parent(), view.item(QStringLiteral("SEG4")));
    QCOMPARE(view.item(QStringLiteral("SEG3"))->checkState(TreeView::ColNode), Qt::Unchecked);
    view.tree()->setCurrentItem(fe); // the operator's selection

    const int rounds = 20;
    qint64 totalNs = 0, worstNs = 0;
    for (int round = 1; round <= rounds; ++round) {
        const QString even = round % 2 ? QStringLiteral("Running") : QStringLiteral("Configured");
        const rc::StateRecord st = stateOf(even, QStringLiteral("Paused"), round, round % 3 == 0);
        timer.restart();
        view.setState(st);
        const qint64 ns = timer.nsecsElapsed();
        totalNs += ns;
        worstNs = qMax(worstNs, ns);
        // In place: the same items, with the new states, the selection kept.
        QCOMPARE(view.item(slaveName(4, 42)), fe);
        QCOMPARE(view.tree()->currentItem(), fe);
        QCOMPARE(fe->text(TreeView::ColState), (4 + 42 + round) % 2 ? QStringLiteral("Paused") : even);
        QCOMPARE(view.item(slaveName(9, 99))->text(TreeView::ColState),
                 (9 + 99 + round) % 2 ? QStringLiteral("Paused") : even);
        QCOMPARE(
            view.item(slaveName(0, 0))->text(TreeView::ColDetails).startsWith(QLatin1String("REMOVED: lost")),
            round % 3 == 0);
        QCOMPARE(view.item(slaveName(0, 0))->font(TreeView::ColNode).italic(), round % 3 == 0);
        QCOMPARE(view.item(QStringLiteral("SEG3"))->checkState(TreeView::ColNode), Qt::Unchecked);
        QCOMPARE(view.item(QStringLiteral("SEG2"))->checkState(TreeView::ColNode), Qt::Checked);
    }
    qInfo("update of %d nodes in place: mean %.2f ms, worst %.2f ms over %d state messages",
          kSegments * (kSlaves + 1), double(totalNs) / rounds / 1e6, double(worstNs) / 1e6, rounds);

    // A node gone from the tree (its shape changed): rebuilt, the selection kept.
    timer.restart();
    view.setState(stateOf(QStringLiteral("Running"), QStringLiteral("Running"), 0, false, false));
    qInfo("rebuild of %d nodes (a node gone): %.1f ms", kSegments * (kSlaves + 1) - 1,
          double(timer.nsecsElapsed()) / 1e6);
    QVERIFY(!view.item(slaveName(9, 99)));
    QCOMPARE(view.item(QStringLiteral("SEG9"))->childCount(), kSlaves - 1);
    QVERIFY(view.item(slaveName(4, 42)));
    QCOMPARE(view.tree()->currentItem(), view.item(slaveName(4, 42)));
    QCOMPARE(view.item(slaveName(4, 42))->text(TreeView::ColState), QStringLiteral("Running"));
}

QTEST_MAIN(tst_RcTreeScale)
#include "tst_rctreescale.moc"
