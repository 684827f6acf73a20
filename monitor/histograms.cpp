#include "histograms.h"

#include <QtEndian>

namespace dialog::monitor {

namespace {

is::Object histogram1D(const is::TypeRegistry &types, const QString &title, double low, double high,
                       const QList<double> &contents, quint64 entries)
{
    is::Object h = is::Object::create(types, QStringLiteral("Histogram1D"));
    h.set(QStringLiteral("title"), title);
    h.set(QStringLiteral("xLow"), low);
    h.set(QStringLiteral("xHigh"), high);
    h.set(QStringLiteral("bins"), quint32(contents.size()));
    h.set(QStringLiteral("contents"), contents);
    h.set(QStringLiteral("entries"), entries);
    return h;
}

} // namespace

EventHistograms::EventHistograms(const Binning &binning) : m_binning(binning)
{
    reset();
}

void EventHistograms::reset()
{
    m_sizes = QList<double>(m_binning.sizeBins, 0.0);
    m_occupancy = QList<double>(Channels, 0.0);
    const int rows = (Channels + m_binning.mapWidth - 1) / m_binning.mapWidth;
    m_map = QList<double>(m_binning.mapWidth * rows, 0.0);
    m_events = m_hits = 0;
}

void EventHistograms::fill(const sampling::Sample &sample)
{
    const qsizetype size = sample.data.size();
    const int bin = int(double(size) / m_binning.sizeMax * m_binning.sizeBins);
    m_sizes[qBound(0, bin, m_binning.sizeBins - 1)] += 1; // overflow in the last bin
    ++m_events;
    const uchar *p = reinterpret_cast<const uchar *>(sample.data.constData());
    for (qsizetype at = EventHeaderBytes; at + 4 <= size - EventTrailerBytes; at += 4) {
        const int channel = int(qFromLittleEndian<quint32>(p + at) & 0xff);
        m_occupancy[channel] += 1;
        m_map[channel] += 1; // row-major with x = channel % width: the channel is the cell's index
        ++m_hits;
    }
}

is::Object EventHistograms::eventSize(const is::TypeRegistry &types) const
{
    return histogram1D(types, QStringLiteral("Event size (bytes)"), 0, m_binning.sizeMax, m_sizes, m_events);
}

is::Object EventHistograms::channelOccupancy(const is::TypeRegistry &types) const
{
    return histogram1D(types, QStringLiteral("Hits per channel"), 0, Channels, m_occupancy, m_hits);
}

is::Object EventHistograms::hitMap(const is::TypeRegistry &types) const
{
    is::Object h = is::Object::create(types, QStringLiteral("Histogram2D"));
    const int rows = int(m_map.size()) / m_binning.mapWidth;
    h.set(QStringLiteral("title"), QStringLiteral("Hit map (channel % %1, channel / %1)").arg(m_binning.mapWidth));
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), double(m_binning.mapWidth));
    h.set(QStringLiteral("xBins"), quint32(m_binning.mapWidth));
    h.set(QStringLiteral("yLow"), 0.0);
    h.set(QStringLiteral("yHigh"), double(rows));
    h.set(QStringLiteral("yBins"), quint32(rows));
    h.set(QStringLiteral("contents"), m_map);
    h.set(QStringLiteral("entries"), m_hits);
    return h;
}

} // namespace dialog::monitor
