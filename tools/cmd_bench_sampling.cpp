// dialogctl bench sampling: the readout's own event rate with no consumer, with 10 consumers taking
// 1 % each, and with one consumer that asked for every event and was then stopped (SIGSTOP: it
// reads nothing). The readout must not slow down for its consumers; what they lose is counted.
// The figures are machine-dependent and live here; the test suite checks the guarantees
// (tst_sampling).
#include "benchsupport.h"
#include "commands.h"

#include "dialog/rc/protocol.h"
#include "dialog/sampling.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <csignal>
#include <cstdio>

namespace dialog::tool {

namespace {

const QString Readout = QStringLiteral("BenchReadout");

struct Options
{
    qint64 rate = 100000, seconds = 5, consumers = 10, threads = 2;
};

struct Phase
{
    QString name;
    double rateHz = 0;
    quint64 sent = 0, dropped = 0;
};

class SamplingBench
{
public:
    SamplingBench(Environment &env, Client &client, const Options &o) : m_env(env), m_client(client), m_o(o) {}

    bool setUp(QString *error)
    {
        m_env.children.start(ChildProcesses::binary(QStringLiteral("dialog-slave")),
                             {QStringLiteral("--kind"), QStringLiteral("readout"), QStringLiteral("--name"), Readout,
                              QStringLiteral("--no-is"), QStringLiteral("--rate"), QString::number(m_o.rate),
                              QStringLiteral("--off-s"), QStringLiteral("0"), QStringLiteral("--threads"),
                              QString::number(m_o.threads), QStringLiteral("--control-server"), m_env.address});
        m_status = m_client.subscribe(rc::statusService(Readout), &m_client, [this](const Message &m) {
            m_events = QJsonDocument::fromJson(m.data()).object().value(QStringLiteral("events")).toInteger();
        });
        m_figures = m_client.subscribe(sampling::samplerService(Readout), &m_client, [this](const Message &m) {
            m_lastFigures = QJsonDocument::fromJson(m.data()).object();
        });
        for (const char *t : {"configure", "start"})
            if (!transition(QString::fromLatin1(t), error))
                return false;
        return runUntil([&] { return m_events > 0; }, 10000) ||
               (*error = QStringLiteral("the readout reported no events within 10 s"), false);
    }

    /// The readout's event rate over --seconds, and what its consumers got and lost meanwhile.
    Phase measure(const QString &name)
    {
        runFor(1500); // let the consumers settle, and a status update pass
        const qint64 e0 = m_events;
        const auto [sent0, dropped0] = consumerTotals();
        QElapsedTimer t;
        t.start();
        const qint64 first = m_events;
        runUntil([&] { return m_events != first; }, 3000); // start on a status update
        const qint64 start = m_events;
        t.restart();
        runFor(int(m_o.seconds * 1000));
        const qint64 before = m_events;
        runUntil([&] { return m_events != before; }, 3000);
        const double s = elapsedS(t);
        Q_UNUSED(e0);
        const auto [sent1, dropped1] = consumerTotals();
        return {name, double(m_events - start) / s, sent1 - sent0, dropped1 - dropped0};
    }

    std::pair<quint64, quint64> consumerTotals() const
    {
        quint64 sent = 0, dropped = 0;
        for (const QJsonValue &v : m_lastFigures.value(QStringLiteral("consumers")).toArray()) {
            sent += quint64(v.toObject().value(QStringLiteral("sent")).toInteger());
            dropped += quint64(v.toObject().value(QStringLiteral("dropped")).toInteger());
        }
        return {sent, dropped};
    }

    int consumerCount() const { return int(m_lastFigures.value(QStringLiteral("consumers")).toArray().size()); }

    QProcess *startConsumer(const QString &criteria)
    {
        return m_env.children.start(ChildProcesses::binary(QStringLiteral("dialogctl")),
                                    {QStringLiteral("sample"), Readout, QStringLiteral("--criteria"), criteria,
                                     QStringLiteral("--out"), QStringLiteral("/dev/null"),
                                     QStringLiteral("--control-server"), m_env.address});
    }

private:
    bool transition(const QString &t, QString *error)
    {
        bool done = false, ok = false;
        m_client.request(rc::stateService(Readout), t.toUtf8(), 20000, &m_client, [&](const Reply &r) {
            done = true;
            ok = r.isOk();
            if (!ok)
                *error = QStringLiteral("%1: %2").arg(t, r.status().toString());
        });
        return runUntil([&] { return done; }, 25000) && ok;
    }

