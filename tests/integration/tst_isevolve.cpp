// IS type evolution with the real dialog-isserver: a server restarted with evolved type files over
// its old checkpoint and journal, an incompatible change refused at start and then migrated with
// dialogctl is migrate, and mirrors whose types differ from their master's, both ways.
#include "statuscheck.h"
#include "isfixture.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"

#include <QDir>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {

const QString Server = QStringLiteral("Evo");

// RunInfo as shipped: runNumber u32, runType string, startTime time, activeTime u32, state string.
// Renamed, widened, one added in the middle and one at the end with defaults, activeTime dropped.
const QString Evolved = QStringLiteral(R"(
    <attribute name="run" type="u64" was="runNumber"/>
    <attribute name="shifter" type="string" default="nobody"/>
    <attribute name="runType" type="string"/>
    <attribute name="startTime" type="time"/>
    <attribute name="state" type="string"/>
    <attribute name="rate" type="double" default="1.5"/>)");
// Only added and dropped attributes: the change reads both ways.
const QString Additive = QStringLiteral(R"(
    <attribute name="runNumber" type="u32"/>
    <attribute name="shifter" type="string" default="nobody"/>
    <attribute name="runType" type="string"/>
    <attribute name="startTime" type="time"/>
    <attribute name="state" type="string"/>)");
// runType string -> s32: no evolution converts that.
const QString Incompatible = QStringLiteral(R"(
    <attribute name="runNumber" type="u32"/>
    <attribute name="runType" type="s32"/>
    <attribute name="startTime" type="time"/>
    <attribute name="activeTime" type="u32"/>
    <attribute name="state" type="string"/>)");

} // namespace

class tst_IsEvolve : public QObject, private IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void restartOverOldCheckpointAndJournal();
    void incompatibleChangeRefusedThenMigrated();
    void mirrorOnOldLayoutBesideNewMaster();
    void mirrorOnNewLayoutBesideOldMaster();
    void clientOnOldLayoutReadsNewServer();

private:
    /// A copy of resources/is-types in which RunInfo has @p attributes; its directory.
    QString typesWith(const QString &attributes);
    /// A dictionary of this test's client reading with the types of @p dir.
    std::unique_ptr<is::Dictionary> dictionaryOf(const QString &dir);
    /// Writes RunInfo objects Evo.<prefix>I, I < count, with runNumber base + I (shipped layout).
    void writeRuns(const QString &server, const QString &prefix, int count, quint32 base);
    /// waitForServer() through @p dict: a client reads a server with the types it has in common.
    static bool waitForServerOf(is::Dictionary &dict, const QString &name)
    {
        return waitUntil([&] { return dict.getSync(name + QStringLiteral(".Statistics"), nullptr).isOk(); }, 10000,
                         50);
    }
    /// Stops @p server: SIGTERM (a checkpoint at exit) or SIGKILL (the journal only).
    static void stop(QProcess *server, bool kill);

    QTemporaryDir m_tmp;
    int m_dirs = 0;
};

void tst_IsEvolve::init()
{
    QVERIFY(setUpIs(QStringLiteral("evolve-test")));
}

void tst_IsEvolve::cleanup()
{
    tearDownIs();
}

QString tst_IsEvolve::typesWith(const QString &attributes)
{
    const QString dir = m_tmp.filePath(QStringLiteral("types%1").arg(++m_dirs));
    QDir().mkpath(dir);
    for (const QString &file : QDir(isTypesDir()).entryList({QStringLiteral("*.xml")}, QDir::Files)) {
        QFile in(QDir(isTypesDir()).filePath(file));
        if (!in.open(QIODevice::ReadOnly))
            return {};
        QString xml = QString::fromUtf8(in.readAll());
        static const QRegularExpression runInfo(QStringLiteral("(<type name=\"RunInfo\"[^>]*>)(.*?)(</type>)"),
                                                QRegularExpression::DotMatchesEverythingOption);
        xml.replace(runInfo, QStringLiteral("\\1") + attributes + QStringLiteral("\n  \\3"));
        QFile out(QDir(dir).filePath(file));
        if (!out.open(QIODevice::WriteOnly) || out.write(xml.toUtf8()) < 0)
            return {};
    }
    return dir;
}

std::unique_ptr<is::Dictionary> tst_IsEvolve::dictionaryOf(const QString &dir)
{
    auto dict = std::make_unique<is::Dictionary>(m_client.get());
    const Status st = dict->types().loadDirectory(dir);
    if (!st.isOk())
        qWarning("%s", qPrintable(st.message()));
    return dict;
}

void tst_IsEvolve::writeRuns(const QString &server, const QString &prefix, int count, quint32 base)
{
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    for (int i = 0; i < count; ++i) {
        QVERIFY_OK(run.set(QStringLiteral("runNumber"), quint32(base + i)));
        QVERIFY_OK(run.set(QStringLiteral("runType"), QStringLiteral("physics")));
        QVERIFY_OK(run.set(QStringLiteral("activeTime"), quint32(7)));
        QVERIFY_OK(run.set(QStringLiteral("state"), QStringLiteral("Running")));
        QVERIFY_OK(m_dict->updateSync(QStringLiteral("%1.%2%3").arg(server, prefix).arg(i), run));
    }
}

