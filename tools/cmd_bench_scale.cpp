// dialogctl bench cs-scale: the Control Server with thousands of processes (the scale of an experiment:
// the IS paper's 1,500 nodes, ATLAS' > 25,000 applications). Many light DIALOG processes share an
// OS process (dialogctl bench cs-scale-clients): each is a real dialog::Client with one sender and one
// reader thread, its own listening port and connections.
#include "benchsupport.h"

#include "dialog/directory.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/object.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <cstdio>
#include <optional>
#include <sys/resource.h>

namespace dialog::tool {

namespace {

QString scaleName(qint64 i)
{
    return QStringLiteral("scale.%1").arg(i, 5, 10, QLatin1Char('0'));
}

/// What the OS processes of clients last reported (one line "scale CONNECTED REFUSED CONNECTIONS
/// WRITTEN", WRITTEN: processes whose last IS update was acknowledged).
struct ClientHosts
{
    struct Host
    {
        QPointer<QProcess> process; // deleted when the Environment stops its children
        QByteArray partial;
        qint64 connected = 0, refused = 0, connections = 0, written = 0;
    };
    std::vector<Host> hosts;

    ClientHosts() = default;
    ClientHosts(const ClientHosts &) = delete;
    ClientHosts &operator=(const ClientHosts &) = delete;
    /// The processes outlive this (the Environment that owns them was made first and stops them
    /// when it goes): their output must no longer reach it. A failed bench returned with the
    /// processes connected, and their last output, read while they were stopped, was written
    /// into freed memory (a crash, or "corrupted double-linked list").
    ~ClientHosts()
    {
        for (const Host &h : hosts)
            if (h.process)
                QObject::disconnect(h.process, nullptr, nullptr, nullptr);
    }

