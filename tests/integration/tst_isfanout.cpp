// Fan-out of an IS server to a few hundred subscriptions in a few processes, with a sender that
// updates as fast as the server answers: the subscriptions that keep up receive every notification
// and none is dropped for them; a stopped subscriber process is dropped for alone, and one stopped
// for a moment (a healthy process that lost the CPU) is waited for. Real binaries on loopback.
#include "isfixture.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <csignal>
#include <functional>

using namespace dialog;
using namespace dialog::test;

class tst_IsFanout : public QObject, private IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void healthySubscribersKeepUpStoppedOneIsDroppedFor();
    void subscriberStoppedForAMomentIsWaitedFor();

private:
    QProcess *startSubscriber(int index, int subscriptions, const QString &name, const QStringList &extra = {});
    /// Subscribes to the reports of subscriber processes 0..processes-1, into m_reports.
    void watchReports(int processes);
    qint64 value(int process, const char *key) const
    {
        return m_reports.value(process).value(QLatin1String(key)).toInteger();
    }
    /// Starts @p total updates (of @p payloadBytes) of 10 objects of the Bench server in turn, as fast as the server
    /// answers them (64 in flight); m_acked and m_failed count the answers.
    void sendUpdates(int total, int payloadBytes = 8);

    qint64 m_stopped = 0; // a subscriber process under SIGSTOP, continued in cleanup()
    QHash<int, QJsonObject> m_reports;
    is::Object m_blob;
    int m_sent = 0, m_total = 0, m_acked = 0, m_failed = 0;
    std::function<void()> m_sendOne;
};

void tst_IsFanout::init()
{
    QVERIFY(setUpIs(QStringLiteral("is-fanout-test")));
}

void tst_IsFanout::cleanup()
{
    if (m_stopped > 0)
        ::kill(pid_t(m_stopped), SIGCONT);
    m_stopped = 0;
    tearDownIs();
}

QProcess *tst_IsFanout::startSubscriber(int index, int subscriptions, const QString &name,
                                        const QStringList &extra)
{
    return m_fx->start(QStringLiteral("dialogctl"),
                       QStringList{QStringLiteral("bench"), QStringLiteral("is-subscriber"),
                                   QStringLiteral("--index"), QString::number(index),
                                   QStringLiteral("--subscriptions"), QString::number(subscriptions),
                                   QStringLiteral("--name"), name} +
                           extra);
}

void tst_IsFanout::watchReports(int processes)
{
    m_reports.clear();
    for (int i = 0; i < processes; ++i) {
        Subscription *s = m_client->subscribe(QStringLiteral("bench.is.sub.%1").arg(i));
        connect(s, &Subscription::messageReceived, this,
                [this, i](const Message &m) { m_reports[i] = QJsonDocument::fromJson(m.data()).object(); });
    }
}

void tst_IsFanout::sendUpdates(int total, int payloadBytes)
{
    is::TypeInfo blob(QStringLiteral("Blob"));
    blob.addAttribute(is::AttributeInfo(QStringLiteral("seq"), is::BasicType::U32));
    blob.addAttribute(is::AttributeInfo(QStringLiteral("data"), is::BasicType::U8, {}, true));
    QVERIFY(m_dict->declareTypesSync(QStringLiteral("Bench"), {blob}).isOk());
    m_blob = is::Object::create(m_dict->types(), QStringLiteral("Blob"));
    m_blob.set(QStringLiteral("data"), QList<quint8>(payloadBytes, 7));
    m_sent = m_acked = m_failed = 0;
    m_total = total;
    m_sendOne = [this] {
        m_blob.set<quint32>(QStringLiteral("seq"), quint32(m_sent));
        m_dict->update(QStringLiteral("Bench.bench.%1").arg(m_sent % 10), m_blob,
                       is::Dictionary::UpdateMode::CreateIfMissing, [this](const is::Status &s) {
                           ++m_acked;
                           m_failed += !s.isOk();
                           if (m_sent < m_total)
                               m_sendOne();
                       });
        ++m_sent;
    };
    for (int i = 0; i < 64 && m_sent < m_total; ++i)
        m_sendOne();
}