void tst_IsEvolve::stop(QProcess *server, bool kill)
{
    if (kill)
        server->kill();
    else
        server->terminate();
    QVERIFY(waitUntil([server] { return server->state() == QProcess::NotRunning; }, 15000));
}

void tst_IsEvolve::restartOverOldCheckpointAndJournal()
{
    QTemporaryDir data;
    const QStringList persist{QStringLiteral("--data-dir"), data.path(), QStringLiteral("--checkpoint-s"),
                              QStringLiteral("0")};
    // a0..a4 end in the checkpoint written at exit, b0..b1 in the journal only (SIGKILL).
    QProcess *server = startServer(Server, persist);
    QVERIFY(waitForServer(Server));
    writeRuns(Server, QStringLiteral("a"), 5, 100);
    stop(server, false);
    server = startServer(Server, persist);
    QVERIFY(waitForServer(Server));
    writeRuns(Server, QStringLiteral("b"), 2, 200);
    stop(server, true);
    QVERIFY(!QDir(data.path()).entryList({Server + QStringLiteral(".is.journal.*")}).isEmpty());

    const QString types = typesWith(Evolved);
    const auto dict = dictionaryOf(types);
    server = startServer(Server, persist + QStringList{QStringLiteral("--types"), types});
    QVERIFY(waitForServerOf(*dict, Server));
    for (const auto &[name, run] : {std::pair{QStringLiteral("a4"), 104}, std::pair{QStringLiteral("b1"), 201}}) {
        is::Entry e;
        QVERIFY_OK(dict->getSync(Server + QLatin1Char('.') + name, &e));
        QCOMPARE(e.object.get<quint64>(QStringLiteral("run")), quint64(run));
        QCOMPARE(e.object.get<QString>(QStringLiteral("shifter")), QStringLiteral("nobody"));
        QCOMPARE(e.object.get<QString>(QStringLiteral("runType")), QStringLiteral("physics"));
        QCOMPARE(e.object.get<double>(QStringLiteral("rate")), 1.5);
        QCOMPARE(e.object.indexOf(QStringLiteral("activeTime")), -1);
    }
    // Said once per type and file, in the server's log.
    stop(server, false);
    const QString log = QString::fromUtf8(server->readAllStandardError());
    QVERIFY2(log.count(QLatin1String("type 'RunInfo' evolved: 'runNumber' renamed to 'run'")) == 2, qPrintable(log));
    QVERIFY2(log.contains(QLatin1String("'activeTime' dropped")), qPrintable(log));

    // Written again at exit, the checkpoint is of the new layout: no conversion the next time (the
    // journal segments kept for the previous checkpoint still are).
    server = startServer(Server, persist + QStringList{QStringLiteral("--types"), types});
    QVERIFY(waitForServerOf(*dict, Server));
    is::Entry e;
    QVERIFY_OK(dict->getSync(Server + QStringLiteral(".a0"), &e));
    QCOMPARE(e.object.get<quint64>(QStringLiteral("run")), quint64(100));
    stop(server, false);
    const QString again = QString::fromUtf8(server->readAllStandardError());
    QVERIFY2(!again.contains(QLatin1String(".is : type 'RunInfo' evolved")), qPrintable(again));
}

void tst_IsEvolve::incompatibleChangeRefusedThenMigrated()
{
    QTemporaryDir data;
    const QStringList persist{QStringLiteral("--data-dir"), data.path(), QStringLiteral("--checkpoint-s"),
                              QStringLiteral("0")};
    QProcess *server = startServer(Server, persist);
    QVERIFY(waitForServer(Server));
    writeRuns(Server, QStringLiteral("a"), 3, 100);
    stop(server, false);
    server = startServer(Server, persist);
    QVERIFY(waitForServer(Server));
    writeRuns(Server, QStringLiteral("b"), 1, 200);
    stop(server, true);

    const QString types = typesWith(Incompatible);
    const QStringList evolved = persist + QStringList{QStringLiteral("--types"), types};
    server = startServer(Server, evolved);
    QVERIFY(waitUntil([server] { return server->state() == QProcess::NotRunning; }, 15000));
    QVERIFY(server->exitCode() != 0);
    const QString why = QString::fromUtf8(server->readAllStandardError());
    QVERIFY2(why.contains(QLatin1String("type 'RunInfo', attribute 'runType': string in the stored data, s32 now")),
             qPrintable(why));
    QVERIFY2(why.contains(QLatin1String("dialogctl is migrate --convert RunInfo.runType=convert")), qPrintable(why));

    const QStringList migrate{QStringLiteral("is"),     QStringLiteral("migrate"), QStringLiteral("--data-dir"),
                              data.path(),              QStringLiteral("--server"), Server,
                              QStringLiteral("--types"), types};
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), migrate, &out, &err), 1); // no conversion stated
    QVERIFY2(err.contains("attribute 'runType'"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), migrate + QStringList{QStringLiteral("--convert"),
                                                                          QStringLiteral("RunInfo.runType=default")},
                       &out, &err),
             0);
    QVERIFY2(out.contains("objects written in the current layout"), out.constData());
    QVERIFY(QDir(data.path()).entryList({Server + QStringLiteral(".is.journal.*")}).isEmpty());

    const auto dict = dictionaryOf(types);
    server = startServer(Server, evolved);
    QVERIFY(waitForServerOf(*dict, Server));
    is::Entry e;
    QVERIFY_OK(dict->getSync(Server + QStringLiteral(".b0"), &e));
    QCOMPARE(e.object.get<quint32>(QStringLiteral("runNumber")), 200u);
    QCOMPARE(e.object.get<qint32>(QStringLiteral("runType")), 0);
    QCOMPARE(e.object.get<quint32>(QStringLiteral("activeTime")), 7u);
}

