// The IS server through the IS API and the `dialogctl is` tool: operations, criteria, subscriptions,
// slow subscribers, persistence, errors. Real binaries on loopback.
#include "statuscheck.h"
#include "isfixture.h"

#include "dialog/client.h"
#include "dialog/is/codec.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <optional>

using namespace dialog;
using namespace dialog::test;

class tst_IsServer : public QObject, private IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void dictionaryOperations();
    void inheritanceReads();
    void listWithCriteria_data();
    void listWithCriteria();
    void subscriptionNotifications();
    void eventOutlivesItsDictionary();
    void namesOnlyAndCriteriaFilter();
    void subscriptionSurvivesServerRestart();
    void slowSubscriberDoesNotSlowOthers();
    void persistenceAcrossRestartAndKill();
    void corruptDataFile();
    void checkpointFailureReachesTheMessageLog();
    void malformedRequestsAnswered();
    void toolCommandsAndErrors();
    void quotaExceededRefusedAndCounted();
    void historyCountsAgainstTheClientQuota();
    void quotaPerAddressWhateverTheName();
    void typeDeclarationsBounded();
    void serverWithHundredsOfWritingProcesses();
};

namespace {
const QString Types = isTypesDir();
} // namespace

void tst_IsServer::init()
{
    QVERIFY(setUpIs(QStringLiteral("is-test")));
}

void tst_IsServer::cleanup()
{
    tearDownIs();
}

void tst_IsServer::dictionaryOperations()
{
    startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), 7));
    QVERIFY_OK(run.set(QStringLiteral("state"), QStringLiteral("Running")));

    QCOMPARE(m_dict->insertSync(QStringLiteral("RunParams.RunInfo"), run).code(), is::Status::Code::Ok);
    QCOMPARE(m_dict->insertSync(QStringLiteral("RunParams.RunInfo"), run).code(),
             is::Status::Code::AlreadyExists);
    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("RunParams.RunInfo"), &e).isOk());
    QCOMPARE(e.name, QStringLiteral("RunParams.RunInfo"));
    QCOMPARE(e.typeName, QStringLiteral("RunInfo"));
    QCOMPARE(e.object.get<quint32>(QStringLiteral("runNumber")), 7u);
    QCOMPARE(e.object.get<QString>(QStringLiteral("state")), QStringLiteral("Running"));

    run.set<quint32>(QStringLiteral("runNumber"), 8);
    QVERIFY(
        m_dict->updateSync(QStringLiteral("RunParams.RunInfo"), run, is::Dictionary::UpdateMode::MustExist)
            .isOk());
    QCOMPARE(
        m_dict->updateSync(QStringLiteral("RunParams.Missing"), run, is::Dictionary::UpdateMode::MustExist)
            .code(),
        is::Status::Code::NotFound);
    QVERIFY(m_dict->updateSync(QStringLiteral("RunParams.Created"), run).isOk()); // created if missing
    QVERIFY(m_dict->getSync(QStringLiteral("RunParams.RunInfo"), &e).isOk());
    QCOMPARE(e.object.get<quint32>(QStringLiteral("runNumber")), 8u);
    QCOMPARE(e.updateCount, quint64(1));

    // Another type under an existing name, a type the server does not know, bad names.
    is::Object state = is::Object::create(m_dict->types(), QStringLiteral("RunCtrlState"));
    QVERIFY(state.isValid());
    QCOMPARE(m_dict->updateSync(QStringLiteral("RunParams.RunInfo"), state).code(),
             is::Status::Code::TypeMismatch);
    is::TypeInfo local(QStringLiteral("OnlyHere"));
    local.addAttribute(is::AttributeInfo(QStringLiteral("x"), is::BasicType::U8));
    QVERIFY_OK(m_dict->types().declareType(local));
    const is::Status unknown = m_dict->insertSync(
        QStringLiteral("RunParams.X"), is::Object::create(m_dict->types(), QStringLiteral("OnlyHere")));
    QCOMPARE(unknown.code(), is::Status::Code::UnknownType);
    QVERIFY2(unknown.message().contains(QLatin1String("OnlyHere")), qPrintable(unknown.toString()));
    QCOMPARE(m_dict->getSync(QStringLiteral("NoDot"), &e).code(), is::Status::Code::InvalidName);

    // Declared at run time, then usable.
    QVERIFY(m_dict->declareTypesSync(QStringLiteral("RunParams"), {local}).isOk());
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("RunParams.X"),
                             is::Object::create(m_dict->types(), QStringLiteral("OnlyHere")))
                .isOk());

    QVERIFY(m_dict->removeSync(QStringLiteral("RunParams.RunInfo")).isOk());
    QCOMPARE(m_dict->removeSync(QStringLiteral("RunParams.RunInfo")).code(), is::Status::Code::NotFound);
    QCOMPARE(m_dict->getSync(QStringLiteral("RunParams.RunInfo"), &e).code(), is::Status::Code::NotFound);
    // The statistics object belongs to the server.
    QCOMPARE(m_dict->removeSync(QStringLiteral("RunParams.Statistics")).code(),
             is::Status::Code::InvalidName);
}

