// Event sampling with the real binaries: a readout slave (dialog-slave --kind readout) as the
// sampler, in-process SampleReaders and `dialogctl sample` as consumers. Criteria select what they
// say, several consumers share the sampler, bad criteria are refused with the reason, and a stopped
// or killed consumer loses samples (counted on both sides) while the readout goes on.
#include "dialog/rc/protocol.h"
#include "dialog/sampling.h"
#include "processfixture.h"

#include <QTemporaryDir>
#include <QtTest>
#include <optional>
#include <csignal>
#include <cstring>

using namespace dialog;
using namespace dialog::test;
using sampling::Sample;
using sampling::SampleReader;

class tst_Sampling : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void criteriaSelectTriggerSpillAndCount();
    void severalConsumersShareOneSampler();
    void unknownCriteriaAreRefusedWithTheReason();
    void sampleVerbWritesTheEventsToAFile();
    void stoppedConsumerLosesSamplesCountedOnBothSides();
    void killedConsumerIsForgotten();

private:
    /// A readout slave RO1 at @p rate Hz, configured and running.
    void startReadout(const QStringList &extra = {});
    QJsonObject figures();
    qint64 readoutEvents();
    /// The samples @p reader gets until it finishes (bounded).
    QList<Sample> collect(SampleReader &reader, int timeoutMs = 10000);

    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<Client> m_client;
    Subscription *m_figures = nullptr, *m_status = nullptr;
};

void tst_Sampling::init()
{
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
    m_client = std::make_unique<Client>(m_fx->clientOptions(QStringLiteral("sampling-test")));
    QVERIFY(m_client->start());
    m_figures = m_client->subscribe(sampling::samplerService(QStringLiteral("RO1")));
    m_status = m_client->subscribe(rc::statusService(QStringLiteral("RO1")));
}

void tst_Sampling::cleanup()
{
    m_client.reset();
    m_fx.reset();
}

void tst_Sampling::startReadout(const QStringList &extra)
{
    m_fx->start(QStringLiteral("dialog-slave"),
                QStringList{QStringLiteral("--kind"), QStringLiteral("readout"), QStringLiteral("--name"),
                            QStringLiteral("RO1"), QStringLiteral("--no-is"), QStringLiteral("--threads"),
                            QStringLiteral("2")} +
                    extra)
        ->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    for (const char *t : {"configure", "start"}) {
        std::optional<Reply> reply;
        m_client->request(rc::stateService(QStringLiteral("RO1")), t, 10000, this,
                          [&](const Reply &r) { reply = r; });
        QTRY_VERIFY_WITH_TIMEOUT(reply.has_value(), 15000);
        QVERIFY2(reply->isOk(), qPrintable(reply->status().toString()));
    }
    QTRY_VERIFY_WITH_TIMEOUT(readoutEvents() > 0, 10000);
}

QJsonObject tst_Sampling::figures()
{
    return QJsonDocument::fromJson(m_figures->lastMessage().data()).object();
}

qint64 tst_Sampling::readoutEvents()
{
    return QJsonDocument::fromJson(m_status->lastMessage().data()).object().value(QStringLiteral("events")).toInteger();
}

QList<Sample> tst_Sampling::collect(SampleReader &reader, int timeoutMs)
{
    QList<Sample> samples;
    bool finished = false;
    connect(&reader, &SampleReader::sampleReceived, this, [&](const Sample &s) { samples.append(s); });
    connect(&reader, &SampleReader::finished, this, [&] { finished = true; });
    connect(&reader, &SampleReader::errorOccurred, this,
            [](const Status &s) { qWarning() << "sampler error" << s.toString(); });
    reader.open();
    waitUntil([&] { return finished; }, timeoutMs);
    reader.disconnect(this);
    return samples;
}

/// The event's own header agrees with the sample's: the bytes are the event's.
static bool isEvent(const Sample &s)
{
    if (s.data.size() < 16)
        return false;
    quint32 size;
    quint64 number;
    std::memcpy(&size, s.data.constData() + 4, 4);
    std::memcpy(&number, s.data.constData() + 8, 8);
    return size == quint32(s.data.size()) && number == s.header.eventNumber;
}

