// dialog-dqm: the configured checks run every period on the IS histograms they name; each result
// goes to the IS as <is-server>.<check> (type DQResult). References are files <references>/<check>.json;
// requests on DQM.Server (dialogctl dqm) list the results and take a reference from the current
// histogram.
#pragma once

#include "algorithms.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"

#include <QDir>
#include <QObject>
#include <QTimer>
#include <map>

namespace dialog::dqm {

/// The service dialog-dqm takes requests on.
QString serverService();

struct ServerOptions
{
    QList<Check> checks;
    QString referenceDir;
    QString isServer = QStringLiteral("DQM");
    int periodMs = 1000;
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
    Status loadReference(const QString &check, Histogram *out) const;
    QString referencePath(const QString &check) const;
    void declareType();

    Client *m_client;
    ServerOptions m_options;
    is::Dictionary m_dict;
    std::map<QString, State> m_states;
    QTimer m_timer;
    bool m_typeDeclared = false;
};

} // namespace dialog::dqm
