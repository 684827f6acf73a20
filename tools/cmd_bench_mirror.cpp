// dialogctl bench is-mirror-cost: what a stopped mirror (SIGSTOP: it reads nothing) costs the IS server
// it mirrors. Rounds alternate between no mirror and a stopped one; the best round of each is
// compared, as the machine may be shared with other work. The test suite checks the guarantees
// (tst_mirror: the master never waits, its memory stays bounded, drops are counted); the figure is
// machine-dependent and lives here.
#include "benchsupport.h"
#include "commands.h"

#include "dialog/is/dictionary.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <csignal>
#include <cstdio>
#include <limits>

namespace dialog::tool {

namespace {

const QString Master = QStringLiteral("Bench");
const QString Mirror = QStringLiteral("BenchMirror");
const QString BlobType = QStringLiteral("BenchBlob");

/// CPU time a process has used (user + system), in clock ticks (-1 if unknown).
qint64 cpuTicks(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray stat = f.readAll();
    // Fields after the command name (which may hold spaces): utime is field 14, stime 15.
    const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    return fields.size() > 12 ? fields.at(11).toLongLong() + fields.at(12).toLongLong() : -1;
}

struct Options
{
    qint64 updates = 5000, objects = 1000, size = 4096, rounds = 5;
};

class MirrorCost
{
public:
    MirrorCost(Environment &env, is::Dictionary &dict, const Options &o) : m_env(env), m_dict(dict), m_o(o) {}

    bool setUp(QString *error)
    {
        is::TypeInfo t(BlobType, QStringLiteral("Benchmark payload"));
        t.setAttributes(
            {is::AttributeInfo(QStringLiteral("seq"), is::BasicType::U64, QStringLiteral("Update number")),
             is::AttributeInfo(QStringLiteral("data"), is::BasicType::U8, QStringLiteral("Payload"), true)});
        const is::Status ds = m_dict.declareTypesSync(Master, {t});
        if (!ds.isOk()) {
            *error = ds.toString();
            return false;
        }
        m_blob = is::Object::create(m_dict.types(), BlobType);
        m_blob.set(QStringLiteral("data"), QList<quint8>(m_o.size, quint8('x')));
        return burst() >= 0 || fail(error, QStringLiteral("the warm-up burst did not complete"));
    }

    /// --updates updates of the objects in turn, at most 256 in flight: elapsed ms, -1 on failure.
    qint64 burst()
    {
        QElapsedTimer t;
        t.start();
        qint64 sent = 0, done = 0, failed = 0;
        std::function<void()> one = [&] {
            m_blob.set<quint64>(QStringLiteral("seq"), quint64(m_seq));
            m_dict.update(QStringLiteral("%1.blob%2").arg(Master).arg(m_seq++ % m_o.objects), m_blob,
                          is::Dictionary::UpdateMode::CreateIfMissing, [&](const is::Status &s) {
                              ++done;
                              failed += !s.isOk();
                              if (sent < m_o.updates) {
                                  ++sent;
                                  one();
                              }
                          });
        };
        for (; sent < qMin<qint64>(256, m_o.updates); ++sent)
            one();
        if (!runUntil([&] { return done == m_o.updates; }, 120000) || failed)
            return -1;
        return qMax<qint64>(1, t.elapsed());
    }

    /// A server's statistics attribute @p name (-1 if unreadable).
    qint64 statistic(const QString &server, const QString &name)
    {
        is::Entry st;
        if (!m_dict.getSync(server + QStringLiteral(".Statistics"), &st).isOk())
            return -1;
        return name == QLatin1String("subscribers") ? qint64(st.object.get<quint32>(name))
                                                    : qint64(st.object.get<quint64>(name));
    }

    /// A mirror of the master, with the whole content copied; null with @p error.
    QProcess *startMirror(QString *error)
    {
        QProcess *p = m_env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")),
                                           {QStringLiteral("--name"), Mirror, QStringLiteral("--mirror-of"),
                                            Master, QStringLiteral("--control-server"), m_env.address});
        // Its statistics count its own Statistics object besides the copy.
        if (!runUntil([&] { return statistic(Mirror, QStringLiteral("objects")) >= m_o.objects; }, 30000)) {
            *error = QStringLiteral("the mirror did not copy the master's %1 objects within 30 s")
                         .arg(m_o.objects);
            return nullptr;
        }
        return p;
    }

    static bool fail(QString *error, const QString &why)
    {
        *error = why;
        return false;
    }

private:
    Environment &m_env;
    is::Dictionary &m_dict;
    const Options m_o;
    is::Object m_blob;
    qint64 m_seq = 0;
};

} // namespace