void tst_IsServer::inheritanceReads()
{
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    is::Object r = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
    QVERIFY(r.isValid());
    QVERIFY_OK(r.setVariant(QStringLiteral("events"), 1234));
    QVERIFY(m_dict->insertSync(QStringLiteral("DAQ.Readout1"), r).isOk());
    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("DAQ.Readout1"), &e, QStringLiteral("ProcessStats")).isOk());
    QCOMPARE(e.object.typeName(), QStringLiteral("ProcessStats"));
    QCOMPARE(e.typeName, QStringLiteral("ReadoutStats"));
    QCOMPARE(e.object.attributeCount(),
             m_dict->types().type(QStringLiteral("ProcessStats")).allAttributes().size());
    QCOMPARE(m_dict->getSync(QStringLiteral("DAQ.Readout1"), &e, QStringLiteral("RunInfo")).code(),
             is::Status::Code::TypeMismatch);
    QCOMPARE(m_dict->getSync(QStringLiteral("DAQ.Readout1"), &e, QStringLiteral("NoSuchType")).code(),
             is::Status::Code::UnknownType);
}

void tst_IsServer::listWithCriteria_data()
{
    QTest::addColumn<QString>("regex");
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("selector");
    QTest::addColumn<bool>("orLogic");
    QTest::addColumn<QStringList>("expected");
    using S = is::Criteria::TypeSelector;
    QTest::newRow("all") << QString() << QString() << int(S::Any) << false
                         << QStringList{"P1", "R1", "R2", "Run", "Statistics"};
    QTest::newRow("regex") << "R[0-9]+" << QString() << int(S::Any) << false << QStringList{"R1", "R2"};
    QTest::newRow("exactly") << QString() << "ProcessStats" << int(S::Exactly) << false << QStringList{"P1"};
    QTest::newRow("subtypes") << QString() << "ProcessStats" << int(S::WithSubtypes) << false
                              << QStringList{"P1", "R1", "R2"};
    QTest::newRow("not") << QString() << "ProcessStats" << int(S::Not) << false
                         << QStringList{"R1", "R2", "Run", "Statistics"};
    QTest::newRow("not-subtypes") << QString() << "ProcessStats" << int(S::NotWithSubtypes) << false
                                  << QStringList{"Run", "Statistics"};
    QTest::newRow("regex-and-type") << "R.*"
                                    << "ReadoutStats" << int(S::Exactly) << false << QStringList{"R1", "R2"};
    QTest::newRow("regex-or-type") << "Run"
                                   << "ProcessStats" << int(S::Exactly) << true << QStringList{"P1", "Run"};
}

void tst_IsServer::listWithCriteria()
{
    QFETCH(QString, regex);
    QFETCH(QString, type);
    QFETCH(int, selector);
    QFETCH(bool, orLogic);
    QFETCH(QStringList, expected);
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.P1"),
                             is::Object::create(m_dict->types(), QStringLiteral("ProcessStats")))
                .isOk());
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.R1"),
                             is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats")))
                .isOk());
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.R2"),
                             is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats")))
                .isOk());
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.Run"),
                             is::Object::create(m_dict->types(), QStringLiteral("RunInfo")))
                .isOk());
    QList<is::Entry> entries;
    const is::Criteria c(regex, type, is::Criteria::TypeSelector(selector),
                         orLogic ? is::Criteria::Logic::Or : is::Criteria::Logic::And);
    QVERIFY(m_dict->listSync(QStringLiteral("DAQ"), c, &entries).isOk());
    QStringList names;
    for (const is::Entry &e : std::as_const(entries)) {
        names << e.name.mid(4);
        QVERIFY(e.object.isValid());
    }
    QCOMPARE(names, expected);
    // The same through the Iterator, without values.
    is::Iterator it(*m_dict, QStringLiteral("DAQ"), c, false);
    QVERIFY(it.status().isOk());
    QCOMPARE(it.size(), expected.size());
    while (it.next())
        QVERIFY(!it.entry().object.isValid());
    QCOMPARE(m_dict->listSync(QStringLiteral("DAQ"), is::Criteria(QStringLiteral("(")), &entries).code(),
             is::Status::Code::BadRequest);
}

