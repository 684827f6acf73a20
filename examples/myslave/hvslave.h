// A slave for a made-up device: a high-voltage supply of a few channels.
#pragma once

#include <dialog/rc/slave.h>

#include <QList>
#include <QTimer>

/// The supply's parameters: command-line options of myslave, and the same names (with '_' for
/// '-') in its document of the configuration database, read at every configure.
struct HvConfig
{
    int channels = 8;         ///< --channels
    double voltage = 1500;    ///< --voltage: what every channel is set to, in V
    double maxVoltage = 2000; ///< --max-voltage: what the supply can give
};

/// Adds --channels, --voltage, --max-voltage to @p table, written to @p c.
void addHvOptions(dialog::OptionTable &table, HvConfig &c);

/// Configure switches the channels on at the set voltage (refused over the supply's limit), start
/// and stop follow the run, unconfigure switches them off. Every second, and after each change, it
/// publishes its state as the IS object DAQ.<name> (type HvSupplyStatus, hvsupply.xml) and as JSON
/// on RunCtrl.<name>.Status. The command <name>.SetVoltage ("1800") changes the set voltage; a
/// request on <name>.Readback answers the voltages read back, as JSON.
class HvSlave : public dialog::rc::Slave
{
    Q_OBJECT
public:
    HvSlave(const dialog::rc::SlaveOptions &options, const HvConfig &config);

protected:
    dialog::Status configure(const dialog::rc::TransitionRequest &request) override;
    dialog::Status start(const dialog::rc::TransitionRequest &request) override;
    dialog::Status stop() override;
    dialog::Status unconfigure() override;
    dialog::Status reset() override;
    void transitionEnded(dialog::rc::Transition t, bool ok) override;

private:
    void setVoltage(const dialog::Command &command);
    void readback(const dialog::Request &request);
    void publish();

    HvConfig m_config;
    QList<float> m_voltages; ///< read back per channel (0 while off)
    bool m_on = false;
    quint32 m_commands = 0;
    QTimer m_publish;
};
