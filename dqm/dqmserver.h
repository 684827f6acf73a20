// dialog-dqm: the configured checks run every period on the IS histograms they name; each result
// goes to the IS as <is-server>.<check> (type DQResult). References are files <references>/<check>.json;
// requests on DQM.Server (dialogctl dqm) list the results and take a reference from the current
// histogram.
#pragma once

#include "algorithms.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QDir>
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <map>
#include <memory>

namespace dialog::dqm {

/// The service dialog-dqm takes requests on.
QString serverService();

struct ServerOptions
{
    QList<Check> checks;
    QString referenceDir;
    QString isServer = QStringLiteral("DQM");
    int periodMs = 1000;
    /// The run's IS object (RunInfo: runNumber, state); at the end of each run the checked
    /// histograms are kept in <referenceDir>/runs/<run>/. Empty: none kept.
    QString runInfo = QStringLiteral("RunParams.RunInfo");
    int keepRuns = 50; ///< runs whose histograms are kept (the oldest removed)
};

class DqmServer : public QObject
{
    Q_OBJECT
public:
    DqmServer(Client *client, const ServerOptions &options, QObject *parent = nullptr);

    /// Publishes serverService() and starts the period.
    void start();
    /// Runs every check once (each reads its histogram; the results are written as they come).
    void runChecks();

private:
    struct State
    {
        Check check;
        Result result;
        quint64 entries = 0; ///< of the histogram last read
        bool pending = false;
    };
    void finish(State &s, const Result &r);
    void onRequest(const Request &request);
    void setReference(const Request &request, const QString &check);
    void setReferenceFromRun(const Request &request, const QString &check, qint64 run);
    /// The run's state changed: at the end of a run, its histograms are kept.
    void onRunInfo(const is::Event &event);
    void onRunValue(const is::Object &runInfo);
    void keepRun(quint32 run);
    QString runDir(qint64 run) const;
    Status loadReference(const QString &check, Histogram *out) const;
    QString referencePath(const QString &check) const;
    void declareType();

    Client *m_client;
    ServerOptions m_options;
    is::Dictionary m_dict;
    std::map<QString, State> m_states;
    QTimer m_timer;
    bool m_typeDeclared = false;
    // One round of every check: when it began, how many reads are out, how long the last one took.
    QElapsedTimer m_cycle;
    int m_cycleOutstanding = 0;
    qint64 m_lastCycleUs = -1;
    quint64 m_cycles = 0;
    // The run seen last in the run's IS object, and whether it was running.
    std::unique_ptr<is::Receiver> m_runReceiver;
    quint32 m_run = 0;
    bool m_running = false;
};

} // namespace dialog::dqm
