// dialogctl bench rc-tree: the run-control tree at the scale of an experiment. A real master and
// real segment controllers (dialog-master --segment) over simulated slaves: light DIALOG processes,
// many to an OS process (dialogctl bench rc-tree-slaves), each answering transitions at once, so
// that what is measured is the tree's own cost. Times configure -> start -> stop, and how long a
// removable slave's loss takes to be decided.
#include "benchsupport.h"

#include "dialog/rc/staterecord.h"
#include "dialog/subscription.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <csignal>
#include <cstdio>

namespace dialog::tool {

namespace {

QString segmentName(qint64 s)
{
    return QStringLiteral("SEG%1").arg(s, 2, 10, QLatin1Char('0'));
}

QString slaveName(qint64 s, qint64 i)
{
    return QStringLiteral("S%1_%2").arg(s, 2, 10, QLatin1Char('0')).arg(i, 3, 10, QLatin1Char('0'));
}

/// One simulated slave: the state machine, RunCtrl.NAME.State published and every transition
/// request answered as soon as it arrives.
class SimulatedSlave : public QObject
{
public:
    explicit SimulatedSlave(const ClientOptions &o) : m_client(o)
    {
        m_state = m_client.publish(rc::stateService(o.name));
        QObject::connect(&m_client, &Client::requestReceived, this,
                         [this](const Request &r) { onRequest(r); });
        publish();
    }
    bool start() { return m_client.start(); }

private:
    void onRequest(const Request &request)
    {
        rc::TransitionRequest t;
        if (const Status bad = rc::TransitionRequest::fromJson(request.data(), &t); !bad.isOk())
            return void(m_client.replyError(request, bad.message()));
        if (const Status refused = m_machine.begin(t.transition); !refused.isOk())
            return void(m_client.replyError(request, refused.message()));
        m_machine.finish();
        if (t.transition == rc::Transition::Start)
            m_run = t.runNumber;
        m_client.reply(request, publish());
    }
    QByteArray publish()
    {
        rc::StateRecord r;
        r.process = m_client.name();
        r.kind = QStringLiteral("control");
        r.state = m_machine.state();
        r.timeMs = rc::nowMs();
        r.pid = QCoreApplication::applicationPid();
        r.runNumber = m_run;
        const QByteArray json = r.toJson();
        m_state->update(json);
        return json;
    }

