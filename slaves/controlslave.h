// dialog-slave --kind control: supervises a (simulated) front-end card.
#pragma once

#include "dialog/rc/slave.h"

#include <QRandomGenerator>
#include <QTimer>
#include <QVector>

namespace dialog::daq {

struct ControlSlaveConfig
{
    int registers = 16;     ///< size of the card's register map
    int configureMs = 50;   ///< simulated time to write the register map
    int checkMs = 1000;     ///< period of the register check
    double upsetEveryS = 0; ///< for tests and the demo: a bit flips in a register this often (0: never)
};

/// On configure it writes its register map to the card and reads it back; while configured it
/// checks the card every checkMs, rewrites registers found changed (a single-event upset) and says
/// so in its log; it publishes the card status on RunCtrl.<P>.Status and to IS (DAQ.<P>).
class ControlSlave : public rc::Slave
{
    Q_OBJECT
public:
    ControlSlave(const rc::SlaveOptions &options, const ControlSlaveConfig &config,
                 const QString &daqServer, QObject *parent = nullptr);

    /// The register map the card should hold (derived from the process name).
    const QVector<quint32> &expected() const { return m_expected; }
    /// The simulated card (for tests).
    QVector<quint32> &card() { return m_card; }
    /// Checks the card now; returns the number of registers found wrong (and rewritten).
    int checkCard();

protected:
    void perform(rc::Transition t, const rc::TransitionRequest &params, Done done) override;
    void addStateExtras(rc::StateRecord &record) const override;

private:
    void publishStatus();
    bool configured() const;
    /// Takes @p config: the register map and the timers follow it.
    void setConfig(const ControlSlaveConfig &config);

    ControlSlaveConfig m_config;
    QString m_daqServer;
    QVector<quint32> m_expected, m_card;
    bool m_triggerEnabled = false;
    quint32 m_runNumber = 0;
    quint64 m_checks = 0, m_upsets = 0;
    qint64 m_lastCheckMs = 0;
    QTimer m_check, m_status, m_upset, m_configure;
    QRandomGenerator m_random;
};

} // namespace dialog::daq
