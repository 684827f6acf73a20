// dialogctl sample READOUT: events of a sampler (a readout slave), by criteria, printed or written
// to a file.
#include "clientsetup.h"

#include "dialog/sampling.h"

#include <QDateTime>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>
#include <cstdio>

namespace dialog::tool {

namespace {

QByteArray describe(const sampling::Sample &s, bool json)
{
    const sampling::Header &h = s.header;
    if (json)
        return QJsonDocument(QJsonObject{{QStringLiteral("event"), qint64(h.eventNumber)},
                                         {QStringLiteral("trigger"), sampling::triggerName(h.triggerType)},
                                         {QStringLiteral("run"), qint64(h.run)},
                                         {QStringLiteral("spill"), qint64(h.spill)},
                                         {QStringLiteral("time_us"), h.timeUs},
                                         {QStringLiteral("sequence"), qint64(h.sequence)},
                                         {QStringLiteral("dropped"), qint64(h.dropped)},
                                         {QStringLiteral("size"), s.data.size()},
                                         {QStringLiteral("head"), QString::fromLatin1(s.data.left(16).toHex())}})
            .toJson(QJsonDocument::Compact);
    return QStringLiteral("%1 event %2 %3 spill %4 (%5 bytes) %6")
        .arg(QDateTime::fromMSecsSinceEpoch(h.timeUs / 1000).toString(QStringLiteral("HH:mm:ss.zzz")))
        .arg(h.eventNumber)
        .arg(sampling::triggerName(h.triggerType))
        .arg(h.spill)
        .arg(s.data.size())
        .arg(QString::fromLatin1(s.data.left(16).toHex(' ')))
        .toUtf8();
}

} // namespace

int sample(const QStringList &args)
{
    const QString verb = QStringLiteral("sample");
    qint64 count = 0, timeout = 0;
    QString criteriaText, out;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Asks a sampler (a readout slave: READOUT is its process name) for samples of its events and "
        "prints one line per event, or writes the events' bytes to a file. Criteria: items key=value "
        "separated by spaces or ';': trigger=physics,calibration,random (or kind=), spill=N, every=N, "
        "rate=R (per second), count=N."));
    p.addPositional(QStringLiteral("sampler"), QStringLiteral("Process name of the sampler."));
    p.add({Option::text(QStringLiteral("criteria"), QStringLiteral("text"),
                        QStringLiteral("What to sample (default: every event)."), &criteriaText),
           Option::integer(QStringLiteral("count"), QStringLiteral("n"),
                           QStringLiteral("Exit after N samples (default: run until interrupted)."), &count, 1,
                           qint64(1) << 62),
           Option::text(QStringLiteral("out"), QStringLiteral("file"),
                        QStringLiteral("Write the events' bytes to FILE, one after the other, and print "
                                       "only the summary."),
                        &out),
           Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                            QStringLiteral("Fail if the samples did not arrive within this time."), &timeout,
                            OptionUnit::Milliseconds, 1, 86400000),
           Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per sample."))});
    if (!parse(p, args))
        return 1;
    if (p.positionalArguments().size() != 1)
        return fail(verb, QStringLiteral("expected exactly one sampler (see --help)"));
    sampling::Criteria criteria;
    if (const Status s = sampling::Criteria::parse(criteriaText, &criteria); !s.isOk())
        return fail(verb, s.message());
    if (count > 0)
        criteria.count = quint64(count);
    QFile file(out);
    if (!out.isEmpty() && !file.open(QIODevice::WriteOnly))
        return fail(verb, QStringLiteral("cannot open %1: %2").arg(out, file.errorString()));
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    const bool json = p.isSet(QStringLiteral("json"));
    const QString sampler = p.positionalArguments().first();
    int rc = 0;
    sampling::SampleReader reader(client.get(), sampler, criteria);
    QObject::connect(&reader, &sampling::SampleReader::sampleReceived, client.get(),
                     [&](const sampling::Sample &s) {
                         if (file.isOpen()) {
                             file.write(s.data);
                             return;
                         }
                         const QByteArray line = describe(s, json) + '\n';
                         std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
                         std::fflush(stdout);
                     });
    QObject::connect(&reader, &sampling::SampleReader::finished, client.get(), [] { QCoreApplication::quit(); });
    QObject::connect(&reader, &sampling::SampleReader::errorOccurred, client.get(), [&](const Status &s) {
        rc = fail(verb, QStringLiteral("%1: %2").arg(sampler, s.message()));
        QCoreApplication::quit();
    });
    if (timeout > 0)
        QTimer::singleShot(int(timeout), client.get(), [&] {
            rc = fail(verb, QStringLiteral("%1 of %2 sample(s) from %3 received within %4 ms")
                                .arg(reader.receivedCount())
                                .arg(count > 0 ? QString::number(count) : QStringLiteral("the"))
                                .arg(sampler)
                                .arg(timeout));
            QCoreApplication::quit();
        });
    reader.open(timeout > 0 ? int(timeout) : 5000);
    QCoreApplication::exec();
    if (file.isOpen() || !json)
        std::fprintf(stderr, "%s: %llu sample(s) received, %llu lost (%llu dropped by the sampler)\n",
                     qPrintable(program(verb)), static_cast<unsigned long long>(reader.receivedCount()),
                     static_cast<unsigned long long>(reader.lostCount()),
                     static_cast<unsigned long long>(reader.droppedBySampler()));
    return rc;
}

} // namespace dialog::tool
