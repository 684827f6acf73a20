// Master: ownership of a node left out of the run. An operator takes a disabled node (a segment, to
// commission a sub-detector alone), drives it through its transitions while the rest of the tree
// runs without it, and releases it; it joins the run at the next configure.
#include "master.h"

#include <QDateTime>

namespace dialog::daq {

void Master::ownership(const QString &action, const QString &node, const QString &requester,
                       const QJsonObject &request, TreeReply reply)
{
    SlaveView &v = m_slaves[node];
    if (action == QLatin1String("take")) {
        if (v.enabled)
            return reply(false, QStringLiteral("take %1: disable it first (it takes part in the runs of %2)")
                                    .arg(node, name()));
        if (!v.owner.isEmpty() && v.owner != requester)
            return reply(false, QStringLiteral("take %1: it is taken by %2 since %3")
                                    .arg(node, v.owner,
                                         QDateTime::fromMSecsSinceEpoch(v.ownedSinceMs)
                                             .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))));
        if (v.owner.isEmpty()) {
            v.owner = requester;
            v.ownedSinceMs = rc::nowMs();
            log(Severity::Info,
                QStringLiteral("%1 taken by %2: driven by them alone, out of the run").arg(node, requester));
            saveDisabled(); // a restarted controller keeps it taken
            tellOwner(node);
            publishState();
        }
        return reply(true, {});
    }
    // What is asked, as the operator would say it ("stop CAL").
    const QString what = action == QLatin1String("transition")
                             ? request.value(QStringLiteral("transition")).toString()
                             : action;
    if (v.owner.isEmpty())
        return reply(false, QStringLiteral("%1 %2: it is not taken (dialogctl rc take %2)").arg(what, node));
    if (v.owner != requester)
        return reply(false, QStringLiteral("%1 %2: it is taken by %3, who drives it alone (not %4)")
                                .arg(what, node, v.owner, requester));
    if (action == QLatin1String("release")) {
        if (v.busy || (v.seen && !v.lost && v.state != rc::State::Initial))
            return reply(false,
                         QStringLiteral("release %1: bring it to Initial first (it is %2)")
                             .arg(node, v.busy ? QStringLiteral("in a transition") : stateName(v.state)));
        v.owner.clear();
        v.ownedSinceMs = 0;
        tellOwner(node);
        if (machine().state() == rc::State::Initial) {
            v.enabled = true; // back in: configured with the others next time
            log(Severity::Info,
                QStringLiteral("%1 released by %2: enabled, it joins the run at the next configure")
                    .arg(node, requester));
        } else {
            log(Severity::Info, QStringLiteral("%1 released by %2: still disabled until %3 is in Initial "
                                               "(dialogctl rc enable %1)")
                                    .arg(node, requester, name()));
        }
        saveDisabled();
        outChanged();
        publishState();
        return reply(true, {});
    }
    const auto t = rc::transitionFromName(request.value(QStringLiteral("transition")).toString());
    if (!t)
        return reply(false, QStringLiteral("unknown transition '%1' (known: %2)")
                                .arg(request.value(QStringLiteral("transition")).toString(),
                                     rc::allTransitionNames().join(QStringLiteral(", "))));
    if (!v.seen || v.lost)
        return reply(false, QStringLiteral("%1 %2: it is not running").arg(transitionName(*t), node));
    rc::TransitionRequest r;
    r.transition = *t;
    r.runNumber = quint32(request.value(QStringLiteral("run_number")).toInteger());
    r.runType = request.value(QStringLiteral("run_type")).toString();
    const auto send = [this, node, requester, reply](const rc::TransitionRequest &r) {
        const rc::Transition t = r.transition;
        log(Severity::Info,
            QStringLiteral("%1 of %2 for its owner %3").arg(transitionName(t), node, requester));
        client()->request(
            rc::stateService(node), r.toJson(), m_slaves.value(node).timeoutMs, this,
            [this, node, t, reply](const Reply &answer) {
                SlaveView &sv = m_slaves[node];
                // The owner's run recorded in the run registry ends with its stop (or a failed start, a
                // reset).
                if (sv.ownRun &&
                    (t == rc::Transition::Stop || t == rc::Transition::Reset ||
                     (t == rc::Transition::Start && !answer.isOk())) &&
                    m_runBook) {
                    m_runBook->endRun(
                        sv.ownRun,
                        answer.isOk() && t == rc::Transition::Stop ? QStringLiteral("normal")
                                                                   : QStringLiteral("error"),
                        answer.isOk()
                            ? (t == rc::Transition::Reset ? QStringLiteral("reset by its owner") : QString())
                            : answer.errorString(),
                        {});
                    sv.ownRun = 0;
                    saveDisabled(); // a restarted controller has no open run of the owner's to end
                }
                if (!answer.isOk())
                    return reply(
                        false,
                        QStringLiteral("%1 of %2: %3").arg(transitionName(t), node, answer.errorString()));
                if (rc::StateRecord st; rc::StateRecord::fromJson(answer.data(), &st).isOk()) {
                    sv.state = st.state;
                    sv.busy = false;
                }
                publishSoon();
                reply(true, {});
            });
    };
    if (*t != rc::Transition::Start)
        return send(r);
    // The owner's runs: numbered and recorded by the run registry when there is one, as runs of
    // their own (partition PARTITION/NODE, run type Commissioning unless said).
    if (r.runType.isEmpty())
        r.runType = QStringLiteral("Commissioning");
    if (!m_runBook) {
        if (r.runNumber == 0)
            return reply(false,
                         QStringLiteral("start %1: give its run number (--run-number N): without a run "
                                        "registry (--configdb) nobody numbers its runs")
                             .arg(node));
        return send(r);
    }
    if (r.runNumber != 0)
        return reply(false,
                     QStringLiteral("start %1: its runs are numbered by the run registry, as every run "
                                    "(no --run-number)")
                         .arg(node));
    m_runBook->startRun(
        r.runType, requester, {},
        [this, node, r, send, reply](const Status &st, quint32 number) mutable {
            if (!st.isOk())
                return reply(false, QStringLiteral("start %1: %2").arg(node, st.message()));
            m_slaves[node].ownRun = number;
            saveDisabled(); // a restarted controller ends it at the owner's stop
            r.runNumber = number;
            send(r);
        },
        node);
}

} // namespace dialog::daq
