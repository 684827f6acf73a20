// The option table: typed rows with bounds and units, one error shape.
#include "dialog/clientoptions.h"
#include "dialog/options.h"

#include <QTest>

using dialog::Option;
using dialog::OptionTable;
using dialog::OptionUnit;
using dialog::Status;

class tst_Options : public QObject
{
    Q_OBJECT

private slots:
    void valuesReachTheirTargets();
    void defaultsStayWhenNotGiven();
    void badValueNamesOptionAndRange_data();
    void badValueNamesOptionAndRange();
    void durationAndSizeSuffixes_data();
    void durationAndSizeSuffixes();
    void unknownOptionIsAnError();
    void missingValueIsAnError();
    void requiredOption();
    void positionalArguments();
    void helpTextListsEveryRow();
    void helpIsNotAnError();
    void customReaderAndCheck();
    void environmentFallback();
    void clientOptionsThroughTheTable();
    void rowStatusSaysBadRequest();
};

void tst_Options::valuesReachTheirTargets()
{
    QString name;
    int threads = 0;
    qint64 bytes = 0;
    double rate = 0;
    bool flag = false, noFlag = true;
    QStringList sums;
    QString sync;
    OptionTable t(QStringLiteral("prog"));
    t.add(
        {Option::text(QStringLiteral("name"), QStringLiteral("name"), QStringLiteral("Name."), &name),
         Option::integer(QStringLiteral("threads"), QStringLiteral("n"), QStringLiteral("Threads."), &threads,
                         1, 256),
         Option::size(QStringLiteral("bytes"), QStringLiteral("bytes"), QStringLiteral("Bytes."), &bytes, 1,
                      qint64(1) << 40),
         Option::number(QStringLiteral("rate"), QStringLiteral("hz"), QStringLiteral("Rate."), &rate, 0, 1e6),
         Option::flag(QStringLiteral("flag"), QStringLiteral("Flag."), &flag),
         Option::flag(QStringLiteral("no-flag"), QStringLiteral("No flag."), &noFlag, false),
         Option::list(QStringLiteral("sum"), QStringLiteral("regex"), QStringLiteral("Sums."), &sums),
         Option::choice(QStringLiteral("sync"), QStringLiteral("policy"), QStringLiteral("Sync."), &sync,
                        {QStringLiteral("none"), QStringLiteral("batch"), QStringLiteral("always")})});
    QVERIFY2(t.parse({QStringLiteral("prog"), QStringLiteral("--name"), QStringLiteral("A"),
                      QStringLiteral("--threads=8"), QStringLiteral("--bytes"), QStringLiteral("4096"),
                      QStringLiteral("--rate"), QStringLiteral("2.5"), QStringLiteral("--flag"),
                      QStringLiteral("--no-flag"), QStringLiteral("--sum"), QStringLiteral("a"),
                      QStringLiteral("--sum"), QStringLiteral("b"), QStringLiteral("--sync"),
                      QStringLiteral("always")}),
             qPrintable(t.errorText()));
    QCOMPARE(name, QStringLiteral("A"));
    QCOMPARE(threads, 8);
    QCOMPARE(bytes, 4096);
    QCOMPARE(rate, 2.5);
    QVERIFY(flag);
    QVERIFY(!noFlag);
    QCOMPARE(sums, QStringList({QStringLiteral("a"), QStringLiteral("b")}));
    QCOMPARE(sync, QStringLiteral("always"));
    QVERIFY(!t.helpRequested());
}

void tst_Options::defaultsStayWhenNotGiven()
{
    int checkpointS = 10;
    QString bind = QStringLiteral("127.0.0.1");
    bool journal = true;
    OptionTable t(QStringLiteral("prog"));
    t.add({Option::duration(QStringLiteral("checkpoint-s"), QStringLiteral("s"), QStringLiteral("Interval."),
                            &checkpointS, OptionUnit::Seconds, 0, 86400),
           Option::text(QStringLiteral("bind"), QStringLiteral("addr"), QStringLiteral("Bind."), &bind),
           Option::flag(QStringLiteral("no-journal"), QStringLiteral("No journal."), &journal, false)});
    QVERIFY2(t.parse({QStringLiteral("prog")}), qPrintable(t.errorText()));
    QCOMPARE(checkpointS, 10);
    QCOMPARE(bind, QStringLiteral("127.0.0.1"));
    QVERIFY(journal);
}

