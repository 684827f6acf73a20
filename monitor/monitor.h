// dialog-monitor: samples of readouts turned into IS histograms. One SampleReader and one set of
// EventHistograms per readout; every --publish-ms the histograms of each readout that got samples
// are written to the IS as <server>.<readout>.eventSize / .occupancy / .hitMap.
#pragma once

#include "histograms.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"

#include <QObject>
#include <QTimer>
#include <map>
#include <memory>

namespace dialog::monitor {

struct MonitorOptions
{
    QStringList readouts;   ///< samplers (process names) to take samples from
    sampling::Criteria criteria;
    QString isServer = QStringLiteral("Monitor");
    int publishMs = 1000;
    Binning binning;
};

class Monitor : public QObject
{
    Q_OBJECT
public:
    Monitor(Client *client, const MonitorOptions &options, QObject *parent = nullptr);
    ~Monitor() override;

    /// Opens the readers (their samplers may start later).
    void start();
    /// Writes the histograms of every readout that got samples since the last time.
    void publish();

private:
    struct Source
    {
        std::unique_ptr<sampling::SampleReader> reader;
        EventHistograms histograms;
        quint32 run = 0;
        bool changed = false;
    };
    void onSample(Source &source, const sampling::Sample &sample);

    Client *m_client;
    MonitorOptions m_options;
    is::Dictionary m_dict;
    std::map<QString, Source> m_sources;
    QTimer m_timer;
};

} // namespace dialog::monitor