void tst_IsFanout::healthySubscribersKeepUpStoppedOneIsDroppedFor()
{
    // Own queues of 2,000 notifications per subscription (and 4 MB per subscriber process), so that
    // the stopped process fills its queues within the updates sent.
    startServer(QStringLiteral("Bench"), {QStringLiteral("--subscriber-queue"), QStringLiteral("2000")});
    QVERIFY(waitForServer(QStringLiteral("Bench")));
    const int fastProcesses = 3, fastSubscriptions = 200, stoppedSubscriptions = 40;
    for (int i = 0; i < fastProcesses; ++i)
        startSubscriber(i, fastSubscriptions, QStringLiteral("is-fast-%1").arg(i));
    QProcess *stopped = startSubscriber(fastProcesses, stoppedSubscriptions, QStringLiteral("is-stopped"),
                                        {QStringLiteral("--receive-buffer-bytes"), QStringLiteral("65536"),
                                         QStringLiteral("--pending-bytes"), QStringLiteral("65536")});
    watchReports(fastProcesses + 1);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (int i = 0; i < fastProcesses; ++i)
                if (value(i, "active") != fastSubscriptions)
                    return false;
            return value(fastProcesses, "active") == stoppedSubscriptions;
        }(),
        30000);
    m_stopped = stopped->processId();
    QCOMPARE(::kill(pid_t(m_stopped), SIGSTOP), 0);

    const int total = 10000;
    sendUpdates(total);
    QTRY_VERIFY_WITH_TIMEOUT(m_acked == total, 120000);
    QCOMPARE(m_failed, 0);

    // Every healthy subscription received every update, and none was dropped (a bound, not a speed).
    for (int i = 0; i < fastProcesses; ++i) {
        QTRY_VERIFY2_WITH_TIMEOUT(
            value(i, "count") >= qint64(total) * fastSubscriptions,
            qPrintable(QStringLiteral("process %1 got %2 of %3 notifications, %4 dropped")
                           .arg(i)
                           .arg(value(i, "count"))
                           .arg(qint64(total) * fastSubscriptions)
                           .arg(value(i, "dropped"))),
            60000);
        QCOMPARE(value(i, "count"), qint64(total) * fastSubscriptions);
        QCOMPARE(value(i, "dropped"), 0);
    }
    // The server dropped for the stopped subscriptions only, and counted it.
    is::Entry stats; // asked again while the server is still busy pacing (a slow build: ASan)
    QTRY_VERIFY_WITH_TIMEOUT(m_dict->getSync(QStringLiteral("Bench.Statistics"), &stats).isOk(), 30000);
    QCOMPARE(stats.object.get<quint32>(QStringLiteral("subscribers")),
             quint32(fastProcesses * fastSubscriptions + stoppedSubscriptions));
    const auto names = stats.object.get<QList<QString>>(QStringLiteral("subscriberNames"));
    const auto drops = stats.object.get<QList<quint64>>(QStringLiteral("subscriberDropped"));
    QCOMPARE(drops.size(), names.size());
    for (qsizetype i = 0; i < names.size(); ++i) {
        if (!names[i].startsWith(QLatin1String("is-stopped/")))
            QVERIFY2(drops[i] == 0, qPrintable(QStringLiteral("%1: %2 dropped").arg(names[i]).arg(drops[i])));
    }

    // Continued, the stopped one catches up: what it receives and what it was told it lost add up to
    // at least the newest value of each of the ten objects per subscription.
    QCOMPARE(::kill(pid_t(m_stopped), SIGCONT), 0);
    m_stopped = 0;
    QTRY_VERIFY_WITH_TIMEOUT(value(fastProcesses, "count") + value(fastProcesses, "dropped") >=
                                 qint64(10) * stoppedSubscriptions,
                             60000);
}

void tst_IsFanout::subscriberStoppedForAMomentIsWaitedFor()
{
    // Own queues of 300 notifications and 256 KB per connection: a subscriber process stopped for
    // 200 ms while updates of 512 bytes flow overflows them (and the kernel's socket buffers), unless the server waits for it (a lone process
    // behind has a grace of 500 ms).
    startServer(QStringLiteral("Bench"), {QStringLiteral("--subscriber-queue"), QStringLiteral("300"),
                                          QStringLiteral("--queue-bytes"), QStringLiteral("262144")});
    QVERIFY(waitForServer(QStringLiteral("Bench")));
    const int subscriptions = 50;
    startSubscriber(0, subscriptions, QStringLiteral("is-steady"));
    QProcess *paused = startSubscriber(1, subscriptions, QStringLiteral("is-paused"),
                                       {QStringLiteral("--receive-buffer-bytes"), QStringLiteral("262144"),
                                        QStringLiteral("--pending-bytes"), QStringLiteral("262144")});
    watchReports(2);
    QTRY_VERIFY_WITH_TIMEOUT(value(0, "active") == subscriptions && value(1, "active") == subscriptions, 30000);

    const int total = 6000;
    sendUpdates(total, 512);
    QTRY_VERIFY_WITH_TIMEOUT(m_acked >= total / 3, 60000);
    m_stopped = paused->processId();
    QCOMPARE(::kill(pid_t(m_stopped), SIGSTOP), 0);
    letTimePass(200, "the subscriber stays stopped while updates are queued for it");
    QCOMPARE(::kill(pid_t(m_stopped), SIGCONT), 0);
    m_stopped = 0;
    const int ackedBeforeResume = m_acked;
    QTRY_VERIFY_WITH_TIMEOUT(m_acked == total, 60000);
    QCOMPARE(m_failed, 0);
    QVERIFY2(ackedBeforeResume < total, "the updates were over before the process was stopped");
    for (int i = 0; i < 2; ++i) {
        // Each lost notification is counted, and the newest value of its object sent again.
        QTRY_VERIFY_WITH_TIMEOUT(value(i, "count") + value(i, "dropped") >= qint64(total) * subscriptions, 30000);
        QVERIFY2(value(i, "dropped") == 0 && value(i, "count") == qint64(total) * subscriptions,
                 qPrintable(QStringLiteral("process %1 got %2 of %3 notifications, %4 dropped")
                                .arg(i)
                                .arg(value(i, "count"))
                                .arg(qint64(total) * subscriptions)
                                .arg(value(i, "dropped"))));
    }
}

QTEST_GUILESS_MAIN(tst_IsFanout)
#include "tst_isfanout.moc"
