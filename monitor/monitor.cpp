#include "monitor.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcMonitor, "dialog.monitor", QtInfoMsg)

namespace dialog::monitor {

Monitor::Monitor(Client *client, const MonitorOptions &options, QObject *parent)
    : QObject(parent), m_client(client), m_options(options), m_dict(client)
{
    for (const QString &readout : options.readouts) {
        Source &s = m_sources[readout];
        s.histograms = EventHistograms(options.binning);
        s.reader = std::make_unique<sampling::SampleReader>(client, readout, options.criteria);
        connect(s.reader.get(), &sampling::SampleReader::sampleReceived, this,
                [this, &s](const sampling::Sample &sample) { onSample(s, sample); });
        connect(s.reader.get(), &sampling::SampleReader::opened, this,
                [readout] { qCInfo(lcMonitor).noquote() << "sampling" << readout; });
        connect(s.reader.get(), &sampling::SampleReader::errorOccurred, this, [this, readout](const Status &st) {
            qCWarning(lcMonitor).noquote() << readout << st.toString();
            // Its sampler is not there yet (or refused): asked again at the next publication.
            QTimer::singleShot(m_options.publishMs, this, [this, readout] { m_sources[readout].reader->open(); });
        });
    }
    m_timer.setInterval(options.publishMs);
    connect(&m_timer, &QTimer::timeout, this, &Monitor::publish);
}

Monitor::~Monitor() = default;

void Monitor::start()
{
    for (auto &[name, s] : m_sources)
        s.reader->open();
    m_timer.start();
}

void Monitor::onSample(Source &s, const sampling::Sample &sample)
{
    if (sample.header.run != s.run) { // a new run: new histograms
        s.histograms.reset();
        s.run = sample.header.run;
    }
    s.histograms.fill(sample);
    s.changed = true;
}

void Monitor::publish()
{
    for (auto &[readout, s] : m_sources) {
        if (!s.changed)
            continue;
        s.changed = false;
        const QString prefix = m_options.isServer + QLatin1Char('.') + readout + QLatin1Char('.');
        const is::TypeRegistry &types = m_dict.types();
        const std::pair<QString, is::Object> objects[] = {
            {prefix + QStringLiteral("eventSize"), s.histograms.eventSize(types)},
            {prefix + QStringLiteral("occupancy"), s.histograms.channelOccupancy(types)},
            {prefix + QStringLiteral("hitMap"), s.histograms.hitMap(types)}};
        for (const auto &[name, object] : objects)
            m_dict.update(name, object, is::Dictionary::UpdateMode::CreateIfMissing, [name](const Status &st) {
                if (!st.isOk())
                    qCWarning(lcMonitor).noquote() << "cannot write" << name << st.toString();
            });
    }
}

} // namespace dialog::monitor