void tst_Options::badValueNamesOptionAndRange_data()
{
    QTest::addColumn<QString>("option");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("error");
    QTest::newRow("below") << "threads"
                           << "0"
                           << "invalid --threads '0' (out of range 1..256)";
    QTest::newRow("above") << "threads"
                           << "257"
                           << "invalid --threads '257' (out of range 1..256)";
    QTest::newRow("not a number") << "threads"
                                  << "many"
                                  << "invalid --threads 'many' (expected an integer in 1..256)";
    QTest::newRow("suffix on a count") << "threads"
                                       << "8K"
                                       << "invalid --threads '8K' (expected an integer in 1..256)";
    QTest::newRow("duration out of range") << "checkpoint-s"
                                           << "-1"
                                           << "invalid --checkpoint-s '-1' (out of range 0..86400 seconds)";
    QTest::newRow("duration over with a suffix")
        << "checkpoint-s"
        << "2d"
        << "invalid --checkpoint-s '2d' (out of range 0..86400 seconds)";
    QTest::newRow("duration not whole") << "checkpoint-s"
                                        << "1500ms"
                                        << "invalid --checkpoint-s '1500ms' (not a whole number of seconds)";
    QTest::newRow("duration unknown suffix")
        << "checkpoint-s"
        << "5 weeks"
        << "invalid --checkpoint-s '5 weeks' (expected a duration in 0..86400 seconds; a bare number is in "
           "seconds, or add us, ms, s, min, h or d)";
    QTest::newRow("size below") << "queue-bytes"
                                << "1K"
                                << "invalid --queue-bytes '1K' (out of range 4096..1099511627776 bytes)";
    QTest::newRow("number") << "rate"
                            << "-0.5"
                            << "invalid --rate '-0.5' (out of range 0..1000)";
    QTest::newRow("number not a number") << "rate"
                                         << "fast"
                                         << "invalid --rate 'fast' (expected a number in 0..1000)";
    QTest::newRow("choice") << "sync"
                            << "sometimes"
                            << "invalid --sync 'sometimes' (none, batch or always)";
}

void tst_Options::badValueNamesOptionAndRange()
{
    QFETCH(QString, option);
    QFETCH(QString, value);
    QFETCH(QString, error);
    int threads = 4, checkpointS = 10;
    qint64 queueBytes = 8192;
    double rate = 1;
    QString sync = QStringLiteral("batch");
    OptionTable t(QStringLiteral("prog"));
    t.add({Option::integer(QStringLiteral("threads"), QStringLiteral("n"), QStringLiteral("Threads."),
                           &threads, 1, 256),
           Option::duration(QStringLiteral("checkpoint-s"), QStringLiteral("s"), QStringLiteral("Interval."),
                            &checkpointS, OptionUnit::Seconds, 0, 86400),
           Option::size(QStringLiteral("queue-bytes"), QStringLiteral("bytes"), QStringLiteral("Queue."),
                        &queueBytes, 4096, qint64(1) << 40),
           Option::number(QStringLiteral("rate"), QStringLiteral("hz"), QStringLiteral("Rate."), &rate, 0,
                          1000, OptionUnit::None),
           Option::choice(QStringLiteral("sync"), QStringLiteral("policy"), QStringLiteral("Sync."), &sync,
                          {QStringLiteral("none"), QStringLiteral("batch"), QStringLiteral("always")})});
    QVERIFY(!t.parse({QStringLiteral("prog"), QStringLiteral("--") + option, value}));
    QCOMPARE(t.errorText(), error);
    // A refused value leaves the target as it was.
    QCOMPARE(threads, 4);
    QCOMPARE(checkpointS, 10);
    QCOMPARE(queueBytes, 8192);
    QCOMPARE(rate, 1.0);
    QCOMPARE(sync, QStringLiteral("batch"));
}

