// A partition: the processes of one DAQ system and where they run (resources/partitions/*.json).
#pragma once

#include "dialog/status.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace dialog::rc {

/// One process of a partition, as the launcher starts it.
struct ProcessSpec
{
    /// Which program the process is.
    enum class Role
    {
        ControlServer,
        IsServer,
        Master,
        Slave,
        Logger,   ///< dialog-logger (the partition's "logger" object)
        ConfigDb, ///< dialog-configdb (the partition's "configdb" object, unless "start": false)
        /// A daemon of the partition outside run control (an entry of "services": the alarm server,
        /// a monitor, data-quality checks, …): its executable with --name and its args.
        Service,
    };
    /// What the process is: its program and its arguments follow from it.
    Role role = Role::Slave;
    QString name;     ///< DIALOG process name (IS server: the server name)
    QString kind;     ///< slaves of dialog-slave: "control" or "readout" (empty with executable)
    /// A slave of its own ("program": a path, or a file name looked up beside the toolkit's
    /// programs, then in $PATH): started with the arguments of every slave (--name, --master,
    /// --run-params-server, --daq-server, --is-types, …) then args; empty: dialog-slave --kind.
    QString executable;
    QString host;     ///< "localhost" (started locally) or a host reached over ssh
    /// "hosts": the hosts it may run on, in order: host is the first, the others are fallbacks.
    /// Empty when the entry names one "host".
    QStringList hosts;
    /// "migrate": when its host is lost (agent and process gone for lossIntervalMs), the agent of
    /// the first reachable fallback host starts it (docs/agent.md, migration). Needs two hosts.
    bool migrate = false;
    int lossIntervalMs = 5000; ///< "loss_interval_ms"
    QStringList args; ///< extra arguments
    /// Control Servers: the port (0: the partition's controlServerPort, the primary's).
    quint16 port = 0;
    /// A standby Control Server: the "host:port" of the primary it watches and takes over from.
    QString standbyOf;
    /// What a supervising launcher (`dialogctl up --supervise`, `dialogctl supervise`) does when the
    /// process is gone without having been stopped: Never (the default) leaves it, OnFailure starts
    /// it again on its host.
    enum class Restart
    {
        Never,
        OnFailure,
    };
    /// Never or OnFailure.
    Restart restart = Restart::Never;
    int restartLimit = 5;      ///< restarts within any 60 s; one more and the supervisor gives up
    int restartDelayMs = 1000; ///< back-off before a restart, doubled per restart in the last minute (≤ 30 s)
    /// Run-control tree nodes (slaves, segment controllers): a failure during a run takes the node
    /// out of the run instead of putting the run in Error ("removable": true).
    bool removable = false;
    /// A removed node that comes back is brought into the running run without the operator
    /// ("recover": "auto"; the default "manual" waits for `dialogctl rc recover`).
    bool autoRecover = false;
    /// The program's file name (dialog-controlserver, dialog-isserver, dialog-master, dialog-slave,
    /// dialog-logger or dialog-configdb), or a slave's executable.
    QString program() const;
    /// The full argument list of the program (without the program itself).
    QStringList arguments(const struct Partition &partition) const;
    /// This host: "localhost", its host name, or one of its addresses (loopback included); the
    /// others are started over ssh.
    bool isLocal() const;
};

/// A segment of the run-control tree: a controller (dialog-master --segment NAME) over slaves and
/// other segments (an object of the partition's "segments" list).
struct Segment
{
    /// The segment's name, also its controller's DIALOG process name.
    QString name;
    QStringList slaves;   ///< its slaves, by name, in the order listed
    QStringList segments; ///< its sub-segments, by name, in the order listed
    /// The controller's process: role Master, name, host, args, removable, autoRecover.
    ProcessSpec controller;
};