void tst_IsServer::subscriptionNotifications()
{
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    is::Receiver receiver(m_dict.get());
    struct Seen
    {
        is::Event::Kind kind;
        QString name;
        quint32 run;
        bool hasValue;
    };
    QList<Seen> seen;
    receiver.setCallback([&](const is::Event &e) {
        if (e.name() == QLatin1String("DAQ.Statistics"))
            return;
        const is::Object o = e.object();
        seen.append({e.kind(), e.name(), o.get<quint32>(QStringLiteral("runNumber")), e.hasValue()});
    });
    QSignalSpy changed(&receiver, &is::Receiver::changed);
    const int id = receiver.subscribe(QStringLiteral("DAQ"), is::Criteria());
    QTRY_VERIFY_WITH_TIMEOUT(receiver.isActive(id), 10000);
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    run.set<quint32>(QStringLiteral("runNumber"), 1);
    QVERIFY(m_dict->insertSync(QStringLiteral("DAQ.Run"), run).isOk());
    run.set<quint32>(QStringLiteral("runNumber"), 2);
    QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.Run"), run).isOk());
    QVERIFY(m_dict->removeSync(QStringLiteral("DAQ.Run")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(seen.size(), 3, 10000);
    QCOMPARE(seen[0].kind, is::Event::Kind::Created);
    QCOMPARE(seen[0].run, 1u);
    QCOMPARE(seen[1].kind, is::Event::Kind::Updated);
    QCOMPARE(seen[1].run, 2u);
    QCOMPARE(seen[2].kind, is::Event::Kind::Removed);
    QVERIFY(!seen[2].hasValue);
    QCOMPARE(seen[0].name, QStringLiteral("DAQ.Run"));
    QVERIFY(changed.size() >= 3); // the signal too
    // After unsubscribing nothing more arrives: a second subscription, still active, shows when the
    // server has dispatched the change.
    is::Receiver witness(m_dict.get());
    int witnessed = 0;
    witness.setCallback([&](const is::Event &e) { witnessed += e.name() == QLatin1String("DAQ.Run"); });
    const int witnessId = witness.subscribe(QStringLiteral("DAQ"), is::Criteria());
    QTRY_VERIFY_WITH_TIMEOUT(witness.isActive(witnessId), 10000);
    receiver.unsubscribe(id);
    QVERIFY(m_dict->insertSync(QStringLiteral("DAQ.Run"), run).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(witnessed, 1, 10000);
    QCOMPARE(seen.size(), 3);
}

void tst_IsServer::eventOutlivesItsDictionary()
{
    // An event travels through queued signals: it keeps the types it needs to decode its value, so
    // it still decodes after the dictionary and receiver that delivered it are gone.
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    auto dict = std::make_unique<is::Dictionary>(m_client.get());
    QVERIFY_OK(dict->types().loadDirectory(isTypesDir()));
    auto receiver = std::make_unique<is::Receiver>(dict.get());
    std::optional<is::Event> kept;
    receiver->setCallback([&](const is::Event &e) {
        if (e.name() == QLatin1String("DAQ.Kept") && e.hasValue())
            kept = e;
    });
    const int id =
        receiver->subscribe(QStringLiteral("DAQ"), is::Criteria::exactName(QStringLiteral("Kept")));
    QTRY_VERIFY_WITH_TIMEOUT(receiver->isActive(id), 10000);
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    run.set<quint32>(QStringLiteral("runNumber"), 77);
    QVERIFY(m_dict->insertSync(QStringLiteral("DAQ.Kept"), run).isOk());
    QTRY_VERIFY_WITH_TIMEOUT(kept.has_value(), 10000);
    receiver.reset();
    dict.reset();
    is::Object o;
    QVERIFY_OK(kept->object(&o));
    QCOMPARE(o.typeName(), QStringLiteral("RunInfo"));
    QCOMPARE(o.get<quint32>(QStringLiteral("runNumber")), 77u);
}

void tst_IsServer::namesOnlyAndCriteriaFilter()
{
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    is::Receiver receiver(m_dict.get());
    QStringList withValue, namesOnly;
    receiver.setCallback([&](const is::Event &e) {
        (e.subscription() == 1 ? withValue : namesOnly)
            << e.name() + (e.hasValue() ? QStringLiteral("+v") : QString());
    });
    QCOMPARE(receiver.subscribe(QStringLiteral("DAQ"),
                                is::Criteria(QStringLiteral("Readout.*"), QStringLiteral("ProcessStats"),
                                             is::Criteria::TypeSelector::WithSubtypes)),
             1);
    QCOMPARE(receiver.subscribe(QStringLiteral("DAQ"), is::Criteria(QStringLiteral("Run")), false), 2);
    QTRY_VERIFY_WITH_TIMEOUT(receiver.isActive(1) && receiver.isActive(2), 10000);
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.Readout1"),
                             is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats")))
                .isOk());
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.ReadoutX"),
                             is::Object::create(m_dict->types(), QStringLiteral("RunInfo")))
                .isOk());
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.Run"),
                             is::Object::create(m_dict->types(), QStringLiteral("RunInfo")))
                .isOk());
    QTRY_COMPARE_WITH_TIMEOUT(namesOnly, QStringList{QStringLiteral("DAQ.Run")}, 10000);
    QCOMPARE(withValue, QStringList{QStringLiteral("DAQ.Readout1+v")});
}

void tst_IsServer::subscriptionSurvivesServerRestart()
{
    QProcess *server = startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    is::Receiver receiver(m_dict.get());
    QStringList names;
    receiver.setCallback([&](const is::Event &e) {
        if (!e.name().endsWith(QLatin1String(".Statistics")))
            names << e.name();
    });
    const int id = receiver.subscribe(QStringLiteral("DAQ"), is::Criteria());
    QTRY_VERIFY_WITH_TIMEOUT(receiver.isActive(id), 10000);
    ::kill(server->processId(), SIGKILL);
    server->waitForFinished(5000);
    QTRY_VERIFY_WITH_TIMEOUT(!receiver.isActive(id), 15000);
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QTRY_VERIFY_WITH_TIMEOUT(receiver.isActive(id), 15000);
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.After"),
                             is::Object::create(m_dict->types(), QStringLiteral("RunInfo")))
                .isOk());
    QTRY_COMPARE_WITH_TIMEOUT(names, QStringList{QStringLiteral("DAQ.After")}, 10000);
}

