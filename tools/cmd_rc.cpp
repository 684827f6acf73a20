// dialogctl rc: drive a run from a script. A transition is asked of the master as a request on
// RunCtrl.<master>.State, and the verb waits for the master's answer: exit 0 once every slave
// completed it, non-zero with the master's reason when it refuses or fails.
#include "clientsetup.h"

#include "dialog/rc/staterecord.h"
#include "dialog/subscription.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>
#include <functional>

namespace dialog::tool {

/// rc tree|enable|disable|recover NODE (cmd_rctree.cpp), with this verb's options.
int rcTree(Client &client, const QString &verb, const QString &master, const QStringList &pos,
           qint64 timeoutMs, bool json);
/// The exit code of the master's answer @p r to @p what: done (@p printAnswer given the state), lost
/// or refused (the reason on stderr).
int rcAnswer(const Reply &r, const QString &verb, const QString &what, const QString &master,
             const std::function<void(const QByteArray &)> &printAnswer);

namespace {
// Exit codes of `dialogctl rc` (documented in its --help and docs/dialogctl.md).
constexpr int Done = 0;    // the transition completed (or: the state was printed)
constexpr int Usage = 1;   // bad arguments: nothing was asked
constexpr int Refused = 2; // the master refused the transition, or it failed (the reason on stderr)
constexpr int Lost = 3;    // no answer: not connected, no master of that name, or past --timeout-ms

QString summary(const rc::StateRecord &s)
{
    QString line = QStringLiteral("%1: %2").arg(s.process, rc::stateName(s.state));
    if (s.busy && s.transition)
        line += QStringLiteral(" (%1…)").arg(rc::transitionName(*s.transition));
    if (s.runNumber)
        line += QStringLiteral(", run %1").arg(s.runNumber);
    if (!s.runType.isEmpty())
        line += QStringLiteral(" (%1)").arg(s.runType);
    if (!s.error.isEmpty())
        line += QStringLiteral(" - %1").arg(s.error);
    int present = 0;
    for (const rc::SlaveRecord &slave : s.slaves)
        present += slave.present && !slave.lost;
    if (!s.slaves.isEmpty())
        line += QStringLiteral("; slaves %1 of %2 present").arg(present).arg(s.slaves.size());
    return line;
}

void print(const QByteArray &stateJson, bool json)
{
    if (json) {
        std::printf("%s\n", QJsonDocument::fromJson(stateJson).toJson(QJsonDocument::Indented).constData());
        return;
    }
    rc::StateRecord s;
    const Status read = rc::StateRecord::fromJson(stateJson, &s);
    std::printf("%s\n", qPrintable(read.isOk() ? summary(s) : QStringLiteral("unreadable state: %1").arg(read.message())));
}

/// The state the master publishes: the first value of RunCtrl.<master>.State.
int showState(Client &client, const QString &verb, const QString &master, qint64 timeoutMs, bool json)
{
    int rc = Lost;
    Subscription *sub = client.subscribe(rc::stateService(master));
    QObject::connect(sub, &Subscription::messageReceived, &client, [&](const Message &m) {
        print(m.data(), json);
        rc = Done;
        QCoreApplication::quit();
    });
    QTimer::singleShot(int(timeoutMs), &client, [&] {
        rc = fail(verb, QStringLiteral("lost: no state from '%1' within %2 ms (is the master running? "
                                       "'dialogctl ls' lists the processes)")
                            .arg(master)
                            .arg(timeoutMs));
        QCoreApplication::quit();
    });
    QCoreApplication::exec();
    return rc;
}
} // namespace

int rcAnswer(const Reply &r, const QString &verb, const QString &what, const QString &master,
             const std::function<void(const QByteArray &)> &printAnswer)
{
    switch (r.error()) {
    case Status::Code::Ok:
        printAnswer(r.data());
        return Done;
    case Status::Code::Timeout:
    case Status::Code::ProviderLost:
    case Status::Code::NotAccepted:
    case Status::Code::NotFound:
    case Status::Code::NotConnected:
    case Status::Code::Broken:
        fail(verb,
             QStringLiteral("lost: %1 was not answered by '%2': %3").arg(what, master, r.errorString()));
        return Lost;
    default: // the master's answer (Failed): refused, or a slave failed it
        fail(verb, QStringLiteral("%1 refused: %2").arg(what, r.errorString()));
        return Refused;
    }
}

int rcVerb(const QStringList &args)
{
    const QString verb = QStringLiteral("rc");
    QString master = QStringLiteral("Master");
    QString runType;
    qint64 timeout = 120000, runNumber = 0;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Asks the run-control master for a transition and waits until it is done, or prints "
        "its state: the way to drive a run from a script.\n"
        "  dialogctl rc configure|start|pause|resume|stop|unconfigure|reset\n"
        "  dialogctl rc state\n"
        "  dialogctl rc tree                   the run-control tree: every node's state, "
        "disabled and removed nodes\n"
        "  dialogctl rc disable|enable NODE    leave a slave or segment out of the next runs, "
        "or take it in again (between runs)\n"
        "  dialogctl rc recover NODE           bring a removed node back into the running run\n"
        "  dialogctl rc take|release NODE      take a disabled node to drive it alone "
        "(commissioning: dialogctl rc configure --node NODE), give it back\n"
        "Exit status: 0 done (every enabled slave completed the transition; the new state is "
        "printed); 1 bad arguments, nothing asked; 2 refused or failed (the master's reason on "
        "stderr: not allowed from this state, a slave failed, the partition's access list does not "
        "let this user ask it, ...); 3 lost (not connected, no master of that name, no answer "
        "within --timeout-ms: the transition may still complete)."));
    p.addPositional(QStringLiteral("transition"),
                    QStringLiteral("A transition (%1), 'state', or tree|enable|disable|recover|take|release.")
                        .arg(rc::allTransitionNames().join(QStringLiteral(", "))),
                    QStringLiteral("transition|state|tree|enable NODE|disable NODE|recover NODE|take NODE|"
                                   "release NODE"));
    QString node;
    p.add(
        Option::text(QStringLiteral("node"), QStringLiteral("name"),
                     QStringLiteral("The transition for this node alone, which you took (dialogctl rc take): "
                                    "asked through the master, refused for anyone but its owner."),
                     &node));
    p.add(Option::text(QStringLiteral("master"), QStringLiteral("name"),
                       QStringLiteral("The master's process name (default Master)."), &master));
    p.add(Option::integer(QStringLiteral("run-number"), QStringLiteral("n"),
                          QStringLiteral("start: the run number to use (default: the master's next)."), &runNumber,
                          0, 4294967295LL));
    p.add(Option::text(QStringLiteral("run-type"), QStringLiteral("type"),
                       QStringLiteral("start: the run type (default: the partition's)."), &runType));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print the master's state as JSON.")));
    p.add(Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                           QStringLiteral("Give up waiting for the answer after this long (default 120000: a "
                                          "master answers once every slave is done)."),
                           &timeout, OptionUnit::Milliseconds, 1, 3600000));
    if (!parse(p, args))
        return Usage;
    const QStringList pos = p.positionalArguments();
    const bool tree = !pos.isEmpty() && QStringList{QStringLiteral("tree"),    QStringLiteral("enable"),
                                                    QStringLiteral("disable"), QStringLiteral("recover"),
                                                    QStringLiteral("take"),    QStringLiteral("release")}
                                            .contains(pos.first());
    if (pos.size() != 1 && !tree)
        return fail(verb, QStringLiteral("expected one transition or 'state' (see --help)"));
    const bool json = p.isSet(QStringLiteral("json"));
    const bool state = pos.first() == QLatin1String("state");
    const auto transition = rc::transitionFromName(pos.first());
    if (!state && !transition && !tree)
        return fail(verb, QStringLiteral("unknown transition '%1' (known: %2, or 'state')")
                              .arg(pos.first(), rc::allTransitionNames().join(QStringLiteral(", "))));
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    if (state)
        return showState(*client, verb, master, timeout, json);
    if (tree)
        return rcTree(*client, verb, master, pos, timeout, json);

    rc::TransitionRequest req;
    req.transition = *transition;
    req.runNumber = quint32(runNumber);
    req.runType = runType;
    QByteArray data = req.toJson();
    QString service = rc::stateService(master), what = rc::transitionName(*transition);
    if (!node.isEmpty()) {
        // A taken node's transition goes through the tree: its controller checks the owner.
        QJsonObject o = QJsonDocument::fromJson(data).object();
        o.insert(QStringLiteral("action"), QStringLiteral("transition"));
        o.insert(QStringLiteral("node"), node);
        data = QJsonDocument(o).toJson(QJsonDocument::Compact);
        service = rc::treeService(master);
        what += QStringLiteral(" of ") + node;
    }
    int rc = Lost;
    client->request(service, data, int(timeout), client.get(), [&](const Reply &r) {
        rc = rcAnswer(r, verb, what, master, [json](const QByteArray &state) { print(state, json); });
        QCoreApplication::quit();
    });
    return execOrTimeOut(*client, verb, timeout + 1000, QStringLiteral("no answer through"), rc);
}

} // namespace dialog::tool