    void read(Host &h)
    {
        h.partial += h.process->readAllStandardOutput();
        qsizetype nl;
        while ((nl = h.partial.indexOf('\n')) >= 0) {
            const QList<QByteArray> f = h.partial.left(nl).split(' ');
            h.partial.remove(0, nl + 1);
            if (f.size() == 5 && f.at(0) == "scale") {
                h.connected = f.at(1).toLongLong();
                h.refused = f.at(2).toLongLong();
                h.connections = f.at(3).toLongLong();
                h.written = f.at(4).toLongLong();
            }
        }
    }
    qint64 sum(qint64 Host::*field) const
    {
        qint64 n = 0;
        for (const Host &h : hosts)
            n += h.*field;
        return n;
    }
    QString dead() const
    {
        for (const Host &h : hosts)
            if (h.process->state() == QProcess::NotRunning)
                return QStringLiteral("a process of clients exited (%1)").arg(h.process->exitCode());
        return QString();
    }
};

struct CsUsage
{
    double cpuS = 0;
    qint64 rssKb = 0, hwmKb = 0;
};

CsUsage csUsage(qint64 pid)
{
    return CsUsage{processCpuSeconds(pid), processStatusKb(pid, "VmRSS"), processStatusKb(pid, "VmHWM")};
}

/// The Control Server's view through `dialogctl ls --json`: processes and services listed, and the time
/// the command took (start, connect, the directory's pages, exit).
struct Listing
{
    qint64 processes = -1, services = -1;
    double ms = 0;
};

Listing listDirectory(const QString &address)
{
    Listing l;
    QProcess ls;
    QElapsedTimer t;
    t.start();
    ls.start(ChildProcesses::binary(QStringLiteral("dialogctl")),
             {QStringLiteral("ls"), QStringLiteral("--json"), QStringLiteral("--control-server"), address,
              QStringLiteral("--timeout-ms"), QStringLiteral("30000")});
    if (!ls.waitForFinished(40000)) {
        ls.kill();
        ls.waitForFinished(3000);
        return l;
    }
    l.ms = elapsedMs(t);
    const QJsonArray procs = QJsonDocument::fromJson(ls.readAllStandardOutput())
                                 .object()
                                 .value(QStringLiteral("processes"))
                                 .toArray();
    if (ls.exitCode() != 0)
        return l;
    l.processes = procs.size();
    l.services = 0;
    for (const QJsonValue &v : procs)
        l.services += v.toObject().value(QStringLiteral("services")).toArray().size();
    return l;
}

} // namespace

int benchCsScaleClients(const QStringList &args)
{
    const QString verb = QStringLiteral("bench cs-scale-clients");
    qint64 first = 0, count = 1, processes = 1, services = 1, isIntervalMs = 1000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Started by dialogctl bench cs-scale: --count DIALOG processes (scale.FIRST …) in this OS process, "
        "each "
        "publishing its share of --services services; prints 'scale CONNECTED REFUSED CONNECTIONS' lines."));
    p.add(Option::integer(QStringLiteral("first"), QStringLiteral("n"),
                          QStringLiteral("Number of the first process."), &first, 0, 10000000));
    p.add(Option::integer(QStringLiteral("count"), QStringLiteral("n"),
                          QStringLiteral("Processes to run here."), &count, 1, 100000));
    p.add(Option::integer(QStringLiteral("processes"), QStringLiteral("n"),
                          QStringLiteral("Processes in the whole test."), &processes, 1, 10000000));
    p.add(Option::integer(QStringLiteral("services"), QStringLiteral("n"),
                          QStringLiteral("Services in the whole test."), &services, 0, 100000000));
    p.add(Option::text(
        QStringLiteral("is"), QStringLiteral("server"),
        QStringLiteral("Each process also writes one Bench10 object SERVER.scale.N to this IS server, "
                       "again every --is-interval-ms.")));
    p.add(Option::duration(QStringLiteral("is-interval-ms"), QStringLiteral("ms"),
                           QStringLiteral("Interval of the IS updates (default 1000)."), &isIntervalMs,
                           OptionUnit::Milliseconds, 100, 3600000));
    if (!parse(p, args))
        return 1;
    const QString isServer = p.value(QStringLiteral("is"));
    raiseDescriptorLimit();
    std::vector<std::unique_ptr<Client>> clients;
    qint64 refused = 0;
    for (qint64 i = first; i < first + count; ++i) {
        ClientOptions o = ClientOptions::fromEnvironment(scaleName(i));
        QString error;
        if (const Status st = o.applyParser(p.parser()); !st.isOk())
            return fail(verb, st.message());
        o.senderThreads = 1; // light: 4 threads per process (sender, reader, listener, server)
        o.readerThreads = 1;
        auto c = std::make_unique<Client>(o);
        // Process i provides services i, i + processes, i + 2 * processes … (declared before start(): they
        // travel in its CONNECT).
        for (qint64 s = i; s < services; s += processes)
            c->publish(QStringLiteral("scale.service.%1").arg(s));
        QObject::connect(c.get(), &Client::errorOccurred, c.get(), [&refused](Status::Code e) {
            if (e == Status::Code::ServiceRefused)
                ++refused;
        });
        if (!c->start())
            return fail(verb, c->errorString());
        clients.push_back(std::move(c));
    }
    // IS writers: every process updates its object once per interval, spread over the interval (a
    // tenth of the processes at each 100 ms tick when the interval is 1 s); one update in flight at
    // a time per process.
    struct Writer
    {
        std::unique_ptr<is::Dictionary> dict;
        bool inFlight = false, written = false;
    };
    std::vector<Writer> writers(isServer.isEmpty() ? 0 : clients.size());
    std::optional<is::Object> object;
    if (!isServer.isEmpty()) {
        for (size_t i = 0; i < writers.size(); ++i) {
            writers[i].dict = std::make_unique<is::Dictionary>(clients[i].get());
            writers[i].dict->setTimeout(int(qMin<qint64>(isIntervalMs * 5, 30000)));
            if (const Status st = writers[i].dict->types().declareType(bench10Type()); !st.isOk())
                return fail(verb, st.message());
        }
        object = is::Object::create(writers.front().dict->types(), QStringLiteral("Bench10"));
    }
    qint64 tick = 0;
    const qint64 ticksPerInterval = qMax<qint64>(1, isIntervalMs / 100);
    QTimer report;
    QObject::connect(&report, &QTimer::timeout, &report, [&] {
        qint64 connected = 0, connections = 0, written = 0;
        for (size_t i = 0; i < clients.size(); ++i) {
            Client &c = *clients[i];
            const bool up = c.state() == Client::State::Connected;
            connected += up;
            connections += qint64(c.statistics().reconnects);
            if (writers.empty())
                continue;
            Writer &w = writers[i];
            written += w.written;
            if (!up || w.inFlight || qint64(i) % ticksPerInterval != tick % ticksPerInterval)
                continue;
            w.inFlight = true;
            object->set<quint64>(QStringLiteral("b"), quint64(tick));
            w.dict->update(QStringLiteral("%1.%2").arg(isServer, c.name()), *object,
                           is::Dictionary::UpdateMode::CreateIfMissing, [&w](const is::Status &s) {
                               w.inFlight = false;
                               w.written = s.isOk();
                           });
        }
        ++tick;
        std::printf("scale %lld %lld %lld %lld\n", connected, refused, connections, written);
        std::fflush(stdout);
    });
    report.start(100);
    return QCoreApplication::exec();
}

