// IS checkpoints: round trip, fresh start, corruption detection, atomic save, .previous fallback.
#include "statuscheck.h"
#include "dialog/is/checkpoint.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtEndian>
#include <QtTest>

using namespace dialog::is;
using Status = Checkpoint::LoadStatus;

namespace {
/// @p status as these tests read it: true when it is Ok, its message in @p error.
bool check(const dialog::Status &status, QString *error)
{
    *error = status.message();
    return status.isOk();
}
} // namespace

class tst_IsCheckpoint : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void roundTripEveryType();
    void emptyRepositoryRoundTrip();
    void missingFileIsFreshStart();
    void corruptFileRejected_data();
    void corruptFileRejected();
    void zstdChecksumDetectsCorruption();
    void unusableFileRejected_data();
    void unusableFileRejected();
    void failedSaveKeepsPrevious_data();
    void failedSaveKeepsPrevious();
    void saveKeepsPrevious();
    void fallbackToPrevious();
    void skippedObjectsLeftOutUnread();
    void leftoverTemporariesRemovedAtLoad();
    void latestMissingPreviousExists();

private:
    Object make(const QString &type);
    void fill(Repository &repo, int variant);
    static QByteArray readAll(const QString &path);
    static bool writeAll(const QString &path, const QByteArray &bytes);
    static void compareContents(const Repository &a, const Repository &b);

    TypeRegistry m_types;
    QByteArray m_good; // a valid checkpoint of server "Srv"
    int m_headerLength = 0;
};

static const QString S = QStringLiteral("Srv");

Object tst_IsCheckpoint::make(const QString &type)
{
    Object o;
    if (const dialog::Status st = Object::create(m_types, type, &o); !st.isOk())
        qFatal("cannot create %s: %s", qPrintable(type), qPrintable(st.message()));
    return o;
}

// Objects of every shipped type with non-default values, vectors and a nested histogram.
void tst_IsCheckpoint::fill(Repository &repo, int variant)
{
    Object p = make(QStringLiteral("ProcessStats"));
    QVERIFY_OK(p.set(QStringLiteral("host"), QStringLiteral("pc-%1").arg(variant)));
    QVERIFY_OK(p.set(QStringLiteral("pid"), qint64(-4242)));
    QVERIFY_OK(p.set(QStringLiteral("updateTime"), Time(1714564800123456)));
    QVERIFY_OK(p.set(QStringLiteral("cpuLoad"), 12.5f));
    QVERIFY_OK(p.set(QStringLiteral("memoryBytes"), quint64(0xFFFFFFFFFFFFull)));

    Object h = make(QStringLiteral("Histogram1D"));
    QVERIFY_OK(h.set(QStringLiteral("title"), QStringLiteral("event size ✓")));
    QVERIFY_OK(h.set(QStringLiteral("bins"), quint32(4)));
    QVERIFY_OK(h.set(QStringLiteral("contents"), QList<double>{0.5, 1e300, -2, 0}));
    Object r = make(QStringLiteral("ReadoutStats"));
    QVERIFY_OK(r.set(QStringLiteral("host"), QStringLiteral("ros-%1").arg(variant)));
    QVERIFY_OK(r.set(QStringLiteral("events"), quint64(123456789012ull)));
    QVERIFY_OK(r.set(QStringLiteral("rate"), 99.75));
    QVERIFY_OK(r.set(QStringLiteral("queueDepths"), QList<quint32>{1, 2, 4294967295u}));
    QVERIFY_OK(r.set(QStringLiteral("errorMessages"),
                  QStringList{QStringLiteral("a"), QString(), QStringLiteral("ü")}));
    QVERIFY_OK(r.set(QStringLiteral("eventSize"), h));

    Object run = make(QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set(QStringLiteral("runNumber"), quint32(1000 + variant)));
    QVERIFY_OK(run.set(QStringLiteral("startTime"), Time(-1)));
    Object ctrl = make(QStringLiteral("RunCtrlState"));
    QVERIFY_OK(ctrl.set(QStringLiteral("state"), QStringLiteral("Running")));
    QVERIFY_OK(ctrl.set(QStringLiteral("busy"), true));
    Object h2 = make(QStringLiteral("Histogram2D"));
    QVERIFY_OK(h2.set(QStringLiteral("contents"), QList<double>{1, 2, 3, 4}));

    QCOMPARE(repo.insert(QStringLiteral("proc"), p).code(), dialog::Status::Code::Ok);
    QCOMPARE(repo.insert(QStringLiteral("Srv.ros.1"), r).code(), dialog::Status::Code::Ok);
    QCOMPARE(repo.insert(QStringLiteral("run"), run).code(), dialog::Status::Code::Ok);
    QCOMPARE(repo.insert(QStringLiteral("ctrl"), ctrl).code(), dialog::Status::Code::Ok);
    QCOMPARE(repo.insert(QStringLiteral("h1"), h).code(), dialog::Status::Code::Ok);
    QCOMPARE(repo.insert(QStringLiteral("h2"), h2).code(), dialog::Status::Code::Ok);
    QCOMPARE(repo.update(QStringLiteral("run"), run).code(), dialog::Status::Code::Ok);
    QCOMPARE(repo.update(QStringLiteral("run"), run).code(), dialog::Status::Code::Ok);
    for (int i = 0; i < variant; ++i)
        QCOMPARE(repo.insert(QStringLiteral("extra%1").arg(i), make(QStringLiteral("RunInfo"))).code(),
                 dialog::Status::Code::Ok);
}

