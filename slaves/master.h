// dialog-master: drives the slaves of a partition through the run-control state machine.
#pragma once

#include "dialog/rc/slave.h"
#include "dialog/rc/partition.h"
#include "runbook.h"
#include "runrecord.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonArray>
#include <QTimer>

namespace dialog::daq {

/// Translates run-control transitions into requests to its slaves (phased: readout before control
/// on start/resume, control before readout on stop/pause), waits for them with the partition's
/// time-out and publishes the aggregated state: the state every slave agrees on, or Error naming
/// the culprits. Owns the run number (persisted, +1 on every start) and RunParams.RunInfo. A lost
/// slave puts the run in Error; a replacement that appears is brought to the state of the run, and
/// the master leaves Error when every slave is back there. A master that (re)starts while its slaves
/// agree on a configured, running or paused run takes that run over (its state and run number).
///
/// The same class is a segment controller of a run-control tree (dialog-master --segment NAME): it
/// drives the segment's children (slaves and sub-segments, SlaveView::segment) for its parent, takes
/// the run number from its parent's start and publishes no RunInfo. A disabled child gets no
/// commands; a removable one that fails is removed and the run goes on (stopless removal) until it
/// is brought back in (stopless recovery).
///
/// Its code is in five files: master.cpp (the run's number and times, the published state and
/// RunInfo), masterfanout.cpp (a transition fanned out to the slaves), masterrecovery.cpp
/// (watching the slaves: loss, take-over, recovery), mastertree.cpp (enable, disable, removal,
/// recovery of a node, the published tree) and masterownership.cpp (take, release).
class Master : public rc::Slave
{
    Q_OBJECT
public:
    struct SlaveView
    {
        QString name, kind;
        bool seen = false; ///< a state message arrived from the current incarnation
        bool lost = false;
        rc::State state = rc::State::Initial;
        bool busy = false;
        std::optional<rc::Transition> transition;
        QString error;
        qint64 pid = 0;
        quint32 runNumber = 0; ///< of the run the slave was last started in
        bool recovering = false;
        bool segment = false;     ///< a segment controller of the tree, not a slave
        bool enabled = true;      ///< false: no commands, its state does not count
        bool removable = false;   ///< a failure removes it from the run instead of failing the run
        bool autoRecover = false; ///< brought back into the run as soon as it is back
        bool removed = false;     ///< out of the run (stopless removal)
        bool cameBack = false;    ///< seen again after it was lost
        QString removedReason;
        qint64 removedMs = 0;
        QString owner; ///< who took it (user\@host): drives it alone, out of the run
        qint64 ownedSinceMs = 0;
        quint32 ownRun = 0; ///< its owner's run open in the run registry (0: none)
        int timeoutMs = 10000; ///< how long a transition request to it may take (subtreeTimeoutMs)
        QJsonArray tree;                     ///< a segment's own tree, from its state
        QList<rc::RemovedNode> removedBelow; ///< what a segment removed in its part of the tree
        /// Takes part in the run: enabled and not removed.
        bool counts() const { return enabled && !removed; }
    };
    /// A node out of the recorded run, as the run registry lists it.
    struct OutOfRun
    {
        QString node, segment, out, reason; ///< out: "disabled" or "removed"
        qint64 timeMs = 0, recoveredMs = 0; ///< recoveredMs: when a removed node came back, else 0
    };

    /// With @p configdb (the name of a dialog-configdb), the slaves' parameters are read at every
    /// configure from the version @p configRef names, and run numbers come from its run registry,
    /// where every run is recorded; without, numbers come from @p runNumberFile. A segment
    /// controller reads its children's parameters only (the master numbers and records the runs).
    Master(const rc::SlaveOptions &options, const rc::Partition &partition, const QString &runNumberFile,
           const QString &configdb = {}, const QString &configRef = {}, QObject *parent = nullptr);

