// The simulated multi-threaded readout of a readout slave: a data source producing events in
// blocks with a spill cycle, N processing threads checking every event, an optional writer; bounded
// queues between the stages so a slow stage slows the source and nothing is lost.
#pragma once

#include "boundedqueue.h"

#include "dialog/sampling.h"

#include <QByteArray>
#include <QFile>
#include <QList>
#include <QString>
#include <QStringList>
#include <atomic>
#include <bitset>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dialog::daq {

struct ReadoutConfig
{
    int threads = 10;        ///< processing threads
    int blockEvents = 512;   ///< events per block
    int eventSize = 1024;    ///< mean event size in bytes (sizes vary by +-25 %)
    double spillS = 5.0;     ///< beam on
    double offS = 2.0;       ///< beam off between spills (0: continuous)
    qint64 rateHz = 0;       ///< event rate during the spill (0: as fast as the chain goes)
    int queueBlocks = 32;    ///< capacity of each queue, in blocks
    QString outputDir;       ///< if set, events are written to OUTPUTDIR/run<N>_<name>.raw
    qint64 corruptEvery = 0; ///< for tests: corrupt one event in this many (0: never)
    QString deadChannels;    ///< for tests: front-end channels that never fire ("17,42"), see event::Channels
};

/// Event layout: u32 magic, u32 size (whole event), u64 event number, payload words, u64 checksum.
/// Each payload word is a hit of the simulated front-end: its low 8 bits are the channel (0..255).
namespace event {
constexpr int Channels = 256;
using ChannelSet = std::bitset<Channels>;
/// Reads "17,42" into @p out (may be null: only checks); false with @p error for a channel that is not in 0..255.
bool parseChannels(const QString &text, ChannelSet *out, QString *error);
constexpr quint32 Magic = 0xD1A10E7E;
constexpr int HeaderBytes = 16;
constexpr int TrailerBytes = 8;
/// Size of event @p number for a mean of @p mean bytes (a multiple of 4, at least 32).
int sizeOf(quint64 number, int mean);
/// Writes event @p number of @p size bytes at @p out; no hit on a channel of @p dead.
void fill(char *out, quint64 number, int size, const ChannelSet &dead = {});
/// Trigger type of event @p number: one in ten is a calibration event, one in ten a random
/// trigger, the rest physics (sampling::TriggerType).
quint32 triggerOf(quint64 number);
/// Checks the event at @p in (at most @p available bytes), expected to be number @p expected.
/// Returns its size, or -1 with @p why set.
int check(const char *in, qsizetype available, quint64 expected, QString *why);
} // namespace event

class ReadoutEngine
{
public:
    struct Stats
    {
        quint64 events = 0, bytes = 0, blocks = 0, errors = 0, written = 0;
        quint64 sourceWaits = 0; ///< times the source found the processing queue full
        int inputDepth = 0, outputDepth = 0, queueCapacity = 0;
        bool running = false, paused = false, inSpill = false;
        QStringList recentErrors;
        QString outputFile;
    };

    ReadoutEngine(const ReadoutConfig &config, const QString &name);
    ~ReadoutEngine();

    /// Starts the threads for run @p runNumber. False with @p error if the output file cannot be opened.
    bool start(quint32 runNumber, QString *error);
    void setPaused(bool paused);
    /// Stops the source, lets the workers finish every queued block, joins all threads.
    void stop();
    bool isRunning() const { return m_running; }
    /// Offers every checked event to @p sampler (may be null; set before start()).
    void setSampler(sampling::Sampler *sampler) { m_sampler = sampler; }
    Stats stats() const;
    const ReadoutConfig &config() const { return m_config; }

private:
    struct Block
    {
        quint64 firstEvent = 0;
        int count = 0;
        quint32 spill = 0; ///< from 1; 0 with a continuous beam
        qint64 timeUs = 0; ///< when the block was read
        QByteArray data;
    };
    void sourceLoop();
    void workerLoop();
    void writerLoop();
    void recordError(const QString &why);

    ReadoutConfig m_config;
    QString m_name;
    event::ChannelSet m_dead;
    quint32 m_runNumber = 0;
    sampling::Sampler *m_sampler = nullptr;
    std::unique_ptr<BoundedQueue<Block>> m_input, m_output;
    std::thread m_source, m_writer;
    std::vector<std::thread> m_workers;
    std::unique_ptr<QFile> m_file;
    std::atomic<bool> m_running{false}, m_paused{false}, m_stopSource{false}, m_inSpill{false};
    std::atomic<quint64> m_events{0}, m_bytes{0}, m_blocks{0}, m_errors{0}, m_written{0};
    mutable std::mutex m_errorMutex;
    QStringList m_recentErrors;
};

} // namespace dialog::daq
