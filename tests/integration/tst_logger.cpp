// dialog-logger with the real Control Server, real reporting processes (`dialogctl log report`) and a
// real SQLite file: completeness and order, collapsing, drops, restarts, the CLI, a read-only database.
// File and line of Qt messages are recorded in release builds only with this defined.
#define QT_MESSAGELOGCONTEXT
#include "processfixture.h"
#include "unprivileged.h"

#include "dialog/client.h"
#include "dialog/logrecord.h"
#include "dialog/report.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QHash>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <algorithm>
#include <functional>
#include <unistd.h>

using namespace dialog::test;

Q_LOGGING_CATEGORY(lcTest, "dialog.test.logger")

class tst_Logger : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<QTemporaryDir> m_dir;
    QProcess *m_logger = nullptr;
    std::unique_ptr<QProcess> m_unprivileged;

    QProcess *startLogger(const QStringList &extra = {})
    {
        return m_fx->start(QStringLiteral("dialog-logger"),
                           QStringList{QStringLiteral("--data-dir"), m_dir->path()} + extra);
    }

    /// The logger run by /usr/bin/setpriv as user and group 65534 (for root, who writes read-only files).
    QProcess *startUnprivilegedLogger()
    {
        m_unprivileged = std::make_unique<QProcess>();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_fx->controlServer());
        m_unprivileged->setProcessEnvironment(env);
        m_unprivileged->start(QStringLiteral("setpriv"),
                              {QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"),
                               QStringLiteral("--clear-groups"), bin(QStringLiteral("dialog-logger")),
                               QStringLiteral("--data-dir"), m_dir->path()});
        return m_unprivileged.get();
    }

    /// Polls `dialogctl log stats` until the logger answers (bounded).
    QJsonObject waitForLogger()
    {
        QByteArray out;
        const bool answered = waitUntil(
            [&] {
                return m_fx->run(QStringLiteral("dialogctl"),
                                 {QStringLiteral("log"), QStringLiteral("stats")}, &out) == 0;
            },
            15000, 50);
        return answered ? QJsonDocument::fromJson(out).object() : QJsonObject();
    }

    /// `dialogctl log search --json ARGS`: the records, oldest first.
    QList<QJsonObject> search(const QStringList &args, int *rc = nullptr, QByteArray *err = nullptr)
    {
        QByteArray out;
        const int code = m_fx->run(
            QStringLiteral("dialogctl"),
            QStringList{QStringLiteral("log"), QStringLiteral("search"), QStringLiteral("--json")} + args,
            &out, err);
        if (rc)
            *rc = code;
        QList<QJsonObject> records;
        for (const QByteArray &line : out.split('\n'))
            if (!line.isEmpty())
                records.append(QJsonDocument::fromJson(line).object());
        return records;
    }

    QStringList reportArgs(const QString &name, const QStringList &extra)
    {
        return QStringList{QStringLiteral("log"),          QStringLiteral("report"),
                           QStringLiteral("--name"),       name,
                           QStringLiteral("--timeout-ms"), QString::number(10000 * SanitizerTimeScale)} +
               extra;
    }

    /// Waits (bounded) until every process in @p ps has exited; false on time-out.
    static bool waitAll(const QList<QProcess *> &ps, int timeoutMs)
    {
        return waitUntil(
            [&ps] {
                return std::all_of(ps.cbegin(), ps.cend(),
                                   [](const QProcess *p) { return p->state() == QProcess::NotRunning; });
            },
            timeoutMs, 20);
    }

    /// `dialogctl log search --json --process DIALOG.ControlServer ARGS` polled until @p done accepts the
    /// texts found (bounded); the texts of the last search.
    QStringList waitForControlServerTexts(const QStringList &args,
                                          const std::function<bool(const QStringList &)> &done)
    {
        QStringList texts;
        waitUntil(
            [&] {
                texts.clear();
                for (const QJsonObject &r :
                     search(QStringList{QStringLiteral("--process"), QStringLiteral("DIALOG.ControlServer"),
                                        QStringLiteral("--limit"), QStringLiteral("1000")} +
                            args))
                    texts << r.value(QStringLiteral("text")).toString();
                return done(texts);
            },
            20000 * SanitizerTimeScale, 200);
        return texts;
    }

    static bool containsMatch(const QStringList &texts, const QString &pattern)
    {
        return !texts.filter(QRegularExpression(pattern)).isEmpty();
    }

