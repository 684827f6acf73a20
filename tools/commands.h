// The verbs of the `dialogctl` tool. Each parses its own arguments and returns the exit code.
#pragma once

#include "dialog/options.h"

#include <QStringList>

namespace dialog::tool {

int ls(const QStringList &args);
int get(const QStringList &args);
int send(const QStringList &args);
int publish(const QStringList &args);
int echo(const QStringList &args);
int bench(const QStringList &args);
int is(const QStringList &args);
/// Rewrites a stopped IS server's checkpoint in the layout of new type files (cmd_migrate.cpp).
int isMigrate(const QStringList &args);
/// Starts / stops the processes of a partition (cmd_up.cpp).
int up(const QStringList &args);
int down(const QStringList &args);
/// Restarts the lost processes of a partition that is up (cmd_up.cpp, supervisor.h).
int supervise(const QStringList &args);
/// The message log: tail, search, report, stats (cmd_log.cpp).
int log(const QStringList &args);
/// The audit trail of commands and IS writes (cmd_audit.cpp).
int audit(const QStringList &args);
/// The configuration database: ls, get, put, rm, edit, diff, log, tag, import, export, validate
/// (cmd_config.cpp).
int configVerb(const QStringList &args);
/// The run registry: ls, show, diff (cmd_runs.cpp).
int runsVerb(const QStringList &args);
/// Run control from scripts: a transition asked of the master, waited for; its state (cmd_rc.cpp).
int rcVerb(const QStringList &args);
/// The alarm server: ls, tree, history, ack, shelve, unshelve, disable, enable (cmd_alarm.cpp).
int alarmVerb(const QStringList &args);
/// dialog-alarmserver with many rules and an alarm storm (cmd_bench_alarms.cpp).
int benchAlarms(const QStringList &args);
/// The host agents: ls, start, stop, signal (cmd_agent.cpp); their crash reports.
int agentVerb(const QStringList &args);
int crashes(const QStringList &args);
/// Processes started through host agents, time until all registered (cmd_bench_agent.cpp).
int benchAgent(const QStringList &args);
/// The shared secret of a partition: generate, check (cmd_secret.cpp).
int secret(const QStringList &args);
/// The IS benchmarks (is-fanout, is-latency) and their child processes (is-sender, is-subscriber).
int benchIs(const QString &test, const QStringList &args);
/// Messages stored per second by dialog-logger and its search time (cmd_bench_log.cpp).
int benchLog(const QStringList &args);
/// dialog-configdb's commit latency, configure read and run listing (cmd_bench_config.cpp).
int benchConfig(const QStringList &args);
/// HTTP GET throughput of the web IS (cmd_bench_http.cpp).
int benchIsHttp(const QStringList &args);
/// What a stopped IS mirror costs the server it mirrors (cmd_bench_mirror.cpp).
int benchIsMirrorCost(const QStringList &args);
int benchIsSum(const QStringList &args);
/// Samples of a readout's events by criteria (cmd_sample.cpp); the readout's rate with consumers
/// (cmd_bench_sampling.cpp).
int sample(const QStringList &args);
int benchSampling(const QStringList &args);
/// dialog-dqm's results and references: ls, reference set (cmd_dqm.cpp); its round of checks and
/// the web IS's PNG route (cmd_bench_dqm.cpp).
int dqmVerb(const QStringList &args);
int benchDqm(const QStringList &args);
/// Checkpoint load time of an older type layout against the current one (cmd_bench_evolve.cpp).
int benchIsEvolve(const QStringList &args);

/// Thousands of light DIALOG processes against one Control Server, and its restart (cmd_bench_scale.cpp).
int benchCsScale(const QStringList &args);
/// The run-control tree with simulated slaves, and their OS processes (cmd_bench_rctree.cpp).
int benchRcTree(const QStringList &args);
int benchRcTreeSlaves(const QStringList &args);
/// The OS processes of clients that benchCsScale() starts.
int benchCsScaleClients(const QStringList &args);

/// Memory and query latency of the IS history ring (cmd_bench_history.cpp).
int benchIsHistory(const QStringList &args);
/// dialog-archiver's insert rate and one-week query time (cmd_bench_history.cpp).
int benchArchive(const QStringList &args);

/// "dialogctl VERB": how a verb names itself in its messages.
QString program(const QString &verb);
/// Prints "dialogctl VERB: why" on stderr and returns 1.
int fail(const QString &verb, const QString &why);
/// Adds --name and the DIALOG client options to the verb's @p table and parses @p args (positional
/// arguments are left to the verb); exits on --help. False, the reason printed, on a bad option or
/// value.
bool parse(OptionTable &table, const QStringList &args);
/// parse() for a verb that takes options only: a positional argument is an error.
bool parseOptionsOnly(OptionTable &table, const QStringList &args);

} // namespace dialog::tool
