#include "master.h"

#include "dialog/is/object.h"
#include "dialog/is/time.h"

namespace dialog::daq {

Master::Master(const ControllableOptions &options, const rc::Partition &partition,
               const QString &runNumberFile, const QString &configdb, const QString &configRef,
               QObject *parent)
    : Controllable(options, parent), m_partition(partition), m_runNumberFile(runNumberFile)
{
    if (!configdb.isEmpty())
        m_runBook = new RunBook(client(), partition, configdb,
                                configRef.isEmpty() ? QStringLiteral("head") : configRef, this);
    QString error;
    RunRecord saved;
    if (!RunRecord::read(m_runNumberFile, &saved, &error))
        log(Severity::Warning, error);
    m_runNumber = saved.number;
    for (const rc::ProcessSpec &s : partition.slaves) {
        SlaveView v;
        v.name = s.name;
        v.kind = s.kind;
        m_slaves.insert(s.name, v);
        m_order << s.name;
        Subscription *sub = client()->subscribe(rc::stateService(s.name));
        const QString name = s.name;
        connect(sub, &Subscription::messageReceived, this,
                [this, name](const Message &m) { onSlaveMessage(name, m.data()); });
        connect(sub, &Subscription::stateChanged, this,
                [this, name](Subscription::State st) { onSlaveSubscription(name, st); });
    }
    m_runInfoTimer.setInterval(1000);
    connect(&m_runInfoTimer, &QTimer::timeout, this, [this] {
        publishRunInfo();
        publishState(); // the run's active time moves
    });
    log(Severity::Info, QStringLiteral("partition %1: %2 slaves, last run number %3")
                            .arg(partition.name)
                            .arg(partition.slaves.size())
                            .arg(m_runNumber));
    publishState();
}

QList<Master::SlaveView> Master::slaves() const
{
    QList<SlaveView> out;
    for (const QString &n : m_order)
        out << m_slaves.value(n);
    return out;
}

bool Master::saveRun(QString *error) const
{
    RunRecord r;
    r.number = m_runNumber;
    r.startMs = m_runStartMs;
    r.activeMsBefore = m_activeMsBefore;
    r.runningSinceMs = m_runningSince.isValid() ? rc::nowMs() - m_runningSince.elapsed() : 0;
    return r.write(m_runNumberFile, error);
}

qint64 Master::activeMs() const
{
    return m_activeMsBefore + (m_runningSince.isValid() ? m_runningSince.elapsed() : 0);
}

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
    if (ms == rc::State::Configured || ms == rc::State::Running || ms == rc::State::Paused ||
        machine().busy()) {
        if (!m_recoverTarget && ms != rc::State::Error)
            m_recoverTarget = ms;
        slaveFailed(name, QStringLiteral("%1 lost").arg(name));
    } else {
        log(Severity::Warning, QStringLiteral("%1 lost").arg(name));
        publishState();
    }
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
    const auto st = rc::StateRecord::fromJson(data);
    if (!st)
        return;
    SlaveView &v = m_slaves[name];
    const bool fresh = !v.seen;
    v.seen = true;
    v.lost = false;
    v.state = st->state;
    v.busy = st->busy;
    v.transition = st->transition;
    v.error = st->error;
    v.pid = st->pid;
    v.runNumber = st->runNumber;
    if (fresh)
        log(Severity::Info,
            QStringLiteral("%1 is there (%2, pid %3)").arg(name, stateName(v.state)).arg(v.pid));
    takeOver();
    checkConsistency();
    recoverStep();
    publishState();
}