void tst_Sampling::criteriaSelectTriggerSpillAndCount()
{
    startReadout({QStringLiteral("--rate"), QStringLiteral("20000"), QStringLiteral("--spill-s"),
                  QStringLiteral("0.4"), QStringLiteral("--off-s"), QStringLiteral("0.2")});
    sampling::Criteria c;
    QVERIFY(sampling::Criteria::parse(QStringLiteral("trigger=calibration every=3 count=20"), &c).isOk());
    SampleReader calibration(m_client.get(), QStringLiteral("RO1"), c);
    const QList<Sample> samples = collect(calibration);
    QCOMPARE(samples.size(), 20);
    for (const Sample &s : samples) {
        QCOMPARE(s.header.triggerType, quint32(sampling::Calibration));
        QCOMPARE(s.header.eventNumber % 10, 0u);
        QVERIFY(isEvent(s));
        QVERIFY(s.header.spill >= 1);
    }
    QCOMPARE(calibration.receivedCount(), 20u);

    // The spill after the one running now: every sample is of it.
    const quint32 next = samples.last().header.spill + 1;
    QVERIFY(sampling::Criteria::parse(QStringLiteral("spill=%1 count=5 kind=physics,random").arg(next), &c).isOk());
    SampleReader spill(m_client.get(), QStringLiteral("RO1"), c);
    const QList<Sample> ofSpill = collect(spill);
    QCOMPARE(ofSpill.size(), 5);
    for (const Sample &s : ofSpill) {
        QCOMPARE(s.header.spill, next);
        QVERIFY(s.header.triggerType != quint32(sampling::Calibration));
    }

    // rate=: at most R a second (two samples at 5 Hz cannot both come from one block's instant).
    QVERIFY(sampling::Criteria::parse(QStringLiteral("rate=5 count=3"), &c).isOk());
    SampleReader slow(m_client.get(), QStringLiteral("RO1"), c);
    const QList<Sample> paced = collect(slow);
    QCOMPARE(paced.size(), 3);
    for (int i = 1; i < paced.size(); ++i)
        QVERIFY2(paced.at(i).header.eventNumber > paced.at(i - 1).header.eventNumber + 1000,
                 "samples of a paced consumer follow each other at the readout's rate / R");
}

void tst_Sampling::severalConsumersShareOneSampler()
{
    startReadout({QStringLiteral("--rate"), QStringLiteral("20000"), QStringLiteral("--off-s"), QStringLiteral("0")});
    sampling::Criteria a, b;
    QVERIFY(sampling::Criteria::parse(QStringLiteral("trigger=random"), &a).isOk());
    QVERIFY(sampling::Criteria::parse(QStringLiteral("every=50"), &b).isOk());
    SampleReader randoms(m_client.get(), QStringLiteral("RO1"), a), everyFiftieth(m_client.get(), QStringLiteral("RO1"), b);
    quint64 wrongTrigger = 0, offStride = 0;
    std::optional<quint64> lastFiftieth;
    connect(&randoms, &SampleReader::sampleReceived, this, [&](const Sample &s) {
        wrongTrigger += s.header.triggerType != quint32(sampling::Random);
    });
    connect(&everyFiftieth, &SampleReader::sampleReceived, this, [&](const Sample &s) {
        // Every 50th event: consecutive samples 50 events apart (a multiple of 50 after a loss).
        if (lastFiftieth && (s.header.eventNumber <= *lastFiftieth || (s.header.eventNumber - *lastFiftieth) % 50))
            ++offStride;
        lastFiftieth = s.header.eventNumber;
    });
    randoms.open();
    everyFiftieth.open();
    QTRY_VERIFY_WITH_TIMEOUT(randoms.receivedCount() > 500 && everyFiftieth.receivedCount() > 100, 10000);
    QCOMPARE(wrongTrigger, 0u);
    QTRY_COMPARE_WITH_TIMEOUT(figures().value(QStringLiteral("consumers")).toArray().size(), 2, 5000);
    // Each consumer got what its own criteria select, from the one sampler (how many each got in
    // the same time is a rate, for `dialogctl bench sampling`).
    QCOMPARE(offStride, 0u);
}

void tst_Sampling::unknownCriteriaAreRefusedWithTheReason()
{
    startReadout({QStringLiteral("--rate"), QStringLiteral("1000")});
    // The sampler checks what any client sends.
    std::optional<Reply> reply;
    m_client->request(sampling::samplerService(QStringLiteral("RO1")),
                      R"({"op":"open","channel":"sampling-test.x","criteria":"every=2 colour=blue"})", 5000, this,
                      [&](const Reply &r) { reply = r; });
    QTRY_VERIFY_WITH_TIMEOUT(reply.has_value(), 10000);
    QCOMPARE(reply->status().code(), Status::Code::Failed);
    QVERIFY2(reply->status().message().contains(QLatin1String("unknown criterion 'colour'")),
             qPrintable(reply->status().message()));
    QVERIFY(figures().value(QStringLiteral("consumers")).toArray().isEmpty());

    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("sample"), QStringLiteral("RO1"),
                                                     QStringLiteral("--criteria"), QStringLiteral("every=0")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("invalid every=0"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("sample"), QStringLiteral("RO1"),
                                                     QStringLiteral("--criteria"), QStringLiteral("trigger=cosmic")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("unknown trigger type 'cosmic'"), err.constData());
}