private Q_SLOTS:
    void init()
    {
        m_fx = std::make_unique<ProcessFixture>();
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        QVERIFY(m_fx->startControlServer());
        m_logger = startLogger();
        QVERIFY(!waitForLogger().isEmpty());
    }

    void cleanup()
    {
        if (m_unprivileged && m_unprivileged->state() != QProcess::NotRunning) {
            m_unprivileged->kill();
            m_unprivileged->waitForFinished(5000);
        }
        m_unprivileged.reset();
        m_fx.reset();
        m_dir.reset();
    }

    void twentyProcessesArriveCompleteAndInOrder()
    {
        const int processes = 20, count = 300;
        QList<QProcess *> reporters;
        for (int i = 0; i < processes; ++i)
            reporters << m_fx->start(
                QStringLiteral("dialogctl"),
                reportArgs(QStringLiteral("P%1").arg(i, 2, 10, QLatin1Char('0')),
                           {QStringLiteral("--count"), QString::number(count), QStringLiteral("--numbered"),
                            QStringLiteral("--collapse-ms"), QStringLiteral("0"),
                            QStringLiteral("message")}));
        QVERIFY(waitAll(reporters, 60000));
        for (QProcess *p : reporters)
            QCOMPARE(p->exitCode(), 0);
        const auto records = search({QStringLiteral("--process"), QStringLiteral("P*"),
                                     QStringLiteral("--limit"), QStringLiteral("10000")});
        QCOMPARE(records.size(), processes * count);
        QHash<QString, int> next;
        for (const QJsonObject &r : records) {
            const QString process = r.value(QStringLiteral("process")).toString();
            const int n = ++next[process];
            QCOMPARE(r.value(QStringLiteral("text")).toString(), QStringLiteral("message #%1").arg(n));
            QCOMPARE(r.value(QStringLiteral("sequence")).toInteger(), qint64(n));
            QCOMPARE(r.value(QStringLiteral("severity")).toString(), QStringLiteral("info"));
        }
        QCOMPARE(next.size(), processes);
    }

    void busyLoggerRefusesAndReportersSendAgain()
    {
        m_logger->terminate();
        QVERIFY(m_logger->waitForFinished(5000));
        m_logger = startLogger({QStringLiteral("--buffer"), QStringLiteral("100")});
        QVERIFY(!waitForLogger().isEmpty());
        QList<QProcess *> reporters;
        for (int i = 0; i < 8; ++i)
            reporters << m_fx->start(QStringLiteral("dialogctl"),
                                     reportArgs(QStringLiteral("Busy%1").arg(i),
                                                {QStringLiteral("--count"), QStringLiteral("3000"),
                                                 QStringLiteral("--numbered"), QStringLiteral("--timeout-ms"),
                                                 QStringLiteral("60000"), QStringLiteral("busy")}));
        QVERIFY(waitAll(reporters, 70000));
        for (QProcess *p : reporters)
            QCOMPARE(p->exitCode(), 0);
        const QJsonObject stats = waitForLogger();
        QVERIFY2(stats.value(QStringLiteral("refused_batches")).toInteger() > 0,
                 QJsonDocument(stats).toJson().constData());
        QCOMPARE(stats.value(QStringLiteral("dropped")).toInteger(), qint64(0));
        // Every message of every process, in order, despite the refusals.
        for (int i = 0; i < 8; ++i) {
            const auto own = search({QStringLiteral("--process"), QStringLiteral("Busy%1").arg(i),
                                     QStringLiteral("--limit"), QStringLiteral("10000")});
            QCOMPARE(own.size(), 3000);
            for (int n = 0; n < own.size(); ++n)
                QCOMPARE(own.at(n).value(QStringLiteral("text")).toString(),
                         QStringLiteral("busy #%1").arg(n + 1));
        }
    }

    void floodIsCollapsedAndDoesNotStarveOthers()
    {
        const int flood = 200000;
        QList<QProcess *> ps;
        ps << m_fx->start(
            QStringLiteral("dialogctl"),
            reportArgs(QStringLiteral("Flood"),
                       {QStringLiteral("--count"), QString::number(flood), QStringLiteral("--severity"),
                        QStringLiteral("warning"), QStringLiteral("--timeout-ms"), QStringLiteral("60000"),
                        QStringLiteral("link down")}));
        for (int i = 0; i < 5; ++i)
            ps << m_fx->start(
                QStringLiteral("dialogctl"),
                reportArgs(QStringLiteral("Other%1").arg(i),
                           {QStringLiteral("--count"), QStringLiteral("100"), QStringLiteral("--numbered"),
                            QStringLiteral("--collapse-ms"), QStringLiteral("0"), QStringLiteral("other")}));
        // How long each process waited for the acknowledgement of all it reported (printed, not asserted).
        QElapsedTimer clock;
        clock.start();
        QList<qint64> doneMs(ps.size(), -1);
        for (int i = 0; i < ps.size(); ++i)
            connect(ps.at(i), &QProcess::finished, this,
                    [&doneMs, &clock, i] { doneMs[i] = clock.elapsed(); });
        QVERIFY(waitAll(ps, 90000));
        QStringList delays;
        for (int i = 1; i < ps.size(); ++i)
            delays << QString::number(doneMs.at(i));
        std::printf("flood: the flooding process finished after %lld ms, the others' 100 messages were all "
                    "acknowledged after %s ms\n",
                    doneMs.first(), qPrintable(delays.join(QStringLiteral(", "))));
        for (QProcess *p : ps)
            QCOMPARE(p->exitCode(), 0);
        for (int i = 0; i < 5; ++i)
            QCOMPARE(search({QStringLiteral("--process"), QStringLiteral("Other%1").arg(i),
                             QStringLiteral("--limit"), QStringLiteral("1000")})
                         .size(),
                     100);
        // Every flood message is accounted for: passed through, or counted in a "repeated" summary.
        const auto floodRecords = search({QStringLiteral("--process"), QStringLiteral("Flood"),
                                          QStringLiteral("--limit"), QStringLiteral("10000")});
        QVERIFY(!floodRecords.isEmpty());
        QVERIFY2(floodRecords.size() < 100, qPrintable(QString::number(floodRecords.size())));
        qint64 total = 0, summaries = 0;
        for (const QJsonObject &r : floodRecords) {
            const qint64 repeated =
                r.value(QStringLiteral("values")).toObject().value(QStringLiteral("repeated")).toInteger();
            if (repeated) {
                ++summaries;
                total += repeated;
                QVERIFY(r.value(QStringLiteral("text"))
                            .toString()
                            .startsWith(QStringLiteral("link down (repeated ")));
            } else {
                ++total;
                QCOMPARE(r.value(QStringLiteral("text")).toString(), QStringLiteral("link down"));
            }
        }
        QVERIFY(summaries >= 1);
        QCOMPARE(total, qint64(flood));
        QCOMPARE(floodRecords.first().value(QStringLiteral("text")).toString(), QStringLiteral("link down"));
    }

    void fullQueueDropsAreCountedAndReported()
    {
        const int count = 50000;
        QByteArray err;
        const int rc = m_fx->run(
            QStringLiteral("dialogctl"),
            reportArgs(QStringLiteral("Burst"),
                       {QStringLiteral("--count"), QString::number(count), QStringLiteral("--numbered"),
                        QStringLiteral("--queue"), QStringLiteral("500"), QStringLiteral("burst")}),
            nullptr, &err, 60000);
        QCOMPARE(rc, 1);
        QVERIFY2(err.contains("messages dropped (queue full)"), err.constData());
        const auto records = search({QStringLiteral("--process"), QStringLiteral("Burst"),
                                     QStringLiteral("--limit"), QStringLiteral("10000")});
        qint64 stored = 0, dropped = 0;
        for (const QJsonObject &r : records) {
            if (r.value(QStringLiteral("category")).toString() == QLatin1String("dialog.report"))
                dropped +=
                    r.value(QStringLiteral("values")).toObject().value(QStringLiteral("dropped")).toInteger();
            else
                ++stored;
        }
        QVERIFY(dropped > 0);
        QCOMPARE(stored + dropped, qint64(count));
    }

    void restartedLoggerLosesNothingAcknowledged()
    {
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Before"),
                                      {QStringLiteral("--count"), QStringLiteral("1000"),
                                       QStringLiteral("--numbered"), QStringLiteral("acked")})),
                 0);
        // Acknowledged means committed: a SIGKILL right after loses none of them.
        m_logger->kill();
        m_logger->waitForFinished(5000);
        // A process reporting while no logger runs keeps its messages and delivers them later.
        QProcess *waiting = m_fx->start(
            QStringLiteral("dialogctl"),
            reportArgs(QStringLiteral("During"),
                       {QStringLiteral("--count"), QStringLiteral("100"), QStringLiteral("--numbered"),
                        QStringLiteral("--timeout-ms"), QStringLiteral("30000"), QStringLiteral("held")}));
        QVERIFY(expectNothingFor(
            500, [waiting] { return waiting->state() != QProcess::Running; },
            "a reporter gave up while no logger runs"));
        m_logger = startLogger();
        QVERIFY(!waitForLogger().isEmpty());
        QVERIFY(waitAll({waiting}, 40000));
        QCOMPARE(waiting->exitCode(), 0);
        const auto before = search({QStringLiteral("--process"), QStringLiteral("Before"),
                                    QStringLiteral("--limit"), QStringLiteral("5000")});
        QCOMPARE(before.size(), 1000);
        QCOMPARE(before.last().value(QStringLiteral("text")).toString(), QStringLiteral("acked #1000"));
        const auto during = search({QStringLiteral("--process"), QStringLiteral("During"),
                                    QStringLiteral("--limit"), QStringLiteral("5000")});
        QCOMPARE(during.size(), 100);
    }

    void qtMessagesAreForwardedWithTheirContext()
    {
        dialog::Client client(m_fx->clientOptions(QStringLiteral("InProcess")));
        QVERIFY(client.start());
        // QtTest's own handler, put back afterwards.
        const QtMessageHandler testHandler = qInstallMessageHandler(nullptr);
        qInstallMessageHandler(testHandler);
        dialog::installMessageHandler();
        dialog::startReporting(&client);
        dialog::setReportRunNumber(7);
        const int line = __LINE__ + 1;
        qCWarning(lcTest) << "forwarded" << 42;
        dialog::report(dialog::Severity::Error, QStringLiteral("direct"), {{QStringLiteral("board"), 12}});
        dialog::setReportRunNumber(0);
        dialog::report(dialog::Severity::Info, QStringLiteral("long"), QString(100000, QLatin1Char('y')), {});
        QVERIFY(dialog::flushReports(10000));
        qInstallMessageHandler(testHandler);
        dialog::stopReporting();
        const auto longOne = search({QStringLiteral("--process"), QStringLiteral("InProcess"),
                                     QStringLiteral("--category"), QStringLiteral("long")});
        QCOMPARE(longOne.size(), 1);
        QCOMPARE(longOne.first().value(QStringLiteral("text")).toString(),
                 QString(16 * 1024, QLatin1Char('y')) + QStringLiteral(" … (truncated)"));
        const auto records = search({QStringLiteral("--process"), QStringLiteral("InProcess"),
                                     QStringLiteral("--run"), QStringLiteral("7")});
        QCOMPARE(records.size(), 2);
        const QJsonObject w = records.at(0);
        QCOMPARE(w.value(QStringLiteral("text")).toString(), QStringLiteral("forwarded 42"));
        QCOMPARE(w.value(QStringLiteral("severity")).toString(), QStringLiteral("warning"));
        QCOMPARE(w.value(QStringLiteral("category")).toString(), QStringLiteral("dialog.test.logger"));
        QVERIFY(w.value(QStringLiteral("file")).toString().endsWith(QLatin1String("tst_logger.cpp")));
        QCOMPARE(w.value(QStringLiteral("line")).toInt(), line);
        QCOMPARE(w.value(QStringLiteral("pid")).toInteger(), QCoreApplication::applicationPid());
        const QJsonObject e = records.at(1);
        QCOMPARE(e.value(QStringLiteral("severity")).toString(), QStringLiteral("error"));
        QCOMPARE(e.value(QStringLiteral("category")).toString(), QStringLiteral("default"));
        QCOMPARE(e.value(QStringLiteral("values")).toObject().value(QStringLiteral("board")).toInt(), 12);
        QVERIFY(dialog::reportStatistics().acknowledged >= 2);
    }

    void fatalMessageIsDeliveredBeforeTheAbort()
    {
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_fx->controlServer());
        env.insert(QStringLiteral("TST_LOGGER_FATAL_CHILD"), QStringLiteral("1"));
        child.setProcessEnvironment(env);
        child.start(QCoreApplication::applicationFilePath(), {});
        QVERIFY(child.waitForStarted(5000));
        if (!child.waitForFinished(20000)) {
            child.kill();
            child.waitForFinished(5000);
            QFAIL("the child did not abort");
        }
        QCOMPARE(child.exitStatus(), QProcess::CrashExit);
        const auto records = search({QStringLiteral("--process"), QStringLiteral("Fatal"),
                                     QStringLiteral("--severity"), QStringLiteral("fatal")});
        QCOMPARE(records.size(), 1);
        QCOMPARE(records.first().value(QStringLiteral("text")).toString(), QStringLiteral("disk on fire"));
    }

    void windowSearchOfABusyProcess()
    {
        // One process' window is tried newest rows first (2,000 of them), then read from the window
        // index: sparse matches behind many newer rows, and dense ones, both come back right.
        auto report = [&](const QString &severity, const QString &text, int count) {
            QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                               reportArgs(QStringLiteral("Busy"),
                                          {QStringLiteral("--severity"), severity, QStringLiteral("--count"),
                                           QString::number(count), QStringLiteral("--numbered"),
                                           QStringLiteral("--collapse-ms"), QStringLiteral("0"), text}),
                               nullptr, nullptr, 60000),
                     0);
        };
        report(QStringLiteral("warning"), QStringLiteral("early warning"), 3);
        report(QStringLiteral("info"), QStringLiteral("routine"), 2500);
        const QStringList window{QStringLiteral("--since"),    QStringLiteral("1h"),
                                 QStringLiteral("--process"),  QStringLiteral("Busy"),
                                 QStringLiteral("--severity"), QStringLiteral("warning")};
        auto texts = [](const QList<QJsonObject> &rs) {
            QStringList t;
            for (const auto &r : rs)
                t << r.value(QStringLiteral("text")).toString();
            return t;
        };
        QTRY_COMPARE_WITH_TIMEOUT(
            texts(search(window + QStringList{QStringLiteral("--limit"), QStringLiteral("2")})),
            (QStringList{QStringLiteral("early warning #2"), QStringLiteral("early warning #3")}), 10000);
        report(QStringLiteral("warning"), QStringLiteral("late warning"), 150);
        QByteArray err;
        QList<QJsonObject> page;
        // The page is printed oldest first.
        QTRY_VERIFY_WITH_TIMEOUT(
            (page = search(window + QStringList{QStringLiteral("--limit"), QStringLiteral("100")}, nullptr,
                           &err))
                    .value(99)
                    .value(QStringLiteral("text"))
                    .toString() == QLatin1String("late warning #150"),
            10000);
        QCOMPARE(page.size(), 100);
        QCOMPARE(page.first().value(QStringLiteral("text")).toString(), QStringLiteral("late warning #51"));
        const int at = err.indexOf("--before ");
        QVERIFY2(at >= 0, err.constData()); // more match
        const QString before = QString::fromUtf8(err.mid(at + 9).trimmed());
        const QStringList rest = texts(search(window + QStringList{QStringLiteral("--before"), before}));
        QCOMPARE(rest.size(), 53);
        QCOMPARE(rest.first(), QStringLiteral("early warning #1"));
        QCOMPARE(rest.last(), QStringLiteral("late warning #50"));
    }

    void searchFiltersAndPaging()
    {
        auto report = [&](const QString &name, const QString &severity, const QString &text,
                          const QStringList &extra = {}) {
            QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                               reportArgs(name, QStringList{QStringLiteral("--severity"), severity} + extra +
                                                    QStringList{text})),
                     0);
        };
        report(QStringLiteral("RO1"), QStringLiteral("warning"), QStringLiteral("readout TIMEOUT on link 3"),
               {QStringLiteral("--run"), QStringLiteral("42"), QStringLiteral("--value"),
                QStringLiteral("link=3")});
        report(QStringLiteral("RO2"), QStringLiteral("info"), QStringLiteral("timeout recovered"));
        report(QStringLiteral("SC1"), QStringLiteral("error"), QStringLiteral("timeout in slow control"));
        report(QStringLiteral("RO3"), QStringLiteral("error"), QStringLiteral("disk full"));

        auto texts = [](const QList<QJsonObject> &rs) {
            QStringList t;
            for (const auto &r : rs)
                t << r.value(QStringLiteral("text")).toString();
            return t;
        };
        QCOMPARE(texts(search({QStringLiteral("--since"), QStringLiteral("2h"), QStringLiteral("--severity"),
                               QStringLiteral("warning"), QStringLiteral("--process"), QStringLiteral("RO*"),
                               QStringLiteral("--text"), QStringLiteral("timeout")})),
                 QStringList{QStringLiteral("readout TIMEOUT on link 3")});
        // One process in a short window (served by the (process, time, severity) index).
        QCOMPARE(
            texts(search({QStringLiteral("--since"), QStringLiteral("1h"), QStringLiteral("--process"),
                          QStringLiteral("RO1"), QStringLiteral("--severity"), QStringLiteral("warning")})),
            QStringList{QStringLiteral("readout TIMEOUT on link 3")});
        QVERIFY(search({QStringLiteral("--since"), QStringLiteral("1h"), QStringLiteral("--process"),
                        QStringLiteral("RO1"), QStringLiteral("--severity"), QStringLiteral("error")})
                    .isEmpty());
        const auto run42 = search({QStringLiteral("--run"), QStringLiteral("42")});
        QCOMPARE(run42.size(), 1);
        QCOMPARE(
            run42.first().value(QStringLiteral("values")).toObject().value(QStringLiteral("link")).toString(),
            QStringLiteral("3"));
        QCOMPARE(texts(search({QStringLiteral("--category"), QStringLiteral("default"),
                               QStringLiteral("--severity"), QStringLiteral("error")})),
                 (QStringList{QStringLiteral("timeout in slow control"), QStringLiteral("disk full")}));
        QVERIFY(search({QStringLiteral("--until"), QStringLiteral("1h")}).isEmpty());
        QCOMPARE(search({QStringLiteral("--host"), QStringLiteral("no-such-host*")}).size(), 0);

        // Paging: two newest, then the rest with --before (the logger's own messages are in other
        // categories).
        int rc = 0;
        QByteArray out, err;
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("log"), QStringLiteral("search"), QStringLiteral("--category"),
                            QStringLiteral("default"), QStringLiteral("--limit"), QStringLiteral("2")},
                           &out, &err),
                 0);
        QCOMPARE(out.count('\n'), 2);
        QVERIFY2(out.contains("ERROR") && out.contains("RO3@") && out.contains("disk full"), out.constData());
        const int at = err.indexOf("--before ");
        QVERIFY2(at >= 0, err.constData());
        const QString before = QString::fromUtf8(err.mid(at + 9).trimmed());
        QCOMPARE(
            texts(search(
                {QStringLiteral("--category"), QStringLiteral("default"), QStringLiteral("--before"), before},
                &rc)),
            (QStringList{QStringLiteral("readout TIMEOUT on link 3"), QStringLiteral("timeout recovered")}));
        QCOMPARE(rc, 0);
        // tail: the newest, oldest first.
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("log"), QStringLiteral("tail"), QStringLiteral("--category"),
                            QStringLiteral("default"), QStringLiteral("--limit"), QStringLiteral("1")},
                           &out),
                 0);
        QVERIFY2(out.contains("disk full") && out.count('\n') == 1, out.constData());
    }

    void tailFollowPrintsNewMessages()
    {
        QProcess *tail =
            m_fx->start(QStringLiteral("dialogctl"),
                        {QStringLiteral("log"), QStringLiteral("tail"), QStringLiteral("--follow"),
                         QStringLiteral("--json"), QStringLiteral("--severity"), QStringLiteral("warning"),
                         QStringLiteral("--process"), QStringLiteral("L?v[a-e]*")});
        // Live: it has subscribed to the logger's new messages (its first page is printed by then).
        const auto following = [&] {
            for (const QJsonValue &v : m_fx->directory().value(QStringLiteral("processes")).toArray())
                if (v.toObject().value(QStringLiteral("pid")).toInteger() == tail->processId())
                    return v.toObject()
                        .value(QStringLiteral("subscriptions"))
                        .toArray()
                        .contains(QJsonValue(dialog::logservice::live()));
            return false;
        };
        QVERIFY(waitUntil(following, 10000, 100));
        QCOMPARE(m_fx->run(
                     QStringLiteral("dialogctl"),
                     reportArgs(QStringLiteral("Live"), {QStringLiteral("--severity"), QStringLiteral("info"),
                                                         QStringLiteral("not shown")})),
                 0);
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("OtherLive"),
                                      {QStringLiteral("--severity"), QStringLiteral("error"),
                                       QStringLiteral("other")})),
                 0);
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Live"),
                                      {QStringLiteral("--severity"), QStringLiteral("error"),
                                       QStringLiteral("shown live")})),
                 0);
        QByteArray out;
        QTRY_VERIFY_WITH_TIMEOUT((out += tail->readAllStandardOutput()).contains("shown live"), 10000);
        QVERIFY(!out.contains("not shown"));
        QVERIFY(!out.contains("\"other\""));
        QCOMPARE(out.count("shown live"), 1);
        QCOMPARE(tail->state(), QProcess::Running);
    }

    void retentionByAgeAndSize()
    {
        m_logger->terminate();
        QVERIFY(m_logger->waitForFinished(5000));
        m_logger =
            startLogger({QStringLiteral("--keep-days"), QStringLiteral("30"), QStringLiteral("--max-bytes"),
                         QStringLiteral("2000000"), QStringLiteral("--retention-s"), QStringLiteral("1")});
        QVERIFY(!waitForLogger().isEmpty());
        // An audit record, older than everything the size bound evicts below: it stays.
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Auditor"),
                                      {QStringLiteral("--category"), QStringLiteral("dialog.audit"),
                                       QStringLiteral("--time"), QStringLiteral("10d"),
                                       QStringLiteral("kept for ever")})),
                 0);
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Old"), {QStringLiteral("--time"), QStringLiteral("40d"),
                                                              QStringLiteral("from long ago")})),
                 0);
        QCOMPARE(
            m_fx->run(QStringLiteral("dialogctl"),
                      reportArgs(QStringLiteral("Recent"), {QStringLiteral("--time"), QStringLiteral("20d"),
                                                            QStringLiteral("from last week")})),
            0);
        // Older than --keep-days: gone at the next retention; the younger one stays.
        QTRY_VERIFY_WITH_TIMEOUT(search({QStringLiteral("--process"), QStringLiteral("Old")}).isEmpty(),
                                 10000);
        QCOMPARE(search({QStringLiteral("--process"), QStringLiteral("Recent")}).size(), 1);
        // About 6 MB of messages into a 2 MB bound: the oldest go, the newest stay.
        const QString text = QString(200, QLatin1Char('x'));
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Big"),
                                      {QStringLiteral("--count"), QStringLiteral("20000"),
                                       QStringLiteral("--numbered"), QStringLiteral("--queue"),
                                       QStringLiteral("20000"), QStringLiteral("--timeout-ms"),
                                       QStringLiteral("60000"), text}),
                           nullptr, nullptr, 70000),
                 0);
        auto big = [&] {
            return search({QStringLiteral("--process"), QStringLiteral("Big"), QStringLiteral("--limit"),
                           QStringLiteral("10000")});
        };
        // Fewer than 10,000 of the 20,000 left.
        QTRY_VERIFY_WITH_TIMEOUT(big().size() < 10000, 15000);
        const auto kept = big();
        QCOMPARE(kept.last().value(QStringLiteral("text")).toString(), text + QStringLiteral(" #20000"));
        // The oldest went first: what is left is the newest, without a gap.
        const int n = int(kept.size());
        QCOMPARE(kept.first().value(QStringLiteral("text")).toString(),
                 text + QStringLiteral(" #%1").arg(20001 - n));
        // Ordinary messages made room; the audit record, the oldest of the bound, was never evicted.
        QCOMPARE(search({QStringLiteral("--process"), QStringLiteral("Auditor")}).size(), 1);
    }

    // One 60 MB message and a 4,001-character search used to hold the only search thread for over
    // ten minutes (LIKE over the whole text). Now the text is cut when stored, the search text is
    // bounded, searches run on two threads, and each has a time budget.
    void searchesAreBounded()
    {
        QVERIFY(!waitForLogger().isEmpty());
        QByteArray err;
        int rc = 0;
        search({QStringLiteral("--text"), QString(4001, QLatin1Char('a'))}, &rc, &err);
        QCOMPARE(rc, 1);
        QVERIFY2(err.contains("search text too long: 4001 characters, the most is 256"), err.constData());
        // The reporter cuts a message at 16 K characters, but a process may send a batch of its own:
        // a text of 120,000 bytes is stored cut to 64 KiB, saying so.
        dialog::Client raw(m_fx->clientOptions(QStringLiteral("Huge")));
        QVERIFY(raw.start());
        dialog::LogRecord huge;
        huge.timeMs = QDateTime::currentMSecsSinceEpoch();
        huge.host = QStringLiteral("h");
        huge.pid = 1;
        huge.sequence = 1;
        huge.category = QStringLiteral("default");
        huge.text = QString(120000, QLatin1Char('h'));
        bool stored = false;
        raw.request(dialog::logservice::service(),
                    QByteArray(1, dialog::logservice::StoreKind) + dialog::encodeRecords({huge}), 10000, this,
                    [&stored](const dialog::Reply &r) { stored = r.isOk(); });
        QTRY_VERIFY_WITH_TIMEOUT(stored, 10000);
        const QList<QJsonObject> found = search({QStringLiteral("--process"), QStringLiteral("Huge")});
        QCOMPARE(found.size(), 1);
        const QString text = found.first().value(QStringLiteral("text")).toString();
        QVERIFY(text.size() <= 64 * 1024);
        QVERIFY2(text.endsWith(QStringLiteral(" … [cut: 120000 bytes]")), qPrintable(text.right(40)));
        // A search over many messages runs out of its 1 ms budget and says so.
        m_logger->terminate();
        QVERIFY(m_logger->waitForFinished(5000));
        m_logger = startLogger({QStringLiteral("--search-budget-ms"), QStringLiteral("1")});
        QVERIFY(!waitForLogger().isEmpty());
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Many"),
                                      {QStringLiteral("--count"), QStringLiteral("20000"),
                                       QStringLiteral("--numbered"), QStringLiteral("--queue"),
                                       QStringLiteral("20000"), QStringLiteral("--timeout-ms"),
                                       QStringLiteral("60000"), QString(200, QLatin1Char('m'))}),
                           nullptr, nullptr, 70000),
                 0);
        search({QStringLiteral("--text"), QStringLiteral("not in any message")}, &rc, &err);
        QCOMPARE(rc, 1);
        QVERIFY2(err.contains("took longer than 1 ms"), err.constData());
    }

    void cliErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no command") << QStringList{QStringLiteral("log")}
                                    << QStringLiteral("usage: dialogctl log");
        QTest::newRow("unknown command") << QStringList{QStringLiteral("log"), QStringLiteral("grep")}
                                         << QStringLiteral("unknown command 'grep'");
        QTest::newRow("bad severity") << QStringList{QStringLiteral("log"), QStringLiteral("search"),
                                                     QStringLiteral("--severity"), QStringLiteral("loud")}
                                      << QStringLiteral("invalid --severity 'loud'");
        QTest::newRow("bad since") << QStringList{QStringLiteral("log"), QStringLiteral("search"),
                                                  QStringLiteral("--since"), QStringLiteral("yesterday")}
                                   << QStringLiteral("invalid --since 'yesterday'");
        QTest::newRow("bad limit") << QStringList{QStringLiteral("log"), QStringLiteral("tail"),
                                                  QStringLiteral("--limit"), QStringLiteral("0")}
                                   << QStringLiteral("invalid --limit '0'");
        QTest::newRow("report without text") << QStringList{QStringLiteral("log"), QStringLiteral("report")}
                                             << QStringLiteral("expected exactly one message text");
        QTest::newRow("bad value") << QStringList{QStringLiteral("log"), QStringLiteral("report"),
                                                  QStringLiteral("--value"), QStringLiteral("novalue"),
                                                  QStringLiteral("x")}
                                   << QStringLiteral("invalid --value 'novalue'");
    }

    void cliErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QByteArray err;
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), args, nullptr, &err), 1);
        QVERIFY2(QString::fromUtf8(err).contains(message), err.constData());
    }

    void cliWithoutLogger()
    {
        m_logger->terminate();
        QVERIFY(m_logger->waitForFinished(5000));
        QByteArray err;
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("log"), QStringLiteral("search"), QStringLiteral("--timeout-ms"),
                            QStringLiteral("500")},
                           nullptr, &err),
                 1);
        QVERIFY2(err.contains("no answer from DIALOG.Logger within 500 ms (is dialog-logger running?)"),
                 err.constData());
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Alone"),
                                      {QStringLiteral("--timeout-ms"), QStringLiteral("1000"),
                                       QStringLiteral("nobody listens")}),
                           nullptr, &err),
                 1);
        QVERIFY2(err.contains("1 messages not acknowledged by the logger within 1000 ms"), err.constData());
    }

    void badLoggerOptions()
    {
        QByteArray err;
        QCOMPARE(m_fx->run(QStringLiteral("dialog-logger"),
                           {QStringLiteral("--keep-days"), QStringLiteral("-1")}, nullptr, &err),
                 1);
        QVERIFY2(err.contains("invalid --keep-days '-1'"), err.constData());
        QCOMPARE(m_fx->run(QStringLiteral("dialog-logger"),
                           {QStringLiteral("--data-dir"), QStringLiteral("/proc/no/such/dir")}, nullptr,
                           &err),
                 1);
        QVERIFY2(err.contains("cannot create --data-dir"), err.constData());
    }

    void fullDiskDropsSaysWhyAndRecovers()
    {
        if (geteuid() != 0)
            QSKIP("needs root to mount a small file system (tmpfs) for the database");
        // The logger on a 1 MiB file system of its own.
        m_logger->terminate();
        QVERIFY(m_logger->waitForFinished(5000));
        const QString dir = QDir(m_dir->path()).filePath(QStringLiteral("small"));
        QVERIFY(QDir().mkpath(dir));
        if (!ProcessFixture::mountTmpfs(dir, QStringLiteral("1m")))
            QSKIP("cannot mount a tmpfs here (a container without the capability)");
        QProcess *logger = m_fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--data-dir"), dir});
        auto unmount = qScopeGuard([&] {
            logger->terminate();
            logger->waitForFinished(5000);
            QProcess::execute(QStringLiteral("umount"), {dir});
        });
        QVERIFY(!waitForLogger().isEmpty());
        // 200 messages of 10,000 characters are 2 MB: the file system fills up.
        QByteArray err;
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Filler"),
                                      {QStringLiteral("--count"), QStringLiteral("200"),
                                       QStringLiteral("--numbered"), QStringLiteral("--collapse-ms"),
                                       QStringLiteral("0"), QString(10000, QLatin1Char('x'))}),
                           nullptr, &err),
                 1);
        QVERIFY2(err.contains("messages dropped (not stored: ") && err.contains("full"), err.constData());
        const QJsonObject stats = waitForLogger();
        QVERIFY(stats.value(QStringLiteral("dropped")).toInteger() > 0);
        // (last_error may be empty again: a smaller batch after the rolled-back one can fit.)
        QByteArray loggerErr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (loggerErr += logger->readAllStandardError()).contains("messages not stored ("), 5000);
        QVERIFY2(loggerErr.contains("dropped since start") && loggerErr.contains("full"),
                 loggerErr.constData());
        std::printf("full disk: %s\n", qPrintable(QString::fromUtf8(err).trimmed()));
        // Room again: the same logger stores at once.
        QVERIFY(ProcessFixture::mountTmpfs(dir, QStringLiteral("64m"), true));
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Writer"), {QStringLiteral("stored again")}), nullptr,
                           &err),
                 0);
        QCOMPARE(search({QStringLiteral("--process"), QStringLiteral("Writer")}).size(), 1);
    }

    void controlServerEventsAreStored()
    {
        // A process connects, a second one of the same name is refused, the first one dies.
        QProcess *victim =
            m_fx->start(QStringLiteral("dialogctl"),
                        {QStringLiteral("publish"), QStringLiteral("--name"), QStringLiteral("Victim"),
                         QStringLiteral("--rate"), QStringLiteral("10"), QStringLiteral("Victim.Data")});
        QTRY_VERIFY_WITH_TIMEOUT(!m_fx->processEntry(QStringLiteral("Victim")).isEmpty(), 10000);
        QProcess *twin = m_fx->start(QStringLiteral("dialogctl"),
                                     {QStringLiteral("publish"), QStringLiteral("--name"),
                                      QStringLiteral("Victim"), QStringLiteral("Victim.Other")});
        QVERIFY(twin->waitForFinished(10000));
        QVERIFY(twin->exitCode() != 0);
        victim->kill();
        QVERIFY(victim->waitForFinished(5000));
        const QStringList texts = waitForControlServerTexts(
            {QStringLiteral("--text"), QStringLiteral("Victim")},
            [](const QStringList &t) { return containsMatch(t, QStringLiteral("Victim.* lost: ")); });
        QVERIFY2(containsMatch(texts, QStringLiteral("^process Victim connected from ")),
                 qPrintable(texts.join('\n')));
        QVERIFY2(containsMatch(texts, QStringLiteral("^refused connection of Victim ")),
                 qPrintable(texts.join('\n')));
        QVERIFY2(containsMatch(texts, QStringLiteral("^process Victim \\S+ pid \\d+ lost: ")),
                 qPrintable(texts.join('\n')));
        // With their severity, category and the Control Server's PID.
        const auto lost = search({QStringLiteral("--process"), QStringLiteral("DIALOG.ControlServer"),
                                  QStringLiteral("--severity"), QStringLiteral("warning"),
                                  QStringLiteral("--text"), QStringLiteral("Victim")});
        QVERIFY(!lost.isEmpty());
        QCOMPARE(lost.last().value(QStringLiteral("category")).toString(),
                 QStringLiteral("dialog.controlserver.supervision"));
        QCOMPARE(lost.last().value(QStringLiteral("pid")).toInteger(),
                 qint64(m_fx->controlServerProcess()->processId()));

        // What the Control Server said before the logger started is there too (it keeps its newest
        // messages for a logger that subscribes later) - and once only, across a logger restart.
        const QStringList listening{QStringLiteral("--text"), QStringLiteral("Control Server listening on")};
        QCOMPARE(
            waitForControlServerTexts(listening, [](const QStringList &t) { return !t.isEmpty(); }).size(),
            1);
        m_logger->terminate();
        QVERIFY(m_logger->waitForFinished(5000));
        m_logger = startLogger();
        QVERIFY(!waitForLogger().isEmpty());
        // The restarted logger's own connection is new, so it is stored: everything before it, once.
        // (Awaited by its own line: the first logger's going is a line about dialog-logger too.)
        const QString connected = QStringLiteral("process dialog-logger connected");
        const QStringList again = waitForControlServerTexts(
            {QStringLiteral("--text"), QStringLiteral("dialog-logger")},
            [&connected](const QStringList &t) { return t.filter(connected).size() >= 2; });
        QCOMPARE(again.filter(connected).size(), 2);
        QCOMPARE(search(QStringList{QStringLiteral("--process"), QStringLiteral("DIALOG.ControlServer")} +
                        listening)
                     .size(),
                 1);
    }

    void standbyTakeOverIsStored()
    {
        const quint16 standbyPort = freePort();
        QVERIFY(m_fx->startControlServerOn(standbyPort,
                                           {QStringLiteral("--standby-of"), m_fx->controlServer()}, false));
        const QString both = m_fx->controlServer() + QStringLiteral(",127.0.0.1:%1").arg(standbyPort);
        m_logger->terminate();
        QVERIFY(m_logger->waitForFinished(5000));
        m_logger = startLogger({QStringLiteral("--control-server"), both});
        QVERIFY(!waitForLogger().isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(
            !m_fx->processEntry(QStringLiteral("DIALOG.Standby.%1").arg(standbyPort)).isEmpty(), 10000);
        m_fx->controlServerProcess()->kill();
        QVERIFY(ProcessFixture::waitForPort(standbyPort, 15000));
        // The standby's messages, from its start as a spare to the take-over, reach the logger once it
        // has failed over.
        const QStringList texts =
            waitForControlServerTexts({QStringLiteral("--control-server"), both}, [](const QStringList &t) {
                return containsMatch(t, QStringLiteral("^primary Control Server .* is gone: taking over"));
            });
        QVERIFY2(containsMatch(texts, QStringLiteral("^primary Control Server .* is gone: taking over")),
                 qPrintable(texts.join('\n')));
        QVERIFY2(containsMatch(texts, QStringLiteral("^standby of ")), qPrintable(texts.join('\n')));
        QVERIFY2(containsMatch(texts,
                               QStringLiteral("^Control Server listening on 127.0.0.1:%1").arg(standbyPort)),
                 qPrintable(texts.join('\n')));
    }

    void databaseOfAnEarlierLoggerIsMigrated()
    {
        // An earlier logger recognised batches sent again by a unique index on (process, pid, seq); this
        // one keeps the highest sequence per origin in `origins`, taken from the messages when it opens
        // such a database.
        m_logger->terminate();
        QVERIFY(m_logger->waitForFinished(5000));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString file = QDir(dir.path()).filePath(QStringLiteral("messages.sqlite"));
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("old"));
            db.setDatabaseName(file);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral(
                "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL, "
                "severity INTEGER NOT NULL, process TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, "
                "category TEXT NOT NULL, text TEXT NOT NULL, file TEXT, line INTEGER, run INTEGER NOT NULL, "
                "vals TEXT, seq INTEGER NOT NULL)")));
            QVERIFY(q.exec(
                QStringLiteral("CREATE UNIQUE INDEX messages_origin ON messages (process, pid, seq)")));
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            for (int seq = 1; seq <= 3; ++seq)
                QVERIFY(q.exec(
                    QStringLiteral("INSERT INTO messages (time, severity, process, host, pid, category, "
                                   "text, run, seq) VALUES (%1, 1, 'Old', 'h', 77, 'default', 'old "
                                   "#%2', 0, %2)")
                        .arg(now - 1000 + seq)
                        .arg(seq)));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("old"));
        m_logger = m_fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--data-dir"), dir.path()});
        QVERIFY(!waitForLogger().isEmpty());
        QCOMPARE(search({QStringLiteral("--process"), QStringLiteral("Old")}).size(), 3);
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("New"), {QStringLiteral("new")})),
                 0);
        QCOMPARE(search({QStringLiteral("--process"), QStringLiteral("New")}).size(), 1);
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("migrated"));
        db.setDatabaseName(file);
        db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name = 'messages_origin'")) &&
                q.next());
        QCOMPARE(q.value(0).toInt(), 0);
        QVERIFY(q.exec(QStringLiteral("SELECT seq FROM origins WHERE process = 'Old' AND pid = 77")) &&
                q.next());
        QCOMPARE(q.value(0).toInt(), 3);
        QVERIFY(q.exec(QStringLiteral("SELECT seq FROM origins WHERE process = 'New'")) && q.next());
        QCOMPARE(q.value(0).toInt(), 1);
        q.finish();
        db.close();
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase(QStringLiteral("migrated"));
    }

    void readOnlyDatabaseDropsSaysWhyAndRecovers()
    {
        if (geteuid() == 0 &&
            !(reachableByOthers(bin(QStringLiteral("dialog-logger"))) && reachableByOthers(m_dir->path())))
            QSKIP("as root this case runs the logger as user 65534, who cannot reach the build tree: a "
                  "directory above it is closed to others (as /root is); build elsewhere to run it");
        // Stop the writable logger; its database file stays, and becomes read-only for the next one.
        m_logger->terminate();
        QVERIFY(m_logger->waitForFinished(5000));
        QFile::setPermissions(m_dir->path(), QFile::ReadOwner | QFile::ExeOwner | QFile::ReadGroup |
                                                 QFile::ExeGroup | QFile::ReadOther | QFile::ExeOther);
        const QString db = QDir(m_dir->path()).filePath(QStringLiteral("messages.sqlite"));
        QVERIFY(QFile::exists(db));
        QFile::setPermissions(db, QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther);
        // root writes anyway: then the logger runs as an unprivileged user.
        m_logger = geteuid() == 0 ? startUnprivilegedLogger() : startLogger();
        QVERIFY2(m_logger->waitForStarted(5000), qPrintable(m_logger->errorString()));
        QVERIFY(!waitForLogger().isEmpty());
        QByteArray err;
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Writer"),
                                      {QStringLiteral("--count"), QStringLiteral("10"),
                                       QStringLiteral("--numbered"), QStringLiteral("lost")}),
                           nullptr, &err),
                 1);
        QVERIFY2(err.contains("10 of 10 messages dropped (not stored: "), err.constData());
        const QJsonObject stats = waitForLogger();
        // The ten, and the logger's own messages (it reports through itself).
        QVERIFY(stats.value(QStringLiteral("dropped")).toInteger() >= 10);
        const QString why = stats.value(QStringLiteral("last_error")).toString();
        QVERIFY2(why.contains(QLatin1String("readonly")), qPrintable(why));
        QVERIFY2(err.contains(why.toUtf8()), err.constData());
        QByteArray loggerErr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (loggerErr += m_logger->readAllStandardError()).contains("messages not stored ("), 5000);
        QVERIFY2(loggerErr.contains("dropped since start"), loggerErr.constData());
        // Fixed: the same logger stores again.
        const auto all = QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup | QFile::WriteGroup |
                         QFile::ReadOther | QFile::WriteOther;
        QFile::setPermissions(db, all);
        QFile::setPermissions(m_dir->path(), all | QFile::ExeOwner | QFile::ExeGroup | QFile::ExeOther);
        for (const QString &f : {QStringLiteral("-wal"), QStringLiteral("-shm")})
            if (QFile::exists(db + f))
                QFile::setPermissions(db + f, all);
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           reportArgs(QStringLiteral("Writer"), {QStringLiteral("stored again")}), nullptr,
                           &err),
                 0);
        QCOMPARE(search({QStringLiteral("--process"), QStringLiteral("Writer")}).size(), 1);
    }
};

namespace {
// The child mode of this test binary: a process that reports through the message handler and dies
// of a qFatal.
int fatalChild(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    dialog::ClientOptions o = dialog::ClientOptions::fromEnvironment(QStringLiteral("Fatal"));
    dialog::Client client(o);
    if (!client.start())
        return 2;
    dialog::installMessageHandler();
    dialog::startReporting(&client);
    QElapsedTimer t;
    t.start();
    while (client.state() != dialog::Client::State::Connected && t.elapsed() < 10000)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    qFatal("disk on fire");
}
} // namespace

int main(int argc, char *argv[])
{
    if (qEnvironmentVariableIsSet("TST_LOGGER_FATAL_CHILD"))
        return fatalChild(argc, argv);
    QCoreApplication app(argc, argv);
    tst_Logger tc;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&tc, argc, argv);
}
#include "tst_logger.moc"