    Environment &m_env;
    Client &m_client;
    const Options m_o;
    Subscription *m_status = nullptr, *m_figures = nullptr;
    qint64 m_events = 0;
    QJsonObject m_lastFigures;
};

} // namespace

int benchSampling(const QStringList &args)
{
    const QString verb = QStringLiteral("bench sampling");
    Options o;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "The event rate of a readout slave (dialog-slave --kind readout, continuous beam) with no "
        "consumer, with --consumers consumers sampling 1 % each (every=100), and with one consumer of "
        "every event that is stopped (SIGSTOP), each over --seconds; what the consumers got and lost."));
    p.add({Option::integer(QStringLiteral("rate"), QStringLiteral("hz"),
                           QStringLiteral("The readout's event rate (default 100000)."), &o.rate, 1000, 100000000),
           Option::integer(QStringLiteral("seconds"), QStringLiteral("s"),
                           QStringLiteral("Length of each measurement (default 5)."), &o.seconds, 1, 600),
           Option::integer(QStringLiteral("consumers"), QStringLiteral("n"),
                           QStringLiteral("Consumers of 1 % (default 10)."), &o.consumers, 1, 100),
           Option::integer(QStringLiteral("threads"), QStringLiteral("n"),
                           QStringLiteral("The readout's processing threads (default 2)."), &o.threads, 1, 64),
           Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line."))});
    if (!parse(p, args))
        return 1;
    QString error;
    Environment env;
    if (!env.startControlServer(&error))
        return fail(verb, error);
    Client client(env.clientOptions(QStringLiteral("dialog-bench-sampling")));
    if (!client.start())
        return fail(verb, client.errorString());
    SamplingBench bench(env, client, o);
    if (!bench.setUp(&error))
        return fail(verb, error);
    QList<Phase> phases{bench.measure(QStringLiteral("no consumer"))};

    QList<QProcess *> few;
    for (int i = 0; i < o.consumers; ++i)
        few.append(bench.startConsumer(QStringLiteral("every=100")));
    if (!runUntil([&] { return bench.consumerCount() == o.consumers; }, 20000))
        return fail(verb, QStringLiteral("%1 of %2 consumers opened within 20 s").arg(bench.consumerCount()).arg(o.consumers));
    phases.append(bench.measure(QStringLiteral("%1 consumers of 1 %").arg(o.consumers)));
    for (QProcess *c : few) {
        c->terminate();
        c->waitForFinished(5000);
    }
    if (!runUntil([&] { return bench.consumerCount() == 0; }, 10000))
        return fail(verb, QStringLiteral("the consumers did not close within 10 s"));

    QProcess *stopped = bench.startConsumer(QString());
    if (!runUntil([&] { return bench.consumerCount() == 1; }, 20000))
        return fail(verb, QStringLiteral("the consumer of every event did not open within 20 s"));
    ::kill(pid_t(stopped->processId()), SIGSTOP);
    phases.append(bench.measure(QStringLiteral("1 stopped consumer of every event")));
    ::kill(pid_t(stopped->processId()), SIGCONT);

    const double base = phases.first().rateHz;
    if (p.isSet(QStringLiteral("json"))) {
        QJsonArray list;
        for (const Phase &ph : phases)
            list.append(QJsonObject{{QStringLiteral("phase"), ph.name},
                                    {QStringLiteral("rate_hz"), ph.rateHz},
                                    {QStringLiteral("loss_percent"), 100.0 * (base - ph.rateHz) / base},
                                    {QStringLiteral("samples_sent"), qint64(ph.sent)},
                                    {QStringLiteral("samples_dropped"), qint64(ph.dropped)}});
        std::printf("%s\n", QJsonDocument(QJsonObject{{QStringLiteral("bench"), QStringLiteral("sampling")},
                                                      {QStringLiteral("target_hz"), o.rate},
                                                      {QStringLiteral("phases"), list}})
                                .toJson(QJsonDocument::Compact)
                                .constData());
        return 0;
    }
    std::printf("readout at %lld Hz (continuous beam, %lld threads), %lld s per phase\n", o.rate, o.threads,
                o.seconds);
    for (const Phase &ph : phases)
        std::printf("  %-36s %10.0f events/s (%+.2f %%)  samples sent %llu, dropped %llu\n", qPrintable(ph.name),
                    ph.rateHz, -100.0 * (base - ph.rateHz) / base, static_cast<unsigned long long>(ph.sent),
                    static_cast<unsigned long long>(ph.dropped));
    return 0;
}

} // namespace dialog::tool
