// dialogctl bench alarms: dialog-alarmserver with many rules over as many IS attributes — its start,
// its memory — and an alarm storm: many alarms raised at once, the time until the whole table
// reaches a subscriber of ALARM.Table (what a GUI sees), and until they have all cleared again.
#include "benchsupport.h"

#include "dialog/subscription.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>

namespace dialog::tool {

namespace {

const QString AlarmBenchServer = QStringLiteral("ALARMBENCH");
constexpr int AttributesPerObject = 10;

/// Ten numeric attributes v0..v9: one rule each.
is::TypeInfo benchAlarmType()
{
    is::TypeInfo t(QStringLiteral("BenchAlarm10"), QStringLiteral("Ten numbers watched by alarm rules"));
    QList<is::AttributeInfo> attributes;
    for (int i = 0; i < AttributesPerObject; ++i)
        attributes << is::AttributeInfo(QStringLiteral("v%1").arg(i), is::BasicType::Double);
    t.setAttributes(attributes);
    return t;
}

QByteArray rulesFile(qint64 rules)
{
    QByteArray json = "{\"alarms\": [\n";
    for (qint64 k = 0; k < rules; ++k) {
        const qint64 object = k / AttributesPerObject;
        json +=
            QStringLiteral("{\"path\": \"Bench/C%1/O%2/v%3\", \"severity\": \"%4\", \"condition\": {\"is\": "
                           "\"%5.o%2\", \"attribute\": \"v%3\", \"above\": 100, \"hysteresis\": 5}}%6\n")
                .arg(object / 100)
                .arg(object)
                .arg(k % AttributesPerObject)
                .arg(k % 3 == 0 ? QStringLiteral("major") : QStringLiteral("minor"), AlarmBenchServer,
                     k + 1 < rules ? QStringLiteral(",") : QString())
                .toUtf8();
    }
    return json + "]}\n";
}

/// Writes @p objects objects (from @p first) with every attribute at @p value, 256 in flight.
bool writeObjects(is::Dictionary &dict, qint64 first, qint64 objects, double value, QString *error)
{
    is::Object o = is::Object::create(dict.types(), QStringLiteral("BenchAlarm10"));
    for (int i = 0; i < AttributesPerObject; ++i)
        o.set<double>(QStringLiteral("v%1").arg(i), value);
    qint64 next = 0, done = 0, failures = 0;
    std::function<void()> one = [&] {
        dict.update(QStringLiteral("%1.o%2").arg(AlarmBenchServer).arg(first + next++), o,
                    is::Dictionary::UpdateMode::CreateIfMissing, [&](const is::Status &s) {
                        ++done;
                        failures += !s.isOk();
                        if (next < objects)
                            one();
                    });
    };
    for (int i = 0; i < 256 && next < objects; ++i)
        one();
    if (!runUntil([&] { return done == objects; }, 600000))
        return *error = QStringLiteral("IS writes timed out"), false;
    if (failures)
        return *error = QStringLiteral("%1 IS writes failed").arg(failures), false;
    return true;
}

} // namespace

int benchAlarms(const QStringList &args)
{
    const QString verb = QStringLiteral("bench alarms");
    qint64 rules = 100000, storm = 1000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Starts a Control Server, an IS server with R numeric attributes (objects of ten) and "
        "dialog-alarmserver with one rule per attribute, then raises S alarms at once (an alarm storm): "
        "the alarm server's start time and memory, the time until a subscriber of ALARM.Table (a GUI) "
        "has all S in its table, the alarm server's CPU and memory in the storm, and the time until "
        "they have all cleared."));
    p.add({Option::integer(QStringLiteral("rules"), QStringLiteral("n"),
                           QStringLiteral("Rules, one per IS attribute (default 100000)."), &rules, 10,
                           10000000),
           Option::integer(QStringLiteral("storm"), QStringLiteral("n"),
                           QStringLiteral("Alarms raised at once (default 1000; at most --rules)."), &storm,
                           10, 10000000),
           Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object."))});
    if (!parse(p, args))
        return 1;
    storm = std::min(storm, rules) / AttributesPerObject * AttributesPerObject;
    const qint64 objects = (rules + AttributesPerObject - 1) / AttributesPerObject;
    QTemporaryDir dir;
    Environment env;
    QString error;
    if (!startWithScratch(dir, env, &error))
        return fail(verb, error);
    env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")),
                       {QStringLiteral("--control-server"), env.address, QStringLiteral("--name"),
                        AlarmBenchServer, QStringLiteral("--threads"), QStringLiteral("1")});
    Client client(
        env.clientOptions(QStringLiteral("dialog-bench-alarms-%1").arg(QCoreApplication::applicationPid())));
    if (!client.start())
        return fail(verb, client.errorString());
    is::Dictionary dict(&client);
    dict.setTimeout(30000);
    if (!waitForIsServer(dict, AlarmBenchServer))
        return fail(verb, QStringLiteral("the IS server did not start"));
    if (const is::Status ds = dict.declareTypesSync(AlarmBenchServer, {benchAlarmType()}); !ds.isOk())
        return fail(verb, ds.toString());
    if (!writeObjects(dict, 0, objects, 0, &error))
        return fail(verb, error);

    QFile rulesOut(dir.filePath(QStringLiteral("rules.json")));
    if (!rulesOut.open(QIODevice::WriteOnly) || rulesOut.write(rulesFile(rules)) < 0)
        return fail(verb, QStringLiteral("cannot write the rules file"));
    rulesOut.close();
    QElapsedTimer clock;
    clock.start();
    QProcess *server = env.children.start(
        ChildProcesses::binary(QStringLiteral("dialog-alarmserver")),
        {QStringLiteral("--control-server"), env.address, QStringLiteral("--rules"), rulesOut.fileName(),
         QStringLiteral("--data-dir"), dir.filePath(QStringLiteral("data"))});
    // The table: what a GUI holds, from the messages of ALARM.Table.
    QJsonObject table;
    qint64 messages = 0, bytes = 0, largest = 0;
    client.subscribe(QStringLiteral("ALARM.Table"), &client, [&](const Message &m) {
        ++messages;
        bytes += m.data().size();
        largest = std::max<qint64>(largest, m.data().size());
        table = QJsonDocument::fromJson(m.data()).object();
    });
    const auto count = [&](const char *what) {
        return table.value(QStringLiteral("counts")).toObject().value(QLatin1String(what)).toInt(-1);
    };
    // Started: it published its table, and it has evaluated every rule once (the IS snapshot).
    if (!runUntil([&] { return table.value(QStringLiteral("rules")).toInteger() == rules; }, 600000))
        return fail(verb, QStringLiteral("dialog-alarmserver did not start: ") +
                              QString::fromUtf8(server->readAllStandardError()));
    const double startS = elapsedS(clock);
    runFor(2000); // the IS snapshot of every object evaluated
    const qint64 rssIdle = processStatusKb(server->processId(), "VmRSS");

    // The storm: storm / 10 objects written with every attribute above its threshold.
    const double cpuBefore = processCpuSeconds(server->processId());
    clock.restart();
    if (!writeObjects(dict, 0, storm / AttributesPerObject, 200, &error))
        return fail(verb, error);
    const double writtenMs = elapsedMs(clock);
    if (!runUntil([&] { return count("active") == storm; }, 120000))
        return fail(
            verb,
            QStringLiteral("the table did not reach %1 active alarms (%2)").arg(storm).arg(count("active")));
    const double tableMs = elapsedMs(clock);
    const qint64 messagesInStorm = messages;
    // Every change written to the history.
    if (!runUntil(
            [&] {
                return table.value(QStringLiteral("history"))
                           .toObject()
                           .value(QStringLiteral("pending"))
                           .toInt() == 0;
            },
            120000))
        return fail(verb, QStringLiteral("the history did not catch up"));
    const double historyMs = elapsedMs(clock);
    const double cpuStorm = processCpuSeconds(server->processId()) - cpuBefore;
    const qint64 rssStorm = processStatusKb(server->processId(), "VmRSS");
    const qint64 peak = processStatusKb(server->processId(), "VmHWM");
    clock.restart();
    if (!writeObjects(dict, 0, storm / AttributesPerObject, 0, &error))
        return fail(verb, error);
    if (!runUntil([&] { return count("listed") == 0; }, 120000))
        return fail(verb, QStringLiteral("the alarms did not clear"));
    const double clearMs = elapsedMs(clock);

    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject o{{QStringLiteral("rules"), rules},
                            {QStringLiteral("storm"), storm},
                            {QStringLiteral("start_s"), startS},
                            {QStringLiteral("rss_idle_kb"), rssIdle},
                            {QStringLiteral("storm_written_ms"), writtenMs},
                            {QStringLiteral("storm_table_ms"), tableMs},
                            {QStringLiteral("storm_history_ms"), historyMs},
                            {QStringLiteral("storm_cpu_s"), cpuStorm},
                            {QStringLiteral("rss_storm_kb"), rssStorm},
                            {QStringLiteral("peak_kb"), peak},
                            {QStringLiteral("table_messages"), messagesInStorm},
                            {QStringLiteral("table_bytes_max"), largest},
                            {QStringLiteral("clear_ms"), clearMs}};
        std::printf("%s\n", QJsonDocument(o).toJson(QJsonDocument::Compact).constData());
        return 0;
    }
    std::printf(
        "dialog-alarmserver with %lld rules over %lld IS objects: started in %.1f s, %lld MiB resident\n",
        rules, objects, startS, rssIdle / 1024);
    std::printf(
        "storm of %lld alarms: written to IS in %.0f ms; the whole table at a subscriber of ALARM.Table "
        "after %.0f ms (%lld messages, the largest %lld KiB); the history written after %.0f ms; "
        "%.2f s of CPU; %lld MiB resident (peak %lld MiB)\n",
        storm, writtenMs, tableMs, messagesInStorm, largest / 1024, historyMs, cpuStorm, rssStorm / 1024,
        peak / 1024);
    std::printf("all cleared after %.0f ms\n", clearMs);
    return 0;
}

} // namespace dialog::tool
