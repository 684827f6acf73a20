// dialogctl bench config: dialog-configdb's commit latency, the configure read of a large partition
// (a document per slave) and `runs ls` over a long run registry.
#include "benchsupport.h"

#include "dialog/config.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>

namespace dialog::tool {

namespace {

/// Runs @p call (given the function to call when done) and returns how long the answer took, in ms;
/// -1 if it failed (@p error says why) or took longer than @p timeoutMs.
template <typename Call> double timed(Call call, QString *error, int timeoutMs = 60000)
{
    QElapsedTimer t;
    t.start();
    std::optional<Status> result;
    call([&](const Status &st) { result = st; });
    if (!runUntil([&] { return result.has_value(); }, timeoutMs)) {
        *error = QStringLiteral("no answer within %1 ms").arg(timeoutMs);
        return -1;
    }
    if (!result->isOk()) {
        *error = result->toString();
        return -1;
    }
    return elapsedMs(t);
}

QByteArray slaveDocument(int i)
{
    return QStringLiteral("{\"registers\": %1, \"check_ms\": 1000, \"description\": \"front-end card %2\"}")
        .arg(16 + i % 1000)
        .arg(i)
        .toUtf8();
}

/// @p runs run records, @p window requests in flight at a time (each is a transaction of its own).
bool fillRuns(config::ConfigClient &config, qint64 runs, QString *error)
{
    qint64 sent = 0, answered = 0;
    constexpr int window = 256;
    std::function<void()> sendOne = [&] {
        const QJsonObject run{{QStringLiteral("partition"), QStringLiteral("p%1").arg(sent % 8)},
                              {QStringLiteral("run_type"),
                               sent % 10 ? QStringLiteral("Physics") : QStringLiteral("Calibration")},
                              {QStringLiteral("config_version"), 1},
                              {QStringLiteral("operator"), QStringLiteral("bench@localhost")},
                              {QStringLiteral("master"), QStringLiteral("Master")}};
        ++sent;
        config.call({{QStringLiteral("op"), QStringLiteral("run-start")}, {QStringLiteral("run"), run}},
                    [&](const Status &st, const QJsonObject &) {
                        ++answered;
                        if (!st.isOk() && error->isEmpty())
                            *error = st.toString();
                        if (sent < runs && error->isEmpty())
                            sendOne();
                    });
    };
    for (int i = 0; i < window && sent < runs; ++i)
        sendOne();
    if (!runUntil([&] { return answered == sent && (sent == runs || !error->isEmpty()); }, 3600000))
        *error = QStringLiteral("the run registry did not answer");
    return error->isEmpty();
}

} // namespace

int benchConfig(const QStringList &args)
{
    const QString verb = QStringLiteral("bench config");
    qint64 documents = 1000, commits = 200, runs = 100000, repeats = 20;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Starts a Control Server and dialog-configdb (SQLite in a temporary directory, or --db) and "
        "measures: "
        "the latency of a commit of one document; the configure read of a partition of N slaves (a "
        "document each: what the master reads at configure); `runs ls` with R runs recorded."));
    p.add({Option::integer(QStringLiteral("documents"), QStringLiteral("n"),
                           QStringLiteral("Slave documents read at configure (default 1000)."), &documents, 1,
                           1000000),
           Option::integer(QStringLiteral("commits"), QStringLiteral("n"),
                           QStringLiteral("Commits timed (default 200)."), &commits, 1, 1000000),
           Option::integer(QStringLiteral("runs"), QStringLiteral("n"),
                           QStringLiteral("Runs recorded before `runs ls` is timed (default 100000)."), &runs,
                           1, 100000000),
           Option::integer(QStringLiteral("repeats"), QStringLiteral("n"),
                           QStringLiteral("Configure reads and run listings timed (default 20)."), &repeats,
                           1, 100000),
           Option::text(
               QStringLiteral("db"), QStringLiteral("url"),
               QStringLiteral(
                   "Use this PostgreSQL database (handed to dialog-configdb --db) instead of SQLite.")),
           Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object."))});
    if (!parse(p, args))
        return 1;
    QTemporaryDir dir;
    Environment env;
    QString error;
    if (!startWithScratch(dir, env, &error))
        return fail(verb, error);
    const QString db = p.value(QStringLiteral("db"));
    env.children.start(ChildProcesses::binary(QStringLiteral("dialog-configdb")),
                       QStringList{QStringLiteral("--control-server"), env.address, QStringLiteral("--name"),
                                   QStringLiteral("benchdb")} +
                           (db.isEmpty() ? QStringList{QStringLiteral("--data-dir"), dir.path()}
                                         : QStringList{QStringLiteral("--db"), db}));
    Client client(
        env.clientOptions(QStringLiteral("dialog-bench-config-%1").arg(QCoreApplication::applicationPid())));
    if (!client.start())
        return fail(verb, client.errorString());
    config::ConfigClient config(&client, QStringLiteral("benchdb"));
    quint64 head = 0;
    if (timed(
            [&](auto done) {
                config.resolve(QStringLiteral("head"), [&, done](const Status &st, quint64 v) {
                    head = v;
                    done(st);
                });
            },
            &error, 30000) < 0)
        return fail(verb, QStringLiteral("dialog-configdb: ") + error);

    // Commits of one document each, one after the other, each on the version before.
    QList<double> commitMs;
    for (qint64 i = 0; i < commits; ++i) {
        const double ms = timed(
            [&](auto done) {
                config.commit(head,
                              {{QStringLiteral("slaves/C%1").arg(i % 50), slaveDocument(int(i)), false}},
                              QStringLiteral("bench"), [&, done](const Status &st, const config::Commit &c) {
                                  head = c.version;
                                  done(st);
                              });
            },
            &error);
        if (ms < 0)
            return fail(verb, QStringLiteral("commit: ") + error);
        commitMs << ms;
    }

    // The partition's documents, in one commit; then the master's configure read: the version, then
    // both kinds' documents with their content.
    QList<config::Change> changes;
    for (qint64 i = 0; i < documents; ++i)
        changes.append({(i % 2 ? QStringLiteral("readout/R%1") : QStringLiteral("slaves/S%1")).arg(i),
                        i % 2 ? QByteArray("{\"threads\": 4, \"rate\": 100000}") : slaveDocument(int(i)),
                        false});
    if (timed(
            [&](auto done) {
                config.commit(head, changes, QStringLiteral("bench partition"),
                              [&, done](const Status &st, const config::Commit &c) {
                                  head = c.version;
                                  done(st);
                              });
            },
            &error) < 0)
        return fail(verb, QStringLiteral("commit of the partition: ") + error);
    QList<double> configureMs;
    qint64 read = 0;
    for (qint64 r = 0; r < repeats; ++r) {
        QElapsedTimer t;
        t.start();
        quint64 version = 0;
        read = 0;
        if (timed(
                [&](auto done) {
                    config.resolve(QStringLiteral("head"), [&, done](const Status &st, quint64 v) {
                        version = v;
                        done(st);
                    });
                },
                &error) < 0)
            return fail(verb, error);
        for (const QString &prefix : {QStringLiteral("slaves/"), QStringLiteral("readout/")})
            if (timed(
                    [&](auto done) {
                        config.list(prefix, QString::number(version), true,
                                    [&, done](const Status &st, const QList<config::Document> &d, quint64) {
                                        read += d.size();
                                        done(st);
                                    });
                    },
                    &error) < 0)
                return fail(verb, error);
        configureMs << elapsedMs(t);
    }

    QElapsedTimer fillTime;
    fillTime.start();
    if (!fillRuns(config, runs, &error))
        return fail(verb, QStringLiteral("recording runs: ") + error);
    const double fillS = double(fillTime.elapsed()) / 1000.0;
    QList<double> lsMs, lsTypeMs;
    for (qint64 r = 0; r < repeats; ++r) {
        for (const bool byType : {false, true}) {
            const double ms = timed(
                [&](auto done) {
                    config.call(
                        {{QStringLiteral("op"), QStringLiteral("runs")},
                         {QStringLiteral("limit"), 50},
                         {QStringLiteral("run_type"), byType ? QStringLiteral("Calibration") : QString()}},
                        [done](const Status &st, const QJsonObject &) { done(st); });
                },
                &error);
            if (ms < 0)
                return fail(verb, QStringLiteral("runs ls: ") + error);
            (byType ? lsTypeMs : lsMs) << ms;
        }
    }

    const Spread c = spreadOf(commitMs), f = spreadOf(configureMs), l = spreadOf(lsMs),
                 lt = spreadOf(lsTypeMs);
    const QString store = db.isEmpty() ? QStringLiteral("SQLite") : QStringLiteral("PostgreSQL");
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject o{{QStringLiteral("store"), store},
                            {QStringLiteral("commit_ms_p50"), c.p50},
                            {QStringLiteral("commit_ms_p99"), c.p99},
                            {QStringLiteral("configure_documents"), read},
                            {QStringLiteral("configure_ms_p50"), f.p50},
                            {QStringLiteral("configure_ms_max"), f.max},
                            {QStringLiteral("runs"), runs},
                            {QStringLiteral("runs_recorded_per_s"), double(runs) / qMax(fillS, 0.001)},
                            {QStringLiteral("runs_ls_ms_p50"), l.p50},
                            {QStringLiteral("runs_ls_ms_max"), l.max},
                            {QStringLiteral("runs_ls_type_ms_p50"), lt.p50}};
        std::printf("%s\n", QJsonDocument(o).toJson(QJsonDocument::Compact).constData());
        return 0;
    }
    std::printf("dialog-configdb on %s\n", qPrintable(store));
    std::printf("commit of one document:        p50 %.2f ms, p99 %.2f ms, max %.2f ms (%lld commits)\n",
                c.p50, c.p99, c.max, qlonglong(commits));
    std::printf("configure read, %lld documents: p50 %.1f ms, max %.1f ms (%lld reads)\n", qlonglong(read),
                f.p50, f.max, qlonglong(repeats));
    std::printf("runs recorded:                 %lld in %.1f s (%.0f/s)\n", qlonglong(runs), fillS,
                double(runs) / qMax(fillS, 0.001));
    std::printf("runs ls (50 newest):           p50 %.2f ms, max %.2f ms\n", l.p50, l.max);
    std::printf("runs ls --type Calibration:    p50 %.2f ms, max %.2f ms\n", lt.p50, lt.max);
    return 0;
}

} // namespace dialog::tool
