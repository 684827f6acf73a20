#include "hvslave.h"

#include <dialog/is/object.h>
#include <dialog/is/time.h>

#include <QJsonArray>
#include <QJsonDocument>

using dialog::Option;
using dialog::Severity;
using dialog::Status;

void addHvOptions(dialog::OptionTable &t, HvConfig &c)
{
    t.add(
        {Option::integer(QStringLiteral("channels"), QStringLiteral("n"),
                         QStringLiteral("Channels of the supply (default 8)."), &c.channels, 1, 64),
         Option::number(QStringLiteral("voltage"), QStringLiteral("V"),
                        QStringLiteral("Voltage of every channel (default 1500)."), &c.voltage, 0, 5000),
         Option::number(QStringLiteral("max-voltage"), QStringLiteral("V"),
                        QStringLiteral("What the supply can give (default 2000)."), &c.maxVoltage, 0, 5000)});
}

HvSlave::HvSlave(const dialog::rc::SlaveOptions &options, const HvConfig &config)
    : dialog::rc::Slave(options), m_config(config)
{
    // A command and a request service of the slave's own, beside the run-control ones.
    handleCommand(name() + QStringLiteral(".SetVoltage"),
                  [this](const dialog::Command &c) { setVoltage(c); });
    serve(name() + QStringLiteral(".Readback"), [this](const dialog::Request &r) { readback(r); });
    connect(&m_publish, &QTimer::timeout, this, &HvSlave::publish);
    m_publish.start(1000);
    publish();
}

Status HvSlave::configure(const dialog::rc::TransitionRequest &request)
{
    // The configuration database's parameters of this slave, if the partition has one: the same
    // options as the command line's, with their bounds.
    if (const Status s = dialog::rc::applyParameters(request.parameters, &m_config, addHvOptions); !s.isOk())
        return s;
    if (m_config.voltage > m_config.maxVoltage)
        return Status(Status::Code::Failed, QStringLiteral("%1 V asked, over the supply's limit of %2 V")
                                                .arg(m_config.voltage)
                                                .arg(m_config.maxVoltage));
    m_voltages.fill(float(m_config.voltage), m_config.channels);
    m_on = true;
    log(Severity::Info,
        QStringLiteral("%1 channels on at %2 V").arg(m_config.channels).arg(m_config.voltage));
    return {};
}

Status HvSlave::start(const dialog::rc::TransitionRequest &request)
{
    log(Severity::Info, QStringLiteral("run %1 starts").arg(request.runNumber));
    return {};
}

Status HvSlave::stop()
{
    log(Severity::Info, QStringLiteral("run %1 stopped").arg(runNumber()));
    return {};
}

Status HvSlave::unconfigure()
{
    m_voltages.fill(0, m_config.channels);
    m_on = false;
    return {};
}

Status HvSlave::reset()
{
    return unconfigure();
}

void HvSlave::transitionEnded(dialog::rc::Transition, bool)
{
    publish(); // the new state at once, not at the next second
}

void HvSlave::setVoltage(const dialog::Command &command)
{
    bool ok = false;
    const double v = command.data().trimmed().toDouble(&ok);
    if (!ok || v < 0 || v > 5000) {
        log(Severity::Warning, QStringLiteral("SetVoltage from %1: '%2' is not a voltage (0 to 5000 V)")
                                   .arg(command.origin(), QString::fromUtf8(command.data())));
        return;
    }
    ++m_commands;
    m_config.voltage = v;
    if (m_on && v <= m_config.maxVoltage)
        m_voltages.fill(float(v), m_config.channels);
    log(Severity::Info, QStringLiteral("voltage set to %1 V by %2").arg(v).arg(command.origin()));
    publish();
}

void HvSlave::readback(const dialog::Request &request)
{
    QJsonArray volts;
    for (float v : std::as_const(m_voltages))
        volts.append(double(v));
    client()->reply(request, QJsonDocument(QJsonObject{{QStringLiteral("voltages"), volts}}).toJson());
}

void HvSlave::publish()
{
    const HvConfig c = m_config;
    const QList<float> volts = m_voltages;
    const bool on = m_on;
    const quint32 run = machine().state() == dialog::rc::State::Running ? runNumber() : 0,
                  commands = m_commands;
    publishStatistics(QStringLiteral("HvSupplyStatus"), [=](dialog::is::Object &o) {
        o.set<QString>(QStringLiteral("host"), QStringLiteral("localhost"));
        o.set<qint64>(QStringLiteral("pid"), QCoreApplication::applicationPid());
        o.set<dialog::is::Time>(QStringLiteral("updateTime"), dialog::is::Time::currentTime());
        o.set<quint32>(QStringLiteral("channels"), quint32(c.channels));
        o.set<float>(QStringLiteral("setVoltage"), float(c.voltage));
        o.set<QList<float>>(QStringLiteral("voltages"), volts);
        o.set<bool>(QStringLiteral("on"), on);
        o.set<quint32>(QStringLiteral("runNumber"), run);
        o.set<quint32>(QStringLiteral("commands"), commands);
    });
    publishStatus({{QStringLiteral("process"), name()},
                   {QStringLiteral("on"), on},
                   {QStringLiteral("set_voltage"), c.voltage},
                   {QStringLiteral("run_number"), qint64(run)}});
}