void tst_IsEvolve::mirrorOnOldLayoutBesideNewMaster()
{
    const QString types = typesWith(Additive);
    const auto dict = dictionaryOf(types);
    startServer(Server, {QStringLiteral("--types"), types});
    QVERIFY(waitForServerOf(*dict, Server));
    QProcess *mirror = startMirror(QStringLiteral("EvoCopy"), Server, {QStringLiteral("--types"), isTypesDir()});
    QVERIFY(waitForServer(QStringLiteral("EvoCopy")));
    is::Object run = is::Object::create(dict->types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set(QStringLiteral("runNumber"), 5u));
    QVERIFY_OK(run.set(QStringLiteral("shifter"), QStringLiteral("alice")));
    QVERIFY_OK(run.set(QStringLiteral("runType"), QStringLiteral("cosmics")));
    for (quint32 n : {5u, 6u}) {
        QVERIFY_OK(run.set(QStringLiteral("runNumber"), n));
        QVERIFY_OK(dict->updateSync(Server + QStringLiteral(".run"), run));
        // The mirror holds it in its own layout: shifter dropped, activeTime at its default.
        is::Entry e;
        QVERIFY2(waitUntil(
                     [&] {
                         return m_dict->getSync(QStringLiteral("EvoCopy.run"), &e).isOk() &&
                                e.object.get<quint32>(QStringLiteral("runNumber")) == n;
                     },
                     10000, 50),
                 "the mirror does not follow");
        Q_UNUSED(mirror);
        QCOMPARE(e.object.get<QString>(QStringLiteral("runType")), QStringLiteral("cosmics"));
        QCOMPARE(e.object.get<quint32>(QStringLiteral("activeTime")), 0u);
        QCOMPARE(e.object.indexOf(QStringLiteral("shifter")), -1);
    }
}

void tst_IsEvolve::mirrorOnNewLayoutBesideOldMaster()
{
    const QString types = typesWith(Evolved);
    startServer(Server);
    QVERIFY(waitForServer(Server));
    QProcess *mirror = startMirror(QStringLiteral("EvoCopy"), Server, {QStringLiteral("--types"), types});
    const auto dict = dictionaryOf(types);
    QVERIFY(waitForServerOf(*dict, QStringLiteral("EvoCopy")));
    writeRuns(Server, QStringLiteral("r"), 3, 40);
    is::Entry e;
    QVERIFY(waitUntil([&] { return dict->getSync(QStringLiteral("EvoCopy.r2"), &e).isOk(); }, 10000, 50));
    Q_UNUSED(mirror);
    QCOMPARE(e.object.get<quint64>(QStringLiteral("run")), quint64(42));
    QCOMPARE(e.object.get<QString>(QStringLiteral("shifter")), QStringLiteral("nobody"));
    QCOMPARE(e.object.get<double>(QStringLiteral("rate")), 1.5);
}

void tst_IsEvolve::clientOnOldLayoutReadsNewServer()
{
    const QString types = typesWith(Additive);
    startServer(Server, {QStringLiteral("--types"), types});
    QVERIFY(waitForServer(Server)); // this test's own dictionary has the shipped types
    const auto dict = dictionaryOf(types);
    is::Object run = is::Object::create(dict->types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set(QStringLiteral("runNumber"), 77u));
    QVERIFY_OK(run.set(QStringLiteral("shifter"), QStringLiteral("bob")));
    QVERIFY_OK(dict->updateSync(Server + QStringLiteral(".run"), run));
    is::Entry e;
    QVERIFY_OK(m_dict->getSync(Server + QStringLiteral(".run"), &e));
    QCOMPARE(e.object.get<quint32>(QStringLiteral("runNumber")), 77u);
    QCOMPARE(e.object.get<quint32>(QStringLiteral("activeTime")), 0u);
    QCOMPARE(e.object.indexOf(QStringLiteral("shifter")), -1);
    QList<is::Entry> all;
    QVERIFY_OK(m_dict->listSync(Server, is::Criteria(QStringLiteral("run")), &all));
    QCOMPARE(all.size(), 1);
    QCOMPARE(all.first().object.get<quint32>(QStringLiteral("runNumber")), 77u);
}

QTEST_GUILESS_MAIN(tst_IsEvolve)
#include "tst_isevolve.moc"
