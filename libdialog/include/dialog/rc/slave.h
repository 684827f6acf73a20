// The slave API: a run-control process on DIALOG that the master drives through dialog::rc's
// state machine. Derive from dialog::rc::Slave, write the transitions' hooks, and run it with
// dialog::rc::runSlave() from main(); docs/slave.md is the step-by-step guide.
#pragma once

#include "dialog/audit.h"
#include "dialog/client.h"
#include "dialog/logrecord.h"
#include "dialog/options.h"
#include "dialog/rc/statemachine.h"
#include "dialog/rc/staterecord.h"
#include "dialog/status.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QSet>
#include <functional>
#include <memory>

namespace dialog::is {
class Object;
}

namespace dialog::rc {

class SlavePrivate;

/// Settings of a run-control process (a slave, a segment controller or the master). The command
/// line fills them (addCommonOptions(), addSlaveOptions()); `dialogctl up` passes what the
/// partition says.
struct SlaveOptions
{
    ClientOptions client; ///< the DIALOG connection; client.name is the process name (--name)
    /// What the process is, as its published state says ("control", "readout", "master", or a
    /// word of the program's own for a slave of its own: the class name of its device, say).
    QString kind;
    QString isTypesDir; ///< IS type XML files (--is-types); empty: fetched from the IS servers
    QString runParamsServer = QStringLiteral("RunParams"); ///< IS server of RunCtrl.NAME (state)
    QString daqServer = QStringLiteral("DAQ");             ///< IS server of NAME (statistics)
    bool publishToIs = true;                               ///< false: no IS at all (--no-is)
    /// The process whose transition requests are taken (the partition's master, --master); empty:
    /// anyone's. Commands (RunCtrl.NAME.Command) come through the Control Server and its access
    /// list instead.
    QString master;
    /// Who may ask for transitions (the access list's "transition" rules) and whether those
    /// requests are audited (--access, --audit, --audit-file).
    AccessOptions access;
    /// Time-out of each transition in ms (--transition-timeout-ms sets them all): a hook that has
    /// not completed by then fails the transition with "did not complete within N ms". Missing or
    /// 0: no time-out of its own (the master's applies).
    QHash<Transition, int> timeoutMs;
    QSet<Transition> failOn; ///< misbehaviour for tests (--fail-on): these transitions fail
    QSet<Transition> hangOn; ///< misbehaviour for tests (--hang-on): these never complete
    double crashAfterS = 0;  ///< misbehaviour for tests (--crash-after-s): SIGKILL after this long
};

/// A run-control process: its state machine, the services RunCtrl.NAME.State (transition
/// requests, the state as JSON), .Log (its log records) and .Status (its statistics as JSON), the
/// command RunCtrl.NAME.Command, its state in IS (RunParams.RunCtrl.NAME, type RunCtrlState)
/// and its statistics in IS (DAQ.NAME, a type of its own).
///
/// A transition asked for (by the master's request or a command) that the state machine allows
/// runs the hook of that transition (configure(), start(), …) in the thread of the Slave; the
/// process is busy until it completes. A hook returns Status: Ok moves to the target state; an
/// error puts the process in Error with "TRANSITION failed: MESSAGE", which the state
/// publishes, the master's state names ("FE3: configure failed: …") and `dialogctl rc` prints. A
/// hook that completes later overrides perform() instead. Live in one thread: every function is
/// called, and every signal emitted, in the thread the Slave was created in.
class Slave : public QObject
{
    Q_OBJECT
public:
    /// The outcome of perform(): Ok, or the reason the transition failed (its code as the hook, or
    /// whatever found the failure, decided it). Called exactly once; calls after a reset or a
    /// time-out abandoned the transition are ignored.
    using Done = std::function<void(const Status &outcome)>;
    /// Fills an IS object before it is sent (publishToIs(), publishStatistics()).
    using Fill = std::function<void(is::Object &)>;

    /// Creates the client (not started: start it with client()->start(), as runSlave() does),
    /// publishes the run-control services and registers the run-control command.
    explicit Slave(const SlaveOptions &options, QObject *parent = nullptr);
    ~Slave() override;

