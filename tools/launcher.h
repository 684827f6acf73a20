// The partition launcher behind `dialogctl up` and `dialogctl down`: starts the processes of a partition
// on their hosts (locally, or over ssh), records them, and stops them.
#pragma once

#include "dialog/clientoptions.h"
#include "dialog/rc/partition.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <memory>

namespace dialog::tool {

/// One process the launcher started.
struct Launched
{
    rc::ProcessSpec spec;
    qint64 pid = 0;
    QString log;                ///< its stdout and stderr, on its host
    QString status;             ///< for the report: registered, exited, not registered, stopped, killed...
    QString agent;              ///< the host agent that started it ("": started locally or over ssh)
    QStringList standbyAgents;  ///< a migratable process's fallback agents (it may run under one now)
    QString dialogName() const; ///< the name it registers with the Control Server ("" for the server)
    QJsonObject toJson() const;
    static Launched fromJson(const QJsonObject &o);
};

class AgentRoute;

class Launcher
{
public:
    Launcher(const rc::Partition &partition, const QString &runDir, const QString &binDir);
    ~Launcher();

    /// Processes whose host has an agent go through it (@p options: a client of the partition's
    /// Control Server); the Control Server itself, and hosts without an agent, as before.
    void useAgents(const ClientOptions &options);

    /// Default run directory of a partition: $TMPDIR/dialog-<partition>-<uid>.
    static QString defaultRunDir(const rc::Partition &p);
    QString recordFile() const;
    bool readRecord(QList<Launched> *out, QString *error) const;
    bool writeRecord(const QList<Launched> &procs, QString *error) const;
    void removeRecord() const;

    /// The path of @p spec's program on its host.
    QString programPath(const rc::ProcessSpec &spec) const;
    /// Starts @p spec (detached, output to its log); false with @p error.
    bool start(const rc::ProcessSpec &spec, Launched *out, QString *error) const;
    /// Whether the process is alive (zombies count as dead).
    bool alive(const Launched &l) const;
    enum class Liveness
    {
        Alive,
        Gone,
        Unknown, ///< its host could not be asked (ssh failed); @p error of probe() says why
    };
    /// Like alive(), telling a process that is gone from one whose host did not answer.
    Liveness probe(const Launched &l, QString *error) const;
    /// Sends @p signal (SIGTERM / SIGKILL) to the process on its host.
    bool signal(const Launched &l, int signal, QString *error) const;
    /// The last lines of a local process' log.
    QString logTail(const Launched &l, int lines = 5) const;
    /// Moves the log of @p l to LOG.1 on its host (replacing an older one), so that the log of the
    /// next start does not overwrite it. False with @p error.
    bool keepLog(const Launched &l, QString *error) const;

    /// Writes @p content (a secret, a process key) to @p path on @p host over the ssh command (made
    /// 0600, its folder too if missing, replaced whole). False with @p error.
    bool copySecret(const QString &host, const QString &path, const QByteArray &content, QString *error) const;
    /// The processes that could not be given their key (rc::Partition::unprovenNames): started
    /// without one, and not named to the Control Server as names to be proven.
    void setUnprovenNames(const QStringList &names) { m_partition.unprovenNames = names; }
    /// Where the key of the process @p spec is (on its host) when the partition has an identity
    /// secret (rc::Partition::identityFile); empty without one, or for the Control Server.
    QString processKeyFile(const rc::ProcessSpec &spec) const;

private:
    /// The environment of a process the host's agent starts (@p keyFile: its process key, if any).
    QJsonObject agentEnvironment(const QString &keyFile) const;
    /// Starts a process through the agents: a migratable one ("migrate") on the first of its hosts
    /// with an agent, standing by on the agents of the others. False with @p error (@p out->agent
    /// empty and no error: no agent, ssh it is).
    bool startThroughAgents(const rc::ProcessSpec &spec, const QString &program, const QStringList &args,
                            const QJsonObject &env, Launched *out, QString *error) const;
    /// Runs a shell command on @p host over the ssh command, @p input on its stdin; its stdout, or
    /// false with @p error.
    bool ssh(const QString &host, const QString &command, QByteArray *out, QString *error,
             const QByteArray &input = {}) const;

    rc::Partition m_partition;
    QString m_runDir, m_binDir;
    std::unique_ptr<AgentRoute> m_agents;
};

QString shellQuote(const QString &s);

} // namespace dialog::tool
