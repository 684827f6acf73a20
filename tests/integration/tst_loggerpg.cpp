// dialog-logger storing into a real PostgreSQL server (Debian's postgresql, initdb'ed by the test in
// a temporary directory of the build tree, run as an unprivileged user on a free port): storing,
// searching and paging, two loggers of two partitions sharing one database, the server stopped and
// started again under a running logger. Skipped, with the reason, when PostgreSQL or Qt's QPSQL
// driver is not installed.
#include "postgres.h"
#include "processfixture.h"

#include <QDir>
#include <QSqlDatabase>
#include <QTemporaryDir>
#include <csignal>
#include <pwd.h>
#include <unistd.h>

using namespace dialog::test;

class tst_LoggerPg : public QObject
{
    Q_OBJECT

private:
    PostgresServer m_pg;
    QProcess *m_lastLogger = nullptr; ///< the logger partition() started last

    static QStringList reportArgs(const QString &name, const QStringList &extra)
    {
        return QStringList{QStringLiteral("log"), QStringLiteral("report"), QStringLiteral("--name"), name} +
               extra;
    }

    static QJsonObject stats(ProcessFixture &fx)
    {
        QByteArray out;
        if (fx.run(QStringLiteral("dialogctl"), {QStringLiteral("log"), QStringLiteral("stats")}, &out) != 0)
            return {};
        return QJsonDocument::fromJson(out).object();
    }

    static bool waitForLogger(ProcessFixture &fx)
    {
        return waitUntil([&] { return !stats(fx).isEmpty(); }, 15000, 50);
    }

    static QList<QJsonObject> search(ProcessFixture &fx, const QStringList &args, QByteArray *err = nullptr)
    {
        QByteArray out;
        // A page of 10,000 records takes a while under a sanitizer: the search's own time-out and
        // the bound on the run are scaled (SanitizerTimeScale).
        fx.run(QStringLiteral("dialogctl"),
               QStringList{QStringLiteral("log"), QStringLiteral("search"), QStringLiteral("--json"),
                           QStringLiteral("--timeout-ms"), QString::number(10000 * SanitizerTimeScale)} +
                   args,
               &out, err, 15000 * SanitizerTimeScale);
        QList<QJsonObject> records;
        for (const QByteArray &line : out.split('\n'))
            if (!line.isEmpty())
                records.append(QJsonDocument::fromJson(line).object());
        return records;
    }

    static QStringList texts(const QList<QJsonObject> &rs)
    {
        QStringList t;
        for (const auto &r : rs)
            t << r.value(QStringLiteral("text")).toString();
        return t;
    }

    /// A Control Server and a logger on the test's database.
    std::unique_ptr<ProcessFixture> partition()
    {
        auto fx = std::make_unique<ProcessFixture>();
        if (!fx->startControlServer())
            return nullptr;
        m_lastLogger = fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--db"), m_pg.url()});
        return fx;
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString binDir = postgresBinDir();
        if (binDir.isEmpty())
            QSKIP(
                "PostgreSQL is not installed (Debian package postgresql: /usr/lib/postgresql/*/bin/initdb)");
        if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QPSQL")))
            QSKIP("Qt's PostgreSQL driver QPSQL is not installed (Debian package libqt6sql6-psql)");
        QString error;
        QVERIFY2(m_pg.create(binDir, &error), qPrintable(error));
    }

