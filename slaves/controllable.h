// A run-control process on DIALOG: its state machine, state/log/status services, transition
// requests and commands, and its state in IS. The master and every slave kind derive from it.
#pragma once

#include "dialog/rc/protocol.h"
#include "dialog/rc/statemachine.h"
#include "dialog/rc/staterecord.h"
#include "ispublisher.h"
#include "transitionaccess.h"

#include "dialog/client.h"

#include <QElapsedTimer>
#include <QObject>
#include <QSet>
#include <functional>
#include <memory>

namespace dialog::daq {

/// Settings shared by every run-control process.
struct ControllableOptions
{
    ClientOptions client;
    QString kind;                                          ///< "master", "control", "readout"
    QString isTypesDir;                                    ///< IS type XML files
    QString runParamsServer = QStringLiteral("RunParams"); ///< IS server of the RunCtrl.<P> objects
    bool publishToIs = true;
    QSet<rc::Transition> failOn; ///< misbehaviour for tests: these transitions fail
    QSet<rc::Transition> hangOn; ///< misbehaviour for tests: these transitions never complete
    /// The process whose transition requests are taken (the partition's master); empty: anyone's.
    /// Commands (RunCtrl.<P>.Command) come through the Control Server and its access list instead.
    QString master;
    /// Who may ask for transitions (the access list's "transition" rules, checked against the
    /// requester's origin) and whether those requests are audited (--access, --audit, --audit-file).
    AccessOptions access;
};

class Controllable : public QObject
{
    Q_OBJECT
public:
    /// Called once with the outcome of perform(); calls after a reset abandoned it are ignored.
    using Done = std::function<void(bool ok, const QString &error)>;

    explicit Controllable(const ControllableOptions &options, QObject *parent = nullptr);
    ~Controllable() override;

    Client *client() const { return m_client.get(); }
    QString name() const { return m_client->name(); }
    const rc::StateMachine &machine() const { return m_machine; }
    const ControllableOptions &options() const { return m_options; }
    IsPublisher *isPublisher() const { return m_is.get(); }

    /// Publishes a log record on RunCtrl.<P>.Log (and to the local log).
    void log(Severity severity, const QString &text);
    /// Runs @p t as if requested (used by tests and the master's own logic). False with @p reason
    /// if refused.
    bool requestTransition(const rc::TransitionRequest &request, Done done = {}, QString *reason = nullptr);
    /// Publishes the state again (also done after every change).
    void publishState();
    /// Opens the audit trail of transition requests (ControllableOptions::access); call before the
    /// client starts. False with the reason when the secret or the audit file cannot be read.
    bool openAccess(QString *error);

Q_SIGNALS:
    /// Emitted after every change of state, busy flag or error.
    void stateChanged(dialog::rc::State state, bool busy);

protected:
    /// Does the work of @p t (the machine is busy with it). Call @p done exactly once, possibly later.
    virtual void perform(rc::Transition t, const rc::TransitionRequest &params, Done done) = 0;
    /// Fills the fields of the published state that belong to the process kind (run number,
    /// the master's slaves and run).
    virtual void addStateExtras(rc::StateRecord &) const {}
    /// Called after a transition completed (ok) or failed, and after a reset abandoned one.
    virtual void transitionEnded(rc::Transition, bool) {}
    /// Enters Error by itself (a problem found outside a transition), logged as an error.
    void enterError(const QString &why);
    /// Leaves Error for @p s (master recovery).
    bool restoreState(rc::State s);
    /// A request on a service other than RunCtrl.<P>.State: true when taken (answered now or later).
    virtual bool takeRequest(const Request &) { return false; }
    /// The access list's verdict on @p request asking for @p action (as for a transition).
    bool permit(const Request &request, const QString &action, QString *why);
    /// The state as published.
    rc::StateRecord stateRecord() const;
    Service *statusService() const { return m_status; }

private:
    void onRequest(const Request &request);
    void onCommand(const Command &command);
    void publishIsState();

    ControllableOptions m_options;
    std::unique_ptr<Client> m_client;
    std::unique_ptr<IsPublisher> m_is;
    std::unique_ptr<TransitionAccess> m_access;
    rc::StateMachine m_machine;
    Service *m_state = nullptr;
    Service *m_log = nullptr;
    Service *m_status = nullptr;
    quint64 m_generation = 0; // bumped by every begin(): stale completions are ignored
    QElapsedTimer m_transitionTimer;
    qint64 m_lastDurationMs = 0;
    qint64 m_lastTransitionEndMs = 0;
};

/// Parses "--fail-on"/"--hang-on" values ("configure,start").
bool parseTransitionList(const QString &text, QSet<rc::Transition> *out, QString *error);

} // namespace dialog::daq
