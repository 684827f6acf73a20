// IS streaming: dialog-isserver --mirror-of. Content equality after bursts, read-only mirrors,
// criteria, resynchronisation after restarts of the mirror and of the master, chains, and a stopped
// mirror that never blocks the master. Real binaries on loopback.
#include "isfixture.h"

#include "dialog/client.h"
#include "dialog/is/codec.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QtTest>
#include <csignal>

using namespace dialog;
using namespace dialog::test;

namespace {
struct Copy
{
    QString type;
    qint64 timeUs = 0;
    QByteArray value;
    bool operator==(const Copy &o) const { return type == o.type && timeUs == o.timeUs && value == o.value; }
};
using Content = QMap<QString, Copy>; // object name without the server -> type, time, encoded value
} // namespace

class tst_Mirror : public QObject, private IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void copiesContentThenEveryChange();
    void mirrorIsReadOnly();
    void criteriaRestrictTheCopy();
    void mirrorRestartResynchronises();
    void masterRestartResynchronises();
    void chainOfMirrors();
    void stoppedMirrorNeverBlocksTheMaster();

private:
    Content content(const QString &server);
    bool waitForEqual(const QString &master, const QString &mirror, int timeoutMs, const QString &regex = {});
    is::Object readout(quint64 events, int size = 4);
    /// @p n asynchronous updates (at most 256 in flight) spread over @p objects objects; elapsed ms.
    qint64 burst(const QString &server, int n, int objects, int offset = 0, int size = 4);
};

void tst_Mirror::init()
{
    QVERIFY(setUpIs(QStringLiteral("mirror-test")));
}

void tst_Mirror::cleanup()
{
    tearDownIs();
}

Content tst_Mirror::content(const QString &server)
{
    QList<is::Entry> entries;
    Content out;
    if (!m_dict->listSync(server, is::Criteria(), &entries, true).isOk())
        return out;
    for (const is::Entry &e : std::as_const(entries)) {
        const QString name = e.name.mid(server.size() + 1);
        if (name == QLatin1String("Statistics"))
            continue; // every server has its own
        out.insert(name, Copy{e.typeName, e.time.microsecondsSinceEpoch(), is::encode(e.object)});
    }
    return out;
}

bool tst_Mirror::waitForEqual(const QString &master, const QString &mirror, int timeoutMs,
                              const QString &regex)
{
    Content a, b;
    const bool equal = waitUntil(
        [&] {
            a = content(master);
            if (!regex.isEmpty()) {
                const QRegularExpression re(QRegularExpression::anchoredPattern(regex)); // as IS criteria
                for (auto it = a.begin(); it != a.end();)
                    it = re.match(it.key()).hasMatch() ? std::next(it) : a.erase(it);
            }
            b = content(mirror);
            return a == b;
        },
        timeoutMs, 100);
    if (equal)
        return true;
    qWarning("%s: %lld objects, %s: %lld objects", qPrintable(master), qlonglong(a.size()),
             qPrintable(mirror), qlonglong(b.size()));
    int shown = 0;
    for (auto it = a.cbegin(); it != a.cend() && shown < 5; ++it)
        if (!(b.value(it.key()) == it.value()) && ++shown)
            qWarning("  differs: %s", qPrintable(it.key()));
    return false;
}

is::Object tst_Mirror::readout(quint64 events, int size)
{
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
    o.set<quint64>(QStringLiteral("events"), events);
    o.set<double>(QStringLiteral("rate"), events * 0.5);
    o.set(QStringLiteral("host"), QStringLiteral("node-%1").arg(events % 7));
    QList<quint32> depths;
    for (int i = 0; i < size; ++i)
        depths << quint32(events + i);
    o.set(QStringLiteral("queueDepths"), depths);
    return o;
}

qint64 tst_Mirror::burst(const QString &server, int n, int objects, int offset, int size)
{
    QElapsedTimer t;
    t.start();
    int sent = 0, done = 0, failed = 0;
    while (done < n && t.elapsed() < 60000) {
        while (sent < n && sent - done < 256) {
            const int i = sent++;
            m_dict->update(QStringLiteral("%1.RO%2").arg(server).arg((i + offset) % objects),
                           readout(quint64(i + offset), size), is::Dictionary::UpdateMode::CreateIfMissing,
                           [&done, &failed](const is::Status &st) {
                               ++done;
                               failed += !st.isOk();
                           });
        }
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    }
    if (done < n || failed)
        qWarning("burst: %d of %d done, %d failed", done, n, failed);
    return done == n && !failed ? t.elapsed() : -1;
}