QByteArray tst_IsCheckpoint::readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>");
}

bool tst_IsCheckpoint::writeAll(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

void tst_IsCheckpoint::compareContents(const Repository &a, const Repository &b)
{
    const QList<StoredObject> x = a.objects(), y = b.objects();
    QCOMPARE(x.size(), y.size());
    for (int i = 0; i < x.size(); ++i) {
        QCOMPARE(x[i].name, y[i].name);
        QCOMPARE(x[i].object, y[i].object);
        QCOMPARE(x[i].time.microsecondsSinceEpoch(), y[i].time.microsecondsSinceEpoch());
        QCOMPARE(x[i].updateCount, y[i].updateCount);
    }
}

void tst_IsCheckpoint::initTestCase()
{
    QString error;
    QVERIFY_OK(m_types.loadDirectory(QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")));
    Repository repo(S, m_types);
    fill(repo, 1);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY2(check(Checkpoint::save(repo, dir.path()), &error), qPrintable(error));
    m_good = readAll(Checkpoint::filePath(dir.path(), S));
    QVERIFY(m_good.startsWith("DIALOGIS"));
    m_headerLength = int(qFromLittleEndian<quint32>(m_good.constData() + 12));
    QCOMPARE(m_headerLength, 8 + 4 + 4 + 2 + 3 + 8 + 8 + 8 + 8 + 4 + 4);
}

void tst_IsCheckpoint::roundTripEveryType()
{
    QTemporaryDir dir;
    Repository repo(S, m_types);
    fill(repo, 2);
    QCOMPARE(repo.size(), 8);
    QString error = QStringLiteral("stale");
    QVERIFY2(check(Checkpoint::save(repo, dir.path()), &error), qPrintable(error));
    QCOMPARE(error, QString());
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"Srv.is"}); // no temporary left

    Repository loaded(S, m_types);
    QVERIFY(loaded.insert(QStringLiteral("stale"), make(QStringLiteral("RunInfo"))).isOk());
    Checkpoint::LoadResult result;
    QVERIFY2(check(Checkpoint::load(loaded, dir.path(), {}, &result), &error), qPrintable(error));
    QCOMPARE(error, QString());
    QCOMPARE(result.status, Status::Loaded);
    QCOMPARE(result.file, Checkpoint::filePath(dir.path(), S));
    QCOMPARE(result.objects, qsizetype(8));
    compareContents(repo, loaded); // the stale object is gone: load replaces the content
    Object ros;
    QCOMPARE(loaded.get(QStringLiteral("Srv.ros.1"), &ros, QStringLiteral("ReadoutStats")).code(),
             dialog::Status::Code::Ok);
    const Object h = ros.get<Object>(QStringLiteral("eventSize"));
    QCOMPARE(h.get<QList<double>>(QStringLiteral("contents")), (QList<double>{0.5, 1e300, -2, 0}));
    QCOMPARE(loaded.list(Criteria(QStringLiteral("run"))).first().updateCount, quint64(2));
}

void tst_IsCheckpoint::emptyRepositoryRoundTrip()
{
    QTemporaryDir dir;
    Repository empty(S, m_types);
    QString error;
    QVERIFY2(check(Checkpoint::save(empty, dir.path()), &error), qPrintable(error));
    Repository loaded(S, m_types);
    fill(loaded, 0);
    Checkpoint::LoadResult result;
    QVERIFY2(check(Checkpoint::load(loaded, dir.path(), {}, &result), &error), qPrintable(error));
    QCOMPARE(result.status, Status::Loaded);
    QCOMPARE(result.objects, qsizetype(0));
    QCOMPARE(loaded.size(), 0);
}

void tst_IsCheckpoint::missingFileIsFreshStart()
{
    QTemporaryDir dir;
    Repository repo(S, m_types);
    fill(repo, 0);
    QString error = QStringLiteral("stale");
    Checkpoint::LoadResult result;
    QVERIFY(check(Checkpoint::load(repo, dir.path(), {}, &result), &error));
    QCOMPARE(error, QString());
    QCOMPARE(result.status, Status::NoCheckpoint);
    QCOMPARE(result.file, QString());
    QCOMPARE(repo.size(), 6); // untouched
    QVERIFY(check(Checkpoint::load(repo, dir.path() + QStringLiteral("/does-not-exist")), &error));
}

void tst_IsCheckpoint::corruptFileRejected_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message"); // after "<path>: "

    const int hl = m_headerLength;
    const qsizetype payload = m_good.size() - hl;
    const QString truncated = QStringLiteral("corrupt checkpoint: truncated header (%1 bytes)");
    QTest::newRow("empty") << QByteArray() << truncated.arg(0);
    QTest::newRow("truncated-in-magic") << m_good.left(5) << truncated.arg(5);
    QTest::newRow("truncated-in-version") << m_good.left(14) << truncated.arg(14);
    QTest::newRow("truncated-in-header")
        << m_good.left(30) << QStringLiteral("corrupt checkpoint: truncated header (30 of %1 bytes)").arg(hl);
    QTest::newRow("header-only")
        << m_good.left(hl)
        << QStringLiteral("corrupt checkpoint: truncated payload (0 of %1 bytes)").arg(payload);
    QTest::newRow("truncated-in-payload")
        << m_good.left(hl + 5)
        << QStringLiteral("corrupt checkpoint: truncated payload (5 of %1 bytes)").arg(payload);
    QTest::newRow("last-byte-missing")
        << m_good.chopped(1)
        << QStringLiteral("corrupt checkpoint: truncated payload (%1 of %2 bytes)")
               .arg(payload - 1)
               .arg(payload);
    QTest::newRow("trailing-bytes") << m_good + "xyz"
                                    << QStringLiteral(
                                           "corrupt checkpoint: 3 unexpected bytes after the payload");
    QByteArray flipped = m_good;
    flipped[hl + payload / 2] = char(flipped[hl + payload / 2] ^ 0x10);
    QTest::newRow("flipped-payload-byte")
        << flipped << QStringLiteral("corrupt checkpoint: payload checksum mismatch");
    flipped = m_good;
    flipped[19] = char(flipped[19] ^ 0x01); // in the server name
    QTest::newRow("flipped-header-byte")
        << flipped << QStringLiteral("corrupt checkpoint: header checksum mismatch");
    QByteArray count = m_good;
    count[21] = char(count[21] + 1); // object count, then the header CRC fixed up: a lying header
    qToLittleEndian(
        [&] {
            quint32 c = 0xFFFFFFFFu;
            for (int i = 0; i < hl - 4; ++i) {
                c ^= quint8(count[i]);
                for (int k = 0; k < 8; ++k)
                    c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            }
            return c ^ 0xFFFFFFFFu;
        }(),
        count.data() + hl - 4);
    QTest::newRow("wrong-object-count")
        << count << QStringLiteral("corrupt checkpoint: object #7 is truncated");
    QByteArray magic = m_good;
    magic[0] = 'X';
    QTest::newRow("wrong-magic") << magic << QStringLiteral("not an IS checkpoint (bad magic)");
    QTest::newRow("other-file") << QByteArray("hello world, this is not a checkpoint at all")
                                << QStringLiteral("not an IS checkpoint (bad magic)");
}

