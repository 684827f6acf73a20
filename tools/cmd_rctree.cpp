// dialogctl rc tree|enable|disable|recover|take|release: the run-control tree. tree prints the
// master's view of every node (its state, enabled or not, removed and why, its owner); the others
// are requests on RunCtrl.<master>.Tree, which the master passes down to the controller of the node.
#include "clientsetup.h"

#include "dialog/rc/staterecord.h"
#include "dialog/subscription.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>
#include <functional>

namespace dialog::tool {

int rcAnswer(const Reply &r, const QString &verb, const QString &what, const QString &master,
             const std::function<void(const QByteArray &)> &printAnswer);

namespace {
constexpr int Done = 0, Refused = 2, Lost = 3; // as `dialogctl rc` (cmd_rc.cpp)

void printNodes(const QJsonArray &nodes, int depth)
{
    for (const QJsonValue &v : nodes) {
        const QJsonObject n = v.toObject();
        QString what = n.value(QStringLiteral("present")).toBool()
                           ? n.value(QStringLiteral("state")).toString()
                       : n.value(QStringLiteral("lost")).toBool() ? QStringLiteral("lost")
                                                                  : QStringLiteral("absent");
        if (n.value(QStringLiteral("busy")).toBool())
            what += QStringLiteral(" (busy)");
        if (!n.value(QStringLiteral("enabled")).toBool(true))
            what += QStringLiteral(", disabled");
        if (const QString owner = n.value(QStringLiteral("owner")).toString(); !owner.isEmpty())
            what += QStringLiteral(", taken by ") + owner;
        if (n.value(QStringLiteral("removed")).toBool())
            what += QStringLiteral(", REMOVED: ") + n.value(QStringLiteral("reason")).toString();
        else if (n.value(QStringLiteral("removable")).toBool())
            what += QStringLiteral(", removable");
        if (!n.value(QStringLiteral("error")).toString().isEmpty())
            what += QStringLiteral(" - ") + n.value(QStringLiteral("error")).toString();
        const QString indent(2 * depth, QLatin1Char(' '));
        std::printf("%s%-*s %-8s %s\n", qPrintable(indent), qMax(1, 16 - 2 * depth),
                    qPrintable(n.value(QStringLiteral("name")).toString()),
                    qPrintable(n.value(QStringLiteral("kind")).toString()), qPrintable(what));
        printNodes(n.value(QStringLiteral("children")).toArray(), depth + 1);
    }
}

void printTree(const QByteArray &stateJson, bool json)
{
    rc::StateRecord s;
    if (const Status read = rc::StateRecord::fromJson(stateJson, &s); !read.isOk()) {
        std::printf("unreadable state: %s\n", qPrintable(read.message()));
        return;
    }
    QJsonArray removed;
    for (const rc::RemovedNode &n : s.removed)
        removed.append(QJsonObject{{QStringLiteral("node"), n.node},
                                   {QStringLiteral("segment"), n.segment},
                                   {QStringLiteral("reason"), n.reason},
                                   {QStringLiteral("time_ms"), n.timeMs}});
    if (json) {
        const QJsonObject o{{QStringLiteral("name"), s.process},
                            {QStringLiteral("kind"), s.kind},
                            {QStringLiteral("state"), rc::stateName(s.state)},
                            {QStringLiteral("busy"), s.busy},
                            {QStringLiteral("error"), s.error},
                            {QStringLiteral("run_number"), qint64(s.runNumber)},
                            {QStringLiteral("children"), s.tree},
                            {QStringLiteral("removed"), removed}};
        std::printf("%s\n", QJsonDocument(o).toJson(QJsonDocument::Compact).constData());
        return;
    }
    std::printf("%-16s %-8s %s%s%s\n", qPrintable(s.process), qPrintable(s.kind),
                qPrintable(rc::stateName(s.state)),
                s.runNumber ? qPrintable(QStringLiteral(", run %1").arg(s.runNumber)) : "",
                s.error.isEmpty() ? "" : qPrintable(QStringLiteral(" - ") + s.error));
    printNodes(s.tree, 1);
    for (const rc::RemovedNode &n : s.removed)
        std::printf("removed: %s (by %s): %s\n", qPrintable(n.node), qPrintable(n.segment),
                    qPrintable(n.reason));
}
} // namespace

int rcTree(Client &client, const QString &verb, const QString &master, const QStringList &pos,
           qint64 timeoutMs, bool json)
{
    int rc = Lost;
    const QString action = pos.first();
    if (action == QLatin1String("tree")) {
        if (pos.size() != 1)
            return fail(verb, QStringLiteral("tree takes no node"));
        Subscription *sub = client.subscribe(rc::stateService(master));
        QObject::connect(sub, &Subscription::messageReceived, &client, [&](const Message &m) {
            printTree(m.data(), json);
            rc = Done;
            QCoreApplication::quit();
        });
        // No state within the time: lost, as for a request that is not answered.
        return execOrTimeOut(client, verb, timeoutMs,
                             QStringLiteral("no state from '%1' through").arg(master), rc) == Done
                   ? Done
                   : Lost;
    }
    if (pos.size() != 2)
        return fail(verb, QStringLiteral("%1 needs one node: dialogctl rc %1 NODE").arg(action));
    const QString node = pos.at(1);
    const QByteArray data =
        QJsonDocument(QJsonObject{{QStringLiteral("action"), action}, {QStringLiteral("node"), node}})
            .toJson(QJsonDocument::Compact);
    client.request(rc::treeService(master), data, int(timeoutMs), &client, [&](const Reply &r) {
        rc = rcAnswer(r, verb, action + QLatin1Char(' ') + node, master,
                      [json](const QByteArray &state) { printTree(state, json); });
        QCoreApplication::quit();
    });
    const int out = execOrTimeOut(client, verb, timeoutMs + 1000, QStringLiteral("no answer through"), rc);
    return out == Done || out == Refused ? out : Lost;
}

} // namespace dialog::tool
