#include "controlslave.h"
#include "slaveoptions.h"

#include "dialog/is/object.h"
#include "dialog/is/time.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>

namespace dialog::daq {

ControlSlave::ControlSlave(const rc::SlaveOptions &options, const ControlSlaveConfig &config,
                           const QString &daqServer, QObject *parent)
    : rc::Slave(options, parent), m_config(config), m_daqServer(daqServer),
      m_random(quint32(qHash(options.client.name)))
{
    m_configure.setSingleShot(true);
    connect(&m_check, &QTimer::timeout, this, [this] { checkCard(); });
    m_status.setInterval(1000);
    connect(&m_status, &QTimer::timeout, this, &ControlSlave::publishStatus);
    m_status.start();
    connect(&m_upset, &QTimer::timeout, this, [this] {
        if (!configured() || m_card.isEmpty())
            return;
        const int r = int(m_random.bounded(quint32(m_card.size())));
        m_card[r] ^= 1u << m_random.bounded(32u);
    });
    setConfig(config);
    publishStatus();
}

void ControlSlave::setConfig(const ControlSlaveConfig &config)
{
    m_config = config;
    // The register map: a fixed pattern per card, so a restarted slave configures the same values.
    const QByteArray seed = QCryptographicHash::hash(name().toUtf8(), QCryptographicHash::Sha256);
    m_expected.resize(m_config.registers);
    for (int i = 0; i < m_config.registers; ++i)
        m_expected[i] = quint32(qHash(seed, size_t(i))) | 1u;
    m_card.fill(0, m_config.registers);
    m_check.setInterval(m_config.checkMs);
    m_upset.stop();
    if (m_config.upsetEveryS > 0) {
        m_upset.setInterval(int(m_config.upsetEveryS * 1000));
        m_upset.start();
    }
}

bool ControlSlave::configured() const
{
    const rc::State s = machine().state();
    return s == rc::State::Configured || s == rc::State::Running || s == rc::State::Paused;
}

int ControlSlave::checkCard()
{
    if (!configured())
        return 0;
    ++m_checks;
    m_lastCheckMs = rc::nowMs();
    int wrong = 0;
    for (int i = 0; i < m_card.size(); ++i) {
        if (m_card[i] == m_expected[i])
            continue;
        ++wrong;
        log(Severity::Warning, QStringLiteral("register %1 read 0x%2, expected 0x%3: rewritten")
                                   .arg(i)
                                   .arg(m_card[i], 8, 16, QLatin1Char('0'))
                                   .arg(m_expected[i], 8, 16, QLatin1Char('0')));
        m_card[i] = m_expected[i];
    }
    m_upsets += quint64(wrong);
    return wrong;
}

void ControlSlave::perform(rc::Transition t, const rc::TransitionRequest &params, Done done)
{
    switch (t) {
    case rc::Transition::Configure:
        if (!params.parameters.isEmpty()) {
            // The configuration database's parameters, from the version the master configures.
            ControlSlaveConfig c = m_config;
            if (const Status st = applyParameters(params.parameters, &c); !st.isOk())
                return done(Status(st.code(), QStringLiteral("parameters from the configuration database: ") +
                                                  st.message()));
            setConfig(c);
        }
        m_configure.disconnect(this);
        connect(&m_configure, &QTimer::timeout, this, [this, done] {
            m_card = m_expected; // the write
            for (int i = 0; i < m_card.size(); ++i)
                if (m_card[i] != m_expected[i])
                    return done(
                        Status(Status::Code::Failed, QStringLiteral("register %1 read back wrong").arg(i)));
            m_check.start();
            log(Severity::Info, QStringLiteral("card configured: %1 registers").arg(m_card.size()));
            done(Status());
        });
        m_configure.start(m_config.configureMs);
        return;
    case rc::Transition::Start:
        m_runNumber = params.runNumber;
        m_triggerEnabled = true;
        break;
    case rc::Transition::Resume:
        m_triggerEnabled = true;
        break;
    case rc::Transition::Pause:
    case rc::Transition::Stop:
        m_triggerEnabled = false;
        break;
    case rc::Transition::Unconfigure:
    case rc::Transition::Reset:
        m_configure.stop();
        m_check.stop();
        m_triggerEnabled = false;
        m_card.fill(0);
        break;
    }
    done(Status());
    publishStatus();
}

void ControlSlave::addStateExtras(rc::StateRecord &record) const
{
    record.runNumber = m_runNumber;
}

void ControlSlave::publishStatus()
{
    // A plausible card temperature: warmer with the trigger on.
    const double temperature = 38.0 + (m_triggerEnabled ? 6.0 : 0.0) + m_random.bounded(0.5);
    const QJsonObject o{{QStringLiteral("process"), name()},
                        {QStringLiteral("kind"), QStringLiteral("control")},
                        {QStringLiteral("registers"), m_card.size()},
                        {QStringLiteral("configured"), configured()},
                        {QStringLiteral("trigger_enabled"), m_triggerEnabled},
                        {QStringLiteral("checks"), qint64(m_checks)},
                        {QStringLiteral("upsets"), qint64(m_upsets)},
                        {QStringLiteral("last_check_ms"), m_lastCheckMs},
                        {QStringLiteral("temperature_c"), qRound(temperature * 10) / 10.0},
                        {QStringLiteral("time_ms"), rc::nowMs()}};
    statusService()->update(QJsonDocument(o).toJson(QJsonDocument::Compact));
    if (!options().publishToIs || m_daqServer.isEmpty())
        return;
    const bool conf = configured(), trig = m_triggerEnabled;
    const quint64 checks = m_checks, upsets = m_upsets;
    const quint32 regs = quint32(m_card.size());
    publishToIs(QStringLiteral("%1.%2").arg(m_daqServer, name()), QStringLiteral("FrontEndStatus"),
                           [=](is::Object &obj) {
                               obj.set<QString>(QStringLiteral("host"), QStringLiteral("localhost"));
                               obj.set<qint64>(QStringLiteral("pid"), QCoreApplication::applicationPid());
                               obj.set<is::Time>(QStringLiteral("updateTime"), is::Time::currentTime());
                               obj.set<quint32>(QStringLiteral("registers"), regs);
                               obj.set<bool>(QStringLiteral("configured"), conf);
                               obj.set<bool>(QStringLiteral("triggerEnabled"), trig);
                               obj.set<quint64>(QStringLiteral("checks"), checks);
                               obj.set<quint64>(QStringLiteral("upsets"), upsets);
                               obj.set<float>(QStringLiteral("temperature"), float(temperature));
                           });
}

} // namespace dialog::daq
