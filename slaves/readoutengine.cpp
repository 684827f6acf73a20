#include "readoutengine.h"

#include <QDateTime>
#include <QDir>
#include <chrono>
#include <cmath>
#include <cstring>

namespace dialog::daq {

namespace event {

namespace {
inline quint64 mix(quint64 x)
{
    // splitmix64: a cheap, well-spread function of the event number
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
} // namespace

int sizeOf(quint64 number, int mean)
{
    const int lo = mean - mean / 4;
    const int span = qMax(1, mean / 2);
    const int size = lo + int(mix(number) % quint64(span));
    return qMax(HeaderBytes + TrailerBytes + 8, size & ~3);
}

bool parseChannels(const QString &text, ChannelSet *out, QString *error)
{
    ChannelSet set;
    for (const QString &item : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int c = item.trimmed().toInt(&ok);
        if (!ok || c < 0 || c >= Channels) {
            *error = QStringLiteral("invalid channel '%1' (0..%2)").arg(item).arg(Channels - 1);
            return false;
        }
        set.set(size_t(c));
    }
    if (out)
        *out = set;
    return true;
}

void fill(char *out, quint64 number, int size, const ChannelSet &dead)
{
    const quint32 magic = Magic, sz = quint32(size);
    std::memcpy(out, &magic, 4);
    std::memcpy(out + 4, &sz, 4);
    std::memcpy(out + 8, &number, 8);
    const int words = (size - HeaderBytes - TrailerBytes) / 4;
    quint64 x = mix(number), sum = 0;
    char *p = out + HeaderBytes;
    for (int i = 0; i < words; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        quint32 w = quint32(x);
        if (dead.any() && !dead.all())
            while (dead.test(w & 0xff))
                w = (w & ~0xffu) | ((w + 1) & 0xffu); // the hit goes to the next live channel
        std::memcpy(p + 4 * i, &w, 4);
        sum += w;
    }
    const quint64 checksum = sum ^ number;
    std::memcpy(out + size - TrailerBytes, &checksum, 8);
}

quint32 triggerOf(quint64 number)
{
    switch (number % 10) {
    case 0:
        return sampling::Calibration;
    case 5:
        return sampling::Random;
    default:
        return sampling::Physics;
    }
}

int check(const char *in, qsizetype available, quint64 expected, QString *why)
{
    if (available < HeaderBytes + TrailerBytes) {
        *why = QStringLiteral("event %1: truncated block").arg(expected);
        return -1;
    }
    quint32 magic, size;
    quint64 number;
    std::memcpy(&magic, in, 4);
    std::memcpy(&size, in + 4, 4);
    std::memcpy(&number, in + 8, 8);
    if (magic != Magic) {
        *why = QStringLiteral("event %1: bad magic 0x%2").arg(expected).arg(magic, 8, 16, QLatin1Char('0'));
        return -1;
    }
    if (size < quint32(HeaderBytes + TrailerBytes) || size > quint64(available) || size % 4) {
        *why = QStringLiteral("event %1: bad size %2").arg(expected).arg(size);
        return -1;
    }
    if (number != expected) {
        *why = QStringLiteral("event %1: out of sequence (got %2)").arg(expected).arg(number);
        return int(size);
    }
    const int words = int(size - HeaderBytes - TrailerBytes) / 4;
    quint64 sum = 0;
    const char *p = in + HeaderBytes;
    for (int i = 0; i < words; ++i) {
        quint32 w;
        std::memcpy(&w, p + 4 * i, 4);
        sum += w;
    }
    quint64 checksum;
    std::memcpy(&checksum, in + size - TrailerBytes, 8);
    if (checksum != (sum ^ number)) {
        *why = QStringLiteral("event %1: checksum mismatch").arg(expected);
        return -int(size) - 2; // size known: the caller can skip the event
    }
    return int(size);
}

} // namespace event

ReadoutEngine::ReadoutEngine(const ReadoutConfig &config, const QString &name)
    : m_config(config), m_name(name)
{
}

ReadoutEngine::~ReadoutEngine()
{
    stop();
}

bool ReadoutEngine::start(quint32 runNumber, QString *error)
{
    if (m_running)
        return true;
    m_events = m_bytes = m_blocks = m_errors = m_written = 0;
    m_runNumber = runNumber;
    {
        std::lock_guard lock(m_errorMutex);
        m_recentErrors.clear();
    }
    m_file.reset();
    if (!m_config.outputDir.isEmpty()) {
        if (!QDir().mkpath(m_config.outputDir)) {
            *error = QStringLiteral("cannot create output directory %1").arg(m_config.outputDir);
            return false;
        }
        m_file = std::make_unique<QFile>(
            QDir(m_config.outputDir)
                .filePath(
                    QStringLiteral("run%1_%2.raw").arg(runNumber, 6, 10, QLatin1Char('0')).arg(m_name)));
        if (!m_file->open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            *error = QStringLiteral("cannot open %1: %2").arg(m_file->fileName(), m_file->errorString());
            m_file.reset();
            return false;
        }
    }
    if (!event::parseChannels(m_config.deadChannels, &m_dead, error)) {
        m_file.reset();
        return false;
    }
    m_input = std::make_unique<BoundedQueue<Block>>(size_t(m_config.queueBlocks));
    m_output = std::make_unique<BoundedQueue<Block>>(size_t(m_config.queueBlocks));
    m_stopSource = false;
    m_paused = false;
    m_running = true;
    for (int i = 0; i < m_config.threads; ++i)
        m_workers.emplace_back([this] { workerLoop(); });
    if (m_file)
        m_writer = std::thread([this] { writerLoop(); });
    m_source = std::thread([this] { sourceLoop(); });
    return true;
}

void ReadoutEngine::setPaused(bool paused)
{
    m_paused = paused;
}

void ReadoutEngine::stop()
{
    if (!m_running)
        return;
    m_stopSource = true;
    if (m_source.joinable())
        m_source.join();
    m_input->close(); // workers drain what is queued, then end
    for (std::thread &t : m_workers)
        t.join();
    m_workers.clear();
    m_output->close();
    if (m_writer.joinable())
        m_writer.join();
    if (m_file) {
        m_file->flush();
        m_file->close();
    }
    m_inSpill = false;
    m_running = false;
}

void ReadoutEngine::sourceLoop()
{
    using Clock = std::chrono::steady_clock;
    const auto begin = Clock::now();
    const double cycle = m_config.spillS + m_config.offS;
    quint64 next = 1;
    // Pacing: the time at which the next block may be produced (only when a rate is set).
    auto due = Clock::now();
    const auto blockPeriod =
        m_config.rateHz > 0
            ? std::chrono::duration<double>(double(m_config.blockEvents) / double(m_config.rateHz))
            : std::chrono::duration<double>(0);
    while (!m_stopSource) {
        const double t = std::chrono::duration<double>(Clock::now() - begin).count();
        const bool spill = m_config.offS <= 0 || std::fmod(t, cycle) < m_config.spillS;
        m_inSpill = spill && !m_paused;
        if (!spill || m_paused) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            due = Clock::now();
            continue;
        }
        if (m_config.rateHz > 0) {
            const auto now = Clock::now();
            if (now < due) {
                std::this_thread::sleep_for(
                    std::min<Clock::duration>(due - now, std::chrono::milliseconds(20)));
                continue;
            }
            due += std::chrono::duration_cast<Clock::duration>(blockPeriod);
            if (Clock::now() - due > std::chrono::milliseconds(200))
                due = Clock::now(); // do not burst to catch up after a stall
        }
        Block b;
        b.firstEvent = next;
        b.spill = m_config.offS <= 0 ? 0 : quint32(t / cycle) + 1;
        b.timeUs = QDateTime::currentMSecsSinceEpoch() * 1000;
        b.count = m_config.blockEvents;
        qsizetype total = 0;
        for (int i = 0; i < b.count; ++i)
            total += event::sizeOf(next + quint64(i), m_config.eventSize);
        b.data.resize(total);
        char *p = b.data.data();
        for (int i = 0; i < b.count; ++i) {
            const quint64 n = next + quint64(i);
            const int size = event::sizeOf(n, m_config.eventSize);
            event::fill(p, n, size, m_dead);
            if (m_config.corruptEvery > 0 && n % quint64(m_config.corruptEvery) == 0)
                p[event::HeaderBytes] ^= 0x5a; // a bit error in the payload
            p += size;
        }
        next += quint64(b.count);
        if (!m_input->push(std::move(b)))
            break;
    }
    m_inSpill = false;
}

void ReadoutEngine::workerLoop()
{
    while (auto b = m_input->pop()) {
        const char *p = b->data.constData();
        qsizetype left = b->data.size();
        quint64 errors = 0;
        for (int i = 0; i < b->count; ++i) {
            QString why;
            int size = event::check(p, left, b->firstEvent + quint64(i), &why);
            if (!why.isEmpty()) {
                ++errors;
                recordError(why);
            }
            if (size < -1)
                size = -size - 2;
            if (size < 0)
                break; // the rest of the block cannot be parsed
            if (m_sampler) {
                const quint64 n = b->firstEvent + quint64(i);
                sampling::Header h;
                h.eventNumber = n;
                h.triggerType = event::triggerOf(n);
                h.run = m_runNumber;
                h.spill = b->spill;
                h.timeUs = b->timeUs;
                m_sampler->offer(h, p, size);
            }
            p += size;
            left -= size;
        }
        m_events += quint64(b->count);
        m_bytes += quint64(b->data.size());
        m_blocks += 1;
        if (errors)
            m_errors += errors;
        if (m_file)
            m_output->push(std::move(*b));
    }
}

void ReadoutEngine::writerLoop()
{
    while (auto b = m_output->pop()) {
        if (m_file->write(b->data) != b->data.size())
            recordError(
                QStringLiteral("write to %1 failed: %2").arg(m_file->fileName(), m_file->errorString()));
        else
            m_written += quint64(b->data.size());
    }
}

void ReadoutEngine::recordError(const QString &why)
{
    std::lock_guard lock(m_errorMutex);
    m_recentErrors.append(why);
    while (m_recentErrors.size() > 10)
        m_recentErrors.removeFirst();
}

ReadoutEngine::Stats ReadoutEngine::stats() const
{
    Stats s;
    s.events = m_events;
    s.bytes = m_bytes;
    s.blocks = m_blocks;
    s.errors = m_errors;
    s.written = m_written;
    s.running = m_running;
    s.paused = m_paused;
    s.inSpill = m_inSpill;
    if (m_input) {
        s.inputDepth = int(m_input->size());
        s.outputDepth = int(m_output->size());
        s.queueCapacity = int(m_input->capacity());
        s.sourceWaits = m_input->waits();
    }
    if (m_file)
        s.outputFile = m_file->fileName();
    std::lock_guard lock(m_errorMutex);
    s.recentErrors = m_recentErrors;
    return s;
}

} // namespace dialog::daq
