// Master: watching the slaves. A lost or disagreeing slave puts the run in Error; one that comes
// back is brought to the state of the run; a master that starts while its slaves agree on a run
// takes it over.
#include "master.h"

namespace dialog::daq {

void Master::onSlaveSubscription(const QString &name, Subscription::State s)
{
    SlaveView &v = m_slaves[name];
    if (s != Subscription::State::Lost)
        return;
    v.lost = true;
    v.seen = false;
    v.busy = false;
    v.recovering = false;
    const rc::State ms = machine().state();
    const bool inRun = ms == rc::State::Configured || ms == rc::State::Running || ms == rc::State::Paused ||
                       machine().busy();
    if (inRun && v.counts() && v.removable) {
        removeNode(name, QStringLiteral("lost"));
    } else if (inRun && v.counts()) {
        if (v.segment)
            log(Severity::Warning,
                QStringLiteral("%1 lost: its children are left as they are, for a restarted %1 "
                               "to take over (a reset of the run resets them)")
                    .arg(name));
        if (!m_recoverTarget && ms != rc::State::Error)
            m_recoverTarget = ms;
        slaveFailed(name, QStringLiteral("%1 lost").arg(name));
    } else {
        log(Severity::Warning, QStringLiteral("%1 lost").arg(name));
        publishState();
    }
    if (inRun && v.segment && v.enabled && v.removed) // out of the run: its children stop taking part too
        resetOrphans(name, QStringLiteral("lost, out of the run"));
}

void Master::slaveFailed(const QString &name, const QString &why)
{
    if (!m_culprits.contains(name))
        m_culprits << name;
    if (machine().busy())
        return; // the pending fan-out reports it (ProviderLost / error reply)
    if (machine().state() != rc::State::Error)
        enterError(why);
    else {
        log(Severity::Error, why);
        publishState();
    }
}

void Master::onSlaveMessage(const QString &name, const QByteArray &data)
{
    rc::StateRecord record;
    if (!rc::StateRecord::fromJson(data, &record).isOk())
        return;
    const rc::StateRecord *st = &record;
    SlaveView &v = m_slaves[name];
    const bool fresh = !v.seen;
    if (fresh && v.lost)
        v.cameBack = true;
    v.seen = true;
    v.lost = false;
    v.state = st->state;
    v.busy = st->busy;
    v.transition = st->transition;
    v.error = st->error;
    v.pid = st->pid;
    v.runNumber = st->runNumber;
    if (v.kind.isEmpty()) // a slave program of its own: the kind it says it is
        v.kind = st->kind;
    if (v.segment) {
        v.tree = st->tree;
        v.removedBelow = st->removed;
    }
    if (fresh)
        log(Severity::Info,
            QStringLiteral("%1 is there (%2, pid %3)").arg(name, stateName(v.state)).arg(v.pid));
    if (fresh && !v.owner.isEmpty())
        tellOwner(name); // a new incarnation, or this controller restarted: it knows nothing of it
    takeOver();
    checkConsistency();
    recoverStep();
    const rc::State ms = machine().state();
    if (v.removed && v.autoRecover && v.cameBack && !v.busy && !v.recovering && !machine().busy() &&
        (ms == rc::State::Configured || ms == rc::State::Running || ms == rc::State::Paused)) {
        log(Severity::Info,
            QStringLiteral("%1 is back: recovering it automatically (\"recover\": \"auto\")").arg(name));
        bringIn(name, {});
    }
    publishSoon(); // and outChanged(): a segment's removals below it come with its messages
}

void Master::takeOver()
{
    if (machine().state() != rc::State::Initial || machine().busy())
        return;
    std::optional<rc::State> common;
    quint32 run = 0;
    for (const QString &n : std::as_const(m_order)) {
        const SlaveView &v = m_slaves[n];
        if (!v.counts())
            continue;
        if (!v.seen || v.lost || v.busy)
            return;
        if (!common)
            common = v.state;
        else if (v.state != *common)
            return;
        run = qMax(run, v.runNumber);
    }
    if (!common ||
        (*common != rc::State::Configured && *common != rc::State::Running && *common != rc::State::Paused))
        return;
    adoptRun(run, *common);
    restoreState(*common); // last: the state it publishes carries the run adopted above
    log(Severity::Info, QStringLiteral("took over the run: every slave is %1 (run %2)")
                            .arg(stateName(*common))
                            .arg(m_runNumber));
}

void Master::adoptRun(quint32 run, rc::State common)
{
    RunRecord saved;
    QString error;
    if (!RunRecord::read(m_runNumberFile, &saved, &error))
        log(Severity::Warning, error);
    const qint64 now = rc::nowMs();
    if (saved.number >= run) {
        m_runNumber = saved.number;
        m_runStartMs = saved.startMs;
        // A master killed during the start, after the slaves ran, did not record that data taking began.
        if (common == rc::State::Running && saved.runningSinceMs == 0)
            saved.runningSinceMs = saved.startMs;
        m_activeMsBefore = saved.activeMsAt(now);
    } else {
        // The file lags (a start whose save was lost with the machine): the slaves know the number,
        // nobody knows when that run started.
        log(Severity::Warning,
            QStringLiteral("run %1 is not in %2: its start time and data-taking time are unknown")
                .arg(run)
                .arg(m_runNumberFile));
        m_runNumber = run;
        m_runStartMs = 0;
        m_activeMsBefore = 0;
    }
    if (common == rc::State::Running)
        m_runningSince.start();
    if (common != rc::State::Configured)
        m_runInfoTimer.start(); // from start to stop, as for a run this master started
    // The run registry's record of the run goes on: this master ends it.
    m_runRecorded = m_runBook && m_root && common != rc::State::Configured;
    if (m_runRecorded)
        beginRunOut(); // what is out now: the earlier removals of the run went with the lost master
    if (!saveRun(&error))
        log(Severity::Warning, error);
}

void Master::checkConsistency()
{
    if (machine().busy())
        return;
    const rc::State ms = machine().state();
    if (ms != rc::State::Configured && ms != rc::State::Running && ms != rc::State::Paused)
        return;
    for (const QString &n : std::as_const(m_order)) {
        const SlaveView &v = m_slaves[n];
        if (!v.counts() || !v.seen || v.busy || v.state == ms)
            continue;
        if (v.removable) {
            removeNode(n,
                       v.state == rc::State::Error
                           ? QStringLiteral("in Error: %1").arg(v.error)
                           : QStringLiteral("%1 while the run is %2").arg(stateName(v.state), stateName(ms)));
            continue;
        }
        // A slave that restarted (Initial) is recovered; one in Error waits for the operator's reset.
        if (v.state == rc::State::Initial)
            m_recoverTarget = ms;
        slaveFailed(
            n, v.state == rc::State::Error
                   ? QStringLiteral("%1 in Error: %2").arg(n, v.error)
                   : QStringLiteral("%1 is %2, the run is %3").arg(n, stateName(v.state), stateName(ms)));
    }
}

void Master::recoverStep()
{
    if (!m_recoverTarget || machine().state() != rc::State::Error || machine().busy())
        return;
    const rc::State target = *m_recoverTarget;
    bool allThere = true;
    for (const QString &n : std::as_const(m_order)) {
        SlaveView &v = m_slaves[n];
        if (!v.counts())
            continue;
        if (!v.seen || v.lost) {
            allThere = false;
            continue;
        }
        if (v.state == target && !v.busy)
            continue;
        allThere = false;
        if (v.busy || v.recovering || v.state == rc::State::Error)
            continue;
        const QList<rc::Transition> route = path(v.state, target);
        if (route.isEmpty())
            continue;
        // One step at a time; the slave's next state message triggers the next step.
        const rc::Transition t = route.first();
        v.recovering = true;
        log(Severity::Info, QStringLiteral("recovering %1: %2 (%3 -> %4)")
                                .arg(n, transitionName(t), stateName(v.state), stateName(target)));
        const quint64 epoch = m_epoch;
        client()->request(rc::stateService(n), slaveRequest(t, n).toJson(), v.timeoutMs, this,
                          [this, n, t, epoch](const Reply &r) {
                              if (epoch != m_epoch)
                                  return;
                              SlaveView &sv = m_slaves[n];
                              sv.recovering = false;
                              if (!r.isOk()) {
                                  log(Severity::Error, QStringLiteral("recovery of %1 failed in %2: %3")
                                                           .arg(n, transitionName(t), r.errorString()));
                                  return;
                              }
                              if (rc::StateRecord st; rc::StateRecord::fromJson(r.data(), &st).isOk())
                                  sv.state = st.state;
                              sv.busy = false;
                              recoverStep();
                              publishState();
                          });
    }
    if (!allThere)
        return;
    m_recoverTarget.reset();
    m_culprits.clear();
    restoreState(target);
    if (target == rc::State::Running && !m_runningSince.isValid())
        m_runningSince.start();
    log(Severity::Info, QStringLiteral("recovered: every slave is %1 again").arg(stateName(target)));
}

} // namespace dialog::daq
