// dialogctl bench agent: N light DIALOG processes started through M host agents (dialog-agent on
// this machine, one per made-up host name), and the time until all of them are registered.
#include "agentsession.h"
#include "benchsupport.h"

#include "dialog/directory.h"
#include "dialog/subscription.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QTemporaryDir>
#include <cstdio>

namespace dialog::tool {

int benchAgent(const QStringList &args)
{
    const QString verb = QStringLiteral("bench agent");
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Starts --agents dialog-agent processes (host names bench-a0, bench-a1, …) on a Control Server "
        "of its own, then asks them to start --processes light DIALOG processes (dialogctl publish), "
        "spread evenly, all requests sent at once; measures the time from the first request until every "
        "process is in the Control Server's directory, then stops them through the agents."));
    qint64 processes = 200, agents = 4, timeoutS = 60;
    p.add({Option::integer(QStringLiteral("processes"), QStringLiteral("n"),
                           QStringLiteral("Processes to start (default 200)."), &processes, 1, 5000),
           Option::integer(QStringLiteral("agents"), QStringLiteral("n"), QStringLiteral("Agents (default 4)."),
                           &agents, 1, 64),
           Option::duration(QStringLiteral("timeout-s"), QStringLiteral("s"),
                            QStringLiteral("Give up after this long (default 60)."), &timeoutS,
                            OptionUnit::Seconds, 1, 3600),
           Option::flag(QStringLiteral("direct"),
                        QStringLiteral("For comparison: start the processes from this process (no agent).")),
           Option::flag(QStringLiteral("json"), QStringLiteral("The figures as one JSON object."))});
    if (!parseOptionsOnly(p, args))
        return 1;
    // The one line per started and stopped process of every daemon is not the bench's output.
    qputenv("QT_LOGGING_RULES", "dialog.*.info=false");
    QTemporaryDir dir;
    Environment env;
    QString error;
    if (!startWithScratch(dir, env, &error))
        return fail(verb, error);
    qputenv("DIALOG_CONTROL_SERVER", env.address.toLocal8Bit());
    const QString tool = ChildProcesses::binary(QStringLiteral("dialogctl"));
    QStringList hosts;
    for (int i = 0; i < agents; ++i) {
        hosts << QStringLiteral("bench-a%1").arg(i);
        env.children.start(ChildProcesses::binary(QStringLiteral("dialog-agent")),
                           {QStringLiteral("--host-name"), hosts.last(), QStringLiteral("--data-dir"),
                            dir.filePath(hosts.last()), QStringLiteral("--allow"), tool, QStringLiteral("--stop-children")});
    }
    AgentSession s;
    s.client = std::make_unique<Client>(env.clientOptions(QStringLiteral("dialog-bench-agent")));
    if (!s.client->start())
        return fail(verb, s.client->errorString());
    QSet<QString> registered;
    DirectoryAssembler pages;
    s.client->subscribe(directoryServiceName(), s.client.get(), [&](const Message &m) {
        if (std::optional<DirectorySnapshot> d; pages.add(m.data(), &d).isOk() && d) {
            const QStringList names = d->processNames();
            registered = QSet<QString>(names.cbegin(), names.cend());
        }
    });
    QElapsedTimer t;
    t.start();
    auto waitFor = [&](auto done) {
        while (!done() && t.elapsed() < timeoutS * 1000)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        return done();
    };
    if (!waitFor([&] {
            for (const QString &h : std::as_const(hosts))
                if (!registered.contains(agentService(h)))
                    return false;
            return true;
        }))
        return fail(verb, QStringLiteral("the agents did not register within %1 s").arg(timeoutS));

    // Every start request at once; the agents answer as they start them.
    int answered = 0, refused = 0;
    QString firstRefusal;
    t.restart();
    const bool direct = p.isSet(QStringLiteral("direct"));
    for (int i = 0; i < processes && direct; ++i) {
        const QString name = QStringLiteral("BenchProc%1").arg(i);
        env.children.start(tool, {QStringLiteral("publish"), name + QStringLiteral(".Value"), QStringLiteral("--name"), name});
        ++answered;
    }
    for (int i = 0; i < processes && !direct; ++i) {
        const QString name = QStringLiteral("BenchProc%1").arg(i);
        const QJsonObject request{{QStringLiteral("op"), QStringLiteral("start")},
                                  {QStringLiteral("name"), name},
                                  {QStringLiteral("program"), tool},
                                  {QStringLiteral("args"), QJsonArray{QStringLiteral("publish"), name + QStringLiteral(".Value"),
                                                                     QStringLiteral("--name"), name}}};
        s.client->request(agentService(hosts.at(i % hosts.size())), QJsonDocument(request).toJson(QJsonDocument::Compact),
                          int(timeoutS * 1000), s.client.get(), [&](const Reply &r) {
                              ++answered;
                              if (!r.isOk() && refused++ == 0)
                                  firstRefusal = r.errorString();
                          });
    }
    qint64 startedMs = -1;
    const bool all = waitFor([&] {
        if (startedMs < 0 && answered == processes)
            startedMs = t.elapsed();
        for (int i = 0; i < processes; ++i)
            if (!registered.contains(QStringLiteral("BenchProc%1").arg(i)))
                return false;
        return true;
    });
    const qint64 registeredMs = t.elapsed();
    int count = 0;
    for (int i = 0; i < processes; ++i)
        count += registered.contains(QStringLiteral("BenchProc%1").arg(i)) ? 1 : 0;
    // Stop them through the agents (each agent stops its own when it goes, too).
    int stopped = direct ? int(processes) : 0; // direct: the children go with this process
    for (int i = 0; i < processes && !direct; ++i)
        s.client->request(agentService(hosts.at(i % hosts.size())),
                          QJsonDocument(QJsonObject{{QStringLiteral("op"), QStringLiteral("stop")},
                                                    {QStringLiteral("name"), QStringLiteral("BenchProc%1").arg(i)}})
                              .toJson(QJsonDocument::Compact),
                          30000, s.client.get(), [&](const Reply &) { ++stopped; });
    t.restart();
    waitFor([&] { return stopped == processes; });
    const qint64 stopMs = t.elapsed();
    if (p.isSet(QStringLiteral("json"))) {
        std::printf("%s\n", QJsonDocument(QJsonObject{{QStringLiteral("processes"), processes},
                                                      {QStringLiteral("agents"), direct ? 0 : agents},
                                                      {QStringLiteral("started_ms"), startedMs},
                                                      {QStringLiteral("registered_ms"), registeredMs},
                                                      {QStringLiteral("registered"), count},
                                                      {QStringLiteral("refused"), refused},
                                                      {QStringLiteral("stopped_ms"), stopMs}})
                                .toJson(QJsonDocument::Compact)
                                .constData());
    } else {
        const QString how = direct ? QStringLiteral("started directly") : QStringLiteral("through %1 agents").arg(agents);
        std::printf("%lld processes %s: all started (answered) in %lld ms, all registered in %lld ms; stopped in "
                    "%lld ms\n",
                    processes, qPrintable(how), startedMs, registeredMs, stopMs);
    }
    if (refused)
        std::fprintf(stderr, "dialogctl bench agent: %d start(s) refused: %s\n", refused, qPrintable(firstRefusal));
    if (!all)
        return fail(verb, QStringLiteral("%1 of %2 registered within %3 s").arg(count).arg(processes).arg(timeoutS));
    return 0;
}

} // namespace dialog::tool