/// A validated partition configuration.
struct Partition
{
    /// The partition's name ("name").
    QString name;
    QString file;              ///< absolute path of the file it was read from
    QString controlServerHost; ///< where the Control Server runs
    /// The Control Server's port.
    quint16 controlServerPort = 3425;
    /// Extra arguments of the Control Server ("control_server": "args").
    QStringList controlServerArgs;
    /// False when the partition uses a Control Server started elsewhere ("control_server": "start": false).
    bool startControlServer = true;
    /// The standby Control Servers, after the primary in a "control_server" list (role ControlServer,
    /// named "Standby", "Standby2", …, each with its host, port and standbyOf the primary).
    QList<ProcessSpec> standbyControlServers;
    /// The command that reaches another host ("ssh": the program and its options).
    QStringList sshCommand{QStringLiteral("ssh"), QStringLiteral("-o"), QStringLiteral("BatchMode=yes")};
    QString binDir; ///< where the programs are on every host (empty: next to the dialogctl tool)
    /// Absolute; handed to the IS servers. Without "is_types_dir": ../is-types beside the partition
    /// file when it exists, else the installed share/dialog/is-types.
    QString isTypesDir;
    QString runParamsServer = QStringLiteral("RunParams"); ///< IS server of run parameters and states
    QString daqServer = QStringLiteral("DAQ");             ///< IS server of readout statistics
    QString runNumberFile;                                 ///< absolute, empty: the master's default location
    /// How long the master waits for every slave to finish a transition.
    int transitionTimeoutMs = 10000;
    int heartbeatMs = 0; ///< 0: every process' default
    /// The partition's shared secret and TLS files (absolute; empty: none), handed to every
    /// program started (--secret-file, --tls-cert, --tls-key, --tls-ca) and used by `dialogctl up`.
    ///@{
    /// The same paths must hold the files on every host.
    QString secretFile, tlsCert, tlsKey, tlsCa;
    ///@}
    /// True when the partition runs without a shared secret on purpose ("secret": "none"; insecure:
    /// anyone who reaches a port is believed). Otherwise `dialogctl up` gives a partition that names
    /// no "secret_file" and starts its own Control Server the secret <run-dir>/secret.
    bool noSecret = false;
    /// Not read from the file: the identity secret `dialogctl up` made for a partition with a secret
    /// whose Control Server it starts (absolute; empty: none). The Control Server checks the names
    /// of the partition's processes with it; each process gets its own key (docs/security.md).
    QString identityFile;
    /// Not read from the file: processes `dialogctl up` could not give their key (another host it
    /// cannot reach over the ssh command): their names are not required to be proven.
    QStringList unprovenNames;
    /// The run-control master ("master").
    ProcessSpec master;
    /// The IS servers ("is_servers").
    QList<ProcessSpec> isServers;
    /// Paths of the configuration database's segment documents it groups its slaves in
    /// ("segments": ["segments/tracker", …]; dialog/config.h); the database checks they exist.
    QStringList segments;
    /// The slaves, in start order ("slaves").
    QList<ProcessSpec> slaves;
    /// The run-control tree's segments (the objects of "segments"), each before its sub-segments.
    /// Without any, the master controls every slave directly (a flat partition).
    QList<Segment> tree;
    QList<ProcessSpec> loggers; ///< none, or the one of the partition's optional "logger" object
    /// None, or the dialog-configdb the partition starts (its optional "configdb" object).
    QList<ProcessSpec> configDbs;
    /// The daemons outside run control ("services": name, program, host, args), started after the
    /// IS servers and before the master, stopped with the partition. "{partition_dir}" in their
    /// args is the folder of the partition file.
    QList<ProcessSpec> services;
    /// The configuration database the master configures from and records runs in ("configdb":
    /// "name"; empty: none, the slaves keep their arguments and run numbers come from the file).
    QString configDb;
    /// The version the master configures from: a tag, a number, or "head" ("configdb": "ref").
    QString configRef = QStringLiteral("head");
    /// Absolute path of the access list ("access"; dialog/access.h) the Control Server and the IS
    /// servers enforce; empty: everything allowed.
    QString accessFile;
    /// Absolute directory of the audit files ("audit_dir"): the Control Server writes
    /// controlserver.audit, each IS server is-NAME.audit; empty: no audit files.
    QString auditDir;
    /// --access and --audit-file for the Control Server or an IS server (audit file @p auditName).
    QStringList accessArguments(const QString &auditName) const;

    /// "host:port" of the primary Control Server.
    QString controlServerAddress() const;
    /// Every Control Server's "host:port", the primary first: what `dialogctl up` hands to every
    /// process it starts ($DIALOG_CONTROL_SERVER, joined by commas), so that each finds the standby
    /// once it serves.
    QStringList controlServerAddresses() const;
    /// Every process in start order: Control Server and its standbys (if started), logger,
    /// configuration database, IS servers, master, slaves.
    QList<ProcessSpec> processes() const;
    /// The slave named @p name, or nullptr.
    const ProcessSpec *slave(const QString &name) const;
    /// The segment named @p name, or nullptr.
    const Segment *segment(const QString &name) const;
    /// The slave or segment controller named @p name (a node of the tree), or nullptr.
    const ProcessSpec *node(const QString &name) const;
    /// The controller that drives node @p name: its segment's name, or the master's for a node at
    /// the top of the tree (and for any name that is no node).
    QString parentOf(const QString &name) const;
    /// The nodes controller @p controller (the master's or a segment's name) drives directly, in
    /// the partition's order: slaves first, then segments.
    QStringList childrenOf(const QString &controller) const;

    /// Reads and validates @p path into @p out. A file that cannot be read gives
    /// Status::Code::StorageError; an invalid partition Status::Code::InvalidObject with a one-line
    /// reason naming the file and the offending field (e.g. "demo.json: slaves[2].kind: expected
    /// \"control\" or \"readout\""). @p out is unspecified after a failure.
    static Status load(const QString &path, Partition *out);
    /// Same for JSON text (@p path only names it in messages and anchors relative paths).
    static Status parse(const QByteArray &json, const QString &path, Partition *out);
};

} // namespace dialog::rc