    /// The DIALOG client of this process.
    Client *client() const;
    /// The process name.
    QString name() const;
    /// The options it was created with.
    const SlaveOptions &options() const;
    /// The state machine (state(), busy(), pending(), error()).
    const StateMachine &machine() const;
    /// The run number of the last start (0 before any).
    quint32 runNumber() const;

    /// Publishes a log record on RunCtrl.NAME.Log and to the local log.
    void log(Severity severity, const QString &text);
    /// Runs @p request's transition as if the master had asked for it; @p done gets the outcome
    /// (Ok; the hook's error; Failed for --fail-on; Timeout past the transition's time-out).
    /// BadRequest, with @p done never called, if the state machine refuses it (illegal or busy).
    Status requestTransition(const TransitionRequest &request, Done done = {});
    /// Publishes the state again (done after every change by itself).
    void publishState();
    /// Publishes @p status (JSON) on RunCtrl.NAME.Status, where `dialogctl get` and the
    /// run-control GUI read it.
    void publishStatus(const QJsonObject &status);
    /// Creates or updates the IS object @p name ("Server.Object") of @p type, filled by @p fill.
    /// Never blocks: while an update is in flight newer values replace each other and the latest
    /// is sent; values wait until the client is connected. A failure (server down, unknown type)
    /// is logged once per object until a later update succeeds.
    void publishToIs(const QString &name, const QString &type, Fill fill);
    /// publishToIs() of the process's statistics object "DAQSERVER.NAME".
    void publishStatistics(const QString &type, Fill fill);
    /// Loads the slave's own IS types from @p xmlFile (an IS type XML file shipped with it; its types
    /// may derive from those of SlaveOptions::isTypesDir) and declares them on each IS server
    /// before the first object of one of them is published there, again after a reconnection.
    /// Errors as is::TypeRegistry::loadFile(); Ok with nothing done when IS publishing is off.
    Status addIsTypes(const QString &xmlFile);
    /// IS objects published successfully so far.
    quint64 isUpdates() const;
    /// Registers the command @p name ("NAME.Calibrate", say): each command received is passed to
    /// @p handler. The run-control command is taken by the Slave itself.
    void handleCommand(const QString &name, std::function<void(const Command &)> handler);
    /// Publishes @p service and passes every request for it to @p handler, which answers with
    /// client()->reply() or replyError(), now or later. Requests for services the Slave neither
    /// owns nor serves are left to other parts of the process (a Sampler, a handler connected to
    /// Client::requestReceived): the Slave answers only its own.
    Service *serve(const QString &service, std::function<void(const Request &)> handler);
    /// Opens the audit trail of transition requests (SlaveOptions::access); call before the
    /// client starts. The errors of security::readSecretFile() (the secret) and AuditTrail::open()
    /// (StorageError: the audit file).
    Status openAccess();

Q_SIGNALS:
    /// Emitted in the Slave's thread after every change of state, busy flag or error.
    void stateChanged(dialog::rc::State state, bool busy);

protected:
    /// Does the work of @p t (the machine is busy with it) and calls @p done exactly once, now or
    /// later. The default calls the hook of @p t and passes on its Status. Override it for work
    /// that completes later (a timer, a reply from hardware).
    virtual void perform(Transition t, const TransitionRequest &request, Done done);
    // The hooks of the transitions, called by perform() in the Slave's thread. Each returns Ok or
    // the reason it failed; the defaults do nothing and succeed.
    /// Configure: Initial → Configured. @p request.parameters holds the configuration database's
    /// parameters of this process (empty without a database: keep the command line's; see
    /// applyParameters()).
    virtual Status configure(const TransitionRequest &request);
    /// Start: Configured → Running, for the run @p request.runNumber (runNumber() already is it)
    /// of type @p request.runType.
    virtual Status start(const TransitionRequest &request);
    /// Pause: Running → Paused.
    virtual Status pause();
    /// Resume: Paused → Running.
    virtual Status resume();
    /// Stop: Running or Paused → Configured (the run ends).
    virtual Status stop();
    /// Unconfigure: Configured → Initial.
    virtual Status unconfigure();
    /// Reset: any state → Initial, also to leave Error or to abandon a hook in progress.
    virtual Status reset();
    /// Fills the fields of the published state that belong to the process (the master's slaves).
    /// The default sets the run number.
    virtual void addStateExtras(StateRecord &record) const;
    /// Called after a transition completed (@p ok) or failed, and after a reset abandoned one.
    virtual void transitionEnded(Transition t, bool ok);
    /// A request on a service of this process other than RunCtrl.NAME.State and the serve()d
    /// ones: true when taken (answered now or later). The default takes none.
    virtual bool takeRequest(const Request &request);