void tst_IsCheckpoint::corruptFileRejected()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString path = Checkpoint::filePath(dir.path(), S);
    QVERIFY(writeAll(path, bytes));

    Repository repo(S, m_types);
    fill(repo, 0);
    Repository before(S, m_types);
    QCOMPARE(before.replaceAll(repo.objects()).code(), dialog::Status::Code::Ok);
    QString error;
    Checkpoint::LoadResult result;
    QVERIFY(!check(Checkpoint::load(repo, dir.path(), {}, &result), &error));
    QCOMPARE(error, path + QStringLiteral(": ") + message);
    QCOMPARE(result.status, Status::Failed);
    compareContents(repo, before);
    // The file is kept as it was, and nothing else appears.
    QCOMPARE(readAll(path), bytes);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"Srv.is"});
}

void tst_IsCheckpoint::zstdChecksumDetectsCorruption()
{
    // Damage the payload and fix both CRCs: the zstd content checksum still catches it.
    QByteArray bytes = m_good;
    bytes[bytes.size() - 1] = char(bytes[bytes.size() - 1] ^ 0xFF); // in the zstd checksum
    const auto crc = [](QByteArrayView data) {
        quint32 c = 0xFFFFFFFFu;
        for (char ch : data) {
            c ^= quint8(ch);
            for (int k = 0; k < 8; ++k)
                c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        }
        return c ^ 0xFFFFFFFFu;
    };
    const int hl = m_headerLength;
    qToLittleEndian(crc(QByteArrayView(bytes).sliced(hl)), bytes.data() + hl - 8);
    qToLittleEndian(crc(QByteArrayView(bytes).first(hl - 4)), bytes.data() + hl - 4);
    QTemporaryDir dir;
    const QString path = Checkpoint::filePath(dir.path(), S);
    QVERIFY(writeAll(path, bytes));
    Repository repo(S, m_types);
    QString error;
    QVERIFY(!check(Checkpoint::load(repo, dir.path()), &error));
    QCOMPARE(Checkpoint::load(repo, dir.path()).code(), dialog::Status::Code::StorageError);
    QCOMPARE(error,
             path + QStringLiteral(
                        ": corrupt checkpoint: corrupt zstd data: Restored data doesn't match checksum"));
    QCOMPARE(repo.size(), 0);
}

