// Fan-out of an IS server to a few hundred subscriptions in a few processes, with a sender that
// updates as fast as the server answers: the subscriptions that keep up receive every notification
// and none is dropped for them; a stopped subscriber process is dropped for alone. Real binaries on
// loopback.
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

private:
    qint64 m_stopped = 0; // a subscriber process under SIGSTOP, continued in cleanup()
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

void tst_IsFanout::healthySubscribersKeepUpStoppedOneIsDroppedFor()
{
    // Own queues of 2,000 notifications per subscription (and 4 MB per subscriber process), so that
    // the stopped process fills its queues within the updates sent.
    startServer(QStringLiteral("Bench"), {QStringLiteral("--subscriber-queue"), QStringLiteral("2000")});
    QVERIFY(waitForServer(QStringLiteral("Bench")));
    const int fastProcesses = 3, fastSubscriptions = 200, stoppedSubscriptions = 40;
    const auto subscriber = [&](int index, int subscriptions, const QString &name, const QStringList &extra) {
        return m_fx->start(QStringLiteral("dialog"),
                           QStringList{QStringLiteral("bench"), QStringLiteral("is-subscriber"),
                                       QStringLiteral("--index"), QString::number(index),
                                       QStringLiteral("--subscriptions"), QString::number(subscriptions),
                                       QStringLiteral("--name"), name} +
                               extra);
    };
    for (int i = 0; i < fastProcesses; ++i)
        subscriber(i, fastSubscriptions, QStringLiteral("is-fast-%1").arg(i), {});
    QProcess *stopped = subscriber(fastProcesses, stoppedSubscriptions, QStringLiteral("is-stopped"),
                                   {QStringLiteral("--receive-buffer-bytes"), QStringLiteral("65536"),
                                    QStringLiteral("--pending-bytes"), QStringLiteral("65536")});
    QHash<int, QJsonObject> reports;
    for (int i = 0; i <= fastProcesses; ++i) {
        Subscription *s = m_client->subscribe(QStringLiteral("bench.is.sub.%1").arg(i));
        connect(s, &Subscription::messageReceived, this,
                [&reports, i](const Message &m) { reports[i] = QJsonDocument::fromJson(m.data()).object(); });
    }
    const auto value = [&](int i, const char *key) {
        return reports.value(i).value(QLatin1String(key)).toInteger();
    };
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

    // Updates as fast as the server answers them, 64 in flight, 10 objects in turn.
    is::TypeInfo blob(QStringLiteral("Blob"));
    blob.addAttribute(is::AttributeInfo(QStringLiteral("seq"), is::BasicType::U32));
    blob.addAttribute(is::AttributeInfo(QStringLiteral("data"), is::BasicType::U8, {}, true));
    QVERIFY(m_dict->declareTypesSync(QStringLiteral("Bench"), {blob}).isOk());
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("Blob"));
    o.set(QStringLiteral("data"), QList<quint8>(8, 7));
    const int total = 10000;
    int sent = 0, acked = 0, failed = 0;
    std::function<void()> one = [&] {
        o.set<quint32>(QStringLiteral("seq"), quint32(sent));
        m_dict->update(QStringLiteral("Bench.bench.%1").arg(sent % 10), o,
                       is::Dictionary::UpdateMode::CreateIfMissing, [&](const is::Status &s) {
                           ++acked;
                           failed += !s.isOk();
                           if (sent < total)
                               one();
                       });
        ++sent;
    };
    for (int i = 0; i < 64; ++i)
        one();
    QTRY_VERIFY_WITH_TIMEOUT(acked == total, 120000);
    QCOMPARE(failed, 0);

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

QTEST_GUILESS_MAIN(tst_IsFanout)
#include "tst_isfanout.moc"