void tst_IsServer::slowSubscriberDoesNotSlowOthers()
{
    // 19 fast subscriptions (in one process) and one slow one (its own process, 5 times slower than
    // the update rate, with a small receive buffer so that the server sees it fall behind).
    // Queues with two seconds of margin for the fast ones (19 subscriptions in one process: 19
    // notifications of 8 KB per update), so that a fast process the machine's load holds up for a
    // moment is not mistaken for a slow one; the slow one falls 400 updates a second behind.
    QProcess *server =
        startServer(QStringLiteral("Bench"), {QStringLiteral("--subscriber-queue"), QStringLiteral("1000"),
                                              QStringLiteral("--queue-bytes"), QStringLiteral("4194304")});
    QVERIFY(waitForServer(QStringLiteral("Bench")));
    const auto subscriberArgs = [&](int index, int subscriptions, const QStringList &extra) {
        return QStringList{QStringLiteral("bench"),           QStringLiteral("is-subscriber"),
                           QStringLiteral("--index"),         QString::number(index),
                           QStringLiteral("--subscriptions"), QString::number(subscriptions)} +
               extra;
    };
    m_fx->start(QStringLiteral("dialogctl"),
                subscriberArgs(0, 19, {QStringLiteral("--name"), QStringLiteral("is-fast")}));
    // 500 updates/s of 8 KB objects; the slow one handles 100/s.
    m_fx->start(
        QStringLiteral("dialogctl"),
        subscriberArgs(1, 1,
                       {QStringLiteral("--name"), QStringLiteral("is-slow"), QStringLiteral("--delay-us"),
                        QStringLiteral("10000"), QStringLiteral("--pending-bytes"), QStringLiteral("65536"),
                        QStringLiteral("--receive-buffer-bytes"), QStringLiteral("65536")}));
    QHash<int, QJsonObject> reports;
    for (int i = 0; i < 2; ++i) {
        Subscription *s = m_client->subscribe(QStringLiteral("bench.is.sub.%1").arg(i));
        connect(s, &Subscription::messageReceived, this,
                [&reports, i](const Message &m) { reports[i] = QJsonDocument::fromJson(m.data()).object(); });
    }
    QTRY_VERIFY_WITH_TIMEOUT(reports.value(0).value(QLatin1String("active")).toInt() == 19 &&
                                 reports.value(1).value(QLatin1String("active")).toInt() == 1,
                             20000);
    const qint64 rssBefore = rssKb(server->processId());

    // Updates from this process at a fixed rate: 500/s for 6 s, 10 objects in turn.
    is::TypeInfo blob(QStringLiteral("Blob"));
    blob.addAttribute(is::AttributeInfo(QStringLiteral("seq"), is::BasicType::U32));
    blob.addAttribute(is::AttributeInfo(QStringLiteral("data"), is::BasicType::U8, {}, true));
    QVERIFY(m_dict->declareTypesSync(QStringLiteral("Bench"), {blob}).isOk());
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("Blob"));
    o.set(QStringLiteral("data"), QList<quint8>(8192, 7));
    const int total = 3000;
    int sent = 0, acked = 0;
    QElapsedTimer clock;
    clock.start();
    QTimer timer;
    timer.setTimerType(Qt::PreciseTimer);
    connect(&timer, &QTimer::timeout, this, [&] {
        const int due = qMin<qint64>(total, clock.elapsed() / 2);
        while (sent < due) {
            o.set<quint32>(QStringLiteral("seq"), quint32(sent));
            m_dict->update(QStringLiteral("Bench.bench.%1").arg(sent % 10), o,
                           is::Dictionary::UpdateMode::CreateIfMissing,
                           [&acked](const is::Status &s) { acked += s.isOk(); });
            ++sent;
        }
        if (sent >= total)
            timer.stop();
    });
    timer.start(5);
    QTRY_VERIFY_WITH_TIMEOUT(acked == total, 30000);
    const double sendSeconds = clock.elapsed() / 1000.0;
    // The fast ones got every update; the slow one held neither them nor the sender back (every
    // update answered, the time it took is only reported).
    // A bound, not a speed: on a loaded machine they may take a while to drain what the server sent.
    QTRY_VERIFY2_WITH_TIMEOUT(reports.value(0).value(QLatin1String("count")).toInteger() >=
                                  qint64(total) * 19,
                              qPrintable(QStringLiteral("the fast subscribers got %1 of %2 updates")
                                             .arg(reports.value(0).value(QLatin1String("count")).toInteger())
                                             .arg(qint64(total) * 19)),
                              30000);
    qInfo("%d updates at 500/s sent in %.1f s", total, sendSeconds);
    QCOMPARE(reports.value(0).value(QLatin1String("dropped")).toInteger(), 0);
    // The slow one: connected, behind, drops counted by the server and told to the subscriber.
    is::Entry stats;
    QTRY_VERIFY_WITH_TIMEOUT(m_dict->getSync(QStringLiteral("Bench.Statistics"), &stats).isOk() &&
                                 stats.object.get<quint64>(QStringLiteral("dropped")) > 0,
                             10000);
    QCOMPARE(stats.object.get<quint32>(QStringLiteral("subscribers")), 20u);
    const auto names = stats.object.get<QList<QString>>(QStringLiteral("subscriberNames"));
    const auto drops = stats.object.get<QList<quint64>>(QStringLiteral("subscriberDropped"));
    quint64 slowDrops = 0, fastDrops = 0;
    for (qsizetype i = 0; i < names.size(); ++i)
        (names[i].startsWith(QLatin1String("is-slow/")) ? slowDrops : fastDrops) += drops.value(i);
    QVERIFY2(slowDrops > 0, qPrintable(names.join(QLatin1Char(','))));
    QCOMPARE(fastDrops, quint64(0));
    const qint64 rssAfter = rssKb(server->processId());
    // Bounded by the queues, against 480 MB sent: the slow one's (1,000 notifications and 4 MB),
    // and, once the updates were held for the slow one's grace, the fast ones' while they catch
    // up (their connection's 4 MB and up to 1/8 of their own queues' 4 MB each: 14 MB).
    qInfo("server RSS grew by %lld KiB", rssAfter - rssBefore);
    QVERIFY2(rssAfter - rssBefore < rssGrowthBoundKb(40 * 1024),
             qPrintable(QStringLiteral("%1 -> %2 kB").arg(rssBefore).arg(rssAfter)));
    // It catches up: the newest value of each object, and the drop count.
    QTRY_VERIFY_WITH_TIMEOUT(reports.value(1).value(QLatin1String("dropped")).toInteger() > 0, 30000);
    QVERIFY(reports.value(1).value(QLatin1String("count")).toInteger() < qint64(total));
}