    void storesSearchesAndPages()
    {
        auto fx = partition();
        QVERIFY(fx);
        QVERIFY(waitForLogger(*fx));
        QCOMPARE(stats(*fx).value(QStringLiteral("database")).toString(), m_pg.url());
        auto report = [&](const QString &name, const QString &severity, const QString &text,
                          const QStringList &extra = {}) {
            QCOMPARE(fx->run(QStringLiteral("dialogctl"),
                             reportArgs(name, QStringList{QStringLiteral("--severity"), severity} + extra +
                                                  QStringList{text})),
                     0);
        };
        report(QStringLiteral("RO1"), QStringLiteral("warning"), QStringLiteral("readout TIMEOUT on link 3"),
               {QStringLiteral("--run"), QStringLiteral("42"), QStringLiteral("--value"),
                QStringLiteral("link=3")});
        report(QStringLiteral("RO2"), QStringLiteral("info"), QStringLiteral("timeout recovered"));
        report(QStringLiteral("SC1"), QStringLiteral("error"), QStringLiteral("it's 100% _odd_ timeout"));
        report(QStringLiteral("RO3"), QStringLiteral("error"), QStringLiteral("disk full"));

        QCOMPARE(
            texts(search(*fx, {QStringLiteral("--since"), QStringLiteral("2h"), QStringLiteral("--severity"),
                               QStringLiteral("warning"), QStringLiteral("--process"), QStringLiteral("RO*"),
                               QStringLiteral("--text"), QStringLiteral("timeout")})),
            QStringList{QStringLiteral("readout TIMEOUT on link 3")});
        // Quotes and LIKE's wildcards in texts are data, not syntax.
        QCOMPARE(texts(search(*fx, {QStringLiteral("--text"), QStringLiteral("100% _odd_")})),
                 QStringList{QStringLiteral("it's 100% _odd_ timeout")});
        QVERIFY(search(*fx, {QStringLiteral("--text"), QStringLiteral("100%_")}).isEmpty());
        QCOMPARE(texts(search(*fx, {QStringLiteral("--process"), QStringLiteral("R?[13]")})),
                 (QStringList{QStringLiteral("readout TIMEOUT on link 3"), QStringLiteral("disk full")}));
        const auto run42 = search(*fx, {QStringLiteral("--run"), QStringLiteral("42")});
        QCOMPARE(run42.size(), 1);
        QCOMPARE(
            run42.first().value(QStringLiteral("values")).toObject().value(QStringLiteral("link")).toString(),
            QStringLiteral("3"));

        // 300 numbered messages, complete and in order, and paged through 100 at a time.
        QCOMPARE(fx->run(QStringLiteral("dialogctl"),
                         reportArgs(QStringLiteral("Bulk"),
                                    {QStringLiteral("--count"), QStringLiteral("300"),
                                     QStringLiteral("--numbered"), QStringLiteral("--collapse-ms"),
                                     QStringLiteral("0"), QStringLiteral("bulk")})),
                 0);
        QStringList all;
        QString before;
        for (int page = 0; page < 4; ++page) {
            QStringList args{QStringLiteral("--process"), QStringLiteral("Bulk"), QStringLiteral("--limit"),
                             QStringLiteral("100")};
            if (!before.isEmpty())
                args << QStringLiteral("--before") << before;
            const auto rs = search(*fx, args);
            if (rs.isEmpty())
                break;
            all = texts(rs) + all;
            before = QString::number(rs.first().value(QStringLiteral("id")).toInteger());
        }
        QCOMPARE(all.size(), 300);
        for (int i = 0; i < 300; ++i)
            QCOMPARE(all.at(i), QStringLiteral("bulk #%1").arg(i + 1));
    }

    void twoLoggersShareOneDatabase()
    {
        // Two partitions, each with its Control Server and logger, one database; both loggers start
        // together (the schema is created once).
        auto a = partition(), b = partition();
        QVERIFY(a && b);
        QVERIFY(waitForLogger(*a));
        QVERIFY(waitForLogger(*b));
        QCOMPARE(a->run(QStringLiteral("dialogctl"),
                        reportArgs(QStringLiteral("SiteA"), {QStringLiteral("from A")})),
                 0);
        QCOMPARE(b->run(QStringLiteral("dialogctl"),
                        reportArgs(QStringLiteral("SiteB"), {QStringLiteral("from B")})),
                 0);
        for (ProcessFixture *fx : {a.get(), b.get()})
            QCOMPARE(texts(search(*fx, {QStringLiteral("--process"), QStringLiteral("Site?")})),
                     (QStringList{QStringLiteral("from A"), QStringLiteral("from B")}));
    }

    void killedLoggerLosesNothingAndStoresNothingTwice()
    {
        auto fx = partition();
        QVERIFY(fx);
        QVERIFY(waitForLogger(*fx));
        // SIGKILL while a process reports 20,000 messages: batches unacknowledged at that moment are sent
        // again to the next logger, which inserts only those not already committed.
        QProcess *reporter = fx->start(
            QStringLiteral("dialogctl"),
            reportArgs(QStringLiteral("Stream"),
                       {QStringLiteral("--count"), QStringLiteral("20000"), QStringLiteral("--numbered"),
                        QStringLiteral("--queue"), QStringLiteral("20000"), QStringLiteral("--collapse-ms"),
                        QStringLiteral("0"), QStringLiteral("--timeout-ms"), QStringLiteral("60000"),
                        QStringLiteral("stream")}));
        QVERIFY(
            waitUntil([&] { return stats(*fx).value(QStringLiteral("stored")).toInteger() > 0; }, 15000, 5));
        m_lastLogger->kill();
        QVERIFY(m_lastLogger->waitForFinished(5000));
        fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--db"), m_pg.url()});
        QVERIFY(waitUntil([&] { return reporter->state() == QProcess::NotRunning; }, 60000, 20));
        QCOMPARE(reporter->exitCode(), 0);
        // Every message once, in order: two pages of 10,000.
        QStringList all;
        QString before;
        for (int page = 0; page < 3; ++page) {
            QStringList args{QStringLiteral("--process"), QStringLiteral("Stream"), QStringLiteral("--limit"),
                             QStringLiteral("10000")};
            if (!before.isEmpty())
                args << QStringLiteral("--before") << before;
            const auto rs = search(*fx, args);
            if (rs.isEmpty())
                break;
            all = texts(rs) + all;
            before = QString::number(rs.first().value(QStringLiteral("id")).toInteger());
        }
        QCOMPARE(all.size(), 20000);
        for (int i = 0; i < all.size(); ++i)
            QCOMPARE(all.at(i), QStringLiteral("stream #%1").arg(i + 1));
    }

