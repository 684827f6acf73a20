// dialogctl agent: the host agents (dialog-agent) — ls, start, stop, signal; dialogctl crashes.
#include "agentsession.h"

#include "dialog/directory.h"
#include "dialog/logrecord.h"
#include "dialog/subscription.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTimer>
#include <cstdio>

namespace dialog::tool {

namespace {

const QLatin1String AgentPrefix("DIALOG.Agent.");

const char *agentUsage =
    "usage: dialogctl agent <ls|start|stop|signal> [options]\n"
    "\n"
    "  ls [HOST]                          hosts with an agent, their processes and state (--json)\n"
    "  start HOST NAME -- PROGRAM [ARG…]  start PROGRAM as NAME on HOST (--restart, --env, --grace-ms)\n"
    "  stop HOST NAME                     SIGTERM, SIGKILL after the grace time (--grace-ms)\n"
    "  signal HOST NAME SIGNAL            send a signal (SEGV, USR1, 10, …)\n";

void print(const QString &text)
{
    std::fputs(text.toLocal8Bit().constData(), stdout);
}

QString exitText(const QJsonObject &e)
{
    if (e.isEmpty())
        return QStringLiteral("-");
    if (e.contains(QStringLiteral("error")))
        return e.value(QStringLiteral("error")).toString();
    if (e.contains(QStringLiteral("signal")))
        return QStringLiteral("signal %1").arg(e.value(QStringLiteral("signal")).toInt());
    return QStringLiteral("exit %1").arg(e.value(QStringLiteral("exit_code")).toInt());
}

QString timeText(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

/// The verb's table with --timeout-ms, parsed; the positional arguments in @p positional.
bool parseVerb(OptionTable &t, AgentSession &s, const QStringList &args, QStringList *positional, int minArgs,
               const QString &usage)
{
    t.add(Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                           QStringLiteral("Wait this long for the agents (default 10000)."), &s.timeoutMs,
                           OptionUnit::Milliseconds, 1, 3600000));
    if (!parse(t, args))
        return false;
    *positional = t.parser().positionalArguments();
    if (positional->size() < minArgs) {
        std::fprintf(stderr, "%s: expected %s\n", qPrintable(t.parser().applicationDescription().isEmpty()
                                                                   ? QStringLiteral("dialogctl agent")
                                                                   : program(QStringLiteral("agent"))),
                     qPrintable(usage));
        return false;
    }
    return true;
}

int agentLs(const QStringList &args)
{
    const QString verb = QStringLiteral("agent ls");
    OptionTable t(program(verb));
    t.setDescription(QStringLiteral("The hosts with an agent, their processes and state."));
    t.add(Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per host.")));
    AgentSession s;
    QStringList pos;
    if (!parseVerb(t, s, args, &pos, 0, QStringLiteral("[HOST]")))
        return 1;
    QString error;
    QStringList hosts;
    if (!s.open(t, verb, &error) || !s.hosts(&hosts, &error))
        return fail(verb, error);
    if (!pos.isEmpty())
        hosts = pos;
    int rc = 0;
    for (const QString &host : std::as_const(hosts)) {
        QJsonObject a;
        const Status st = s.call(host, {{QStringLiteral("op"), QStringLiteral("ls")}}, &a);
        if (!st.isOk()) {
            std::fprintf(stderr, "dialogctl agent ls: %s: %s\n", qPrintable(host), qPrintable(st.message()));
            rc = 1;
            continue;
        }
        if (t.isSet(QStringLiteral("json"))) {
            print(QString::fromUtf8(QJsonDocument(a).toJson(QJsonDocument::Compact)) + QLatin1Char('\n'));
            continue;
        }
        const QJsonObject f = a.value(QStringLiteral("figures")).toObject();
        const QJsonArray load = f.value(QStringLiteral("load")).toArray();
        print(QStringLiteral("%1  agent %2 (PID %3)  load %4  cpu %5%  mem free %6 MiB  disk free %7 MiB\n")
                  .arg(host, a.value(QStringLiteral("version")).toString())
                  .arg(a.value(QStringLiteral("pid")).toInteger())
                  .arg(load.at(0).toDouble(), 0, 'f', 2)
                  .arg(f.value(QStringLiteral("cpu_load")).toDouble(), 0, 'f', 0)
                  .arg(f.value(QStringLiteral("memory_available")).toInteger() >> 20)
                  .arg(f.value(QStringLiteral("disk_free")).toInteger() >> 20));
        for (const QJsonValue &pv : a.value(QStringLiteral("processes")).toArray()) {
            const QJsonObject p = pv.toObject();
            print(QStringLiteral("  %1 %2 %3 restarts %4  last %5  %6\n")
                      .arg(p.value(QStringLiteral("name")).toString(), -24)
                      .arg(p.value(QStringLiteral("state")).toString(), -10)
                      .arg(p.contains(QStringLiteral("pid")) ? QStringLiteral("PID %1").arg(p.value(QStringLiteral("pid")).toInteger())
                                                            : QStringLiteral("-"),
                           -10)
                      .arg(p.value(QStringLiteral("restarts")).toInt())
                      .arg(exitText(p.value(QStringLiteral("last_exit")).toObject()),
                           p.value(QStringLiteral("program")).toString()));
        }
    }
    if (hosts.isEmpty() && !t.isSet(QStringLiteral("json")))
        print(QStringLiteral("no agent registered\n"));
    return rc;
}

/// Prints the answer of a start, stop or signal: one JSON line with --json, else a sentence.
int answerOf(const QString &verb, const OptionTable &t, const Status &st, const QJsonObject &a, const QString &done)
{
    if (!st.isOk())
        return fail(verb, st.message());
    if (t.isSet(QStringLiteral("json")))
        print(QString::fromUtf8(QJsonDocument(a).toJson(QJsonDocument::Compact)) + QLatin1Char('\n'));
    else
        print(done + QLatin1Char('\n'));
    return 0;
}

int agentStart(const QStringList &args)
{
    const QString verb = QStringLiteral("agent start");
    OptionTable t(program(verb));
    t.setDescription(QStringLiteral("Starts PROGRAM with its arguments (never through a shell) as NAME on HOST."));
    QString restart = QStringLiteral("no");
    QStringList env, hosts;
    qint64 grace = 5000, limit = 5, delay = 200, loss = 5000;
    t.add({Option::flag(QStringLiteral("json"), QStringLiteral("Print the agent's answer as JSON.")),
           Option::choice(QStringLiteral("restart"), QStringLiteral("policy"),
                          QStringLiteral("Start it again when it ends: no (default), on-failure, always."), &restart,
                          {QStringLiteral("no"), QStringLiteral("on-failure"), QStringLiteral("always")}),
           Option::duration(QStringLiteral("restart-delay"), QStringLiteral("ms"),
                            QStringLiteral("First restart after this long, doubled after each quick failure "
                                           "(default 200 ms)."),
                            &delay, OptionUnit::Milliseconds, 0, 3600000),
           Option::integer(QStringLiteral("restart-limit"), QStringLiteral("n"),
                           QStringLiteral("Give up after n restarts within a minute (default 5)."), &limit, 1, 1000),
           Option::list(QStringLiteral("env"), QStringLiteral("NAME=VALUE"),
                        QStringLiteral("An environment variable for the process (repeatable)."), &env),
           Option::duration(QStringLiteral("grace-ms"), QStringLiteral("ms"),
                            QStringLiteral("SIGKILL this long after SIGTERM when stopped (default 5000)."), &grace,
                            OptionUnit::Milliseconds, 0, 3600000),
           Option::list(QStringLiteral("hosts"), QStringLiteral("host"),
                        QStringLiteral("Migratable: the agent hosts it may run on, in order (repeatable; "
                                       "docs/agent.md, migration)."),
                        &hosts),
           Option::duration(QStringLiteral("loss-ms"), QStringLiteral("ms"),
                            QStringLiteral("With --hosts: how long it and its host must be gone before a fallback "
                                           "takes it (default 5000)."),
                            &loss, OptionUnit::Milliseconds, 200, 600000),
           Option::flag(QStringLiteral("standby"),
                        QStringLiteral("With --hosts: keep it on HOST as a fallback, not started.")) });
    AgentSession s;
    QStringList pos;
    if (!parseVerb(t, s, args, &pos, 3, QStringLiteral("HOST NAME -- PROGRAM [ARG…]")))
        return 1;
    QJsonObject e;
    for (const QString &kv : std::as_const(env)) {
        if (!kv.contains(QLatin1Char('=')))
            return fail(verb, QStringLiteral("--env '%1': expected NAME=VALUE").arg(kv));
        e.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
    }
    QJsonObject request{{QStringLiteral("op"), QStringLiteral("start")},
                              {QStringLiteral("name"), pos.at(1)},
                              {QStringLiteral("program"), pos.at(2)},
                              {QStringLiteral("args"), QJsonArray::fromStringList(pos.mid(3))},
                              {QStringLiteral("env"), e},
                              {QStringLiteral("restart"), restart},
                              {QStringLiteral("restart_delay_ms"), delay},
                              {QStringLiteral("restart_limit_per_minute"), limit},
                              {QStringLiteral("grace_ms"), grace}};
    const bool standby = t.isSet(QStringLiteral("standby"));
    if (standby && hosts.isEmpty())
        return fail(verb, QStringLiteral("--standby needs --hosts"));
    if (!hosts.isEmpty()) {
        request.insert(QStringLiteral("hosts"), QJsonArray::fromStringList(hosts));
        request.insert(QStringLiteral("loss_ms"), loss);
        request.insert(QStringLiteral("standby"), standby);
    }
    QString error;
    if (!s.open(t, verb, &error))
        return fail(verb, error);
    QJsonObject a;
    const Status st = s.call(pos.at(0), request, &a);
    return answerOf(verb, t, st, a,
                    standby ? QStringLiteral("%1 standing by on %2").arg(pos.at(1), pos.at(0))
                            : QStringLiteral("%1 started on %2 (PID %3)").arg(pos.at(1), pos.at(0)).arg(a.value(QStringLiteral("pid")).toInteger()));
}

int agentStop(const QStringList &args)
{
    const QString verb = QStringLiteral("agent stop");
    OptionTable t(program(verb));
    t.setDescription(QStringLiteral("Stops NAME on HOST: SIGTERM, SIGKILL after its grace time; waits until it ended."));
    qint64 grace = -1;
    t.add({Option::flag(QStringLiteral("json"), QStringLiteral("Print the agent's answer as JSON.")),
           Option::duration(QStringLiteral("grace-ms"), QStringLiteral("ms"),
                            QStringLiteral("SIGKILL this long after SIGTERM (default: the process's own)."), &grace,
                            OptionUnit::Milliseconds, 0, 3600000)});
    AgentSession s;
    QStringList pos;
    if (!parseVerb(t, s, args, &pos, 2, QStringLiteral("HOST NAME")))
        return 1;
    QString error;
    if (!s.open(t, verb, &error))
        return fail(verb, error);
    QJsonObject request{{QStringLiteral("op"), QStringLiteral("stop")}, {QStringLiteral("name"), pos.at(1)}};
    if (grace >= 0)
        request.insert(QStringLiteral("grace_ms"), grace);
    QJsonObject a;
    const Status st = s.call(pos.at(0), request, &a, s.timeoutMs + qMax<qint64>(grace, 0) + 5000);
    return answerOf(verb, t, st, a,
                    QStringLiteral("%1 on %2 stopped (%3)")
                        .arg(pos.at(1), pos.at(0), exitText(a.value(QStringLiteral("last_exit")).toObject())));
}

int agentSignal(const QStringList &args)
{
    const QString verb = QStringLiteral("agent signal");
    OptionTable t(program(verb));
    t.setDescription(QStringLiteral("Sends SIGNAL (a name such as SEGV or USR1, or a number) to NAME on HOST."));
    t.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print the agent's answer as JSON.")));
    AgentSession s;
    QStringList pos;
    if (!parseVerb(t, s, args, &pos, 3, QStringLiteral("HOST NAME SIGNAL")))
        return 1;
    QString error;
    if (!s.open(t, verb, &error))
        return fail(verb, error);
    QJsonObject a;
    const Status st = s.call(pos.at(0),
                             {{QStringLiteral("op"), QStringLiteral("signal")},
                              {QStringLiteral("name"), pos.at(1)},
                              {QStringLiteral("signal"), pos.at(2)}},
                             &a);
    return answerOf(verb, t, st, a,
                    QStringLiteral("%1 sent to %2 on %3").arg(a.value(QStringLiteral("signal")).toString(), pos.at(1), pos.at(0)));
}

} // namespace

QString agentService(const QString &host)
{
    return AgentPrefix + host;
}

bool AgentSession::hosts(QStringList *out, QString *error)
{
    const QString self = client->name();
    DirectoryAssembler pages;
    std::optional<DirectorySnapshot> current;
    QEventLoop loop;
    Subscription *sub = client->subscribe(directoryServiceName());
    QObject::connect(sub, &Subscription::messageReceived, &loop, [&](const Message &m) {
        std::optional<DirectorySnapshot> dir;
        if (pages.add(m.data(), &dir).isOk() && dir && dir->process(self)) { // made after we registered: current
            current = std::move(dir);
            loop.quit();
        }
    });
    QTimer::singleShot(int(timeoutMs), &loop, &QEventLoop::quit);
    loop.exec();
    client->unsubscribe(sub);
    if (!current) {
        *error = QStringLiteral("no directory from the Control Server at %1 within %2 ms")
                     .arg(client->options().controlServers.join(QLatin1Char(',')))
                     .arg(timeoutMs);
        return false;
    }
    for (const QString &name : current->processNames())
        if (name.startsWith(AgentPrefix))
            out->append(name.mid(AgentPrefix.size()));
    out->sort();
    return true;
}

Status AgentSession::call(const QString &host, const QJsonObject &request, QJsonObject *answer, qint64 timeout)
{
    Status result(Status::Code::Timeout);
    QEventLoop loop;
    client->request(agentService(host), QJsonDocument(request).toJson(QJsonDocument::Compact),
                    int(timeout < 0 ? timeoutMs : timeout), &loop, [&](const Reply &r) {
                        result = r.status();
                        if (r.isOk())
                            *answer = QJsonDocument::fromJson(r.data()).object();
                        if (r.error() == Status::Code::Timeout)
                            result = Status(Status::Code::Timeout,
                                            QStringLiteral("no answer from the agent of %1 (%2)").arg(host, agentService(host)));
                        loop.quit();
                    });
    loop.exec();
    return result;
}

int agentVerb(const QStringList &args)
{
    const QString sub = args.value(1);
    QStringList rest = args;
    if (rest.size() > 1)
        rest.removeAt(1);
    if (sub == QLatin1String("ls"))
        return agentLs(rest);
    if (sub == QLatin1String("start"))
        return agentStart(rest);
    if (sub == QLatin1String("stop"))
        return agentStop(rest);
    if (sub == QLatin1String("signal"))
        return agentSignal(rest);
    std::fputs(agentUsage, sub == QLatin1String("--help") || sub == QLatin1String("-h") ? stdout : stderr);
    return sub == QLatin1String("--help") || sub == QLatin1String("-h") ? 0 : 1;
}

int crashes(const QStringList &args)
{
    const QString verb = QStringLiteral("crashes");
    OptionTable t(program(verb));
    t.setDescription(QStringLiteral("The crash reports of the host agents, oldest first: process, host, PID, "
                                    "signal, the last lines it printed and the backtrace."));
    qint64 since = 0;
    t.add({Option::custom(QStringLiteral("since"), QStringLiteral("time"),
                          QStringLiteral("Crashes at or after: 2h, 3d, ISO 8601 or ms (default: all the agents keep)."),
                          [&since](const QString &v) {
                              const auto ms = parseLogTime(v);
                              if (!ms)
                                  return Option::refuse(QStringLiteral("expected e.g. 2h, 3d, 2026-11-23T18:00:00 or ms"));
                              since = *ms;
                              return Status();
                          }),
           Option::text(QStringLiteral("host"), QStringLiteral("host"), QStringLiteral("Only this host's agent.")),
           Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per crash.")),
           Option::flag(QStringLiteral("backtrace"), QStringLiteral("Print the backtraces too (always with --json)."))});
    AgentSession s;
    QStringList pos;
    if (!parseVerb(t, s, args, &pos, 0, {}))
        return 1;
    QString error;
    QStringList hosts;
    if (!s.open(t, verb, &error))
        return fail(verb, error);
    if (t.isSet(QStringLiteral("host")))
        hosts = {t.value(QStringLiteral("host"))};
    else if (!s.hosts(&hosts, &error))
        return fail(verb, error);
    QList<QJsonObject> all;
    int rc = 0;
    for (const QString &host : std::as_const(hosts)) {
        QJsonObject a;
        const Status st = s.call(host, {{QStringLiteral("op"), QStringLiteral("crashes")}, {QStringLiteral("since"), since}}, &a);
        if (!st.isOk()) {
            std::fprintf(stderr, "dialogctl crashes: %s: %s\n", qPrintable(host), qPrintable(st.message()));
            rc = 1;
            continue;
        }
        for (const QJsonValue &c : a.value(QStringLiteral("crashes")).toArray())
            all.append(c.toObject());
    }
    std::stable_sort(all.begin(), all.end(), [](const QJsonObject &a, const QJsonObject &b) {
        return a.value(QStringLiteral("time")).toInteger() < b.value(QStringLiteral("time")).toInteger();
    });
    for (const QJsonObject &c : std::as_const(all)) {
        if (t.isSet(QStringLiteral("json"))) {
            print(QString::fromUtf8(QJsonDocument(c).toJson(QJsonDocument::Compact)) + QLatin1Char('\n'));
            continue;
        }
        print(QStringLiteral("%1  %2 on %3 (PID %4) %5 after %6 s%7\n")
                  .arg(timeText(c.value(QStringLiteral("time")).toInteger()), c.value(QStringLiteral("process")).toString(),
                       c.value(QStringLiteral("host")).toString())
                  .arg(c.value(QStringLiteral("pid")).toInteger())
                  .arg(c.value(QStringLiteral("signal_name")).toString())
                  .arg(double(c.value(QStringLiteral("run_ms")).toInteger()) / 1000.0, 0, 'f', 1)
                  .arg(c.contains(QStringLiteral("no_backtrace"))
                           ? QStringLiteral("  (no backtrace: %1)").arg(c.value(QStringLiteral("no_backtrace")).toString())
                           : QString()));
        if (t.isSet(QStringLiteral("backtrace")))
            print(c.value(QStringLiteral("backtrace")).toString() + QLatin1Char('\n'));
    }
    return rc;
}

} // namespace dialog::tool
