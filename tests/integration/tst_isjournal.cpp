// The IS server's write-ahead journal with the real dialog-isserver: every acknowledged write
// survives SIGKILL (and, without the journal, it does not), a torn or damaged journal is read up to
// the damage and said, checkpoints rotate the journal, a full disk refuses writes and recovers.
#include "statuscheck.h"
#include "isfixture.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"

#include <QDir>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <unistd.h>

using namespace dialog;
using namespace dialog::test;

class tst_IsJournal : public QObject, private IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void acknowledgedWritesSurviveSigkill_data();
    void acknowledgedWritesSurviveSigkill();
    void damagedJournalReadUpToTheDamage_data();
    void damagedJournalReadUpToTheDamage();
    void checkpointThenWritesThenKill();
    void fullDiskRefusesWritesAndRecovers();
    void badOptionsRefused();

private:
    /// Writes RunParams.objI = {runNumber: base + I} for I in [first, first + count), up to 256 in
    /// flight; returns how many were acknowledged Ok (every one is answered, or the test fails).
    int writeMany(int first, int count, quint32 base, QString *firstError = nullptr);
    /// How many of RunParams.objI, I in [first, first + count), hold runNumber base + I.
    int countPresent(int first, int count, quint32 base);
    QProcess *restart(QProcess *server, const QStringList &args);
    static void sigkill(QProcess *server);
};

namespace {
const QString Server = QStringLiteral("RunParams");

QString objName(int i)
{
    return QStringLiteral("RunParams.obj%1").arg(i);
}

/// The journal segment files of RunParams in @p dir, oldest first.
QStringList segments(const QString &dir)
{
    QStringList files = QDir(dir).entryList({QStringLiteral("RunParams.is.journal.*")}, QDir::Files);
    std::sort(files.begin(), files.end(), [](const QString &a, const QString &b) {
        return a.section(QLatin1Char('.'), -1).toULongLong() < b.section(QLatin1Char('.'), -1).toULongLong();
    });
    for (QString &f : files)
        f = QDir(dir).filePath(f);
    return files;
}
} // namespace

void tst_IsJournal::init()
{
    QVERIFY(setUpIs(QStringLiteral("journal-test")));
}

void tst_IsJournal::cleanup()
{
    tearDownIs();
}

int tst_IsJournal::writeMany(int first, int count, quint32 base, QString *firstError)
{
    is::Object obj = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    int next = first, answered = 0, ok = 0;
    const int end = first + count;
    std::function<void()> one = [&] {
        const int i = next++;
        obj.set<quint32>(QStringLiteral("runNumber"), base + quint32(i));
        m_dict->update(objName(i), obj, is::Dictionary::UpdateMode::CreateIfMissing,
                       [&](const is::Status &s) {
                           ++answered;
                           if (s.isOk())
                               ++ok;
                           else if (firstError && firstError->isEmpty())
                               *firstError = s.toString();
                           if (next < end)
                               one();
                       });
    };
    for (int k = 0; k < 256 && next < end; ++k)
        one();
    if (!waitUntil([&] { return answered == count; }, 60000))
        qWarning("only %d of %d writes answered", answered, count);
    return answered == count ? ok : -1;
}

int tst_IsJournal::countPresent(int first, int count, quint32 base)
{
    int present = 0;
    QList<is::Entry> entries;
    if (!m_dict->listSync(Server, is::Criteria(QStringLiteral("obj[0-9]+")), &entries).isOk())
        return -1;
    QHash<QString, quint32> values;
    for (const is::Entry &e : std::as_const(entries))
        values.insert(e.name, e.object.get<quint32>(QStringLiteral("runNumber")));
    for (int i = first; i < first + count; ++i)
        present += values.value(objName(i), quint32(-1)) == base + quint32(i);
    return present;
}

void tst_IsJournal::sigkill(QProcess *server)
{
    ::kill(pid_t(server->processId()), SIGKILL);
    server->waitForFinished(5000);
}