void tst_Options::durationAndSizeSuffixes_data()
{
    QTest::addColumn<QString>("option");
    QTest::addColumn<QString>("value");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("seconds bare") << "timeout-s"
                                  << "90" << qint64(90);
    QTest::newRow("seconds in minutes") << "timeout-s"
                                        << "2min" << qint64(120);
    QTest::newRow("seconds in hours") << "timeout-s"
                                      << "1h" << qint64(3600);
    QTest::newRow("seconds in ms") << "timeout-s"
                                   << "3000ms" << qint64(3);
    QTest::newRow("ms bare") << "timeout-ms"
                             << "250" << qint64(250);
    QTest::newRow("ms from fractional s") << "timeout-ms"
                                          << "1.5s" << qint64(1500);
    QTest::newRow("ms from us") << "timeout-ms"
                                << "2000us" << qint64(2);
    QTest::newRow("bytes bare") << "bytes"
                                << "4096" << qint64(4096);
    QTest::newRow("bytes K") << "bytes"
                             << "64K" << qint64(65536);
    QTest::newRow("bytes MiB") << "bytes"
                               << "8MiB" << qint64(8 * 1024 * 1024);
    QTest::newRow("bytes g") << "bytes"
                             << "2g" << qint64(2) * 1024 * 1024 * 1024;
    QTest::newRow("KiB bare") << "heap-kib"
                              << "8192" << qint64(8192);
    QTest::newRow("KiB from M") << "heap-kib"
                                << "8M" << qint64(8192);
}

void tst_Options::durationAndSizeSuffixes()
{
    QFETCH(QString, option);
    QFETCH(QString, value);
    QFETCH(qint64, expected);
    int timeoutS = 0;
    qint64 timeoutMs = 0, bytes = 0;
    uint heapKiB = 0;
    OptionTable t(QStringLiteral("prog"));
    t.add({Option::duration(QStringLiteral("timeout-s"), QStringLiteral("s"), QStringLiteral("S."), &timeoutS,
                            OptionUnit::Seconds, 0, 86400),
           Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"), QStringLiteral("Ms."),
                            &timeoutMs, OptionUnit::Milliseconds, 0, 3600000),
           Option::size(QStringLiteral("bytes"), QStringLiteral("bytes"), QStringLiteral("B."), &bytes, 0,
                        qint64(1) << 40),
           Option::size(QStringLiteral("heap-kib"), QStringLiteral("kib"), QStringLiteral("K."), &heapKiB, 1,
                        1 << 30, OptionUnit::KiB)});
    QVERIFY2(t.parse({QStringLiteral("prog"), QStringLiteral("--") + option, value}),
             qPrintable(t.errorText()));
    const qint64 got = option == QLatin1String("timeout-s")    ? timeoutS
                       : option == QLatin1String("timeout-ms") ? timeoutMs
                       : option == QLatin1String("bytes")      ? bytes
                                                               : qint64(heapKiB);
    QCOMPARE(got, expected);
}

void tst_Options::unknownOptionIsAnError()
{
    bool flag = false;
    OptionTable t(QStringLiteral("prog"));
    t.add(Option::flag(QStringLiteral("flag"), QStringLiteral("Flag."), &flag));
    QVERIFY(!t.parse({QStringLiteral("prog"), QStringLiteral("--flga")}));
    QVERIFY2(t.errorText().contains(QStringLiteral("flga")), qPrintable(t.errorText()));
    QVERIFY(!flag);
}

void tst_Options::missingValueIsAnError()
{
    int threads = 4;
    OptionTable t(QStringLiteral("prog"));
    t.add(Option::integer(QStringLiteral("threads"), QStringLiteral("n"), QStringLiteral("Threads."),
                          &threads, 1, 256));
    QVERIFY(!t.parse({QStringLiteral("prog"), QStringLiteral("--threads")}));
    QVERIFY2(t.errorText().contains(QStringLiteral("--threads")), qPrintable(t.errorText()));
    QCOMPARE(threads, 4);
}

void tst_Options::requiredOption()
{
    QString name;
    OptionTable t(QStringLiteral("prog"));
    t.add(Option::text(QStringLiteral("name"), QStringLiteral("name"), QStringLiteral("Name."), &name)
              .required());
    QVERIFY(!t.parse({QStringLiteral("prog")}));
    QCOMPARE(t.errorText(), QStringLiteral("--name is required"));
    QVERIFY(t.parse({QStringLiteral("prog"), QStringLiteral("--name"), QStringLiteral("X")}));
    QCOMPARE(name, QStringLiteral("X"));
}