void tst_IsCheckpoint::unusableFileRejected_data()
{
    QTest::addColumn<QString>("server");
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");

    QByteArray newer = m_good;
    newer[8] = char(Checkpoint::FormatVersion + 1);
    QTest::newRow("newer-format") << "Srv" << newer
                                  << QStringLiteral("checkpoint format version %1 is not supported (this build "
                                                    "reads up to %2)")
                                         .arg(Checkpoint::FormatVersion + 1)
                                         .arg(Checkpoint::FormatVersion);
    QByteArray zero = m_good;
    zero[8] = 0;
    QTest::newRow("format-zero")
        << "Srv" << zero
        << QStringLiteral("checkpoint format version 0 is not supported (this build reads up to %1)")
               .arg(Checkpoint::FormatVersion);
    QTest::newRow("other-server") << "Abc" << m_good << "checkpoint of server 'Srv', not 'Abc'";
}

void tst_IsCheckpoint::unusableFileRejected()
{
    QFETCH(QString, server);
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString path = Checkpoint::filePath(dir.path(), server);
    QVERIFY(writeAll(path, bytes));
    QVERIFY(writeAll(Checkpoint::previousFilePath(dir.path(), server), m_good));
    Repository repo(server, m_types);
    QCOMPARE(repo.insert(QStringLiteral("keep"), make(QStringLiteral("RunInfo"))).code(), dialog::Status::Code::Ok);
    QString error;
    Checkpoint::LoadResult result;
    // Not damaged, so no fallback to older data and no renaming.
    QVERIFY(!check(Checkpoint::load(repo, dir.path(), {true, true}, &result), &error));
    QCOMPARE(error, path + QStringLiteral(": ") + message);
    QCOMPARE(result.status, Status::Failed);
    QCOMPARE(result.corruptRenamed, QString());
    QCOMPARE(repo.list().size(), 1);
    QCOMPARE(repo.list().first().name, QStringLiteral("keep"));
    QCOMPARE(readAll(path), bytes);
}