int benchIsMirrorCost(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-mirror-cost");
    Options o;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Throughput of an IS server's updates with no mirror and with a stopped mirror (SIGSTOP), best "
        "of --rounds rounds each, and the server's CPU time in both cases."));
    p.add({Option::integer(QStringLiteral("updates"), QStringLiteral("n"),
                           QStringLiteral("Updates per round (default 5000)."), &o.updates, 1, 10000000),
           Option::integer(QStringLiteral("objects"), QStringLiteral("n"),
                           QStringLiteral("Objects updated in turn (default 1000)."), &o.objects, 1, 100000),
           Option::size(QStringLiteral("size"), QStringLiteral("bytes"),
                        QStringLiteral("Payload bytes per update (default 4096)."), &o.size, 0, 16 << 20),
           Option::integer(QStringLiteral("rounds"), QStringLiteral("n"),
                           QStringLiteral("Rounds of each kind (default 5)."), &o.rounds, 1, 100),
           Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line."))});
    if (!parse(p, args))
        return 1;
    QString error;
    Environment env;
    if (!env.startControlServer(&error))
        return fail(verb, error);
    // The master's queue per subscriber as in the test suite: 1,000 notifications.
    QProcess *master =
        env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")),
                           {QStringLiteral("--name"), Master, QStringLiteral("--control-server"), env.address,
                            QStringLiteral("--subscriber-queue"), QStringLiteral("1000")});
    Client client(env.clientOptions(QStringLiteral("bench-is-mirror-cost")));
    if (!client.start())
        return fail(verb, client.errorString());
    is::Dictionary dict(&client);
    dict.setTimeout(30000);
    if (!waitForIsServer(dict, Master))
        return fail(verb, QStringLiteral("the IS server did not answer within 30 s"));
    MirrorCost bench(env, dict, o);
    if (!bench.setUp(&error))
        return fail(verb, error);

    qint64 bestWithout = std::numeric_limits<qint64>::max(), bestStopped = bestWithout;
    qint64 cpuWithout = 0, cpuStopped = 0;
    for (int round = 0; round < o.rounds; ++round) {
        qint64 cpu = cpuTicks(master->processId());
        const qint64 without = bench.burst();
        cpuWithout += cpuTicks(master->processId()) - cpu;
        if (without < 0)
            return fail(verb, QStringLiteral("a round without a mirror did not complete"));
        bestWithout = qMin(bestWithout, without);

        QProcess *mirror = bench.startMirror(&error);
        if (!mirror)
            return fail(verb, error);
        ::kill(pid_t(mirror->processId()), SIGSTOP);
        cpu = cpuTicks(master->processId());
        const qint64 stopped = bench.burst();
        cpuStopped += cpuTicks(master->processId()) - cpu;
        ::kill(pid_t(mirror->processId()), SIGKILL);
        ::kill(pid_t(mirror->processId()), SIGCONT);
        mirror->waitForFinished(5000);
        if (stopped < 0)
            return fail(verb, QStringLiteral("a round with a stopped mirror did not complete"));
        bestStopped = qMin(bestStopped, stopped);
        // The master drops the dead mirror's subscription before the next round.
        if (!runUntil([&] { return bench.statistic(Master, QStringLiteral("subscribers")) == 0; }, 30000))
            return fail(verb, QStringLiteral("the master kept the dead mirror's subscription"));
    }
    const qint64 dropped = bench.statistic(Master, QStringLiteral("dropped"));
    env.children.stopAll();
    const double without = o.updates * 1000.0 / double(bestWithout);
    const double stopped = o.updates * 1000.0 / double(bestStopped);
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{{QStringLiteral("test"), QStringLiteral("is-mirror-cost")},
                            {QStringLiteral("updates"), o.updates},
                            {QStringLiteral("objects"), o.objects},
                            {QStringLiteral("size"), o.size},
                            {QStringLiteral("rounds"), o.rounds},
                            {QStringLiteral("updates_per_s_without"), qRound64(without)},
                            {QStringLiteral("updates_per_s_stopped"), qRound64(stopped)},
                            {QStringLiteral("ratio"), qRound64(stopped / without * 1000) / 1000.0},
                            {QStringLiteral("cpu_ticks_without"), cpuWithout},
                            {QStringLiteral("cpu_ticks_stopped"), cpuStopped},
                            {QStringLiteral("dropped"), dropped}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("is-mirror-cost: %lld updates of %lld B over %lld objects, best of %lld rounds\n",
                    o.updates, o.size, o.objects, o.rounds);
        std::printf(
            "  %.0f updates/s with no mirror, %.0f with a stopped mirror (%.2f); master CPU %lld vs %lld "
            "ticks; %lld notifications dropped for the stopped mirror\n",
            without, stopped, stopped / without, cpuWithout, cpuStopped, dropped);
    }
    return 0;
}

} // namespace dialog::tool