void tst_Options::positionalArguments()
{
    OptionTable refusing(QStringLiteral("prog"));
    QVERIFY(!refusing.parse({QStringLiteral("prog"), QStringLiteral("stray")}));
    QCOMPARE(refusing.errorText(), QStringLiteral("unexpected argument 'stray' (see --help)"));

    OptionTable taking(QStringLiteral("prog"));
    taking.addPositional(QStringLiteral("service"), QStringLiteral("Service name."));
    QVERIFY(taking.parse({QStringLiteral("prog"), QStringLiteral("S1")}));
    QCOMPARE(taking.positionalArguments(), QStringList{QStringLiteral("S1")});
}

void tst_Options::helpTextListsEveryRow()
{
    int threads = 1;
    bool flag = false;
    OptionTable t(QStringLiteral("prog"), QStringLiteral("What prog does."));
    t.add({Option::integer(QStringLiteral("threads"), QStringLiteral("n"), QStringLiteral("Worker threads."),
                           &threads, 1, 256),
           Option::flag(QStringLiteral("no-journal"), QStringLiteral("No journal."), &flag)});
    const QString help = t.helpText();
    QVERIFY2(help.contains(QStringLiteral("What prog does.")), qPrintable(help));
    QVERIFY2(help.contains(QStringLiteral("--threads <n>")), qPrintable(help));
    QVERIFY2(help.contains(QStringLiteral("Worker threads.")), qPrintable(help));
    QVERIFY2(help.contains(QStringLiteral("--no-journal")), qPrintable(help));
    QVERIFY2(help.contains(QStringLiteral("--help")), qPrintable(help));
}

void tst_Options::helpIsNotAnError()
{
    int threads = 4;
    OptionTable t(QStringLiteral("prog"));
    t.add(Option::integer(QStringLiteral("threads"), QStringLiteral("n"), QStringLiteral("Threads."),
                          &threads, 1, 256));
    // --help wins over a bad value elsewhere: no row is applied.
    QVERIFY(t.parse({QStringLiteral("prog"), QStringLiteral("--threads"), QStringLiteral("0"),
                     QStringLiteral("--help")}));
    QVERIFY(t.helpRequested());
    QCOMPARE(threads, 4);
}

void tst_Options::customReaderAndCheck()
{
    QStringList targets;
    QString criteria;
    OptionTable t(QStringLiteral("prog"));
    t.add({Option::custom(QStringLiteral("push-to"), QStringLiteral("host:port,..."), QStringLiteral("Push."),
                          [&targets](const QString &v) {
                              if (!v.contains(QLatin1Char(':')))
                                  return Option::refuse(QStringLiteral("HOST:PORT"));
                              targets = v.split(QLatin1Char(','));
                              return Status();
                          }),
           Option::text(QStringLiteral("criteria"), QStringLiteral("regex"), QStringLiteral("Criteria."),
                        &criteria)
               .check([](const QString &v) {
                   return v.contains(QLatin1Char('('))
                              ? Option::refuse(QStringLiteral("unbalanced parenthesis"))
                              : Status();
               })});
    QVERIFY(!t.parse({QStringLiteral("prog"), QStringLiteral("--push-to"), QStringLiteral("nohost")}));
    QCOMPARE(t.errorText(), QStringLiteral("invalid --push-to 'nohost' (HOST:PORT)"));
    QVERIFY(!t.parse({QStringLiteral("prog"), QStringLiteral("--criteria"), QStringLiteral("RO(")}));
    QCOMPARE(t.errorText(), QStringLiteral("invalid --criteria 'RO(' (unbalanced parenthesis)"));
    QVERIFY(criteria.isEmpty());
    QVERIFY(t.parse({QStringLiteral("prog"), QStringLiteral("--push-to"), QStringLiteral("a:1,b:2"),
                     QStringLiteral("--criteria"), QStringLiteral("RO.*")}));
    QCOMPARE(targets, QStringList({QStringLiteral("a:1"), QStringLiteral("b:2")}));
    QCOMPARE(criteria, QStringLiteral("RO.*"));
    // A refusal keeps the code its check chose; refuse() is a bad request.
    const Option secret =
        Option::text(QStringLiteral("secret-file"), QStringLiteral("path"), QStringLiteral("Secret."))
            .check([](const QString &) {
                return Status(Status::Code::SecurityError, QStringLiteral("unreadable"));
            });
    const Status st = secret.applyValue(QStringLiteral("/nowhere"));
    QCOMPARE(st.code(), Status::Code::SecurityError);
    QCOMPARE(st.message(), QStringLiteral("invalid --secret-file '/nowhere' (unreadable)"));
    QCOMPARE(Option::refuse(QStringLiteral("HOST:PORT")),
             Status(Status::Code::BadRequest, QStringLiteral("HOST:PORT")));
}