void tst_Mirror::copiesContentThenEveryChange()
{
    startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    // Content before the mirror exists: objects of two types, one with a dotted name.
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    run.set<quint32>(QStringLiteral("runNumber"), 42);
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RO.crate1"), readout(1)).isOk());
    QVERIFY(burst(QStringLiteral("RunParams"), 200, 50) >= 0);

    QProcess *mirror = startMirror(QStringLiteral("Mirror"), QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("Mirror")));
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 10000));

    // A subscriber of the mirror sees the master's changes.
    is::Receiver receiver(m_dict.get());
    QHash<QString, quint64> seen;
    int removed = 0;
    receiver.setCallback([&](const is::Event &e) {
        if (e.kind() == is::Event::Kind::Removed)
            ++removed;
        else if (e.typeName() == QLatin1String("ReadoutStats"))
            seen[e.name()] = e.object().get<quint64>(QStringLiteral("events"));
    });
    const int sub = receiver.subscribe(QStringLiteral("Mirror"), is::Criteria(QStringLiteral("RO.*")));
    QTRY_VERIFY_WITH_TIMEOUT(receiver.isActive(sub), 10000);

    // 10,000 updates over 500 objects (creations among them), then removals.
    QVERIFY(burst(QStringLiteral("RunParams"), 10000, 500, 1000) >= 0);
    for (int i = 0; i < 20; ++i)
        QVERIFY(m_dict->removeSync(QStringLiteral("RunParams.RO%1").arg(i)).isOk());
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 20000));
    QCOMPARE(content(QStringLiteral("Mirror")).size(), 500 - 20 + 2);
    QTRY_COMPARE_WITH_TIMEOUT(removed, 20, 10000);
    // The last update of RO499 was event 1000 + 9999 (the 10,000th of the burst).
    QTRY_COMPARE_WITH_TIMEOUT(seen.value(QStringLiteral("Mirror.RO499")), quint64(10999), 10000);

    // Nested and vector values came through intact, with the master's time.
    is::Entry a, b;
    QVERIFY(m_dict->getSync(QStringLiteral("RunParams.RO.crate1"), &a).isOk());
    QVERIFY(m_dict->getSync(QStringLiteral("Mirror.RO.crate1"), &b).isOk());
    QCOMPARE(b.object.get<QList<quint32>>(QStringLiteral("queueDepths")),
             a.object.get<QList<quint32>>(QStringLiteral("queueDepths")));
    QCOMPARE(b.time, a.time);
    QCOMPARE(mirror->state(), QProcess::Running);
    QVERIFY(mirror->readAllStandardError().contains("synchronised with RunParams"));
}

void tst_Mirror::mirrorIsReadOnly()
{
    startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    const quint16 http = httpPortOf(startMirror(QStringLiteral("Mirror"), QStringLiteral("RunParams"),
                                                {QStringLiteral("--http-port"), QStringLiteral("0")}));
    QVERIFY(http != 0);
    QVERIFY(waitForServer(QStringLiteral("Mirror")));
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RO1"), readout(1)).isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!content(QStringLiteral("Mirror")).isEmpty(), 10000);

    // The copy is on the web like any IS server.
    QNetworkAccessManager net;
    std::unique_ptr<QNetworkReply> web(net.get(QNetworkRequest(
        QUrl(QStringLiteral("http://127.0.0.1:%1/is/Mirror/Mirror.RO1?format=json").arg(http)))));
    QTRY_VERIFY_WITH_TIMEOUT(web->isFinished(), 10000);
    QCOMPARE(web->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
    const QByteArray body = web->readAll();
    QVERIFY2(body.contains("\"ReadoutStats\"") && body.contains("queueDepths"), body.constData());

    const is::Status ins = m_dict->insertSync(QStringLiteral("Mirror.RO2"), readout(2));
    QCOMPARE(ins.code(), is::Status::Code::ReadOnly);
    QVERIFY2(ins.message().contains(QLatin1String("mirror of RunParams")), qPrintable(ins.message()));
    QCOMPARE(m_dict->updateSync(QStringLiteral("Mirror.RO1"), readout(3)).code(), is::Status::Code::ReadOnly);
    QCOMPARE(m_dict->removeSync(QStringLiteral("Mirror.RO1")).code(), is::Status::Code::ReadOnly);
    is::TypeInfo t(QStringLiteral("Extra"), QStringLiteral("a type"));
    t.setAttributes({is::AttributeInfo(QStringLiteral("x"), is::BasicType::U32, QStringLiteral("x"))});
    QCOMPARE(m_dict->declareTypesSync(QStringLiteral("Mirror"), {t}).code(), is::Status::Code::ReadOnly);
    // Reads work, and the copy is unchanged.
    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("Mirror.RO1"), &e).isOk());
    QCOMPARE(e.object.get<quint64>(QStringLiteral("events")), quint64(1));
    QCOMPARE(content(QStringLiteral("Mirror")).size(), 1);

    // The tool says so too.
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("rm"), QStringLiteral("Mirror.RO1")}, &out,
                       &err),
             1);
    QVERIFY2(err.contains("read-only mirror"), err.constData());

    // A bad criteria or self-mirroring refuses to start, with a reason.
    QCOMPARE(
        m_fx->run(QStringLiteral("dialog-isserver"),
                  {QStringLiteral("--name"), QStringLiteral("M2"), QStringLiteral("--mirror-of"),
                   QStringLiteral("RunParams"), QStringLiteral("--mirror-criteria"), QStringLiteral("(")},
                  &out, &err),
        1);
    QVERIFY2(err.contains("invalid --mirror-criteria"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       {QStringLiteral("--name"), QStringLiteral("M2"), QStringLiteral("--mirror-of"),
                        QStringLiteral("M2")},
                       &out, &err),
             1);
    QVERIFY2(err.contains("names this server itself"), err.constData());
}