    const rc::Partition &partition() const { return m_partition; }
    QList<SlaveView> slaves() const;
    QStringList culprits() const { return m_culprits; }
    quint32 runNumber() const { return m_runNumber; }
    QString runNumberFile() const { return m_runNumberFile; }

protected:
    void perform(rc::Transition t, const rc::TransitionRequest &params, Done done) override;
    void addStateExtras(rc::StateRecord &record) const override;
    void transitionEnded(rc::Transition t, bool ok) override;
    bool takeRequest(const Request &request) override;

private:
    struct Pending; // one fan-out of a transition to a group of slaves
    void onSlaveMessage(const QString &name, const QByteArray &data);
    void onSlaveSubscription(const QString &name, Subscription::State s);
    void runPhases(rc::Transition t, QList<QStringList> phases, const rc::TransitionRequest &params,
                   Done done, quint64 epoch);
    void checkConsistency();
    void recoverStep();
    void takeOver();
    /// Takes the number, start time and data-taking time of the run the slaves are in (@p run,
    /// @p common) from the run-number file, before the state that shows them is published.
    void adoptRun(quint32 run, rc::State common);
    void slaveFailed(const QString &name, const QString &why);
    /// Takes removable node @p name out of the run with @p why (stopless removal).
    void removeNode(const QString &name, const QString &why);
    /// Answers @p reply (may be empty) after a tree action: ok with the state, else the reason.
    using TreeReply = std::function<void(bool ok, const QString &why)>;
    /// enable, disable, recover, take, release or transition @p node, a child of this controller
    /// or below one, for @p requester (user\@host).
    void treeAction(const QString &action, const QString &node, const QString &requester,
                    const QJsonObject &request, TreeReply reply);
    /// take, release, or a transition of @p node, a disabled child, by its owner (commissioning):
    /// @p requester takes it and then drives it alone, while the rest of the tree runs without it.
    void ownership(const QString &action, const QString &node, const QString &requester,
                   const QJsonObject &request, TreeReply reply);
    /// Brings present node @p name to this controller's state, one transition after the other
    /// (stopless recovery: configured with the run's configuration, started with its number).
    void bringIn(const QString &name, TreeReply reply);
    /// How long a transition of @p node takes at most: the partition's time-out for a slave, more
    /// for a segment (its phases, each waiting for its slowest child).
    static int subtreeTimeoutMs(const rc::Partition &partition, const QString &node);
    /// The tree below this controller, as published.
    QJsonArray treeJson() const;
    void publishRunInfo();
    /// Publishes the state within kPublishCoalesceMs: a burst of children's messages (a thousand
    /// slaves in a transition) makes one publication, not one each.
    void publishSoon();
    /// The request the master sends slave @p name for @p t (with the run number and type, and at
    /// configure its parameters from the configuration database).
    rc::TransitionRequest slaveRequest(rc::Transition t, const QString &name = {}) const;
    /// perform() once the configuration database has answered (at configure and start).
    void fanOut(rc::Transition t, const rc::TransitionRequest &params, Done done);
    /// The run registry's record of the current run ends (if one is open).
    void endRecordedRun(const QString &reason, const QString &message);
    /// Every node taken out of the run below this controller (its own removals and its segments';
    /// with @p belowRemoved also those of segments removed since).
    QList<rc::RemovedNode> removedNodes(bool belowRemoved = false) const;
    /// Starts the list of what is out of the run being recorded: the disabled nodes of the whole
    /// tree (not those below a disabled segment) and the nodes removed so far.
    void beginRunOut();
    /// After a node went out of the run or came back: the recorded run's list follows
    /// (trackOut) and so does the IS object of what is out (publishOut).
    void outChanged();
    /// Follows removals and recoveries of the recorded run into its list.
    void trackOut();
    /// Publishes RUNPARAMS.RunCtrl.NAME.Tree (type RunCtrlTree: the removed and disabled nodes
    /// below this controller) when it changed; an alarm rule on it tells the shift of a removal.
    void publishOut();
    QJsonArray runOutJson() const;
    /// Saves the current run's number and times to the run-number file (for a takeover).
    bool saveRun(QString *error) const;
    /// The children left out of the run, in the tree's order (kept in the run-number file).
    QStringList disabledNodes() const;
    /// Keeps the children disabled and taken now in the run-number file, the rest of its record as
    /// it is.
    void saveDisabled();
    /// Writes the children disabled and taken now into @p r.
    void fillOut(RunRecord *r) const;
    /// Takes the disabled and taken children kept in @p saved (a restarted controller leaves them
    /// out, with their owners).
    void restoreDisabled(const RunRecord &saved);
    /// Tells taken child @p node who its owner is (empty: released), so that it refuses
    /// run-control commands from anyone but this controller.
    void tellOwner(const QString &node);
    /// Resets the children of segment @p segment, lost: they take transitions from it alone, so
    /// they get the reset as a run-control command through the Control Server (its access list
    /// applies). A sub-segment resets its own children.
    void resetOrphans(const QString &segment, const QString &why);
    /// Resets @p nodes, removed from the run but not in Initial, so that the next configure finds
    /// them there; then calls @p done (ok: a failed reset is a warning, the node is out anyway).
    void resetRemoved(const QStringList &nodes, Done done);
    qint64 activeMs() const;

    rc::Partition m_partition;
    bool m_root = true; ///< the partition's master, not a segment controller
    Service *m_treeService = nullptr;
    QString m_runNumberFile;
    RunBook *m_runBook = nullptr;     ///< null without a configuration database
    RunBook::Parameters m_parameters; ///< of the last configure, by slave
    bool m_runRecorded = false;       ///< the current run is open in the run registry
    QList<OutOfRun> m_runOut;         ///< what was out of the recorded run
    QString m_outPublished;           ///< the RunCtrlTree object last published, as text
    QList<QString> m_order;
    QHash<QString, SlaveView> m_slaves;
    QStringList m_culprits;
    std::optional<rc::State> m_recoverTarget; ///< set while waiting for lost slaves to come back
    quint64 m_epoch = 0; ///< bumped on reset: late replies of abandoned fan-outs are ignored
    quint32 m_runNumber = 0;
    QString m_runType = QStringLiteral("Physics");
    qint64 m_runStartMs = 0, m_runStopMs = 0, m_activeMsBefore = 0;
    QElapsedTimer m_runningSince;
    QTimer m_runInfoTimer;
    QTimer m_publishTimer;
};

} // namespace dialog::daq
