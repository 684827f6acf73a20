// dialog-slave --kind readout: a simulated multi-threaded readout.
#pragma once

#include "dialog/rc/slave.h"
#include "readoutengine.h"

#include <QElapsedTimer>
#include <QTimer>
#include <memory>

namespace dialog::daq {

/// Configure creates the readout chain, start runs it for the run number the master gives, pause
/// and resume hold the source, stop drains every queued block. Statistics (events, bytes, rates,
/// queue depths, errors) go to RunCtrl.<P>.Status and to IS (DAQ.<P>, ReadoutStats) every second.
class ReadoutSlave : public rc::Slave
{
    Q_OBJECT
public:
    ReadoutSlave(const rc::SlaveOptions &options, const ReadoutConfig &config, const QString &daqServer,
                 QObject *parent = nullptr);
    ~ReadoutSlave() override;


protected:
    void perform(rc::Transition t, const rc::TransitionRequest &params, Done done) override;
    void addStateExtras(rc::StateRecord &record) const override;

private:
    void publishStatus();
    void stopEngine();

    ReadoutConfig m_config;
    QString m_daqServer;
    sampling::Sampler m_sampler; ///< samplerService(name()): events for monitoring
    std::unique_ptr<ReadoutEngine> m_engine;
    quint32 m_runNumber = 0;
    QTimer m_status;
    QElapsedTimer m_sinceLast;
    quint64 m_lastEvents = 0, m_lastBytes = 0, m_lastErrors = 0;
    double m_rateHz = 0, m_mbPerS = 0, m_peakRateHz = 0;
    qint64 m_runStartMs = 0;
    QList<double> m_sizeHistogram; ///< event sizes of this run (published as eventSize)
    quint64 m_histogrammed = 0;    ///< events entered in m_sizeHistogram
};

} // namespace dialog::daq
