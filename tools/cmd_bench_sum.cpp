// dialogctl bench is-sum: the cost of a farm-summed histogram (dialog-isserver --sum): N providers,
// each a DIALOG process of its own (light clients in this process), update a histogram once a
// second; reported are the latency from a provider's update to the sum holding it, and the IS
// server's CPU time. The behaviour is tested by tst_issum; the figures live here.
#include "benchsupport.h"
#include "commands.h"

#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <algorithm>
#include <cstdio>
#include <unistd.h>

namespace dialog::tool {

namespace {

/// CPU time a process has used (user + system), in clock ticks (-1 if unknown).
qint64 sumCpuTicks(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray stat = f.readAll();
    const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    return fields.size() > 12 ? fields.at(11).toLongLong() + fields.at(12).toLongLong() : -1;
}

const QString Server = QStringLiteral("BenchSum");

} // namespace

int benchIsSum(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-sum");
    qint64 providers = 50, bins = 1000, seconds = 10;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Latency and IS server CPU of dialog-isserver --sum: --providers processes each update a "
        "--bins-bin Histogram1D once a second (spread over the second) for --seconds seconds."));
    p.add(Option::integer(QStringLiteral("providers"), QStringLiteral("n"),
                          QStringLiteral("Providers (default 50)."), &providers, 1, 1000));
    p.add(Option::integer(QStringLiteral("bins"), QStringLiteral("n"),
                          QStringLiteral("Bins per histogram (default 1000)."), &bins, 1, 1000000));
    p.add(Option::duration(QStringLiteral("seconds"), QStringLiteral("s"),
                           QStringLiteral("Measured seconds (default 10)."), &seconds, OptionUnit::Seconds, 1,
                           3600));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    QString error;
    Environment env;
    if (!env.startControlServer(&error))
        return fail(verb, error);
    QProcess *server =
        env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")),
                           {QStringLiteral("--name"), Server, QStringLiteral("--control-server"), env.address,
                            QStringLiteral("--sum"), QStringLiteral("RO.*\\.eventSize"),
                            QStringLiteral("--into"), QStringLiteral("All.eventSize")});

    struct Provider
    {
        std::unique_ptr<Client> client;
        std::unique_ptr<is::Dictionary> dict;
    };
    std::vector<Provider> ps;
    for (int i = 0; i < providers; ++i) {
        ClientOptions co = env.clientOptions(QStringLiteral("bench-sum-RO%1").arg(i));
        co.senderThreads = 1;
        co.readerThreads = 1;
        Provider pr;
        pr.client = std::make_unique<Client>(co);
        if (!pr.client->start())
            return fail(verb, pr.client->errorString());
        pr.dict = std::make_unique<is::Dictionary>(pr.client.get());
        ps.push_back(std::move(pr));
    }
    is::Dictionary &d0 = *ps.front().dict;
    if (!waitForIsServer(d0, Server))
        return fail(verb, QStringLiteral("the IS server did not answer within 30 s"));
    is::Object h = is::Object::create(d0.types(), QStringLiteral("Histogram1D"));
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), double(bins));
    h.set(QStringLiteral("bins"), quint32(bins));

    // Provider 0 marks bin 0 with the number of its update; the others leave bin 0 at zero, so the
    // sum's bin 0 tells which of provider 0's updates it holds.
    QHash<qint64, qint64> sentNs;
    QList<qint64> latenciesUs;
    QElapsedTimer clock;
    clock.start();
    is::Receiver receiver(&d0);
    receiver.setCallback([&](const is::Event &e) {
        if (e.kind() != is::Event::Kind::Updated && e.kind() != is::Event::Kind::Created)
            return;
        const QList<double> c = e.object().get<QList<double>>(QStringLiteral("contents"));
        const qint64 mark = c.isEmpty() ? 0 : qint64(c.first());
        const auto it = sentNs.find(mark);
        if (it != sentNs.end()) {
            latenciesUs << (clock.nsecsElapsed() - it.value()) / 1000;
            sentNs.erase(it);
        }
    });
    receiver.subscribe(Server, is::Criteria::exactName(QStringLiteral("All.eventSize")));

    QRandomGenerator rng(42);
    qint64 mark = 0;
    auto round = [&](bool measured) {
        const qint64 start = clock.elapsed();
        for (int i = 0; i < providers; ++i) {
            // Spread over the second, as independent processes would be.
            runUntil([&] { return clock.elapsed() >= start + 1000 * i / providers; }, 2000);
            QList<double> contents(bins);
            for (double &x : contents)
                x = double(rng.bounded(100));
            contents[0] = i == 0 ? double(++mark) : 0.0;
            h.set(QStringLiteral("contents"), contents);
            h.set(QStringLiteral("entries"), quint64(bins));
            if (i == 0 && measured)
                sentNs.insert(mark, clock.nsecsElapsed());
            ps[i].dict->update(QStringLiteral("%1.RO%2.eventSize").arg(Server).arg(i), h);
        }
        runUntil([&] { return clock.elapsed() >= start + 1000; }, 2000);
    };
    round(false); // every part once, the sum made
    round(false);
    const qint64 cpu0 = sumCpuTicks(server->processId());
    QElapsedTimer wall;
    wall.start();
    for (int s = 0; s < seconds; ++s)
        round(true);
    runUntil([&] { return sentNs.isEmpty(); }, 5000);
    const double cpuS = double(sumCpuTicks(server->processId()) - cpu0) / double(sysconf(_SC_CLK_TCK));
    const double cpuPercent = 100.0 * cpuS / (wall.elapsed() / 1000.0);
    if (latenciesUs.isEmpty())
        return fail(verb, QStringLiteral("the sum was never seen updated"));
    std::sort(latenciesUs.begin(), latenciesUs.end());
    const qint64 median = latenciesUs.at(latenciesUs.size() / 2), worst = latenciesUs.last();
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject o{{QStringLiteral("test"), QStringLiteral("is-sum")},
                            {QStringLiteral("providers"), providers},
                            {QStringLiteral("bins"), bins},
                            {QStringLiteral("samples"), latenciesUs.size()},
                            {QStringLiteral("latencyMedianUs"), median},
                            {QStringLiteral("latencyMaxUs"), worst},
                            {QStringLiteral("serverCpuPercent"), cpuPercent}};
        std::printf("%s\n", QJsonDocument(o).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf(
            "is-sum: %lld providers x 1 update/s of a %lld-bin Histogram1D: sum latency median %.2f ms, "
            "max %.2f ms (%lld samples); IS server CPU %.1f%% of a core\n",
            providers, bins, median / 1000.0, worst / 1000.0, qlonglong(latenciesUs.size()), cpuPercent);
    }
    return 0;
}

} // namespace dialog::tool
