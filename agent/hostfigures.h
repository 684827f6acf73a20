// The figures of the agent's host (CPU, load, memory, the disk of the data directory, the managed
// processes), sampled every few seconds and published to IS as Hosts.<host> (type HostFigures,
// resources/is-types/host.xml, declared by the agent itself).
#pragma once

#include <QJsonObject>
#include <QObject>
#include <QTimer>
#include <functional>
#include <memory>

namespace dialog {
class Client;
namespace is {
class Dictionary;
}
} // namespace dialog

namespace dialog::agent {

/// One sample of the host's figures.
struct HostSample
{
    double cpuLoad = 0; ///< percent of all cores since the previous sample
    int cores = 0;
    double load[3] = {0, 0, 0};
    quint64 memoryTotal = 0, memoryAvailable = 0;
    quint64 diskTotal = 0, diskFree = 0;
    QJsonObject toJson() const;
};

class HostFigures : public QObject
{
    Q_OBJECT
public:
    /// What the agent adds to a sample: managed, running, crashes.
    using Counts = std::function<void(int *managed, int *running, int *crashes)>;

    /// @p isServer empty: sampled (for "ls") but not published.
    HostFigures(Client *client, const QString &host, const QString &dataDir, const QString &isServer,
                int intervalMs, Counts counts, QObject *parent = nullptr);
    ~HostFigures() override;
    void start();
    /// The latest sample (taken now when none was).
    HostSample sample();
    /// The IS object name: Hosts.<host> on the IS server given.
    QString objectName() const;

private:
    void tick();
    void publish(const HostSample &s);

    Client *m_client;
    QString m_host, m_dataDir, m_isServer;
    Counts m_counts;
    QTimer m_timer;
    std::unique_ptr<is::Dictionary> m_dictionary;
    bool m_declared = false, m_inFlight = false, m_failed = false;
    quint64 m_lastBusy = 0, m_lastTotal = 0;
    HostSample m_last;
    bool m_haveSample = false;
};

} // namespace dialog::agent
