#include "readoutslave.h"
#include "slaveoptions.h"

#include "dialog/is/object.h"
#include "dialog/is/time.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>

namespace dialog::daq {

ReadoutSlave::ReadoutSlave(const rc::SlaveOptions &options, const ReadoutConfig &config,
                           const QString &daqServer, QObject *parent)
    : rc::Slave(options, parent), m_config(config), m_daqServer(daqServer), m_sampler(client(), name())
{
    m_status.setInterval(1000);
    connect(&m_status, &QTimer::timeout, this, &ReadoutSlave::publishStatus);
    m_status.start();
    m_sinceLast.start();
    publishStatus();
}

ReadoutSlave::~ReadoutSlave()
{
    stopEngine();
}

void ReadoutSlave::stopEngine()
{
    if (m_engine && m_engine->isRunning())
        m_engine->stop();
}

void ReadoutSlave::perform(rc::Transition t, const rc::TransitionRequest &params, Done done)
{
    switch (t) {
    case rc::Transition::Configure:
        if (!params.parameters.isEmpty()) {
            // The configuration database's parameters, from the version the master configures.
            ReadoutConfig c = m_config;
            if (const Status st = applyParameters(params.parameters, &c); !st.isOk())
                return done(Status(st.code(), QStringLiteral("parameters from the configuration database: ") +
                                                  st.message()));
            m_config = c;
        }
        m_engine = std::make_unique<ReadoutEngine>(m_config, name());
        m_engine->setSampler(&m_sampler);
        log(Severity::Info,
            QStringLiteral(
                "readout configured: %1 threads, blocks of %2 events of ~%3 B, spill %4 s / off %5 s")
                .arg(m_config.threads)
                .arg(m_config.blockEvents)
                .arg(m_config.eventSize)
                .arg(m_config.spillS)
                .arg(m_config.offS));
        break;
    case rc::Transition::Start: {
        m_runNumber = params.runNumber;
        QString error;
        if (!m_engine->start(m_runNumber, &error))
            return done(Status(Status::Code::Failed, error));
        m_runStartMs = rc::nowMs();
        m_lastEvents = m_lastBytes = m_lastErrors = 0;
        m_peakRateHz = 0;
        m_sinceLast.restart();
        break;
    }
    case rc::Transition::Pause:
        m_engine->setPaused(true);
        break;
    case rc::Transition::Resume:
        m_engine->setPaused(false);
        break;
    case rc::Transition::Stop: {
        stopEngine();
        const ReadoutEngine::Stats s = m_engine->stats();
        log(Severity::Info,
            QStringLiteral("run %1 stopped: %2 events, %3 MB, %4 errors%5")
                .arg(m_runNumber)
                .arg(s.events)
                .arg(double(s.bytes) / 1e6, 0, 'f', 1)
                .arg(s.errors)
                .arg(s.outputFile.isEmpty() ? QString() : QStringLiteral(", written to ") + s.outputFile));
        break;
    }
    case rc::Transition::Unconfigure:
    case rc::Transition::Reset:
        stopEngine();
        m_engine.reset();
        break;
    }
    done(Status());
    publishStatus();
}

void ReadoutSlave::addStateExtras(rc::StateRecord &record) const
{
    record.runNumber = m_runNumber;
}

void ReadoutSlave::publishStatus()
{
    const ReadoutEngine::Stats s = m_engine ? m_engine->stats() : ReadoutEngine::Stats();
    const double dt = qMax<qint64>(1, m_sinceLast.restart()) / 1000.0;
    if (!s.running) {
        m_rateHz = m_mbPerS = 0;
    } else if (s.events >= m_lastEvents) {
        m_rateHz = double(s.events - m_lastEvents) / dt;
        m_mbPerS = double(s.bytes - m_lastBytes) / dt / 1e6;
    }
    m_peakRateHz = qMax(m_peakRateHz, m_rateHz);
    if (s.errors > m_lastErrors && !s.recentErrors.isEmpty())
        log(Severity::Warning, QStringLiteral("%1 new consistency errors, last: %2")
                                   .arg(s.errors - m_lastErrors)
                                   .arg(s.recentErrors.last()));
    m_lastEvents = s.events;
    m_lastBytes = s.bytes;
    m_lastErrors = s.errors;
    QJsonArray errors;
    for (const QString &e : s.recentErrors)
        errors.append(e);
    const QJsonObject o{{QStringLiteral("process"), name()},
                        {QStringLiteral("kind"), QStringLiteral("readout")},
                        {QStringLiteral("run_number"), qint64(m_runNumber)},
                        {QStringLiteral("running"), s.running},
                        {QStringLiteral("paused"), s.paused},
                        {QStringLiteral("in_spill"), s.inSpill},
                        {QStringLiteral("events"), qint64(s.events)},
                        {QStringLiteral("bytes"), qint64(s.bytes)},
                        {QStringLiteral("rate_hz"), qRound64(m_rateHz)},
                        {QStringLiteral("peak_rate_hz"), qRound64(m_peakRateHz)},
                        {QStringLiteral("mb_per_s"), qRound(m_mbPerS * 10) / 10.0},
                        {QStringLiteral("errors"), qint64(s.errors)},
                        {QStringLiteral("recent_errors"), errors},
                        {QStringLiteral("input_queue"), s.inputDepth},
                        {QStringLiteral("output_queue"), s.outputDepth},
                        {QStringLiteral("queue_capacity"), s.queueCapacity},
                        {QStringLiteral("source_waits"), qint64(s.sourceWaits)},
                        {QStringLiteral("written_bytes"), qint64(s.written)},
                        {QStringLiteral("threads"), m_config.threads},
                        {QStringLiteral("time_ms"), rc::nowMs()}};
    statusService()->update(QJsonDocument(o).toJson(QJsonDocument::Compact));
    if (!options().publishToIs || m_daqServer.isEmpty())
        return;
    const double rate = m_rateHz;
    // Event sizes are a function of the event number (event::sizeOf): the histogram samples the
    // events read since the last update (at most 2,000 of them, each standing for its share).
    // Sizes are multiples of 4 in [mean - mean/4, mean + mean/4): bins a multiple of 4 wide hold
    // the same number of possible sizes each (no comb pattern).
    const int mean = m_config.eventSize;
    const int first = (mean - mean / 4) & ~3, span = qMax(4, mean / 2);
    const int width = qMax(4, ((span / 40) + 3) & ~3);
    const int bins = (span + width - 1) / width;
    const double lo = first, hi = first + double(bins) * width;
    if (s.events < m_histogrammed || m_sizeHistogram.size() != bins) { // a new run
        m_sizeHistogram = QList<double>(bins, 0.0);
        m_histogrammed = 0;
    }
    const quint64 step = qMax<quint64>(1, (s.events - m_histogrammed) / 2000);
    for (quint64 n = m_histogrammed; n < s.events; n += step) {
        const int bin = qBound(0, (event::sizeOf(n, mean) - first) / width, bins - 1);
        m_sizeHistogram[bin] += double(qMin(step, s.events - n));
    }
    m_histogrammed = s.events;
    const QList<double> sizes = m_sizeHistogram;
    publishToIs(QStringLiteral("%1.%2").arg(m_daqServer, name()), QStringLiteral("ReadoutStats"),
                           [s, rate, sizes, lo, hi](is::Object &obj) {
                               obj.set<QString>(QStringLiteral("host"), QStringLiteral("localhost"));
                               obj.set<qint64>(QStringLiteral("pid"), QCoreApplication::applicationPid());
                               obj.set<is::Time>(QStringLiteral("updateTime"), is::Time::currentTime());
                               obj.set<quint64>(QStringLiteral("events"), s.events);
                               obj.set<quint64>(QStringLiteral("bytes"), s.bytes);
                               obj.set<double>(QStringLiteral("rate"), rate);
                               obj.set<QList<quint32>>(QStringLiteral("queueDepths"),
                                                       {quint32(s.inputDepth), quint32(s.outputDepth)});
                               obj.set<quint32>(QStringLiteral("errors"), quint32(s.errors));
                               obj.set<QList<QString>>(QStringLiteral("errorMessages"), s.recentErrors);
                               is::Object h = obj.get<is::Object>(QStringLiteral("eventSize"));
                               h.set<QString>(QStringLiteral("title"), QStringLiteral("Event size (bytes)"));
                               h.set<double>(QStringLiteral("xLow"), lo);
                               h.set<double>(QStringLiteral("xHigh"), hi);
                               h.set<quint32>(QStringLiteral("bins"), quint32(sizes.size()));
                               h.set<QList<double>>(QStringLiteral("contents"), sizes);
                               h.set<quint64>(QStringLiteral("entries"), s.events);
                               obj.set<is::Object>(QStringLiteral("eventSize"), h);
                           });
}

} // namespace dialog::daq
