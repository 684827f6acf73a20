// The histograms dialog-monitor fills from one sampler's samples: event size, per-channel
// occupancy and the front-end's 2D hit map, as IS Histogram1D / Histogram2D objects.
#pragma once

#include "dialog/is/object.h"
#include "dialog/sampling.h"

#include <QList>

namespace dialog::monitor {

/// Binning of the histograms (the same for every readout, so that IS --sum can add them).
struct Binning
{
    int sizeBins = 128;
    double sizeMax = 4096; ///< bytes; the size histogram covers [0, sizeMax)
    int mapWidth = 16;     ///< hit map: channel c at (c % mapWidth, c / mapWidth)
};

/// Hits of the simulated front-end: each 32-bit payload word of an event (after the 16-byte header,
/// before the 8-byte trailer) is a hit whose low 8 bits are the channel.
constexpr int Channels = 256;
constexpr int EventHeaderBytes = 16;
constexpr int EventTrailerBytes = 8;

class EventHistograms
{
public:
    explicit EventHistograms(const Binning &binning = {});

    /// Enters the event of @p sample: its size, and one entry per hit.
    void fill(const sampling::Sample &sample);
    /// Empties every histogram (a new run).
    void reset();
    quint64 events() const { return m_events; }
    const QList<double> &occupancy() const { return m_occupancy; }

    is::Object eventSize(const is::TypeRegistry &types) const;
    is::Object channelOccupancy(const is::TypeRegistry &types) const;
    is::Object hitMap(const is::TypeRegistry &types) const;

private:
    Binning m_binning;
    QList<double> m_sizes, m_occupancy, m_map;
    quint64 m_events = 0, m_hits = 0;
};

} // namespace dialog::monitor