void tst_Options::environmentFallback()
{
    const QByteArray var = "DIALOG_TST_OPTIONS_LIMIT";
    int limit = 7;
    OptionTable t(QStringLiteral("prog"));
    t.add(Option::integer(QStringLiteral("limit"), QStringLiteral("n"), QStringLiteral("Limit."), &limit, 1,
                          100)
              .environment(QString::fromLatin1(var)));
    qputenv(var, "12");
    QVERIFY2(t.parse({QStringLiteral("prog")}), qPrintable(t.errorText()));
    QCOMPARE(limit, 12);
    // The command line wins over the environment.
    QVERIFY(t.parse({QStringLiteral("prog"), QStringLiteral("--limit"), QStringLiteral("3")}));
    QCOMPARE(limit, 3);
    qputenv(var, "1000");
    QVERIFY(!t.parse({QStringLiteral("prog")}));
    QCOMPARE(t.errorText(),
             QStringLiteral("$DIALOG_TST_OPTIONS_LIMIT: invalid --limit '1000' (out of range 1..100)"));
    qunsetenv(var);
}

void tst_Options::clientOptionsThroughTheTable()
{
    dialog::ClientOptions o;
    OptionTable t(QStringLiteral("prog"));
    o.addTo(t);
    QVERIFY2(t.parse({QStringLiteral("prog"), QStringLiteral("--heartbeat-ms"), QStringLiteral("2s"),
                      QStringLiteral("--control-server"), QStringLiteral("a:1,b:2"),
                      QStringLiteral("--no-direct-writes"), QStringLiteral("--queue-bytes"),
                      QStringLiteral("1M")}),
             qPrintable(t.errorText()));
    QCOMPARE(o.heartbeatMs, 2000);
    QCOMPARE(o.controlServers, QStringList({QStringLiteral("a:1"), QStringLiteral("b:2")}));
    QVERIFY(!o.directWrites);
    QCOMPARE(o.maxQueueBytes, 1024 * 1024);
    QVERIFY(!t.parse({QStringLiteral("prog"), QStringLiteral("--heartbeat-ms"), QStringLiteral("5")}));
    QCOMPARE(t.errorText(),
             QStringLiteral("invalid --heartbeat-ms '5' (out of range 10..3600000 milliseconds)"));
}

void tst_Options::rowStatusSaysBadRequest()
{
    int threads = 4;
    const Option row = Option::integer(QStringLiteral("threads"), QStringLiteral("n"),
                                       QStringLiteral("Threads."), &threads, 1, 256);
    const dialog::Status bad = row.applyValue(QStringLiteral("0"));
    QCOMPARE(bad.code(), dialog::Status::Code::BadRequest);
    QCOMPARE(bad.message(), QStringLiteral("invalid --threads '0' (out of range 1..256)"));
    QCOMPARE(threads, 4);
    QVERIFY(row.applyValue(QStringLiteral("8")).isOk());
    QCOMPARE(threads, 8);
    QCommandLineParser parser;
    parser.addOption(row.commandLineOption());
    QVERIFY(parser.parse({QStringLiteral("prog"), QStringLiteral("--threads"), QStringLiteral("x")}));
    QCOMPARE(row.apply(parser).code(), dialog::Status::Code::BadRequest);
    QCOMPARE(threads, 8);
}

QTEST_GUILESS_MAIN(tst_Options)
#include "tst_options.moc"