void tst_Sampling::sampleVerbWritesTheEventsToAFile()
{
    startReadout({QStringLiteral("--rate"), QStringLiteral("5000")});
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("events.raw"));
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("sample"), QStringLiteral("RO1"), QStringLiteral("--criteria"),
                        QStringLiteral("trigger=physics"), QStringLiteral("--count"), QStringLiteral("7"),
                        QStringLiteral("--out"), path},
                       &out, &err),
             0);
    QVERIFY2(err.contains("7 sample(s) received"), err.constData());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray events = f.readAll();
    int n = 0;
    for (qsizetype at = 0; at + 16 <= events.size(); ++n) {
        quint32 magic, size;
        std::memcpy(&magic, events.constData() + at, 4);
        std::memcpy(&size, events.constData() + at + 4, 4);
        QCOMPARE(magic, 0xD1A10E7Eu);
        at += size;
    }
    QCOMPARE(n, 7);

    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("sample"), QStringLiteral("RO1"), QStringLiteral("--count"),
                        QStringLiteral("3"), QStringLiteral("--json")},
                       &out, &err),
             0);
    const QList<QJsonObject> lines = jsonLines(out);
    QCOMPARE(lines.size(), 3);
    QVERIFY(lines.first().contains(QStringLiteral("trigger")));
}

void tst_Sampling::stoppedConsumerLosesSamplesCountedOnBothSides()
{
    startReadout({QStringLiteral("--rate"), QStringLiteral("50000"), QStringLiteral("--off-s"), QStringLiteral("0")});
    QTemporaryDir dir;
    QProcess *consumer = m_fx->start(QStringLiteral("dialogctl"), {QStringLiteral("sample"), QStringLiteral("RO1"),
                                                                   QStringLiteral("--out"), dir.filePath(QStringLiteral("all.raw"))});
    auto consumerFigures = [&] {
        const QJsonArray list = figures().value(QStringLiteral("consumers")).toArray();
        return list.isEmpty() ? QJsonObject() : list.first().toObject();
    };
    QTRY_VERIFY_WITH_TIMEOUT(consumerFigures().value(QStringLiteral("sent")).toInteger() > 1000, 10000);
    ::kill(pid_t(consumer->processId()), SIGSTOP);
    const qint64 eventsBefore = readoutEvents();
    // The readout goes on, its stopped consumer's samples are dropped and counted by the sampler.
    QTRY_VERIFY_WITH_TIMEOUT(consumerFigures().value(QStringLiteral("dropped")).toInteger() > 5000, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(readoutEvents() > eventsBefore, 5000); // its status comes every second
    ::kill(pid_t(consumer->processId()), SIGCONT);
    const qint64 dropped = consumerFigures().value(QStringLiteral("dropped")).toInteger();
    const qint64 sent = consumerFigures().value(QStringLiteral("sent")).toInteger();
    // Once it reads again, it gets samples again: those after the gap.
    QTRY_VERIFY2_WITH_TIMEOUT(consumerFigures().value(QStringLiteral("sent")).toInteger() > sent + 1000,
                              qPrintable(QJsonDocument(figures()).toJson()), 10000);
    // ... and the consumer sees them as gaps.
    consumer->terminate();
    QTRY_COMPARE_WITH_TIMEOUT(consumer->state(), QProcess::NotRunning, 10000);
    const QString summary = QString::fromUtf8(consumer->readAllStandardError());
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("(\\d+) sample\\(s\\) received, (\\d+) lost \\((\\d+) dropped")).match(summary);
    QVERIFY2(m.hasMatch(), qPrintable(summary));
    QVERIFY2(m.captured(2).toLongLong() >= dropped, qPrintable(summary));
    QVERIFY2(m.captured(3).toLongLong() > 0, qPrintable(summary));
}

void tst_Sampling::killedConsumerIsForgotten()
{
    startReadout({QStringLiteral("--rate"), QStringLiteral("20000"), QStringLiteral("--off-s"), QStringLiteral("0")});
    QProcess *consumer = m_fx->start(QStringLiteral("dialogctl"), {QStringLiteral("sample"), QStringLiteral("RO1"),
                                                                   QStringLiteral("--out"), QStringLiteral("/dev/null")});
    QTRY_COMPARE_WITH_TIMEOUT(figures().value(QStringLiteral("consumers")).toArray().size(), 1, 10000);
    ::kill(pid_t(consumer->processId()), SIGKILL); // mid-stream
    QTRY_VERIFY_WITH_TIMEOUT(figures().value(QStringLiteral("consumers")).toArray().isEmpty(), 10000);
    const qint64 events = readoutEvents();
    QTRY_VERIFY_WITH_TIMEOUT(readoutEvents() > events, 5000);
}

QTEST_GUILESS_MAIN(tst_Sampling)
#include "tst_sampling.moc"