    /// Enters Error by itself (a problem found outside a transition), logged as an error.
    void enterError(const QString &why);
    /// Leaves Error for @p s (the master's recovery).
    bool restoreState(State s);
    /// The access list's verdict on @p request asking for @p action (as for a transition): Ok, or
    /// PermissionDenied with the reason to give the requester (also logged).
    Status permit(const Request &request, const QString &action);
    /// The state as published.
    StateRecord stateRecord() const;
    /// RunCtrl.NAME.Status.
    Service *statusService() const;

private:
    std::unique_ptr<SlavePrivate> const d;
    friend class SlavePrivate;
};

/// Parses the configuration database's parameters of a process (a slaves/ or readout/ document's
/// object: the option names with '_' for '-', {"gain": 2, "read_out_ms": 5}) with the options
/// @p declare adds to a table, as if they were given on the command line: the same names, bounds
/// and messages. BadRequest naming the option and its range on a bad value or an unknown name.
Status parseParameters(const QJsonObject &parameters, const std::function<void(OptionTable &)> &declare);

/// parseParameters() into a copy of @p config, with @p declare adding the options that write its
/// fields; @p config takes the copy only when every parameter is good.
template <typename Config, typename Declare>
Status applyParameters(const QJsonObject &parameters, Config *config, Declare declare)
{
    Config updated = *config;
    const Status s = parseParameters(parameters, [&](OptionTable &t) { declare(t, updated); });
    if (s.isOk())
        *config = updated;
    return s;
}

/// Adds the options of every run-control process to @p table, written to @p o when it parses (set
/// o->client from the environment first): the DIALOG client's, --is-types, --run-params-server,
/// --no-is.
void addCommonOptions(OptionTable &table, SlaveOptions *o);
/// Adds the options a partition gives a slave: --name, --daq-server, --master,
/// --transition-timeout-ms and, for tests, --fail-on, --hang-on, --crash-after-s.
void addSlaveOptions(OptionTable &table, SlaveOptions *o);
/// Kills this process with SIGKILL @p seconds from now (--crash-after-s: a crash without a core
/// file); nothing when @p seconds is 0.
void armCrash(double seconds);
/// Where the IS type files are by default: share/dialog/is-types beside the program's bin/, else
/// those of the installation.
QString defaultIsTypesDir();
/// Parses "configure,start" (--fail-on, --hang-on) into @p out; BadRequest naming an unknown
/// transition (@p out untouched then).
Status parseTransitionList(const QString &text, QSet<Transition> *out);

/// What runSlave() needs to know of a slave program.
struct SlaveProgram
{
    QString program;     ///< its file name, for --help and messages ("myslave")
    QString description; ///< one paragraph for --help
    QString kind;        ///< SlaveOptions::kind
    /// Adds the program's own options (its parameters; see applyParameters()), optional.
    std::function<void(OptionTable &)> addOptions;
    /// Creates the slave into @p out once the options parsed, or returns why it cannot start (a
    /// code of the program's choice; runSlave() prints the message and exits with 1).
    std::function<Status(const SlaveOptions &options, std::unique_ptr<Slave> *out)> create;
};

/// The main() of a slave program: parses the command line (addCommonOptions(), addSlaveOptions()
/// and @p program's own options; --help), creates the slave, starts its client and runs the event
/// loop until SIGTERM or SIGINT. Returns the exit code: 0 after a normal end, 1 with a one-line
/// reason on stderr for a bad option or a slave that cannot start.
int runSlave(int argc, char *argv[], const SlaveProgram &program);

} // namespace dialog::rc