QProcess *tst_IsJournal::restart(QProcess *server, const QStringList &args)
{
    if (server && server->state() != QProcess::NotRunning)
        sigkill(server);
    QProcess *p = startServer(Server, args);
    waitForServer(Server, 30000);
    return p;
}

void tst_IsJournal::acknowledgedWritesSurviveSigkill_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<bool>("survive");
    // --checkpoint-s 0: no checkpoint before the kill, so the journal alone holds the writes.
    QTest::newRow("journal, sync batch (default)") << QStringList{} << true;
    QTest::newRow("journal, sync none")
        << QStringList{QStringLiteral("--journal-sync"), QStringLiteral("none")} << true;
    QTest::newRow("journal, sync always")
        << QStringList{QStringLiteral("--journal"), QStringLiteral("--journal-sync"),
                       QStringLiteral("always")}
        << true;
    // What the journal is for: without it, the acknowledged writes die with the process.
    QTest::newRow("no journal: lost") << QStringList{QStringLiteral("--no-journal")} << false;
}

void tst_IsJournal::acknowledgedWritesSurviveSigkill()
{
    QFETCH(QStringList, options);
    QFETCH(bool, survive);
    QTemporaryDir dir;
    const QStringList args = QStringList{QStringLiteral("--data-dir"), dir.path(),
                                         QStringLiteral("--checkpoint-s"), QStringLiteral("0")} +
                             options;
    QProcess *server = startServer(Server, args);
    QVERIFY(waitForServer(Server));
    const int n = 2000;
    QCOMPARE(writeMany(0, n, 1000), n);
    // Removals and overwrites are journaled too.
    QVERIFY(m_dict->removeSync(objName(0)).isOk());
    QCOMPARE(writeMany(1, 1, 5000), 1);
    sigkill(server); // right after the last acknowledgement
    server = restart(server, args);
    QVERIFY(server->state() == QProcess::Running);
    if (!survive) {
        QCOMPARE(countPresent(0, n, 1000), 0);
        return;
    }
    QCOMPARE(countPresent(2, n - 2, 1000), n - 2);
    QCOMPARE(countPresent(1, 1, 5000), 1);
    QCOMPARE(m_dict->getSync(objName(0), nullptr).code(), is::Status::Code::NotFound);
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
    const QByteArray err = server->readAllStandardError();
    QVERIFY2(err.contains("replayed 2002 changes"), err.constData());
}

void tst_IsJournal::damagedJournalReadUpToTheDamage_data()
{
    QTest::addColumn<QString>("damage");
    QTest::addColumn<int>("expected"); // objects written back of 100
    QTest::addColumn<QString>("said");
    QTest::newRow("torn tail (cut mid-record)")
        << QStringLiteral("truncate") << 99 << QStringLiteral("torn tail");
    QTest::newRow("last record damaged") << QStringLiteral("flip") << 99 << QStringLiteral("CRC mismatch");
    QTest::newRow("garbage appended") << QStringLiteral("garbage") << 100 << QStringLiteral("dropped");
    QTest::newRow("segment header damaged")
        << QStringLiteral("header") << 0 << QStringLiteral("segment skipped");
    QTest::newRow("not a journal") << QStringLiteral("replace") << 0 << QStringLiteral("bad magic");
}