void tst_IsServer::persistenceAcrossRestartAndKill()
{
    QTemporaryDir dir;
    const QStringList args{QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--checkpoint-s"),
                           QStringLiteral("1")};
    QProcess *server = startServer(QStringLiteral("RunParams"), args);
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    run.set<quint32>(QStringLiteral("runNumber"), 41);
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    // A type declared at run time is kept with the checkpoint.
    is::TypeInfo declared(QStringLiteral("Declared"));
    declared.addAttribute(is::AttributeInfo(QStringLiteral("v"), is::BasicType::S32));
    QVERIFY(m_dict->declareTypesSync(QStringLiteral("RunParams"), {declared}).isOk());
    is::Object d = is::Object::create(m_dict->types(), QStringLiteral("Declared"));
    d.set<qint32>(QStringLiteral("v"), -5);
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.D"), d).isOk());
    // Clean stop: saved at exit.
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
    QCOMPARE(server->exitCode(), 0);
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("RunParams.is"))));

    server = startServer(QStringLiteral("RunParams"), args);
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("RunParams.RunInfo"), &e).isOk());
    QCOMPARE(e.object.get<quint32>(QStringLiteral("runNumber")), 41u);
    QVERIFY(m_dict->getSync(QStringLiteral("RunParams.D"), &e).isOk());
    QCOMPARE(e.object.get<qint32>(QStringLiteral("v")), -5);

    // SIGKILL: what was written more than one checkpoint interval before survives.
    run.set<quint32>(QStringLiteral("runNumber"), 42);
    QVERIFY(m_dict->updateSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    // The guarantee is stated in checkpoint intervals.
    QVERIFY(waitForCheckpoint(QStringLiteral("RunParams")));
    ::kill(server->processId(), SIGKILL);
    QVERIFY(server->waitForFinished(5000));
    startServer(QStringLiteral("RunParams"), args);
    QTRY_VERIFY_WITH_TIMEOUT(m_dict->getSync(QStringLiteral("RunParams.RunInfo"), &e).isOk(), 15000);
    QCOMPARE(e.object.get<quint32>(QStringLiteral("runNumber")), 42u);
}

void tst_IsServer::corruptDataFile()
{
    QTemporaryDir dir;
    const QStringList args{QStringLiteral("--data-dir"), dir.path()};
    // A good checkpoint, then a second one, so that .previous exists.
    QProcess *server = startServer(QStringLiteral("RunParams"), args);
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("RunParams.Good"),
                             is::Object::create(m_dict->types(), QStringLiteral("RunInfo")))
                .isOk());
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
    server = startServer(QStringLiteral("RunParams"), args);
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
    const QString file = dir.filePath(QStringLiteral("RunParams.is"));
    QVERIFY(QFile::exists(file + QStringLiteral(".previous")));

    // Truncate the latest: the previous one is loaded, the corrupt one kept aside, and it is said.
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.resize(f.size() / 2));
    f.close();
    server = startServer(QStringLiteral("RunParams"), args);
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("RunParams.Good"), &e).isOk());
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
    const QString err = QString::fromUtf8(server->readAllStandardError());
    QVERIFY2(err.contains(QLatin1String("unusable")) && err.contains(QLatin1String(".previous")),
             qPrintable(err));
    QVERIFY(!QDir(dir.path()).entryList({QStringLiteral("RunParams.is.corrupt-*")}).isEmpty());

    // Both unusable: the server refuses to start, says why, and deletes nothing.
    for (const QString &path : {file, file + QStringLiteral(".previous")}) {
        QFile g(path);
        QVERIFY(g.open(QIODevice::WriteOnly | QIODevice::Truncate));
        g.write("not a checkpoint at all");
    }
    server = startServer(QStringLiteral("RunParams"), args);
    QVERIFY(server->waitForFinished(10000));
    QCOMPARE(server->exitCode(), 1);
    const QString err2 = QString::fromUtf8(server->readAllStandardError());
    QVERIFY2(err2.contains(QLatin1String("RunParams.is")), qPrintable(err2));
    QVERIFY(QFile::exists(file + QStringLiteral(".previous")));
}