void tst_IsCheckpoint::failedSaveKeepsPrevious_data()
{
    QTest::addColumn<QString>("obstacle");
    QTest::newRow("directory-is-a-file") << "file";
    QTest::newRow("missing-directory") << "missing";
    QTest::newRow("read-only-directory") << "read-only";
    QTest::newRow("previous-not-replaceable") << "previous-dir";
}

void tst_IsCheckpoint::failedSaveKeepsPrevious()
{
    QFETCH(QString, obstacle);
    QTemporaryDir tmp;
    QString dir = tmp.path();
    const QString latest = Checkpoint::filePath(dir, S);
    QVERIFY(writeAll(latest, m_good));
    Repository repo(S, m_types);
    fill(repo, 3);
    QString expected;
    if (obstacle == QLatin1String("file")) {
        dir = latest;
        expected = latest + QStringLiteral(": cannot save checkpoint: not a directory");
    } else if (obstacle == QLatin1String("missing")) {
        dir = tmp.filePath(QStringLiteral("nope"));
        expected = dir + QStringLiteral(": cannot save checkpoint: not a directory");
    } else if (obstacle == QLatin1String("read-only")) {
        QVERIFY(QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
        QFile probe(tmp.filePath(QStringLiteral("probe")));
        if (probe.open(QIODevice::WriteOnly)) {
            probe.remove();
            QFile::setPermissions(dir,
                                  QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
            QSKIP("running with privileges that ignore directory permissions (root)");
        }
        expected = latest + QStringLiteral(": cannot write: ");
    } else {
        // .previous is a non-empty directory: the rotation fails after the new file was written.
        QVERIFY(QDir(dir).mkpath(QStringLiteral("Srv.is.previous/x")));
        expected = Checkpoint::previousFilePath(dir, S) + QStringLiteral(": cannot write: ");
    }
    QString error;
    const bool saved = check(Checkpoint::save(repo, dir), &error);
    QFile::setPermissions(tmp.path(),
                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QVERIFY(!saved);
    QVERIFY2(error.startsWith(expected), qPrintable(error));
    QVERIFY2(error.size() > expected.size() || obstacle == QLatin1String("file") ||
                 obstacle == QLatin1String("missing"),
             "the OS reason is missing");
    QCOMPARE(readAll(latest), m_good);
    // No temporary file is left behind.
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files), QStringList{"Srv.is"});
}

void tst_IsCheckpoint::saveKeepsPrevious()
{
    QTemporaryDir dir;
    Repository repo(S, m_types);
    fill(repo, 0);
    QString error;
    QVERIFY2(check(Checkpoint::save(repo, dir.path()), &error), qPrintable(error));
    const QByteArray first = readAll(Checkpoint::filePath(dir.path(), S));
    QVERIFY(!QFile::exists(Checkpoint::previousFilePath(dir.path(), S)));
    QCOMPARE(repo.remove(QStringLiteral("run")).code(), dialog::Status::Code::Ok);
    QVERIFY2(check(Checkpoint::save(repo, dir.path()), &error), qPrintable(error));
    QCOMPARE(readAll(Checkpoint::previousFilePath(dir.path(), S)), first);
    QVERIFY(readAll(Checkpoint::filePath(dir.path(), S)) != first);

    // A damaged latest file is not rotated over a good .previous.
    QVERIFY(writeAll(Checkpoint::filePath(dir.path(), S), QByteArray("garbage")));
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression("truncated header \\(7 bytes\\) - not kept as .*previous$"));
    QVERIFY2(check(Checkpoint::save(repo, dir.path()), &error), qPrintable(error));
    QCOMPARE(readAll(Checkpoint::previousFilePath(dir.path(), S)), first);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), (QStringList{"Srv.is", "Srv.is.previous"}));
}