void tst_IsJournal::damagedJournalReadUpToTheDamage()
{
    QFETCH(QString, damage);
    QFETCH(int, expected);
    QFETCH(QString, said);
    QTemporaryDir dir;
    const QStringList args{QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--checkpoint-s"),
                           QStringLiteral("0")};
    QProcess *server = startServer(Server, args);
    QVERIFY(waitForServer(Server));
    // One at a time, so that obj99 is the last record of the segment.
    for (int i = 0; i < 100; ++i)
        QCOMPARE(writeMany(i, 1, 7), 1);
    sigkill(server);
    const QStringList files = segments(dir.path());
    QCOMPARE(files.size(), 1);
    QFile f(files.first());
    QVERIFY(f.open(QIODevice::ReadWrite));
    const qint64 size = f.size();
    if (damage == QLatin1String("truncate")) {
        QVERIFY(f.resize(size - 3));
    } else if (damage == QLatin1String("flip") || damage == QLatin1String("header")) {
        const qint64 at = damage == QLatin1String("flip") ? size - 5 : 13;
        QVERIFY(f.seek(at));
        char c = 0;
        QVERIFY(f.getChar(&c));
        QVERIFY(f.seek(at));
        QVERIFY(f.putChar(char(c ^ 0x40)));
    } else if (damage == QLatin1String("garbage")) {
        QVERIFY(f.seek(size));
        f.write(QByteArray(37, '\xa5'));
    } else {
        QVERIFY(f.resize(0));
        f.write("this is not a journal segment at all");
    }
    f.close();
    server = restart(server, args);
    QVERIFY2(server->state() == QProcess::Running,
             "a damaged journal must never keep the server from starting");
    QCOMPARE(countPresent(0, 100, 7), expected);
    if (expected == 99)
        QCOMPARE(m_dict->getSync(objName(99), nullptr).code(), is::Status::Code::NotFound);
    // The server goes on journaling in a new segment.
    QCOMPARE(writeMany(500, 1, 7), 1);
    sigkill(server);
    server = restart(server, args);
    QCOMPARE(countPresent(500, 1, 7), 1);
    QCOMPARE(countPresent(0, 100, 7), expected);
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
    // Said at each start while the damaged segment is kept (until two checkpoints cover it).
    const QByteArray err = server->readAllStandardError();
    QVERIFY2(err.contains("journal: ") && err.contains(said.toUtf8()), err.constData());
}

void tst_IsJournal::checkpointThenWritesThenKill()
{
    QTemporaryDir dir;
    const QStringList args{QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--checkpoint-s"),
                           QStringLiteral("1")};
    QProcess *server = startServer(Server, args);
    QVERIFY(waitForServer(Server));
    const auto lastCheckpoint = [&] {
        is::Entry e;
        return m_dict->getSync(Server + QStringLiteral(".Statistics"), &e).isOk()
                   ? e.object.get<is::Time>(QStringLiteral("lastCheckpoint")).microsecondsSinceEpoch()
                   : qint64(-1);
    };
    QCOMPARE(writeMany(0, 1000, 100), 1000);
    // Two checkpoints after the first batch: it is in the checkpoint file, and its segments go.
    for (int round = 0; round < 3; ++round) {
        const qint64 after = is::Time::currentTime().microsecondsSinceEpoch();
        QVERIFY(waitUntil([&] { return lastCheckpoint() > after; }, 10000));
    }
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("RunParams.is"))));
    QVERIFY2(segments(dir.path()).size() <= 3, qPrintable(segments(dir.path()).join(QLatin1Char(' '))));
    // More writes: half of the objects overwritten, new ones, removals; then killed at once.
    QCOMPARE(writeMany(0, 500, 200), 500);
    QCOMPARE(writeMany(1000, 500, 100), 500);
    for (int i = 900; i < 910; ++i)
        QVERIFY(m_dict->removeSync(objName(i)).isOk());
    sigkill(server);
    server = restart(server, args);
    QCOMPARE(countPresent(0, 500, 200), 500);
    QCOMPARE(countPresent(500, 400, 100), 400);
    QCOMPARE(countPresent(910, 590, 100), 590);
    QCOMPARE(countPresent(900, 10, 100), 0);
    QList<is::Entry> all;
    QVERIFY(m_dict->listSync(Server, is::Criteria(QStringLiteral("obj[0-9]+")), &all, false).isOk());
    QCOMPARE(int(all.size()), 1490);
}