void tst_IsServer::checkpointFailureReachesTheMessageLog()
{
    QTemporaryDir logDir, dataDir;
    m_fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--data-dir"), logDir.path()});
    startServer(QStringLiteral("RunParams"),
                {QStringLiteral("--data-dir"), dataDir.path(), QStringLiteral("--checkpoint-s"),
                 QStringLiteral("1"), QStringLiteral("--no-journal")});
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    // The data directory becomes a file: no checkpoint can be written there (even by root).
    QVERIFY(QDir(dataDir.path()).removeRecursively());
    QFile blocker(dataDir.path());
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    QList<QJsonObject> found;
    const bool logged = waitUntil(
        [&] {
            QByteArray out;
            const int rc =
                m_fx->run(QStringLiteral("dialogctl"),
                          {QStringLiteral("log"), QStringLiteral("search"), QStringLiteral("--category"),
                           QStringLiteral("dialog.is.persist"), QStringLiteral("--text"),
                           QStringLiteral("checkpoint failed"), QStringLiteral("--json"),
                           QStringLiteral("--timeout-ms"), QStringLiteral("2000")},
                          &out);
            found.clear();
            for (const QByteArray &line : out.split('\n'))
                if (!line.trimmed().isEmpty())
                    found << QJsonDocument::fromJson(line).object();
            return rc == 0 && !found.isEmpty();
        },
        30000, 250);
    QFile::remove(dataDir.path());
    QVERIFY(logged);
    const QJsonObject first = found.first();
    QVERIFY2(first.value(QLatin1String("text"))
                 .toString()
                 .startsWith(QLatin1String("RunParams: checkpoint failed")),
             QJsonDocument(first).toJson().constData());
    QCOMPARE(first.value(QLatin1String("severity")).toString(), QStringLiteral("warning"));
    QCOMPARE(first.value(QLatin1String("process")).toString(), QStringLiteral("IS.Server.RunParams"));
}

void tst_IsServer::malformedRequestsAnswered()
{
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    bool done = false;
    Reply reply;
    m_client->request(QStringLiteral("IS.DAQ"), QByteArray("\xff\xff\xff garbage", 12), 5000, this,
                      [&](const Reply &r) {
                          reply = r;
                          done = true;
                      });
    QTRY_VERIFY_WITH_TIMEOUT(done, 10000);
    QVERIFY(reply.isOk());
    QVERIFY2(reply.data().contains("malformed"), reply.data().constData());
    // A value that does not decode.
    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("DAQ.Statistics"), &e).isOk()); // still serving
}

void tst_IsServer::toolCommandsAndErrors()
{
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QByteArray out, err;
    const int putRc = m_fx->run(QStringLiteral("dialogctl"),
                                {QStringLiteral("is"), QStringLiteral("put"), QStringLiteral("DAQ.Run"),
                                 QStringLiteral("--type"), QStringLiteral("RunInfo"),
                                 QStringLiteral("runNumber=12"), QStringLiteral("state=Running")},
                                &out, &err);
    QVERIFY2(putRc == 0, (err + QJsonDocument(m_fx->directory()).toJson()).constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("get"), QStringLiteral("DAQ.Run"),
                        QStringLiteral("--json")},
                       &out, &err),
             0);
    const QJsonObject j = QJsonDocument::fromJson(out).object();
    QCOMPARE(j.value(QLatin1String("type")).toString(), QStringLiteral("RunInfo"));
    QCOMPARE(j.value(QLatin1String("value")).toObject().value(QLatin1String("runNumber")).toInt(), 12);
    QCOMPARE(j.value(QLatin1String("value")).toObject().value(QLatin1String("state")).toString(),
             QStringLiteral("Running"));
    // Partial update keeps the other attributes.
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("put"), QStringLiteral("DAQ.Run"),
                        QStringLiteral("--type"), QStringLiteral("RunInfo"), QStringLiteral("runNumber=13")}),
             0);
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("ls"), QStringLiteral("DAQ"),
                        QStringLiteral("--type"), QStringLiteral("RunInfo"), QStringLiteral("--json")},
                       &out),
             0);
    QVERIFY2(out.contains("\"DAQ.Run\"") && !out.contains("Statistics"), out.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("get"), QStringLiteral("DAQ.Run")}, &out),
             0);
    QVERIFY2(out.contains("runNumber") && out.contains("13") && out.contains("Running"), out.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("types"), QStringLiteral("--json"),
                        QStringLiteral("--server"), QStringLiteral("DAQ")},
                       &out),
             0);
    QVERIFY(out.contains("\"ReadoutStats\"") && out.contains("\"Histogram1D\""));
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("stats"), QStringLiteral("DAQ"),
                        QStringLiteral("--json")},
                       &out),
             0);
    QVERIFY(QJsonDocument::fromJson(out).object().contains(QLatin1String("deliveriesPerSecond")));

    // Errors: one line on stderr, non-zero exit.
    const auto fails = [&](const QStringList &args, const char *expected) {
        QByteArray o, e;
        const int rc =
            m_fx->run(QStringLiteral("dialogctl"), QStringList{QStringLiteral("is")} + args, &o, &e);
        if (rc == 0 || !e.contains(expected)) {
            qWarning() << args << rc << e;
            return false;
        }
        return true;
    };
    QVERIFY(fails({QStringLiteral("get"), QStringLiteral("Nope.Run")}, "unknown server"));
    QVERIFY(fails({QStringLiteral("get"), QStringLiteral("DAQ.Nope")}, "not found"));
    QVERIFY(fails({QStringLiteral("get"), QStringLiteral("DAQ")}, "Server.Object"));
    QVERIFY(fails(
        {QStringLiteral("put"), QStringLiteral("DAQ.X"), QStringLiteral("--type"), QStringLiteral("NoType")},
        "unknown type"));
    QVERIFY(fails({QStringLiteral("put"), QStringLiteral("DAQ.Run"), QStringLiteral("--type"),
                   QStringLiteral("RunInfo"), QStringLiteral("runNumber=abc")},
                  "cannot convert"));
    QVERIFY(fails({QStringLiteral("put"), QStringLiteral("DAQ.Run"), QStringLiteral("--type"),
                   QStringLiteral("RunInfo"), QStringLiteral("nosuch=1")},
                  "no attribute"));
    QVERIFY(
        fails({QStringLiteral("ls"), QStringLiteral("DAQ"), QStringLiteral("--regex"), QStringLiteral("(")},
              "regex"));
    QVERIFY(fails({QStringLiteral("rm"), QStringLiteral("DAQ.Nope")}, "not found"));
    QVERIFY(fails({QStringLiteral("stats"), QStringLiteral("Nope")}, "unknown server"));
    QVERIFY(fails({QStringLiteral("watch"), QStringLiteral("Nope")}, "unknown server"));
    QVERIFY(fails({QStringLiteral("frobnicate")}, "unknown command"));

    // watch: prints the events as JSON lines.
    is::Entry statsBefore;
    QVERIFY(m_dict->getSync(QStringLiteral("DAQ.Statistics"), &statsBefore).isOk());
    const quint32 subscribersBefore = statsBefore.object.get<quint32>(QStringLiteral("subscribers"));
    QProcess *watch = m_fx->start(QStringLiteral("dialogctl"),
                                  {QStringLiteral("is"), QStringLiteral("watch"), QStringLiteral("DAQ.W.*"),
                                   QStringLiteral("--json"), QStringLiteral("--count"), QStringLiteral("2")});
    // Its subscription is in place once the server counts it (statistics refresh every second).
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            is::Entry st;
            return m_dict->getSync(QStringLiteral("DAQ.Statistics"), &st).isOk() &&
                   st.object.get<quint32>(QStringLiteral("subscribers")) == subscribersBefore + 1;
        }(),
        10000);
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("put"), QStringLiteral("DAQ.W1"),
                        QStringLiteral("--type"), QStringLiteral("RunInfo")}),
             0);
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("rm"), QStringLiteral("DAQ.W1")}),
             0);
    QTRY_VERIFY_WITH_TIMEOUT(watch->state() == QProcess::NotRunning, 10000);
    const QList<QByteArray> lines = watch->readAllStandardOutput().trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    QCOMPARE(QJsonDocument::fromJson(lines[0]).object().value(QLatin1String("event")).toString(),
             QStringLiteral("created"));
    QCOMPARE(QJsonDocument::fromJson(lines[1]).object().value(QLatin1String("event")).toString(),
             QStringLiteral("removed"));
}