void tst_Mirror::criteriaRestrictTheCopy()
{
    startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(burst(QStringLiteral("RunParams"), 100, 20) >= 0);
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    startMirror(QStringLiteral("Mirror"), QStringLiteral("RunParams"),
                {QStringLiteral("--mirror-criteria"), QStringLiteral("RO1.*")});
    QVERIFY(waitForServer(QStringLiteral("Mirror")));
    QVERIFY(
        waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 10000, QStringLiteral("RO1.*")));
    QVERIFY(burst(QStringLiteral("RunParams"), 300, 20, 7) >= 0);
    QVERIFY(
        waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 10000, QStringLiteral("RO1.*")));
    const Content c = content(QStringLiteral("Mirror"));
    QCOMPARE(c.size(), 11); // RO1, RO10..RO19
    QVERIFY(!c.contains(QStringLiteral("RunInfo")));
}

void tst_Mirror::mirrorRestartResynchronises()
{
    startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(burst(QStringLiteral("RunParams"), 500, 100) >= 0);
    QTemporaryDir dir;
    const QStringList mirrorArgs{QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--checkpoint-s"),
                                 QStringLiteral("1")};
    QProcess *mirror = startMirror(QStringLiteral("Mirror"), QStringLiteral("RunParams"), mirrorArgs);
    QVERIFY(waitForServer(QStringLiteral("Mirror")));
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 10000));
    QVERIFY(waitForCheckpoint(QStringLiteral("Mirror"))); // one of the complete copy
    ::kill(mirror->processId(), SIGKILL);
    QVERIFY(mirror->waitForFinished(5000));

    // While the mirror is away: updates, removals, creations.
    QVERIFY(burst(QStringLiteral("RunParams"), 1000, 150, 3) >= 0);
    for (int i = 0; i < 30; ++i)
        QVERIFY(m_dict->removeSync(QStringLiteral("RunParams.RO%1").arg(i)).isOk());

    mirror = startMirror(QStringLiteral("Mirror"), QStringLiteral("RunParams"), mirrorArgs);
    QVERIFY(waitForServer(QStringLiteral("Mirror")));
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 10000));
    QCOMPARE(content(QStringLiteral("Mirror")).size(), 120);
    QByteArray err;
    QTRY_VERIFY_WITH_TIMEOUT(
        (err += mirror->readAllStandardError()).contains("30 removed that the master no longer has"), 5000);
    QVERIFY2(err.contains("loaded 100 objects"),
             err.constData()); // its checkpoint: the copy (its own statistics are made afresh)
}

void tst_Mirror::masterRestartResynchronises()
{
    QProcess *master = startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(burst(QStringLiteral("RunParams"), 300, 60) >= 0);
    startMirror(QStringLiteral("Mirror"), QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("Mirror")));
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 10000));
    QCOMPARE(content(QStringLiteral("Mirror")).size(), 60);

    // The master dies and comes back empty (no persistence): the copy follows.
    ::kill(master->processId(), SIGKILL);
    QVERIFY(master->waitForFinished(5000));
    startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(burst(QStringLiteral("RunParams"), 50, 10, 500) >= 0);
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 15000));
    QCOMPARE(content(QStringLiteral("Mirror")).size(), 10);
}