void tst_IsJournal::fullDiskRefusesWritesAndRecovers()
{
    if (geteuid() != 0)
        QSKIP("needs root to mount a small file system (tmpfs) for the data directory");
    QTemporaryDir base;
    const QString dir = QDir(base.path()).filePath(QStringLiteral("small"));
    QVERIFY(QDir().mkpath(dir));
    if (!ProcessFixture::mountTmpfs(dir, QStringLiteral("256k")))
        QSKIP("cannot mount a tmpfs here (a container without the capability)");
    QProcess *server = nullptr;
    auto unmount = qScopeGuard([&] {
        if (server && server->state() != QProcess::NotRunning)
            sigkill(server);
        QProcess::execute(QStringLiteral("umount"), {dir});
    });
    const QStringList args{QStringLiteral("--data-dir"), dir, QStringLiteral("--checkpoint-s"),
                           QStringLiteral("0")};
    server = startServer(Server, args);
    QVERIFY(waitForServer(Server));
    // Records of ~4 KB: 256 KiB hold about 60 of them.
    is::Object obj = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(obj.set(QStringLiteral("state"), QString(4000, QLatin1Char('x'))));
    QStringList acked;
    QString refusal;
    for (int i = 0; i < 120; ++i) {
        obj.set<quint32>(QStringLiteral("runNumber"), quint32(i));
        const is::Status s = m_dict->updateSync(QStringLiteral("RunParams.big%1").arg(i), obj);
        if (s.isOk())
            acked << QStringLiteral("RunParams.big%1").arg(i);
        else if (refusal.isEmpty())
            refusal = s.toString();
    }
    QVERIFY2(acked.size() > 10 && acked.size() < 120, qPrintable(QString::number(acked.size())));
    QVERIFY2(refusal.contains(QLatin1String("not journaled")) && refusal.contains(QLatin1String("space")),
             qPrintable(refusal));
    is::Entry stats;
    QTRY_VERIFY_WITH_TIMEOUT(m_dict->getSync(Server + QStringLiteral(".Statistics"), &stats).isOk() &&
                                 stats.object.get<quint64>(QStringLiteral("journalErrors")) >= 1,
                             5000);
    std::printf("full disk: %lld acknowledged, then: %s\n", qlonglong(acked.size()), qPrintable(refusal));
    // Room again: writes are acknowledged again, after the refused ones (cut off the segment).
    QVERIFY(ProcessFixture::mountTmpfs(dir, QStringLiteral("64m"), true));
    obj.set<quint32>(QStringLiteral("runNumber"), 4242);
    QVERIFY(m_dict->updateSync(QStringLiteral("RunParams.after"), obj).isOk());
    acked << QStringLiteral("RunParams.after");
    sigkill(server);
    QByteArray err = server->readAllStandardError();
    QVERIFY2(err.contains("journal append failed") && err.contains("succeed again"), err.constData());
    server = restart(server, args);
    for (const QString &name : std::as_const(acked))
        QVERIFY2(m_dict->getSync(name, nullptr).isOk(), qPrintable(name));
    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("RunParams.after"), &e).isOk());
    QCOMPARE(e.object.get<quint32>(QStringLiteral("runNumber")), 4242u);
}

void tst_IsJournal::badOptionsRefused()
{
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       {QStringLiteral("--name"), Server, QStringLiteral("--journal-sync"),
                        QStringLiteral("sometimes")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("invalid --journal-sync 'sometimes'"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       {QStringLiteral("--name"), Server, QStringLiteral("--journal")}, nullptr, &err),
             1);
    QVERIFY2(err.contains("--journal needs --data-dir"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       {QStringLiteral("--name"), QStringLiteral("M"), QStringLiteral("--mirror-of"), Server,
                        QStringLiteral("--data-dir"), QDir::tempPath(), QStringLiteral("--journal")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("a mirror keeps no journal"), err.constData());
}

QTEST_GUILESS_MAIN(tst_IsJournal)
#include "tst_isjournal.moc"