// One client used to create objects without bound (1,000,000 at ~29,000/s) and 50 MB values.
// 200 objects with a deep history took an IS server to 791 MB: the history ring counted against no
// quota, only the values did.
void tst_IsServer::historyCountsAgainstTheClientQuota()
{
    constexpr qint64 QuotaBytes = 20000;
    startServer(QStringLiteral("Hist"), {QStringLiteral("--quota-client-bytes"), QString::number(QuotaBytes),
                                         QStringLiteral("--history"), QStringLiteral("100000")});
    QVERIFY(waitForServer(QStringLiteral("Hist")));
    is::Object stats = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
    QRandomGenerator rng(31);
    is::Status refused;
    int accepted = 0;
    // Values that do not compress: each one adds ~30 bytes to the object's history.
    for (; accepted < 5000 && refused.isOk(); ++accepted) {
        QVERIFY_OK(stats.set<double>(QStringLiteral("rate"), rng.generateDouble() * 1e6));
        QVERIFY_OK(stats.set<quint64>(QStringLiteral("events"), rng.generate64()));
        QVERIFY_OK(stats.set<quint64>(QStringLiteral("bytes"), rng.generate64()));
        refused = m_dict->updateSync(QStringLiteral("Hist.RO1"), stats);
    }
    // The value alone is a small part of the quota: what filled it is the history.
    QVERIFY(is::encode(stats).size() * 20 < QuotaBytes);
    QCOMPARE(refused.code(), is::Status::Code::QuotaExceeded);
    QVERIFY2(refused.message().contains(QLatin1String("(values and their history), the most one client may "
                                                      "is 20000")),
             qPrintable(refused.toString()));
    qInfo("refused after %d values of %lld bytes each", accepted, qint64(is::encode(stats).size()));
    // Refused is refused: the object keeps its last accepted value, and the next write is refused too.
    QCOMPARE(m_dict->updateSync(QStringLiteral("Hist.RO1"), stats).code(), is::Status::Code::QuotaExceeded);
}