    void serverRestartDropsSaysWhyAndRecovers()
    {
        auto fx = partition();
        QVERIFY(fx);
        QVERIFY(waitForLogger(*fx));
        m_pg.stop();
        QByteArray err;
        QCOMPARE(fx->run(QStringLiteral("dialogctl"),
                         reportArgs(QStringLiteral("Lost"),
                                    {QStringLiteral("--count"), QStringLiteral("5"),
                                     QStringLiteral("--numbered"), QStringLiteral("lost")}),
                         nullptr, &err),
                 1);
        QVERIFY2(err.contains("5 of 5 messages dropped (not stored: "), err.constData());
        const QJsonObject s = stats(*fx);
        QVERIFY(s.value(QStringLiteral("dropped")).toInteger() >= 5);
        QVERIFY2(!s.value(QStringLiteral("last_error")).toString().isEmpty(),
                 qPrintable(QJsonDocument(s).toJson()));
        QByteArray searchErr;
        QVERIFY(search(*fx, {QStringLiteral("--process"), QStringLiteral("Lost")}, &searchErr).isEmpty());
        QVERIFY2(searchErr.contains("search failed"), searchErr.constData());

        QString error;
        QVERIFY2(m_pg.start(&error), qPrintable(error));
        QCOMPARE(fx->run(QStringLiteral("dialogctl"),
                         reportArgs(QStringLiteral("Lost"), {QStringLiteral("back")})),
                 0);
        QCOMPARE(texts(search(*fx, {QStringLiteral("--process"), QStringLiteral("Lost")})),
                 QStringList{QStringLiteral("back")});
    }

    void badDatabaseOptions_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("scheme") << QStringList{QStringLiteral("--db"), QStringLiteral("mysql://u@h/d")}
                                << QStringLiteral("only postgresql:// is supported");
        QTest::newRow("no database") << QStringList{QStringLiteral("--db"),
                                                    QStringLiteral("postgresql://u@h:5432")}
                                     << QStringLiteral("no database name");
        QTest::newRow("no user") << QStringList{QStringLiteral("--db"), QStringLiteral("postgresql://h/d")}
                                 << QStringLiteral("no user");
        QTest::newRow("parameter") << QStringList{QStringLiteral("--db"),
                                                  QStringLiteral("postgresql://u@h/d?x=1")}
                                   << QStringLiteral("unknown parameter 'x'");
        QTest::newRow("with data-dir")
            << QStringList{QStringLiteral("--db"), QStringLiteral("postgresql://u@h/d"),
                           QStringLiteral("--data-dir"), QStringLiteral("/tmp")}
            << QStringLiteral("--db and --data-dir exclude each other");
        QTest::newRow("max-bytes") << QStringList{QStringLiteral("--db"),
                                                  QStringLiteral("postgresql://u@h/d"),
                                                  QStringLiteral("--max-bytes"), QStringLiteral("1000")}
                                   << QStringLiteral("--max-bytes applies to SQLite only");
    }

    void badDatabaseOptions()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        ProcessFixture fx;
        QByteArray err;
        QCOMPARE(fx.run(QStringLiteral("dialog-logger"), args, nullptr, &err), 1);
        QVERIFY2(err.contains(message.toUtf8()), err.constData());
    }

    void unreachableServerIsReported()
    {
        auto fx = std::make_unique<ProcessFixture>();
        QVERIFY(fx->startControlServer());
        fx->start(QStringLiteral("dialog-logger"),
                  {QStringLiteral("--db"),
                   QStringLiteral("postgresql://dialog@127.0.0.1:%1/messages").arg(freePort())});
        QVERIFY(waitForLogger(*fx));
        QByteArray err;
        QCOMPARE(fx->run(QStringLiteral("dialogctl"),
                         reportArgs(QStringLiteral("X"), {QStringLiteral("nowhere")}), nullptr, &err),
                 1);
        QVERIFY2(err.contains("not stored: cannot open postgresql://dialog@127.0.0.1:"), err.constData());
    }
};

QTEST_GUILESS_MAIN(tst_LoggerPg)
#include "tst_loggerpg.moc"
