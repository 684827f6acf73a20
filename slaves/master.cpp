#include "master.h"

#include "dialog/is/object.h"
#include "dialog/is/time.h"

#include <algorithm>

namespace dialog::daq {

namespace {
constexpr int kPublishCoalesceMs = 20;
} // namespace

Master::Master(const rc::SlaveOptions &options, const rc::Partition &partition,
               const QString &runNumberFile, const QString &configdb, const QString &configRef,
               QObject *parent)
    : rc::Slave(options, parent), m_partition(partition), m_runNumberFile(runNumberFile)
{
    m_root = name() == partition.master.name;
    if (!configdb.isEmpty())
        m_runBook = new RunBook(client(), partition, configdb,
                                configRef.isEmpty() ? QStringLiteral("head") : configRef, m_root, this);
    QString error;
    RunRecord saved;
    if (!RunRecord::read(m_runNumberFile, &saved, &error))
        log(Severity::Warning, error);
    m_runNumber = saved.number;
    m_treeService = client()->publish(rc::treeService(name()));
    for (const QString &child : partition.childrenOf(name())) {
        const rc::ProcessSpec *s = partition.node(child);
        SlaveView v;
        v.name = child;
        v.segment = partition.segment(child) != nullptr;
        v.kind = v.segment ? QStringLiteral("segment") : s->kind;
        v.removable = s->removable;
        v.autoRecover = s->autoRecover;
        v.timeoutMs = subtreeTimeoutMs(partition, child);
        m_slaves.insert(child, v);
        m_order << child;
        Subscription *sub = client()->subscribe(rc::stateService(child));
        const QString name = child;
        connect(sub, &Subscription::messageReceived, this,
                [this, name](const Message &m) { onSlaveMessage(name, m.data()); });
        connect(sub, &Subscription::stateChanged, this,
                [this, name](Subscription::State st) { onSlaveSubscription(name, st); });
    }
    restoreDisabled(saved);
    connect(client(), &Client::errorOccurred, this, [this](Status::Code code) {
        // The orphans' reset (resetOrphans()) refused by the partition's access list: said, with the fix.
        if (code == Status::Code::PermissionDenied && client()->errorString().contains(QLatin1String(".Command'")))
            log(Severity::Error,
                QStringLiteral("%1 - the partition's access list must let %2 send the run-control commands "
                               "of its segments' children (docs/rctree.md)")
                    .arg(client()->errorString(), name()));
    });
    m_publishTimer.setSingleShot(true);
    m_publishTimer.setInterval(kPublishCoalesceMs);
    connect(&m_publishTimer, &QTimer::timeout, this, [this] {
        outChanged();
        publishState();
    });
    m_runInfoTimer.setInterval(1000);
    connect(&m_runInfoTimer, &QTimer::timeout, this, [this] {
        publishRunInfo();
        publishState(); // the run's active time moves
    });
    if (m_root)
        log(Severity::Info, QStringLiteral("partition %1: %2 slaves, %3 segments, last run number %4")
                                .arg(partition.name)
                                .arg(partition.slaves.size())
                                .arg(partition.tree.size())
                                .arg(m_runNumber));
    else
        log(Severity::Info, QStringLiteral("segment %1 of partition %2: %3")
                                .arg(name(), partition.name, m_order.join(QStringLiteral(", "))));
    publishState();
    publishOut();
}

void Master::publishSoon()
{
    if (!m_publishTimer.isActive())
        m_publishTimer.start();
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
    fillOut(&r);
    return r.write(m_runNumberFile, error);
}

qint64 Master::activeMs() const
{
    return m_activeMsBefore + (m_runningSince.isValid() ? m_runningSince.elapsed() : 0);
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
    if (ok && (t == rc::Transition::Unconfigure || t == rc::Transition::Reset)) {
        // Between runs every removed node is back in: it is configured with the others next time.
        for (SlaveView &v : m_slaves) {
            v.removed = false;
            v.removedReason.clear();
            v.cameBack = false;
        }
        publishOut();
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
    m_runBook->endRun(m_runNumber, reason, message, runOutJson());
}

namespace {
void collectDisabled(const QJsonArray &tree, const QString &controller, qint64 timeMs,
                     QList<Master::OutOfRun> *out)
{
    for (const QJsonValue &v : tree) {
        const QJsonObject o = v.toObject();
        const QString node = o.value(QStringLiteral("name")).toString();
        if (!o.value(QStringLiteral("enabled")).toBool(true))
            out->append(
                {node, controller, QStringLiteral("disabled"), QStringLiteral("disabled"), timeMs, 0});
        else
            collectDisabled(o.value(QStringLiteral("children")).toArray(), node, timeMs, out);
    }
}
} // namespace

QList<rc::RemovedNode> Master::removedNodes(bool belowRemoved) const
{
    QList<rc::RemovedNode> out;
    for (const QString &n : m_order) {
        const SlaveView &v = m_slaves.value(n);
        if (v.removed)
            out.append(rc::RemovedNode{v.name, name(), v.removedReason, v.removedMs});
        if (v.counts() || (belowRemoved && v.enabled))
            out += v.removedBelow;
    }
    return out;
}

void Master::beginRunOut()
{
    m_runOut.clear();
    collectDisabled(treeJson(), name(), rc::nowMs(), &m_runOut);
    for (const rc::RemovedNode &r : removedNodes())
        m_runOut.append({r.node, r.segment, QStringLiteral("removed"), r.reason, r.timeMs, 0});
}

void Master::outChanged()
{
    trackOut();
    publishOut();
}

void Master::publishOut()
{
    if (!options().publishToIs || options().runParamsServer.isEmpty())
        return;
    QList<OutOfRun> disabled;
    collectDisabled(treeJson(), name(), 0, &disabled);
    QStringList removed;
    for (const rc::RemovedNode &r : removedNodes())
        removed << QStringLiteral("%1 (by %2): %3").arg(r.node, r.segment, r.reason);
    const QString nodes = removed.join(QStringLiteral("; "));
    const QString text = QStringLiteral("%1/%2/%3").arg(removed.size()).arg(disabled.size()).arg(nodes);
    if (text == m_outPublished)
        return;
    m_outPublished = text;
    const auto removedCount = quint32(removed.size()), disabledCount = quint32(disabled.size());
    publishToIs(QStringLiteral("%1.RunCtrl.%2.Tree").arg(options().runParamsServer, name()),
                QStringLiteral("RunCtrlTree"), [=](is::Object &o) {
                    o.set<quint32>(QStringLiteral("removed"), removedCount);
                    o.set<quint32>(QStringLiteral("disabled"), disabledCount);
                    o.set<QString>(QStringLiteral("removedNodes"), nodes);
                });
}

void Master::trackOut()
{
    if (!m_runRecorded)
        return;
    // A removal below a segment removed since stays a removal (not a recovery).
    const QList<rc::RemovedNode> now = removedNodes(true);
    const auto same = [](const OutOfRun &e, const rc::RemovedNode &r) {
        return e.out == QLatin1String("removed") && e.node == r.node && e.timeMs == r.timeMs;
    };
    for (const rc::RemovedNode &r : now)
        if (std::none_of(m_runOut.cbegin(), m_runOut.cend(), [&](const OutOfRun &e) { return same(e, r); }))
            m_runOut.append({r.node, r.segment, QStringLiteral("removed"), r.reason, r.timeMs, 0});
    for (OutOfRun &e : m_runOut)
        if (e.out == QLatin1String("removed") && e.recoveredMs == 0 &&
            std::none_of(now.cbegin(), now.cend(), [&](const rc::RemovedNode &r) { return same(e, r); }))
            e.recoveredMs = rc::nowMs();
}

QJsonArray Master::runOutJson() const
{
    QJsonArray out;
    for (const OutOfRun &e : m_runOut) {
        QJsonObject o{{QStringLiteral("node"), e.node},
                      {QStringLiteral("segment"), e.segment},
                      {QStringLiteral("out"), e.out},
                      {QStringLiteral("reason"), e.reason},
                      {QStringLiteral("time_ms"), e.timeMs}};
        if (e.recoveredMs > 0)
            o.insert(QStringLiteral("recovered_ms"), e.recoveredMs);
        out.append(o);
    }
    return out;
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
        s.enabled = v.enabled;
        s.removable = v.removable;
        s.removed = v.removed;
        s.removedReason = v.removedReason;
        record.slaves.append(s);
    }
    record.removed = removedNodes();
    record.tree = treeJson();
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
    if (!m_root || !options().publishToIs || m_partition.runParamsServer.isEmpty())
        return;
    const quint32 run = m_runNumber;
    const QString type = m_runType, state = stateName(machine().state());
    const qint64 start = m_runStartMs, active = activeMs();
    publishToIs(m_partition.runParamsServer + QStringLiteral(".RunInfo"),
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
