// Master: the run-control tree. Enable and disable a node between runs, take a removable node out
// of the run when it fails (stopless removal), bring it back into the running run (stopless
// recovery), and the tree as published in the state.
#include "master.h"

#include <QJsonDocument>
#include <QSet>

namespace dialog::daq {

namespace {
bool runOpen(rc::State s)
{
    return s == rc::State::Running || s == rc::State::Paused;
}
} // namespace

int Master::subtreeTimeoutMs(const rc::Partition &partition, const QString &node)
{
    if (!partition.segment(node))
        return partition.transitionTimeoutMs;
    // A segment answers once its children did, in up to three phases (readout, segments, control),
    // each waiting up to its slowest child's time-out: its parent waits for all of that, and a
    // little more, so that a child's time-out is reported by the child's own controller.
    int slowest = 0;
    for (const QString &child : partition.childrenOf(node))
        slowest = qMax(slowest, subtreeTimeoutMs(partition, child));
    return int(qMin<qint64>(3 * qint64(slowest) + 1000, 24 * 3600 * 1000));
}

QJsonArray Master::treeJson() const
{
    QJsonArray out;
    for (const QString &n : m_order) {
        const SlaveView &v = m_slaves.value(n);
        QJsonObject o{{QStringLiteral("name"), v.name},
                      {QStringLiteral("kind"), v.kind},
                      {QStringLiteral("state"), v.seen && !v.lost ? stateName(v.state) : QString()},
                      {QStringLiteral("busy"), v.busy},
                      {QStringLiteral("present"), v.seen && !v.lost},
                      {QStringLiteral("lost"), v.lost},
                      {QStringLiteral("enabled"), v.enabled},
                      {QStringLiteral("removable"), v.removable},
                      {QStringLiteral("removed"), v.removed},
                      {QStringLiteral("reason"), v.removedReason},
                      {QStringLiteral("owner"), v.owner},
                      {QStringLiteral("error"), v.error}};
        if (v.segment)
            o.insert(QStringLiteral("children"), v.tree);
        out.append(o);
    }
    return out;
}

void Master::removeNode(const QString &name, const QString &why)
{
    SlaveView &v = m_slaves[name];
    if (v.removed)
        return;
    v.removed = true;
    v.removedReason = why;
    v.removedMs = rc::nowMs();
    v.recovering = false;
    v.cameBack = false;
    m_culprits.removeAll(name);
    log(Severity::Warning,
        QStringLiteral("removed %1 from the run (removable): %2; the run goes on without it").arg(name, why));
    outChanged();
    publishState();
}

bool Master::takeRequest(const Request &request)
{
    if (request.service() != rc::treeService(name()))
        return false;
    const QJsonObject o = QJsonDocument::fromJson(request.data()).object();
    const QString action = o.value(QStringLiteral("action")).toString();
    const QString node = o.value(QStringLiteral("node")).toString();
    static const QStringList actions{QStringLiteral("enable"),  QStringLiteral("disable"),
                                     QStringLiteral("recover"), QStringLiteral("take"),
                                     QStringLiteral("release"), QStringLiteral("transition")};
    if (!actions.contains(action)) {
        client()->replyError(request, QStringLiteral("unknown action '%1' (known: %2)")
                                          .arg(action, actions.join(QStringLiteral(", "))));
        return true;
    }
    // An owner's transition falls under the access list as that transition does.
    const QString permitted =
        action == QLatin1String("transition") ? o.value(QStringLiteral("transition")).toString() : action;
    if (const Status denied = permit(request, permitted); !denied.isOk()) {
        client()->replyError(request, denied.message());
        return true;
    }
    QString requester = request.originUser().isEmpty()
                            ? request.origin()
                            : request.originUser() + QLatin1Char('@') + request.originHost();
    // A controller passing an operator's request down names the operator.
    if (request.origin() == m_partition.parentOf(name()) && o.contains(QStringLiteral("requester")))
        requester = o.value(QStringLiteral("requester")).toString();
    treeAction(action, node, requester, o, [this, request](bool ok, const QString &error) {
        if (ok)
            client()->reply(request, stateRecord().toJson());
        else
            client()->replyError(request, error);
    });
    return true;
}

void Master::treeAction(const QString &action, const QString &node, const QString &requester,
                        const QJsonObject &request, TreeReply reply)
{
    if (!m_partition.node(node)) {
        QStringList known;
        for (const rc::Segment &s : m_partition.tree)
            known << s.name;
        for (const rc::ProcessSpec &s : m_partition.slaves)
            known << s.name;
        return reply(false, QStringLiteral("unknown node '%1' (the tree's nodes: %2)")
                                .arg(node, known.join(QStringLiteral(", "))));
    }
    if (machine().busy())
        return reply(false, QStringLiteral("%1 %2: %3 is in a transition (%4)")
                                .arg(action, node, name(), transitionActivity(*machine().pending())));
    if (!m_slaves.contains(node)) {
        // Below one of this controller's segments: that segment's controller decides.
        QString child = node;
        while (!child.isEmpty() && m_partition.parentOf(child) != name() && child != m_partition.master.name)
            child = m_partition.parentOf(child);
        if (!m_slaves.contains(child))
            return reply(false, QStringLiteral("%1 is not below %2").arg(node, name()));
        const int timeout = m_slaves[child].timeoutMs;
        QJsonObject down = request;
        down.insert(QStringLiteral("requester"), requester);
        const QByteArray data = QJsonDocument(down).toJson(QJsonDocument::Compact);
        client()->request(rc::treeService(child), data, timeout, this, [reply](const Reply &r) {
            reply(r.isOk(), r.isOk() ? QString() : r.errorString());
        });
        return;
    }
    SlaveView &v = m_slaves[node];
    const rc::State ms = machine().state();
    if (action == QLatin1String("take") || action == QLatin1String("release") ||
        action == QLatin1String("transition"))
        return ownership(action, node, requester, request, reply);
    if (action == QLatin1String("recover")) {
        if (!v.removed)
            return reply(
                false, QStringLiteral("%1 is not removed: it is %2")
                           .arg(node, v.enabled ? QStringLiteral("in the run") : QStringLiteral("disabled")));
        if (!v.seen || v.lost)
            return reply(false, QStringLiteral("%1 is not back yet (%2)").arg(node, v.removedReason));
        if (v.recovering)
            return reply(false, QStringLiteral("%1 is being recovered already").arg(node));
        return bringIn(node, reply);
    }
    if (runOpen(ms))
        return reply(false, QStringLiteral("%1 %2: between runs only (%3 is %4; stop the run first)")
                                .arg(action, node, name(), stateName(ms)));
    const bool enable = action == QLatin1String("enable");
    if (v.enabled == enable)
        return reply(true, {});
    if (enable && !v.owner.isEmpty())
        return reply(false,
                     QStringLiteral("enable %1: it is taken by %2 (release it first)").arg(node, v.owner));
    if (enable && ms == rc::State::Configured && (!v.seen || v.lost || v.state != ms))
        return reply(false, QStringLiteral("enable %1: it is not %2 as %3 is (enable it in Initial, or "
                                           "bring it to Configured first)")
                                .arg(node, stateName(ms), name()));
    v.enabled = enable;
    v.removed = false;
    v.removedReason.clear();
    log(Severity::Info,
        enable ? QStringLiteral("enabled %1: it takes part in the next transitions").arg(node)
               : QStringLiteral("disabled %1: it gets no commands and does not count").arg(node));
    saveDisabled();
    publishOut();
    publishState();
    reply(true, {});
}

QStringList Master::disabledNodes() const
{
    QStringList out;
    for (const QString &n : m_order)
        if (!m_slaves.value(n).enabled)
            out << n;
    return out;
}

void Master::saveDisabled()
{
    RunRecord r;
    QString error;
    // An unreadable file holds no number this controller uses (it started from 0): rewritten.
    if (!RunRecord::read(m_runNumberFile, &r, &error))
        log(Severity::Warning, error);
    fillOut(&r);
    if (!r.write(m_runNumberFile, &error))
        log(Severity::Warning,
            QStringLiteral("%1: a restarted %2 would enable every node again").arg(error, name()));
}

void Master::fillOut(RunRecord *r) const
{
    r->disabled = disabledNodes();
    r->owners.clear();
    for (const QString &n : m_order)
        if (const SlaveView &v = m_slaves.value(n); !v.owner.isEmpty())
            r->owners.insert(n, {v.owner, v.ownedSinceMs, v.ownRun});
}

void Master::restoreDisabled(const RunRecord &saved)
{
    QStringList kept, unknown;
    for (const QString &n : saved.disabled) {
        if (m_slaves.contains(n)) {
            m_slaves[n].enabled = false;
            kept << n;
        } else {
            unknown << n;
        }
    }
    if (!kept.isEmpty())
        log(Severity::Info, QStringLiteral("disabled as before the restart (%1): %2")
                                .arg(m_runNumberFile, kept.join(QStringLiteral(", "))));
    for (auto it = saved.owners.begin(); it != saved.owners.end(); ++it) {
        // Only a disabled node is taken: an owner kept for one enabled since is stale.
        if (!m_slaves.contains(it.key()) || m_slaves[it.key()].enabled) {
            unknown << it.key();
            continue;
        }
        m_slaves[it.key()].owner = it->owner;
        m_slaves[it.key()].ownedSinceMs = it->sinceMs;
        m_slaves[it.key()].ownRun = it->run; // ended by the owner's stop, as if nothing happened
        log(Severity::Info, QStringLiteral("%1 is still taken by %2, as before the restart (%3)")
                                .arg(it.key(), it->owner, m_runNumberFile));
    }
    if (!unknown.isEmpty())
        log(Severity::Warning,
            QStringLiteral("%1 names disabled or taken nodes that are not disabled children "
                           "of %2 in this partition, ignored: %3")
                .arg(m_runNumberFile, name(), unknown.join(QStringLiteral(", "))));
}

void Master::tellOwner(const QString &node)
{
    const QString owner = m_slaves.value(node).owner;
    const QByteArray data =
        QJsonDocument(QJsonObject{{QStringLiteral("owner"), owner}}).toJson(QJsonDocument::Compact);
    client()->request(rc::stateService(node), data, m_slaves.value(node).timeoutMs, this,
                      [this, node, owner](const Reply &r) {
                          if (!r.isOk())
                              log(Severity::Warning,
                                  QStringLiteral("%1 was not told that it is %2: %3 (its run-control "
                                                 "commands are not checked against its owner)")
                                      .arg(node,
                                           owner.isEmpty() ? QStringLiteral("released")
                                                           : QStringLiteral("taken by ") + owner,
                                           r.errorString()));
                      });
}

void Master::resetOrphans(const QString &segment, const QString &why)
{
    rc::TransitionRequest reset;
    reset.transition = rc::Transition::Reset;
    // The segment's disabled children (as its last state showed them) get nothing, not even a reset.
    QSet<QString> disabled;
    for (const QJsonValue &c : m_slaves.value(segment).tree)
        if (!c.toObject().value(QStringLiteral("enabled")).toBool(true))
            disabled.insert(c.toObject().value(QStringLiteral("name")).toString());
    QStringList sent, failed;
    for (const QString &child : m_partition.childrenOf(segment))
        if (!disabled.contains(child))
            (client()->sendCommand(rc::commandName(child), reset.toJson()) ? sent : failed) << child;
    if (!sent.isEmpty())
        log(Severity::Warning, QStringLiteral("%1 %2: its children are reset, not left running without their "
                                              "controller: %3")
                                   .arg(segment, why, sent.join(QStringLiteral(", "))));
    if (!failed.isEmpty())
        log(Severity::Error, QStringLiteral("%1 %2: the reset of its children could not be sent: %3")
                                 .arg(segment, why, failed.join(QStringLiteral(", "))));
}

void Master::resetRemoved(const QStringList &nodes, Done done)
{
    if (nodes.isEmpty())
        return done(Status());
    rc::TransitionRequest reset;
    reset.transition = rc::Transition::Reset;
    auto left = std::make_shared<int>(int(nodes.size()));
    for (const QString &n : nodes) {
        SlaveView &v = m_slaves[n];
        log(Severity::Info,
            QStringLiteral("resetting %1 (removed from the run, still %2) for the next configure")
                .arg(n, v.busy ? QStringLiteral("in a transition") : stateName(v.state)));
        client()->request(rc::stateService(n), reset.toJson(), v.timeoutMs, this,
                          [this, n, left, done, epoch = m_epoch](const Reply &r) {
                              if (epoch != m_epoch)
                                  return;
                              if (!r.isOk())
                                  log(Severity::Warning,
                                      QStringLiteral("reset of %1 (removed from the run) failed: %2")
                                          .arg(n, r.errorString()));
                              else if (rc::StateRecord st; rc::StateRecord::fromJson(r.data(), &st).isOk()) {
                                  m_slaves[n].state = st.state;
                                  m_slaves[n].busy = false;
                              }
                              if (--*left == 0)
                                  done(Status());
                          });
    }
}

void Master::bringIn(const QString &name, TreeReply reply)
{
    SlaveView &v = m_slaves[name];
    const rc::State target = machine().state();
    if (!v.seen || v.lost) {
        v.recovering = false;
        if (reply)
            reply(false, QStringLiteral("recovery of %1: it is gone again").arg(name));
        return;
    }
    if (v.state == target && !v.busy) {
        v.recovering = false;
        v.removed = false;
        v.removedReason.clear();
        v.cameBack = false;
        log(Severity::Info, QStringLiteral("recovered %1 into run %2: it is %3 again (the run went on)")
                                .arg(name)
                                .arg(m_runNumber)
                                .arg(stateName(target)));
        outChanged();
        publishState();
        if (reply)
            reply(true, {});
        return;
    }
    const QList<rc::Transition> route = path(v.state, target);
    if (route.isEmpty() || (target != rc::State::Configured && !runOpen(target))) {
        v.recovering = false;
        if (reply)
            reply(false, QStringLiteral("recovery of %1: no way from %2 to %3")
                             .arg(name, stateName(v.state), stateName(target)));
        return;
    }
    const rc::Transition t = route.first();
    v.recovering = true;
    log(Severity::Info, QStringLiteral("recovering %1 into the run: %2 (%3 -> %4)")
                            .arg(name, transitionName(t), stateName(v.state), stateName(target)));
    const quint64 epoch = m_epoch;
    client()->request(rc::stateService(name), slaveRequest(t, name).toJson(), v.timeoutMs, this,
                      [this, name, t, epoch, reply](const Reply &r) {
                          if (epoch != m_epoch)
                              return;
                          SlaveView &sv = m_slaves[name];
                          if (!r.isOk()) {
                              sv.recovering = false;
                              const QString why = QStringLiteral("recovery of %1 failed in %2: %3")
                                                      .arg(name, transitionName(t), r.errorString());
                              log(Severity::Error, why);
                              if (reply)
                                  reply(false, why);
                              return;
                          }
                          if (rc::StateRecord st; rc::StateRecord::fromJson(r.data(), &st).isOk()) {
                              sv.state = st.state;
                              sv.runNumber = st.runNumber;
                          }
                          sv.busy = false;
                          bringIn(name, reply);
                      });
}

} // namespace dialog::daq
