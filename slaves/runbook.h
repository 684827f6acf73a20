// The master's side of the configuration database (dialog-configdb): the slaves' parameters read
// at configure from one version, the run numbers allocated and the runs recorded in the run
// registry, with the processes of the partition as the Control Server's directory shows them.
#pragma once

#include "dialog/client.h"
#include "dialog/config.h"
#include "dialog/directory.h"
#include "dialog/rc/partition.h"

#include <QHash>
#include <QJsonObject>

namespace dialog::daq {

/// Lives in the master's thread; every callback comes in it, exactly once.
class RunBook : public QObject
{
    Q_OBJECT
public:
    /// Reads the database served as CONFIG.<@p database>; @p ref (a tag, a version or "head") is
    /// resolved at every configure. Without @p recordsRuns (a segment controller) only configure()
    /// is used: nothing is followed for the run records.
    RunBook(Client *client, const rc::Partition &partition, const QString &database, const QString &ref,
            bool recordsRuns, QObject *parent = nullptr);

    QString ref() const { return m_ref; }
    /// The version the last configure read (0 before one succeeded).
    quint64 version() const { return m_version; }

    /// The parameters of every slave: slave name → its document's object (absent: none in that
    /// version). Fails, saying why, when the database is unreachable or @p ref unknown.
    using Parameters = QHash<QString, QJsonObject>;
    void configure(std::function<void(const Status &, const Parameters &)> done);
    /// Allocates the next run number and records the run (run type, the version configured,
    /// @p operatorName, the partition's processes, @p out: the nodes out of it at its start).
    /// With @p node (a node taken for commissioning), the run is that node's alone: recorded as
    /// partition "PARTITION/NODE" with NODE as its master and the processes below it.
    void startRun(const QString &runType, const QString &operatorName, const QJsonArray &out,
                  std::function<void(const Status &, quint32 number)> done, const QString &node = {});
    /// Records the end of run @p number: "normal" or "error" with @p message, the events and bytes
    /// the readout slaves last reported for that run, the warnings and errors the message log
    /// (dialog-logger, if one runs) holds from the partition's processes since the run started,
    /// and @p out, every node that was out of the run (disabled, or removed during it).
    void endRun(quint32 number, const QString &reason, const QString &message, const QJsonArray &out);

private:
    void readSlaves(quint64 version, std::function<void(const Status &, const Parameters &)> done);
    QJsonArray processes(const QString &node = {}) const;
    /// The partition's processes as they report to the message log (with @p node: those below it).
    QStringList processNames(const QString &node = {}) const;
    void recordEnd(quint32 number, const QString &reason, const QString &message, const QJsonObject &messages,
                   const QJsonArray &out);

    Client *m_client;
    rc::Partition m_partition;
    config::ConfigClient m_config;
    QString m_ref;
    quint64 m_version = 0;
    DirectoryAssembler m_assembler;
    DirectorySnapshot m_directory;
    /// Per readout slave: the run, events and bytes of its last status.
    struct Counted
    {
        quint32 run = 0;
        qint64 events = 0, bytes = 0;
    };
    QHash<QString, Counted> m_counted;
    /// Of each run recorded and not ended: its start and, for a commissioning run, its node.
    struct Open
    {
        qint64 startMs = 0;
        QString node;
    };
    QHash<quint32, Open> m_open;
};

} // namespace dialog::daq