int benchCsScale(const QStringList &args)
{
    const QString verb = QStringLiteral("bench cs-scale");
    qint64 processes = 1000, perProcess = 250, downMs = 1000, timeoutS = 120, perAddress = 1024;
    qint64 services = 10 * processes;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Thousands of DIALOG processes against one Control Server: the time until all registered, the "
        "Control "
        "Server's memory and CPU, `dialogctl ls` with all of them, and the time until all re-registered "
        "after "
        "the "
        "Control Server was killed and restarted. Starts its own Control Server; the processes are light "
        "(one sender and one reader thread each), --per-process of them in each OS process."));
    p.add(Option::integer(QStringLiteral("processes"), QStringLiteral("n"),
                          QStringLiteral("DIALOG processes (default 1000)."), &processes, 1, 100000));
    p.add(Option::integer(QStringLiteral("services"), QStringLiteral("n"),
                          QStringLiteral("Services over all of them (default 10 per process)."), &services, 0,
                          10000000));
    p.add(Option::integer(QStringLiteral("per-process"), QStringLiteral("n"),
                          QStringLiteral("DIALOG processes per OS process (default 250)."), &perProcess, 1,
                          5000));
    p.add(Option::duration(
        QStringLiteral("down-ms"), QStringLiteral("ms"),
        QStringLiteral("How long the Control Server stays down before its restart (default 1000)."), &downMs,
        OptionUnit::Milliseconds, 0, 600000));
    p.add(Option::duration(QStringLiteral("timeout-s"), QStringLiteral("s"),
                           QStringLiteral("Give up waiting for registrations after this long (default 120)."),
                           &timeoutS, OptionUnit::Seconds, 1, 3600));
    p.add(Option::integer(
        QStringLiteral("per-address"), QStringLiteral("n"),
        QStringLiteral("The Control Server's --max-handshaking-per-address and --max-connecting-per-address "
                       "(default 1024: here every process comes from 127.0.0.1, in an experiment from "
                       "many hosts)."),
        &perAddress, 1, 1000000));
    p.add(Option::flag(
        QStringLiteral("is"),
        QStringLiteral("Also start an IS server (BenchScale) to which every process writes one object "
                       "once a second: its memory and CPU with all of them connected.")));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    const bool withIs = p.isSet(QStringLiteral("is"));
    raiseDescriptorLimit();
    // One line per connected process from the Control Server would drown the figures: its children
    // say only what goes wrong (unless the caller chose the logging rules).
    if (!qEnvironmentVariableIsSet("QT_LOGGING_RULES"))
        qputenv("QT_LOGGING_RULES", "dialog.*.info=false");
    QString error;
    Environment env;
    const QStringList csOptions{QStringLiteral("--max-handshaking-per-address"), QString::number(perAddress),
                                QStringLiteral("--max-connecting-per-address"), QString::number(perAddress)};
    if (!env.startControlServer(&error, csOptions))
        return fail(verb, error);
    const QString isName = QStringLiteral("BenchScale");
    QProcess *isServer = nullptr;
    if (withIs) {
        // Its inbound connections all come from 127.0.0.1 too.
        isServer = env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")),
                                      {QStringLiteral("--name"), isName, QStringLiteral("--control-server"),
                                       env.address, QStringLiteral("--max-handshaking-per-address"),
                                       QString::number(perAddress)});
        Client client(env.clientOptions(QStringLiteral("bench-cs-scale")));
        if (!client.start())
            return fail(verb, client.errorString());
        is::Dictionary dict(&client);
        if (!waitForIsServer(dict, isName))
            return fail(verb, QStringLiteral("the IS server %1 did not answer within 30 s").arg(isName));
        const is::Status declared = dict.declareTypesSync(isName, {bench10Type()});
        if (!declared.isOk())
            return fail(verb, declared.toString());
    }
    const auto forwarded = [&] {
        QStringList a{QStringLiteral("--control-server"), env.address};
        if (withIs)
            a << QStringLiteral("--is") << isName;
        for (const char *o : {"heartbeat-ms", "retry-ms"})
            if (p.isSet(QLatin1String(o)))
                a << QStringLiteral("--%1").arg(QLatin1String(o)) << p.value(QLatin1String(o));
        return a;
    }();

    ClientHosts hosts;
    QElapsedTimer t;
    t.start();
    for (qint64 first = 0; first < processes; first += perProcess) {
        const qint64 count = qMin(perProcess, processes - first);
        QProcess *h = env.children.start(
            ChildProcesses::binary(QStringLiteral("dialogctl")),
            QStringList{QStringLiteral("bench"), QStringLiteral("cs-scale-clients"),
                        QStringLiteral("--first"), QString::number(first), QStringLiteral("--count"),
                        QString::number(count), QStringLiteral("--processes"), QString::number(processes),
                        QStringLiteral("--services"), QString::number(services)} +
                forwarded,
            ChildProcesses::Output::Read);
        hosts.hosts.push_back(ClientHosts::Host{h, {}, 0, 0, 0, 0});
    }
    for (ClientHosts::Host &h : hosts.hosts)
        QObject::connect(h.process, &QProcess::readyReadStandardOutput, h.process,
                         [&hosts, &h] { hosts.read(h); });
    const auto waitConnected = [&](qint64 want, QString *why) {
        const bool ok = runUntil(
            [&] { return hosts.sum(&ClientHosts::Host::connected) == want || !hosts.dead().isEmpty(); },
            int(timeoutS * 1000));
        if (!hosts.dead().isEmpty())
            *why = hosts.dead();
        else if (!ok)
            *why = QStringLiteral("%1 of %2 processes connected after %3 s")
                       .arg(hosts.sum(&ClientHosts::Host::connected))
                       .arg(want)
                       .arg(timeoutS);
        return ok && why->isEmpty();
    };
    if (!waitConnected(processes, &error))
        return fail(verb, error);
    const double registerS = elapsedS(t);
    const CsUsage afterRegister = csUsage(env.controlServer->processId());
    double writtenS = 0;
    if (withIs) {
        if (!runUntil(
                [&] {
                    return hosts.sum(&ClientHosts::Host::written) == processes || !hosts.dead().isEmpty();
                },
                int(timeoutS * 1000)))
            return fail(verb, QStringLiteral("%1 of %2 processes wrote their IS object after %3 s")
                                  .arg(hosts.sum(&ClientHosts::Host::written))
                                  .arg(processes)
                                  .arg(timeoutS));
        if (!hosts.dead().isEmpty())
            return fail(verb, hosts.dead());
        writtenS = elapsedS(t);
    }
    const Listing first = listDirectory(env.address);

    // Steady state: every process heartbeating (and writing its IS object once a second).
    const CsUsage steady0 = csUsage(env.controlServer->processId());
    const CsUsage isSteady0 = withIs ? csUsage(isServer->processId()) : CsUsage{};
    QElapsedTimer steadyT;
    steadyT.start();
    runFor(5000);
    const CsUsage steady1 = csUsage(env.controlServer->processId());
    const double steadyCpu = (steady1.cpuS - steady0.cpuS) / elapsedS(steadyT);
    const CsUsage isSteady1 = withIs ? csUsage(isServer->processId()) : CsUsage{};
    const double isSteadyCpu = (isSteady1.cpuS - isSteady0.cpuS) / elapsedS(steadyT);
    const qint64 isWrittenSteady = hosts.sum(&ClientHosts::Host::written);

    // The Control Server dies: everyone notices, it comes back on the same port, everyone re-registers.
    const qint64 connectionsBefore = hosts.sum(&ClientHosts::Host::connections);
    env.controlServer->kill();
    env.controlServer->waitForFinished(5000);
    if (!waitConnected(0, &error))
        return fail(verb, QStringLiteral("after the Control Server was killed: %1").arg(error));
    runFor(int(downMs));
    if (!env.startControlServer(&error, csOptions))
        return fail(verb, QStringLiteral("restart: %1").arg(error));
    t.start();
    if (!waitConnected(processes, &error))
        return fail(verb, QStringLiteral("after the Control Server's restart: %1").arg(error));
    const double reregisterS = elapsedS(t);
    const CsUsage afterRestart = csUsage(env.controlServer->processId());
    const qint64 attempts = hosts.sum(&ClientHosts::Host::connections) - connectionsBefore;
    const Listing second = listDirectory(env.address);
    const qint64 refused = hosts.sum(&ClientHosts::Host::refused);
    env.children.stopAll();

    const auto mb = [](qint64 kb) { return qRound64(kb / 102.4) / 10.0; };
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{
            {QStringLiteral("test"), QStringLiteral("cs-scale")},
            {QStringLiteral("processes"), processes},
            {QStringLiteral("services"), services},
            {QStringLiteral("os_processes"), qint64(hosts.hosts.size())},
            {QStringLiteral("register_s"), qRound64(registerS * 100) / 100.0},
            {QStringLiteral("reregister_s"), qRound64(reregisterS * 100) / 100.0},
            {QStringLiteral("down_ms"), downMs},
            {QStringLiteral("connect_attempts"), attempts},
            {QStringLiteral("refused"), refused},
            {QStringLiteral("cs_rss_mb"), mb(afterRegister.rssKb)},
            {QStringLiteral("cs_rss_after_restart_mb"), mb(afterRestart.rssKb)},
            {QStringLiteral("cs_peak_after_restart_mb"), mb(afterRestart.hwmKb)},
            {QStringLiteral("cs_cpu_steady_pct"), qRound64(steadyCpu * 1000) / 10.0},
            {QStringLiteral("cs_cpu_register_s"), qRound64(afterRegister.cpuS * 100) / 100.0},
            {QStringLiteral("cs_cpu_reregister_s"), qRound64(afterRestart.cpuS * 100) / 100.0},
            {QStringLiteral("ls_ms"), qRound64(first.ms)},
            {QStringLiteral("ls_processes"), first.processes},
            {QStringLiteral("ls_services"), first.services},
            {QStringLiteral("ls_after_restart_ms"), qRound64(second.ms)},
            {QStringLiteral("ls_after_restart_processes"), second.processes},
            {QStringLiteral("ls_after_restart_services"), second.services}};
        QJsonObject out = j;
        if (withIs) {
            out.insert(QStringLiteral("is_all_written_s"), qRound64(writtenS * 100) / 100.0);
            out.insert(QStringLiteral("is_writers_steady"), isWrittenSteady);
            out.insert(QStringLiteral("is_rss_mb"), mb(isSteady1.rssKb));
            out.insert(QStringLiteral("is_peak_mb"), mb(isSteady1.hwmKb));
            out.insert(QStringLiteral("is_cpu_steady_pct"), qRound64(isSteadyCpu * 1000) / 10.0);
        }
        std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("cs-scale: %lld processes (%zu OS processes), %lld services\n", processes,
                    hosts.hosts.size(), services);
        std::printf("  all registered in %.2f s; Control Server %.1f MB resident, %.2f s CPU so far\n",
                    registerS, mb(afterRegister.rssKb), afterRegister.cpuS);
        std::printf("  steady (heartbeats): Control Server CPU %.1f %%\n", steadyCpu * 100);
        if (withIs)
            std::printf(
                "  IS server %s: all %lld processes wrote their object %.2f s after the start; steady "
                "(one update per process per second, %lld acknowledged): %.1f MB resident (peak "
                "%.1f MB), CPU %.1f %%\n",
                qPrintable(isName), processes, writtenS, isWrittenSteady, mb(isSteady1.rssKb),
                mb(isSteady1.hwmKb), isSteadyCpu * 100);
        std::printf("  dialogctl ls: %.0f ms, %lld processes, %lld services\n", first.ms, first.processes,
                    first.services);
        std::printf(
            "  Control Server killed, down %lld ms, restarted: all re-registered in %.2f s, %lld connection "
            "attempts, %lld refused\n",
            downMs, reregisterS, attempts, refused);
        std::printf("  restarted Control Server: %.1f MB resident (peak %.1f MB), %.2f s CPU\n",
                    mb(afterRestart.rssKb), mb(afterRestart.hwmKb), afterRestart.cpuS);
        std::printf("  dialogctl ls after the restart: %.0f ms, %lld processes, %lld services\n", second.ms,
                    second.processes, second.services);
    }
    return 0;
}

} // namespace dialog::tool