// SIGKILL during the .previous rewrite left NAME.is.previous.XXXXXX behind, never cleaned.
void tst_IsCheckpoint::leftoverTemporariesRemovedAtLoad()
{
    QTemporaryDir dir;
    Repository repo(S, m_types);
    fill(repo, 0);
    QString error;
    QVERIFY2(check(Checkpoint::save(repo, dir.path()), &error), qPrintable(error));
    const QString latest = Checkpoint::filePath(dir.path(), S);
    const QString previous = Checkpoint::previousFilePath(dir.path(), S);
    QVERIFY(writeAll(previous + QStringLiteral(".aB3xYz"), QByteArray("half a file")));
    QVERIFY(writeAll(latest + QStringLiteral(".Q1w2E3"), QByteArray("half a file")));
    // Not ours: other suffixes, other servers.
    QVERIFY(writeAll(latest + QStringLiteral(".bak"), QByteArray("kept")));
    QVERIFY(writeAll(dir.filePath(QStringLiteral("Other.is.previous.aB3xYz")), QByteArray("kept")));
    Repository loaded(S, m_types);
    QVERIFY2(check(Checkpoint::load(loaded, dir.path()), &error), qPrintable(error));
    compareContents(repo, loaded);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files),
             (QStringList{"Other.is.previous.aB3xYz", "Srv.is", "Srv.is.bak"}));
}