void tst_IsServer::quotaExceededRefusedAndCounted()
{
    startServer(QStringLiteral("Quota"), {QStringLiteral("--quota-client-objects"), QStringLiteral("3"),
                                          QStringLiteral("--quota-object-bytes"), QStringLiteral("2000")});
    QVERIFY(waitForServer(QStringLiteral("Quota")));
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    for (int i = 0; i < 3; ++i)
        QVERIFY(m_dict->updateSync(QStringLiteral("Quota.R%1").arg(i), run).isOk());
    // Replacing its own object is no new object.
    QVERIFY(m_dict->updateSync(QStringLiteral("Quota.R0"), run).isOk());
    const is::Status over = m_dict->updateSync(QStringLiteral("Quota.R3"), run);
    QCOMPARE(over.code(), is::Status::Code::QuotaExceeded);
    QVERIFY2(over.message().contains(QLatin1String("quota exceeded")), qPrintable(over.toString()));
    is::Entry e;
    QCOMPARE(m_dict->getSync(QStringLiteral("Quota.R3"), &e).code(), is::Status::Code::NotFound);
    // Removing one makes room.
    QVERIFY(m_dict->removeSync(QStringLiteral("Quota.R2")).isOk());
    QVERIFY(m_dict->updateSync(QStringLiteral("Quota.R3"), run).isOk());
    // A value over the largest accepted.
    QVERIFY_OK(run.set(QStringLiteral("runType"), QString(5000, QLatin1Char('x'))));
    const is::Status big = m_dict->updateSync(QStringLiteral("Quota.R0"), run);
    QCOMPARE(big.code(), is::Status::Code::QuotaExceeded);
    QVERIFY2(big.message().contains(QLatin1String("largest accepted is 2000")), qPrintable(big.toString()));
    // Counted in the server's statistics.
    QTRY_VERIFY_WITH_TIMEOUT(m_dict->getSync(QStringLiteral("Quota.Statistics"), &e).isOk() &&
                                 e.object.get<quint64>(QStringLiteral("quotaRefused")) == 2,
                             5000);
}

// The per-client quota was keyed by the name a client claims: 8 names from one host stored 4.1 GB.
// The clients of one address now share one quota too.
void tst_IsServer::quotaPerAddressWhateverTheName()
{
    startServer(QStringLiteral("Quota"), {QStringLiteral("--quota-address-objects"), QStringLiteral("3")});
    QVERIFY(waitForServer(QStringLiteral("Quota")));
    Client other(m_fx->clientOptions(QStringLiteral("another-name")));
    QVERIFY(other.start());
    is::Dictionary otherDict(&other);
    QVERIFY_OK(otherDict.types().loadDirectory(isTypesDir()));
    const is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QVERIFY(m_dict->updateSync(QStringLiteral("Quota.A0"), run).isOk());
    QVERIFY(m_dict->updateSync(QStringLiteral("Quota.A1"), run).isOk());
    QVERIFY(otherDict.updateSync(QStringLiteral("Quota.B0"), run).isOk());
    const is::Status over = otherDict.updateSync(QStringLiteral("Quota.B1"), run);
    QCOMPARE(over.code(), is::Status::Code::QuotaExceeded);
    QVERIFY2(over.message().contains(QLatin1String("the clients from")) &&
                 over.message().contains(QLatin1String("own 3 objects")),
             qPrintable(over.toString()));
    // What one client frees, another of the address may take.
    QVERIFY(m_dict->removeSync(QStringLiteral("Quota.A1")).isOk());
    QVERIFY(otherDict.updateSync(QStringLiteral("Quota.B1"), run).isOk());
}

// 100,000 type declarations were accepted, each kept in memory and in the checkpoint.
void tst_IsServer::typeDeclarationsBounded()
{
    startServer(QStringLiteral("Types"), {QStringLiteral("--quota-types"), QStringLiteral("1")});
    QVERIFY(waitForServer(QStringLiteral("Types")));
    is::TypeInfo t(QStringLiteral("OneTooMany"), QStringLiteral("A type over the bound"));
    t.setAttributes({is::AttributeInfo(QStringLiteral("x"), is::BasicType::U32, QStringLiteral("x"))});
    const is::Status refused = m_dict->declareTypesSync(QStringLiteral("Types"), {t});
    QCOMPARE(refused.code(), is::Status::Code::QuotaExceeded);
    QVERIFY2(refused.message().contains(QLatin1String("its limit of 1")), qPrintable(refused.toString()));
}

QTEST_GUILESS_MAIN(tst_IsServer)
// dialogctl bench cs-scale --is: hundreds of light DIALOG processes (real clients, 100 to an OS process)
// each write their own object to one IS server once a second: all of them are acknowledged, nobody is
// refused (they all connect from 127.0.0.1: the bench raises the IS server's per-address handshake
// limit), and the bench reports the IS server's memory and CPU (figures in the README, not asserted).
void tst_IsServer::serverWithHundredsOfWritingProcesses()
{
    QProcess *bench =
        m_fx->start(QStringLiteral("dialogctl"),
                    {QStringLiteral("bench"), QStringLiteral("cs-scale"), QStringLiteral("--is"),
                     QStringLiteral("--processes"), QStringLiteral("200"), QStringLiteral("--services"),
                     QStringLiteral("200"), QStringLiteral("--per-process"), QStringLiteral("100"),
                     QStringLiteral("--down-ms"), QStringLiteral("200"), QStringLiteral("--timeout-s"),
                     QStringLiteral("90"), QStringLiteral("--json")});
    QVERIFY(bench->waitForFinished(200000));
    const QByteArray out = bench->readAllStandardOutput();
    QVERIFY2(bench->exitCode() == 0, bench->readAllStandardError().constData());
    qInfo("%s", out.trimmed().constData());
    const QJsonObject j = QJsonDocument::fromJson(out).object();
    QCOMPARE(j.value(QStringLiteral("is_writers_steady")).toInt(), 200);
    QVERIFY(j.value(QStringLiteral("is_rss_mb")).toDouble() > 0);
    QVERIFY(j.value(QStringLiteral("is_all_written_s")).toDouble() > 0);
    QCOMPARE(j.value(QStringLiteral("ls_processes")).toInt(), 201); // and the IS server
    QCOMPARE(j.value(QStringLiteral("refused")).toInt(), 0);
}

#include "tst_isserver.moc"