void Master::takeOver()
{
    if (machine().state() != rc::State::Initial || machine().busy())
        return;
    rc::State common = rc::State::Initial;
    quint32 run = 0;
    for (const QString &n : std::as_const(m_order)) {
        const SlaveView &v = m_slaves[n];
        if (!v.seen || v.lost || v.busy)
            return;
        if (n == m_order.first())
            common = v.state;
        else if (v.state != common)
            return;
        run = qMax(run, v.runNumber);
    }
    if (m_order.isEmpty() ||
        (common != rc::State::Configured && common != rc::State::Running && common != rc::State::Paused))
        return;
    adoptRun(run, common);
    restoreState(common); // last: the state it publishes carries the run adopted above
    log(Severity::Info, QStringLiteral("took over the run: every slave is %1 (run %2)")
                            .arg(stateName(common))
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
    m_runRecorded = m_runBook && common != rc::State::Configured;
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
        if (!v.seen || v.busy || v.state == ms)
            continue;
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
        client()->request(rc::stateService(n), slaveRequest(t).toJson(), m_partition.transitionTimeoutMs,
                          this, [this, n, t, epoch](const Reply &r) {
                              if (epoch != m_epoch)
                                  return;
                              SlaveView &sv = m_slaves[n];
                              sv.recovering = false;
                              if (!r.isOk()) {
                                  log(Severity::Error, QStringLiteral("recovery of %1 failed in %2: %3")
                                                           .arg(n, transitionName(t), r.errorString()));
                                  return;
                              }
                              if (const auto st = rc::StateRecord::fromJson(r.data()))
                                  sv.state = st->state;
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
    for (const QString &n : std::as_const(m_order))
        if (!m_slaves[n].seen || m_slaves[n].lost)
            absent << n;
    if (t == rc::Transition::Reset) {
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
        done(false, QStringLiteral("not running: %1").arg(absent.join(QStringLiteral(", "))));
        return;
    }
    if (m_runBook && t == rc::Transition::Configure) {
        // The parameters of one version for every slave, or no configure: never a silent fallback.
        m_runBook->configure(
            [this, t, params, done, epoch = m_epoch](const Status &st, const RunBook::Parameters &p) {
                if (epoch != m_epoch)
                    return; // reset meanwhile
                if (!st.isOk())
                    return done(false, st.message());
                m_parameters = p;
                log(Severity::Info, QStringLiteral("configuration version %1 (%2)")
                                        .arg(m_runBook->version())
                                        .arg(m_runBook->ref()));
                fanOut(t, params, done);
            });
        return;
    }
    if (m_runBook && t == rc::Transition::Start) {
        const QString type = params.runType.isEmpty() ? QStringLiteral("Physics") : params.runType;
        m_runBook->startRun(
            type, params.requester,
            [this, t, params, done, epoch = m_epoch](const Status &st, quint32 number) {
                if (epoch != m_epoch)
                    return; // reset meanwhile; the record is ended as "master lost" by the next run
                if (!st.isOk())
                    return done(false, st.message());
                m_runRecorded = true;
                m_runNumber = number - 1; // the run-number file below takes the registry's number
                fanOut(t, params, done);
            });
        return;
    }
    fanOut(t, params, done);
}

void Master::fanOut(rc::Transition t, const rc::TransitionRequest &params, Done done)
{
    QStringList readout, control;
    for (const QString &n : std::as_const(m_order)) {
        const SlaveView &v = m_slaves[n];
        if (v.seen && !v.lost) // a reset skips the absent ones (perform() refused anything else)
            (v.kind == QLatin1String("readout") ? readout : control) << n;
    }
    if (t == rc::Transition::Start) {
        // Saved before any slave starts: a master killed during the start leaves the new number
        // and, until the start completes, the time it was asked for as the run's start.
        RunRecord next;
        next.number = m_runNumber + 1;
        next.startMs = rc::nowMs();
        if (QString error; !next.write(m_runNumberFile, &error)) {
            done(false, error);
            return;
        }
        ++m_runNumber;
        m_runType = params.runType.isEmpty() ? QStringLiteral("Physics") : params.runType;
    }
    QList<QStringList> phases;
    switch (t) {
    case rc::Transition::Start:
    case rc::Transition::Resume:
        phases = {readout, control}; // the readout must be ready before the front-ends send triggers
        break;
    case rc::Transition::Stop:
    case rc::Transition::Pause:
        phases = {control, readout}; // triggers off first, then the readout drains
        break;
    default:
        phases = {readout + control};
        break;
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
        done(true, {});
        return;
    }
    const QStringList group = phases.takeFirst();
    auto pending = std::make_shared<Pending>();
    pending->outstanding = int(group.size());
    const int timeout = m_partition.transitionTimeoutMs;
    for (const QString &n : group) {
        client()->request(rc::stateService(n), slaveRequest(t, n).toJson(), timeout, this,
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
                                  pending->failures << QStringLiteral("%1: %2").arg(n, why);
                                  if (!m_culprits.contains(n))
                                      m_culprits << n;
                              } else {
                                  if (const auto st = rc::StateRecord::fromJson(r.data())) {
                                      m_slaves[n].state = st->state;
                                      m_slaves[n].busy = false;
                                  }
                              }
                              if (--pending->outstanding > 0)
                                  return;
                              if (!pending->failures.isEmpty()) {
                                  done(false, pending->failures.join(QStringLiteral("; ")));
                                  return;
                              }
                              runPhases(t, phases, params, done, epoch);
                          });
    }
}

void Master::transitionEnded(rc::Transition t, bool ok)
{
    if (ok) {
        switch (t) {
        case rc::Transition::Start:
            m_runStartMs = rc::nowMs();
            m_runStopMs = 0;
            m_activeMsBefore = 0;
            m_runningSince.start();
            m_runInfoTimer.start();
            log(Severity::Info, QStringLiteral("run %1 started").arg(m_runNumber));
            break;
        case rc::Transition::Resume:
            m_runningSince.start();
            break;
        case rc::Transition::Pause:
            m_activeMsBefore = activeMs();
            m_runningSince.invalidate();
            break;
        case rc::Transition::Stop:
            m_activeMsBefore = activeMs();
            m_runningSince.invalidate();
            m_runStopMs = rc::nowMs();
            m_runInfoTimer.stop();
            log(Severity::Info, QStringLiteral("run %1 stopped after %2 s of data taking")
                                    .arg(m_runNumber)
                                    .arg(double(m_activeMsBefore) / 1000.0, 0, 'f', 1));
            endRecordedRun(QStringLiteral("normal"), {});
            break;
        default:
            break;
        }
    } else if (m_runningSince.isValid()) {
        // The run goes on in Error (slaves may still take data) until stop or reset.
    }
    if (!ok && t == rc::Transition::Start)
        endRecordedRun(QStringLiteral("error"), machine().error());
    if (t == rc::Transition::Reset) {
        endRecordedRun(QStringLiteral("error"), QStringLiteral("reset while the run was going"));
        m_activeMsBefore = activeMs();
        m_runningSince.invalidate();
        m_runInfoTimer.stop();
    }
    const bool timesMoved = t == rc::Transition::Start || t == rc::Transition::Pause ||
                            t == rc::Transition::Resume || t == rc::Transition::Stop;
    if ((ok && timesMoved) || t == rc::Transition::Reset) {
        // What a master restarted later takes over with (after a reset: a run no longer taking data).
        if (QString error; !saveRun(&error))
            log(Severity::Warning, error);
    }
    publishRunInfo();
}

void Master::endRecordedRun(const QString &reason, const QString &message)
{
    if (!m_runBook || !m_runRecorded)
        return;
    m_runRecorded = false;
    m_runBook->endRun(m_runNumber, reason, message);
}

void Master::addStateExtras(rc::StateRecord &record) const
{
    for (const QString &n : m_order) {
        const SlaveView &v = m_slaves.value(n);
        rc::SlaveRecord s;
        s.name = v.name;
        s.kind = v.kind;
        s.present = v.seen && !v.lost;
        s.lost = v.lost;
        s.state = v.state;
        s.busy = v.busy;
        s.transition = v.transition;
        s.error = v.error;
        s.pid = v.pid;
        record.slaves.append(s);
    }
    record.partition = m_partition.name;
    record.culprits = m_culprits;
    record.recoveringTo = m_recoverTarget;
    record.runNumber = m_runNumber;
    record.runType = m_runType;
    record.runStartMs = m_runStartMs;
    record.runStopMs = m_runStopMs;
    record.runActiveMs = activeMs();
}

void Master::publishRunInfo()
{
    if (!isPublisher() || m_partition.runParamsServer.isEmpty())
        return;
    const quint32 run = m_runNumber;
    const QString type = m_runType, state = stateName(machine().state());
    const qint64 start = m_runStartMs, active = activeMs();
    isPublisher()->publish(m_partition.runParamsServer + QStringLiteral(".RunInfo"),
                           QStringLiteral("RunInfo"), [=](is::Object &o) {
                               o.set<quint32>(QStringLiteral("runNumber"), run);
                               o.set<QString>(QStringLiteral("runType"), type);
                               if (start > 0)
                                   o.set<is::Time>(QStringLiteral("startTime"), is::Time(start * 1000));
                               o.set<quint32>(QStringLiteral("activeTime"), quint32(active / 1000));
                               o.set<QString>(QStringLiteral("state"), state);
                           });
}

} // namespace dialog::daq
