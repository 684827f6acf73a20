// dialog::sampling: samples of a data-taking process's events for monitoring. A Sampler (in the
// readout) offers every event; consumers ask it for samples by criteria and receive them as a
// stream. The producer never waits for a consumer: a sample a consumer cannot take is lost for it
// and counted on both sides.
#pragma once

#include "dialog/status.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <memory>

namespace dialog {

class Client;

/// Samples of events for monitoring: Sampler (the producer's side), SampleReader (a consumer's).
namespace sampling {

/// The trigger types (event kinds) the toolkit names; any other number is accepted as is.
enum TriggerType : quint32
{
    Physics = 1,     ///< an event of the physics trigger
    Calibration = 2, ///< a calibration event
    Random = 3,      ///< a random trigger
};

/// "physics", "calibration", "random", or the number.
QString triggerName(quint32 type);

/// What a sample says about its event, besides the event's bytes.
struct Header
{
    quint64 eventNumber = 0; ///< the event's number in its run
    quint32 triggerType = 0; ///< TriggerType or another number
    quint32 run = 0;     ///< the run number (0: not in a run)
    quint32 spill = 0;   ///< spill number of the run (from 1), 0 when the beam is continuous
    qint64 timeUs = 0;   ///< when the event was read, µs since the epoch (UTC)
    quint64 sequence = 0; ///< this consumer's sample number, from 1: a gap is a sample lost for it
    quint64 dropped = 0;  ///< samples the sampler could not send to this consumer so far
};

/// One sampled event: its header and its bytes (implicitly shared: cheap to copy and to queue).
struct Sample
{
    Header header;   ///< what the sampler says about the event
    QByteArray data; ///< the event's bytes, as the producer offered them

    /// Size of the encoded header.
    static constexpr int HeaderBytes = 56;
    /// The wire form: a fixed little-endian header of HeaderBytes ("SMP1", its length, the fields of
    /// Header), then the event's bytes.
    QByteArray encode() const;
    /// Ok, or BadRequest for bytes that are not a sample (short, wrong magic or header length).
    static Status decode(const QByteArray &bytes, Sample *out);
};

/// What a consumer asks for. The text form is items "key=value" separated by spaces or ';':
///   trigger=physics,calibration  (or kind=; names or numbers, any of them; default: every type)
///   spill=N      (events of spill N only; default: every spill)
///   every=N      (one in N of the events that match the above; default 1)
///   rate=R       (at most R samples per second; default: no limit)
///   count=N      (N samples, then the stream ends; default: no end)
struct Criteria
{
    QList<quint32> triggerTypes; ///< empty: any
    qint64 spill = -1;           ///< -1: any
    quint64 everyNth = 1;        ///< one in this many of the events that pass the above
    double maxRateHz = 0;        ///< at most this many samples a second; 0: no limit
    quint64 count = 0;           ///< this many samples, then the stream ends; 0: no end

    /// Ok, or BadRequest naming the item: an unknown key ("unknown criterion 'foo' (known: …)"),
    /// a value out of range or not a number, an unknown trigger name. @p out untouched on failure.
    static Status parse(const QString &text, Criteria *out);
    /// The text form, which parse() reads back.
    QString toString() const;
    /// True if an event of @p triggerType in @p spill passes the trigger and spill criteria.
    bool selects(quint32 triggerType, quint32 spill) const;
};

/// The service a sampler of @p name publishes and takes requests on: "<name>.Sampler".
QString samplerService(const QString &name);

/// Offers a process's events to the consumers that ask for them. It publishes
/// samplerService(name) (its figures as JSON, every second) and answers requests on it: a consumer
/// opens a stream with its criteria (an error reply for bad criteria), closes it, or asks for the
/// figures. Lives in the Client's thread; offer() is called from any thread.
class Sampler : public QObject
{
    Q_OBJECT
public:
    /// Figures of one consumer.
    struct ConsumerFigures
    {
        QString consumer; ///< its process name
        QString channel;  ///< the channel its samples go to
        QString criteria; ///< its criteria, in the text form
        quint64 matched = 0; ///< events that passed the trigger and spill criteria
        quint64 sent = 0;    ///< samples handed to the stream
        quint64 dropped = 0; ///< samples selected but not sent: the consumer's queue was full
    };

    /// Publishes samplerService(@p name) on @p client (which must outlive the sampler).
    Sampler(Client *client, const QString &name, QObject *parent = nullptr);
    ~Sampler() override;

    /// True while at least one consumer is open: without one, offer() returns at once.
    bool hasConsumers() const;
    /// Offers one event. Thread-safe and never blocks: each consumer whose criteria select it gets
    /// a copy on its stream, or, when the consumer's queue is full, counts it as dropped.
    void offer(const Header &header, const char *data, qsizetype size);
    /// Events offered so far.
    quint64 offeredCount() const;
    /// The open consumers.
    QList<ConsumerFigures> consumers() const;
    /// Everything above as one JSON object (what the service publishes).
    QJsonObject figures() const;

private:
    struct Private;
    std::unique_ptr<Private> const d;
};

/// Receives samples from a sampler, by criteria: opens a stream to samplerService(sampler) and emits
/// every sample. Opens again by itself when the sampler restarts. Lives in the Client's thread and
/// emits its signals there.
class SampleReader : public QObject
{
    Q_OBJECT
public:
    /// Samples of @p sampler (a process name: the service samplerService(@p sampler)) by @p criteria,
    /// through @p client (which must outlive the reader). Nothing is asked before open().
    SampleReader(Client *client, const QString &sampler, const Criteria &criteria, QObject *parent = nullptr);
    /// Closes the stream (the sampler is told, and forgets this consumer).
    ~SampleReader() override;

    /// Asks the sampler for the stream (again). @p timeoutMs bounds the wait for its answer.
    void open(int timeoutMs = 5000);
    /// Samples received (and emitted) so far.
    quint64 receivedCount() const;
    /// Samples this reader did not get: the gaps in their sequence numbers.
    quint64 lostCount() const;
    /// The sampler's count of samples it could not send to this reader (from the last sample).
    quint64 droppedBySampler() const;

Q_SIGNALS:
    /// Emitted once per sample received, in the Client's thread.
    void sampleReceived(const dialog::sampling::Sample &sample);
    /// Emitted once when the sampler accepted the stream (again after each re-opening).
    void opened();
    /// Emitted once when Criteria::count samples were received.
    void finished();
    /// Emitted when the sampler refused the stream (bad criteria: BadRequest with its reason) or
    /// did not answer (Timeout, ProviderLost, NotConnected …).
    void errorOccurred(const dialog::Status &status);

private:
    struct Private;
    std::unique_ptr<Private> const d;
};

} // namespace sampling
} // namespace dialog