void tst_Mirror::chainOfMirrors()
{
    startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(burst(QStringLiteral("RunParams"), 200, 40) >= 0);
    startMirror(QStringLiteral("M1"), QStringLiteral("RunParams"));
    startMirror(QStringLiteral("M2"), QStringLiteral("M1"));
    QVERIFY(waitForServer(QStringLiteral("M1")));
    QVERIFY(waitForServer(QStringLiteral("M2")));
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("M2"), 10000));
    QVERIFY(burst(QStringLiteral("RunParams"), 2000, 80, 11) >= 0);
    QVERIFY(m_dict->removeSync(QStringLiteral("RunParams.RO5")).isOk());
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("M2"), 15000));
    QCOMPARE(content(QStringLiteral("M2")).size(), 79);
    // The end of the chain is read-only as well.
    QCOMPARE(m_dict->insertSync(QStringLiteral("M2.X"), readout(1)).code(), is::Status::Code::ReadOnly);
}

void tst_Mirror::stoppedMirrorNeverBlocksTheMaster()
{
    // What it costs in throughput is a figure for `dialogctl bench is-mirror-cost`; this checks what the
    // design guarantees: the master's write path never waits on a mirror, the mirror's queue is
    // bounded (its notifications are dropped and counted) and the mirror catches up once it runs.
    QProcess *master = startServer(QStringLiteral("RunParams"),
                                   {QStringLiteral("--subscriber-queue"), QStringLiteral("1000")});
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    const int n = 5000, objects = 1000, size = 1024;                       // updates of ~4 KB
    QVERIFY(burst(QStringLiteral("RunParams"), n, objects, 0, size) >= 0); // creates the objects

    QProcess *mirror = startMirror(QStringLiteral("Mirror"), QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("Mirror")));
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 20000));
    ::kill(mirror->processId(), SIGSTOP);

    const auto statistics = [this](is::Entry *st) {
        return m_dict->getSync(QStringLiteral("RunParams.Statistics"), st).isOk();
    };
    // Five bursts of 5,000 updates (~100 MB in all): far more than the socket buffers, the
    // connection's queue (4 MB) and the mirror's queue (1,000 notifications) hold. Every update is
    // answered (a master waiting on the stopped mirror would stop answering), and the master's
    // memory stops growing once the queues are full.
    qint64 rssFirst = -1;
    quint64 droppedBefore = 0;
    int offset = n;
    for (int round = 0; round < 5; ++round) {
        QVERIFY2(burst(QStringLiteral("RunParams"), n, objects, offset += n, size) >= 0,
                 qPrintable(QStringLiteral("round %1: the master did not answer every update").arg(round)));
        is::Entry st;
        QVERIFY2(statistics(&st), "the master stopped answering reads");
        if (round == 0) {
            rssFirst = rssKb(master->processId());
            // Whether the first burst already overflowed the queues depends on how far the socket
            // buffers took it; the drops of the later rounds are awaited below.
            droppedBefore = st.object.get<quint64>(QStringLiteral("dropped"));
        }
    }
    const qint64 rssLast = rssKb(master->processId());
    // Four rounds after the first carried 4 x 5,000 x 4 KB = 80 MB to a mirror that read none of it.
    qInfo("stopped mirror: master RSS %lld KiB after the first burst, %lld KiB after the last", rssFirst,
          rssLast);
    QVERIFY(rssFirst > 0 && rssLast > 0);
    QVERIFY2(rssLast - rssFirst < rssGrowthBoundKb(40 * 1024),
             qPrintable(QStringLiteral("the master grew by %1 KiB").arg(rssLast - rssFirst)));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            is::Entry st;
            return statistics(&st) && st.object.get<quint64>(QStringLiteral("dropped")) > droppedBefore;
        }(),
        10000);

    // Once running again the mirror resynchronises: its content equals the master's.
    ::kill(mirror->processId(), SIGCONT);
    QVERIFY(waitForEqual(QStringLiteral("RunParams"), QStringLiteral("Mirror"), 30000));
    ::kill(mirror->processId(), SIGKILL);
    QVERIFY(mirror->waitForFinished(5000));
    // The master drops the dead mirror's subscription.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            is::Entry st;
            return statistics(&st) && st.object.get<quint32>(QStringLiteral("subscribers")) == 0;
        }(),
        10000);
    QCOMPARE(master->state(), QProcess::Running);
}

QTEST_GUILESS_MAIN(tst_Mirror)
#include "tst_mirror.moc"
