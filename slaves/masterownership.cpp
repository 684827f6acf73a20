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
            publishState();
        }
        return reply(true, {});
    }
    // What is asked, as the operator would say it ("stop CAL").
    const QString what =
        action == QLatin1String("transition") ? request.value(QStringLiteral("transition")).toString() : action;
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
        if (machine().state() == rc::State::Initial) {
            v.enabled = true; // back in: configured with the others next time
            saveDisabled();
            log(Severity::Info,
                QStringLiteral("%1 released by %2: enabled, it joins the run at the next configure")
                    .arg(node, requester));
        } else {
            log(Severity::Info, QStringLiteral("%1 released by %2: still disabled until %3 is in Initial "
                                               "(dialogctl rc enable %1)")
                                    .arg(node, requester, name()));
        }
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
    log(Severity::Info, QStringLiteral("%1 of %2 for its owner %3").arg(transitionName(*t), node, requester));
    client()->request(
        rc::stateService(node), r.toJson(), v.timeoutMs, this, [this, node, t, reply](const Reply &answer) {
            if (!answer.isOk())
                return reply(
                    false,
                    QStringLiteral("%1 of %2: %3").arg(transitionName(*t), node, answer.errorString()));
            if (rc::StateRecord st; rc::StateRecord::fromJson(answer.data(), &st).isOk()) {
                m_slaves[node].state = st.state;
                m_slaves[node].busy = false;
            }
            publishSoon();
            reply(true, {});
        });
}

} // namespace dialog::daq
