// Master: a transition fanned out to the slaves, in phases, and the request each slave gets.
#include "master.h"

namespace dialog::daq {

rc::TransitionRequest Master::slaveRequest(rc::Transition t, const QString &name) const
{
    rc::TransitionRequest r;
    r.transition = t;
    r.runNumber = m_runNumber;
    r.runType = m_runType;
    if (t == rc::Transition::Configure)
        r.parameters = m_parameters.value(name);
    return r;
}

struct Master::Pending
{
    int outstanding = 0;
    QStringList failures;
};

void Master::perform(rc::Transition t, const rc::TransitionRequest &params, Done done)
{
    QStringList absent;
    for (const QString &n : std::as_const(m_order)) {
        const SlaveView &v = m_slaves[n];
        if (!v.enabled || (v.seen && !v.lost))
            continue;
        if (t != rc::Transition::Reset && v.removable && !v.removed)
            removeNode(n, QStringLiteral("not running at %1").arg(transitionName(t)));
        else if (!v.removed)
            absent << n;
    }
    if (t == rc::Transition::Reset) {
        for (const QString &n : std::as_const(m_order))
            if (const SlaveView &v = m_slaves[n]; v.segment && v.enabled && (!v.seen || v.lost))
                resetOrphans(n, QStringLiteral("not running at reset"));
        ++m_epoch; // abandon fan-outs and recoveries in progress
        m_recoverTarget.reset();
        m_culprits.clear();
        for (SlaveView &v : m_slaves)
            v.recovering = false;
        if (!absent.isEmpty())
            log(Severity::Warning,
                QStringLiteral("reset: not running, skipped: %1").arg(absent.join(QStringLiteral(", "))));
    } else if (!absent.isEmpty()) {
        m_culprits = absent;
        done(Status(Status::Code::Failed,
                    QStringLiteral("not running: %1").arg(absent.join(QStringLiteral(", ")))));
        return;
    }
    if (m_runBook && t == rc::Transition::Configure) {
        // The parameters of one version for every slave, or no configure: never a silent fallback.
        m_runBook->configure(
            [this, t, params, done, epoch = m_epoch](const Status &st, const RunBook::Parameters &p) {
                if (epoch != m_epoch)
                    return; // reset meanwhile
                if (!st.isOk())
                    return done(st);
                m_parameters = p;
                log(Severity::Info, QStringLiteral("configuration version %1 (%2)")
                                        .arg(m_runBook->version())
                                        .arg(m_runBook->ref()));
                fanOut(t, params, done);
            });
        return;
    }
    if (m_runBook && m_root && t == rc::Transition::Start) {
        const QString type = params.runType.isEmpty() ? QStringLiteral("Physics") : params.runType;
        beginRunOut();
        m_runBook->startRun(
            type, params.requester, runOutJson(),
            [this, t, params, done, epoch = m_epoch](const Status &st, quint32 number) {
                if (epoch != m_epoch)
                    return; // reset meanwhile; the record is ended as "master lost" by the next run
                if (!st.isOk())
                    return done(st);
                m_runRecorded = true;
                outChanged();
                m_runNumber = number - 1; // the run-number file below takes the registry's number
                fanOut(t, params, done);
            });
        return;
    }
    fanOut(t, params, done);
}

void Master::fanOut(rc::Transition t, const rc::TransitionRequest &params, Done done)
{
    QStringList readout, segments, control;
    for (const QString &n : std::as_const(m_order)) {
        const SlaveView &v = m_slaves[n];
        // A reset also reaches removed nodes (they rejoin at the next configure); a disabled node
        // gets nothing; a reset skips the absent ones (perform() refused anything else).
        if (!v.enabled || (v.removed && t != rc::Transition::Reset) || !v.seen || v.lost)
            continue;
        (v.segment ? segments : v.kind == QLatin1String("readout") ? readout : control) << n;
    }
    if (t == rc::Transition::Start && !m_root) {
        // A segment's run is its parent's: the number comes with the start.
        m_runNumber = params.runNumber;
        m_runType = params.runType.isEmpty() ? QStringLiteral("Physics") : params.runType;
    } else if (t == rc::Transition::Start) {
        // Saved before any slave starts: a master killed during the start leaves the new number
        // and, until the start completes, the time it was asked for as the run's start.
        RunRecord next;
        next.number = m_runNumber + 1;
        next.startMs = rc::nowMs();
        fillOut(&next);
        if (QString error; !next.write(m_runNumberFile, &error)) {
            done(Status(Status::Code::StorageError, error));
            return;
        }
        ++m_runNumber;
        m_runType = params.runType.isEmpty() ? QStringLiteral("Physics") : params.runType;
    }
    QList<QStringList> phases;
    switch (t) {
    case rc::Transition::Start:
    case rc::Transition::Resume:
        // The readout must be ready before the front-ends send triggers; a segment has both.
        phases = {readout, segments, control};
        break;
    case rc::Transition::Stop:
    case rc::Transition::Pause:
        phases = {control, segments, readout}; // triggers off first, then the readout drains
        break;
    default:
        phases = {readout + segments + control};
        break;
    }
    if (t == rc::Transition::Unconfigure) {
        // A removed node left in a run's state would refuse the next configure: reset it too.
        QStringList stale;
        for (const QString &n : std::as_const(m_order)) {
            const SlaveView &v = m_slaves[n];
            if (v.enabled && v.removed && v.seen && !v.lost && (v.busy || v.state != rc::State::Initial))
                stale << n;
        }
        if (!stale.isEmpty())
            done = [this, stale, done](const Status &outcome) {
                if (!outcome.isOk())
                    return done(outcome);
                resetRemoved(stale, done);
            };
    }
    m_culprits.clear();
    runPhases(t, phases, params, done, m_epoch);
}

void Master::runPhases(rc::Transition t, QList<QStringList> phases, const rc::TransitionRequest &params,
                       Done done, quint64 epoch)
{
    while (!phases.isEmpty() && phases.first().isEmpty())
        phases.removeFirst();
    if (phases.isEmpty()) {
        done(Status());
        return;
    }
    const QStringList group = phases.takeFirst();
    auto pending = std::make_shared<Pending>();
    pending->outstanding = int(group.size());
    for (const QString &n : group) {
        const int timeout = m_slaves[n].timeoutMs;
        client()->request(
            rc::stateService(n), slaveRequest(t, n).toJson(), timeout, this,
            [this, n, t, pending, phases, params, done, epoch, timeout](const Reply &r) {
                if (epoch != m_epoch)
                    return;
                if (!r.isOk()) {
                    QString why;
                    switch (r.error()) {
                    case Status::Code::Timeout:
                        why = QStringLiteral("no answer within %1 ms").arg(timeout);
                        break;
                    case Status::Code::ProviderLost:
                        why = QStringLiteral("lost during %1").arg(transitionName(t));
                        break;
                    default:
                        why = r.errorString();
                    }
                    if (m_slaves[n].removable && t != rc::Transition::Reset) {
                        removeNode(n, why); // the transition goes on without it
                    } else {
                        pending->failures << QStringLiteral("%1: %2").arg(n, why);
                        if (!m_culprits.contains(n))
                            m_culprits << n;
                    }
                } else {
                    if (rc::StateRecord st; rc::StateRecord::fromJson(r.data(), &st).isOk()) {
                        m_slaves[n].state = st.state;
                        m_slaves[n].busy = false;
                    }
                }
                if (--pending->outstanding > 0)
                    return;
                if (!pending->failures.isEmpty()) {
                    done(Status(Status::Code::Failed, pending->failures.join(QStringLiteral("; "))));
                    return;
                }
                runPhases(t, phases, params, done, epoch);
            });
    }
}

} // namespace dialog::daq
