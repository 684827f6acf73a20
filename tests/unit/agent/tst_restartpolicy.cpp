// The agent's restart policy on numbers: which ends bring a process back, the back-off, the limit
// per minute, and the request fields.
#include "restartpolicy.h"

#include <QJsonDocument>
#include <QTest>

using dialog::agent::RestartPolicy;
using dialog::agent::RestartTracker;

class tst_RestartPolicy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modes_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<bool>("failed");
        QTest::addColumn<bool>("restarts");
        QTest::newRow("no, failed") << "no" << true << false;
        QTest::newRow("on-failure, failed") << "on-failure" << true << true;
        QTest::newRow("on-failure, exit 0") << "on-failure" << false << false;
        QTest::newRow("always, exit 0") << "always" << false << true;
    }
    void modes()
    {
        QFETCH(QString, mode);
        QFETCH(bool, failed);
        QFETCH(bool, restarts);
        RestartPolicy p;
        QVERIFY(RestartPolicy::fromJson({{QStringLiteral("restart"), mode}}, &p).isOk());
        RestartTracker t(p);
        QCOMPARE(t.onExit(failed, 100, 0).has_value(), restarts);
    }

    void backOffDoublesAndResetsAfterHealthyRun()
    {
        RestartPolicy p;
        p.mode = RestartPolicy::Mode::Always;
        p.delayMs = 100;
        p.maxDelayMs = 350;
        p.limitPerMinute = 100;
        RestartTracker t(p);
        QCOMPARE(*t.onExit(true, 10, 0), 100);
        QCOMPARE(*t.onExit(true, 10, 1000), 200);
        QCOMPARE(*t.onExit(true, 10, 2000), 350);
        QCOMPARE(*t.onExit(true, 10, 3000), 350);
        QCOMPARE(*t.onExit(true, 60000, 70000), 100); // ran a minute: healthy
    }

    void limitPerMinuteGivesUp()
    {
        RestartPolicy p;
        p.mode = RestartPolicy::Mode::OnFailure;
        p.delayMs = 0;
        p.limitPerMinute = 3;
        RestartTracker t(p);
        for (int i = 0; i < 3; ++i)
            QVERIFY(t.onExit(true, 10, i * 100).has_value());
        QVERIFY(!t.onExit(true, 10, 400).has_value());
        QVERIFY(t.gaveUp());
        QCOMPARE(t.restarts(), 3);
        // A minute later the window is free again.
        RestartTracker later(p);
        for (int i = 0; i < 3; ++i)
            QVERIFY(later.onExit(true, 10, i * 30000).has_value());
        QVERIFY(later.onExit(true, 10, 90001).has_value());
    }

    void badFieldsRefused_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("mode") << QByteArray(R"({"restart": "sometimes"})") << "restart:";
        QTest::newRow("negative delay") << QByteArray(R"({"restart_delay_ms": -1})") << "restart_delay_ms";
        QTest::newRow("fraction") << QByteArray(R"({"restart_limit_per_minute": 1.5})") << "restart_limit_per_minute";
        QTest::newRow("zero limit") << QByteArray(R"({"restart_limit_per_minute": 0})") << "restart_limit_per_minute";
    }
    void badFieldsRefused()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, message);
        RestartPolicy p;
        const dialog::Status st = RestartPolicy::fromJson(QJsonDocument::fromJson(json).object(), &p);
        QCOMPARE(st.code(), dialog::Status::Code::BadRequest);
        QVERIFY2(st.message().startsWith(message), qPrintable(st.message()));
    }
};

QTEST_GUILESS_MAIN(tst_RestartPolicy)
#include "tst_restartpolicy.moc"