    Client m_client;
    Service *m_state = nullptr;
    rc::StateMachine m_machine;
    quint32 m_run = 0;
};

/// Counts the present slaves in the master's tree and finds the removed ones.
void walk(const QJsonArray &nodes, qint64 *present, QStringList *removed)
{
    for (const QJsonValue &v : nodes) {
        const QJsonObject o = v.toObject();
        if (o.value(QStringLiteral("kind")).toString() != QLatin1String("segment"))
            *present += o.value(QStringLiteral("present")).toBool();
        if (o.value(QStringLiteral("removed")).toBool())
            *removed << o.value(QStringLiteral("name")).toString();
        walk(o.value(QStringLiteral("children")).toArray(), present, removed);
    }
}

} // namespace

int benchRcTreeSlaves(const QStringList &args)
{
    const QString verb = QStringLiteral("bench rc-tree-slaves");
    OptionTable p(program(verb));
    p.setDescription(
        QStringLiteral("Started by dialogctl bench rc-tree: the simulated slaves named as arguments, "
                       "in this OS process."));
    p.addPositional(QStringLiteral("names"), QStringLiteral("The slaves' process names."));
    if (!parse(p, args))
        return 1;
    raiseDescriptorLimit();
    std::vector<std::unique_ptr<SimulatedSlave>> slaves;
    for (const QString &name : p.positionalArguments()) {
        ClientOptions o = ClientOptions::fromEnvironment(name);
        if (const Status st = o.applyParser(p.parser()); !st.isOk())
            return fail(verb, st.message());
        o.senderThreads = 1; // light: one sender and one reader thread each
        o.readerThreads = 1;
        slaves.push_back(std::make_unique<SimulatedSlave>(o));
        if (!slaves.back()->start())
            return fail(verb, QStringLiteral("%1 cannot start").arg(name));
    }
    return QCoreApplication::exec();
}

int benchRcTree(const QStringList &args)
{
    const QString verb = QStringLiteral("bench rc-tree");
    qint64 segments = 10, perSegment = 100, perProcess = 250, cycles = 3, heartbeatMs = 500, timeoutS = 120;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "The run-control tree: a master over --segments segment controllers (dialog-master --segment) of "
        "--slaves simulated slaves each (light DIALOG processes that complete a transition at once, "
        "--per-process to an OS process). Prints the time of configure, start and stop end to end (from "
        "the request to the master's answer) for --cycles runs, and the time from a removable slave's "
        "SIGKILL until the master lists it removed."));
    p.add(Option::integer(QStringLiteral("segments"), QStringLiteral("n"),
                          QStringLiteral("Segment controllers (default 10)."), &segments, 1, 100));
    p.add(Option::integer(QStringLiteral("slaves"), QStringLiteral("n"),
                          QStringLiteral("Simulated slaves per segment (default 100)."), &perSegment, 1,
                          1000));
    p.add(Option::integer(QStringLiteral("per-process"), QStringLiteral("n"),
                          QStringLiteral("Simulated slaves per OS process (default 250)."), &perProcess, 1,
                          5000));
    p.add(Option::integer(QStringLiteral("cycles"), QStringLiteral("n"),
                          QStringLiteral("configure/start/stop/unconfigure cycles (default 3)."), &cycles, 1,
                          1000));
    p.add(Option::duration(QStringLiteral("timeout-s"), QStringLiteral("s"),
                           QStringLiteral("Give up waiting for the tree after this long (default 120)."),
                           &timeoutS, OptionUnit::Seconds, 1, 3600));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    // The client option --heartbeat-ms is also the partition's heartbeat_ms (default 500 here).
    if (p.isSet(QStringLiteral("heartbeat-ms")))
        heartbeatMs = qBound(qint64(50), p.value(QStringLiteral("heartbeat-ms")).toLongLong(), qint64(60000));
    raiseDescriptorLimit();
    if (!qEnvironmentVariableIsSet("QT_LOGGING_RULES"))
        qputenv("QT_LOGGING_RULES", "dialog.*.info=false");
    QString error;
    QTemporaryDir dir;
    Environment env;
    if (!dir.isValid())
        return fail(verb, QStringLiteral("cannot create a temporary directory"));
    if (!env.startControlServer(&error, {QStringLiteral("--heartbeat-ms"), QString::number(heartbeatMs)}))
        return fail(verb, error);

    // The partition: the slaves, each segment's share, one more removable slave (SPARE) in the first.
    QJsonArray slaves, tree;
    QList<QStringList> hosts{{}};
    for (qint64 s = 0; s < segments; ++s) {
        QJsonArray members;
        for (qint64 i = 0; i < perSegment; ++i) {
            const QString name = slaveName(s, i);
            slaves.append(QJsonObject{{QStringLiteral("name"), name},
                                      {QStringLiteral("kind"), QStringLiteral("control")}});
            members.append(name);
            if (hosts.last().size() >= perProcess)
                hosts.append(QStringList{});
            hosts.last() << name;
        }
        if (s == 0) {
            slaves.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("SPARE")},
                                      {QStringLiteral("kind"), QStringLiteral("control")},
                                      {QStringLiteral("removable"), true}});
            members.append(QStringLiteral("SPARE"));
        }
        tree.append(
            QJsonObject{{QStringLiteral("name"), segmentName(s)}, {QStringLiteral("slaves"), members}});
    }
    const QJsonObject partition{
        {QStringLiteral("name"), QStringLiteral("benchtree")},
        {QStringLiteral("control_server"),
         QJsonObject{{QStringLiteral("port"), env.port}, {QStringLiteral("start"), false}}},
        {QStringLiteral("heartbeat_ms"), heartbeatMs},
        {QStringLiteral("master"),
         QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                     {QStringLiteral("transition_timeout_ms"), 30000},
                     {QStringLiteral("run_number_file"), dir.filePath(QStringLiteral("runnumber"))}}},
        {QStringLiteral("slaves"), slaves},
        {QStringLiteral("segments"), tree}};
    const QString file = dir.filePath(QStringLiteral("benchtree.json"));
    QFile f(file);
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(partition).toJson()) <= 0)
        return fail(verb, QStringLiteral("cannot write %1").arg(file));
    f.close();

    qputenv("DIALOG_CONTROL_SERVER", env.address.toUtf8());
    const QStringList hb{QStringLiteral("--heartbeat-ms"), QString::number(heartbeatMs)};
    const QString master = ChildProcesses::binary(QStringLiteral("dialog-master"));
    env.children.start(master, QStringList{QStringLiteral("--config"), file, QStringLiteral("--no-is")} + hb);
    for (qint64 s = 0; s < segments; ++s)
        env.children.start(master, QStringList{QStringLiteral("--config"), file, QStringLiteral("--no-is"),
                                               QStringLiteral("--segment"), segmentName(s)} +
                                       hb);
    const QString self = QCoreApplication::applicationFilePath();
    for (const QStringList &names : std::as_const(hosts))
        env.children.start(self, QStringList{QStringLiteral("bench"), QStringLiteral("rc-tree-slaves")} + hb +
                                     names);
    QProcess *spare =
        env.children.start(self, QStringList{QStringLiteral("bench"), QStringLiteral("rc-tree-slaves")} + hb +
                                     QStringList{"SPARE"});

    ClientOptions o = env.clientOptions(QStringLiteral("bench-rc-tree"));
    o.heartbeatMs = int(heartbeatMs);
    Client client(o);
    if (!client.start())
        return fail(verb, client.errorString());
    Subscription *state = client.subscribe(rc::stateService(QStringLiteral("Master")));
    const qint64 total = segments * perSegment + 1;
    auto look = [&](qint64 *present, QStringList *removed) {
        rc::StateRecord r;
        if (!rc::StateRecord::fromJson(state->lastMessage().data(), &r).isOk())
            return r;
        walk(r.tree, present, removed);
        return r;
    };
    QElapsedTimer upTimer;
    upTimer.start();
    if (!runUntil(
            [&] {
                qint64 present = 0;
                QStringList removed;
                look(&present, &removed);
                return present == total;
            },
            int(timeoutS * 1000)))
        return fail(
            verb,
            QStringLiteral("the tree of %1 slaves was not all present within %2 s").arg(total).arg(timeoutS));
    const double upS = elapsedS(upTimer);

    auto ask = [&](const char *t, double *ms) {
        bool done = false, ok = false;
        QElapsedTimer timer;
        timer.start();
        client.request(rc::stateService(QStringLiteral("Master")), QByteArray(t), 60000, &client,
                       [&](const Reply &r) {
                           done = true;
                           ok = r.isOk();
                           if (!ok)
                               std::fprintf(stderr, "%s: %s\n", t, qPrintable(r.errorString()));
                       });
        runUntil([&] { return done; }, 65000);
        *ms = elapsedMs(timer);
        return ok;
    };
    QList<double> configure, start, stop, unconfigure, cycle;
    for (qint64 c = 0; c < cycles; ++c) {
        double a = 0, b = 0, d = 0, e = 0;
        if (!ask("configure", &a) || !ask("start", &b) || !ask("stop", &d) || !ask("unconfigure", &e))
            return fail(verb, QStringLiteral("a transition failed in cycle %1").arg(c + 1));
        configure << a;
        start << b;
        stop << d;
        unconfigure << e;
        cycle << a + b + d;
    }
    // Removal: a run going, the removable SPARE killed, until the master's tree says it is out.
    double dummy = 0;
    if (!ask("configure", &dummy) || !ask("start", &dummy))
        return fail(verb, QStringLiteral("the run for the removal did not start"));
    QElapsedTimer removal;
    removal.start();
    ::kill(pid_t(spare->processId()), SIGKILL);
    QString stateAfter;
    if (!runUntil(
            [&] {
                qint64 present = 0;
                QStringList removed;
                stateAfter = rc::stateName(look(&present, &removed).state);
                return removed.contains(QStringLiteral("SPARE"));
            },
            30000))
        return fail(verb, QStringLiteral("SPARE was not removed within 30 s"));
    const double removalMs = elapsedMs(removal);
    ask("stop", &dummy);

    const Spread cf = spreadOf(configure), st = spreadOf(start), sp = spreadOf(stop),
                 un = spreadOf(unconfigure), cy = spreadOf(cycle);
    if (p.isSet(QStringLiteral("json"))) {
        auto j = [](const Spread &s) {
            return QJsonObject{{QStringLiteral("p50_ms"), s.p50}, {QStringLiteral("max_ms"), s.max}};
        };
        const QJsonObject out{{QStringLiteral("segments"), segments},
                              {QStringLiteral("slaves"), total},
                              {QStringLiteral("os_processes"), hosts.size() + 1 + segments + 1},
                              {QStringLiteral("tree_up_s"), upS},
                              {QStringLiteral("configure"), j(cf)},
                              {QStringLiteral("start"), j(st)},
                              {QStringLiteral("stop"), j(sp)},
                              {QStringLiteral("unconfigure"), j(un)},
                              {QStringLiteral("configure_start_stop"), j(cy)},
                              {QStringLiteral("heartbeat_ms"), heartbeatMs},
                              {QStringLiteral("removal_ms"), removalMs},
                              {QStringLiteral("state_after_removal"), stateAfter}};
        std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
        return 0;
    }
    std::printf("rc-tree: %lld segments x %lld simulated slaves (+1 removable), %lld OS processes of slaves; "
                "tree present after %.1f s\n",
                segments, perSegment, qlonglong(hosts.size() + 1), upS);
    std::printf("  configure   p50 %7.1f ms  max %7.1f ms\n", cf.p50, cf.max);
    std::printf("  start       p50 %7.1f ms  max %7.1f ms\n", st.p50, st.max);
    std::printf("  stop        p50 %7.1f ms  max %7.1f ms\n", sp.p50, sp.max);
    std::printf("  unconfigure p50 %7.1f ms  max %7.1f ms\n", un.p50, un.max);
    std::printf("  configure+start+stop p50 %.1f ms, max %.1f ms (%lld cycles)\n", cy.p50, cy.max, cycles);
    std::printf("  removal of a SIGKILLed removable slave: %.1f ms (heartbeat %lld ms), the run %s\n",
                removalMs, heartbeatMs, qPrintable(stateAfter));
    return 0;
}

} // namespace dialog::tool