// An IS server's own Statistics object, whose type changed beyond what type evolution converts
// since the checkpoint was written (an upgrade), must not keep the checkpoint from loading: it is
// skipped unread.
void tst_IsCheckpoint::skippedObjectsLeftOutUnread()
{
    TypeRegistry grown;
    QString error;
    QVERIFY_OK(grown.loadDirectory(QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")));
    TypeInfo old(QStringLiteral("Figures"));
    old.addAttribute(AttributeInfo(QStringLiteral("a"), BasicType::U32));
    QVERIFY_OK(m_types.declareType(old));
    TypeInfo now(QStringLiteral("Figures"));
    now.addAttribute(AttributeInfo(QStringLiteral("a"), BasicType::String));
    QVERIFY_OK(grown.declareType(now));
    QTemporaryDir dir;
    {
        Repository repo(S, m_types);
        fill(repo, 0);
        QCOMPARE(repo.upsert(QStringLiteral("Statistics"), make(QStringLiteral("Figures"))).code(), dialog::Status::Code::Ok);
        QVERIFY2(check(Checkpoint::save(repo, dir.path()), &error), qPrintable(error));
    }
    Repository strict(S, grown);
    QVERIFY(!check(Checkpoint::load(strict, dir.path()), &error));
    QVERIFY2(error.contains(QLatin1String("'Statistics'")), qPrintable(error));
    Repository repo(S, grown);
    Checkpoint::LoadOptions lo;
    lo.skipObjects = {QStringLiteral("Statistics")};
    Checkpoint::LoadResult result;
    QVERIFY2(check(Checkpoint::load(repo, dir.path(), lo, &result), &error), qPrintable(error));
    QCOMPARE(result.status, Status::Loaded);
    QCOMPARE(repo.get(QStringLiteral("Statistics"), nullptr).code(), dialog::Status::Code::NotFound);
    QCOMPARE(result.objects, repo.size());
    QVERIFY(repo.size() > 0);
}

void tst_IsCheckpoint::fallbackToPrevious()
{
    QTemporaryDir dir;
    Repository older(S, m_types), newer(S, m_types);
    fill(older, 0);
    fill(newer, 4);
    QString error;
    QVERIFY2(check(Checkpoint::save(older, dir.path()), &error), qPrintable(error));
    QVERIFY2(check(Checkpoint::save(newer, dir.path()), &error), qPrintable(error));
    const QString latest = Checkpoint::filePath(dir.path(), S);
    const QString previous = Checkpoint::previousFilePath(dir.path(), S);
    QByteArray bytes = readAll(latest);
    bytes.chop(10);
    QVERIFY(writeAll(latest, bytes));
    const QString latestError = latest + QStringLiteral(": corrupt checkpoint: truncated payload");

    Repository repo(S, m_types);
    Checkpoint::LoadResult result;
    QVERIFY(!check(Checkpoint::load(repo, dir.path(), {}, &result), &error));
    QVERIFY2(error.startsWith(latestError), qPrintable(error));
    QCOMPARE(repo.size(), 0);

    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("truncated payload .* - loading .*previous$"));
    QVERIFY2(check(Checkpoint::load(repo, dir.path(), {true, false}, &result), &error), qPrintable(error));
    QCOMPARE(error, QString());
    QCOMPARE(result.status, Status::LoadedFromPrevious);
    QCOMPARE(result.file, previous);
    QCOMPARE(result.objects, qsizetype(6));
    QVERIFY2(result.latestError.startsWith(latestError), qPrintable(result.latestError));
    QCOMPARE(result.corruptRenamed, QString());
    compareContents(repo, older);
    QCOMPARE(readAll(latest), bytes); // left alone

    Repository renamed(S, m_types);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("truncated payload .* - loading .*previous$"));
    QVERIFY2(check(Checkpoint::load(renamed, dir.path(), {true, true}, &result), &error), qPrintable(error));
    QCOMPARE(result.status, Status::LoadedFromPrevious);
    QVERIFY(result.corruptRenamed.startsWith(latest + QStringLiteral(".corrupt-")));
    QCOMPARE(readAll(result.corruptRenamed), bytes);
    QVERIFY(!QFile::exists(latest));
    compareContents(renamed, older);

    // Both files damaged: fail, naming both.
    QVERIFY(writeAll(latest, bytes));
    QVERIFY(writeAll(previous, QByteArray("DIALOGIS")));
    Repository none(S, m_types);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("truncated payload .* - loading .*previous$"));
    QVERIFY(!check(Checkpoint::load(none, dir.path(), {true, false}, &result), &error));
    QCOMPARE(result.status, Status::Failed);
    QVERIFY2(
        error.contains(latestError) &&
            error.endsWith(previous + QStringLiteral(": corrupt checkpoint: truncated header (8 bytes)")),
        qPrintable(error));
    QCOMPARE(none.size(), 0);
}

void tst_IsCheckpoint::latestMissingPreviousExists()
{
    QTemporaryDir dir;
    const QString previous = Checkpoint::previousFilePath(dir.path(), S);
    QVERIFY(writeAll(previous, m_good));
    Repository repo(S, m_types);
    QString error;
    Checkpoint::LoadResult result;
    QVERIFY(!check(Checkpoint::load(repo, dir.path(), {}, &result), &error));
    QCOMPARE(error, Checkpoint::filePath(dir.path(), S) + QStringLiteral(": missing, but ") + previous +
                        QStringLiteral(" exists (load it with fallbackToPrevious)"));
    QCOMPARE(result.status, Status::Failed);
    QCOMPARE(repo.size(), 0);
    QVERIFY2(check(Checkpoint::load(repo, dir.path(), {true, false}, &result), &error), qPrintable(error));
    QCOMPARE(result.status, Status::LoadedFromPrevious);
    QCOMPARE(result.file, previous);
    QCOMPARE(repo.size(), 7);
}

QTEST_GUILESS_MAIN(tst_IsCheckpoint)
#include "tst_ischeckpoint.moc"
