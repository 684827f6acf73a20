// IS repository: names, insert/update/upsert/remove/get, criteria, listeners, statistics, threads.
#include "statuscheck.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"
#include "waits.h"

#include <QElapsedTimer>
#include <QThread>
#include <QtTest>
#include <atomic>
#include <memory>
#include <thread>

using namespace dialog::is;
using dialog::test::pollUntil;
using Result = dialog::Status::Code;
using Sel = Criteria::TypeSelector;
using Logic = Criteria::Logic;
using Kind = Change::Kind;

class tst_IsRepository : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void names_data();
    void names();
    void insert();
    void insertRejectsBadObjects();
    void update();
    void updateTypeMismatch();
    void upsert();
    void remove();
    void get();
    void getAsBase_data();
    void getAsBase();
    void list_data();
    void list();
    void objectsReturnsValues();
    void scanStopsWhenToldAndSeesASnapshot();
    void writesGoOnDuringAScan();
    void listenersSeeChangesInOrder();
    void listenerMayCallBack();
    void replaceAll();
    void statistics();
    void concurrentReadersAndWriter();

private:
    Object make(const QString &type, const QString &host = QString(), qint64 pid = 0);
    TypeRegistry m_types;
};

static const QString S = QStringLiteral("Srv");

Object tst_IsRepository::make(const QString &type, const QString &host, qint64 pid)
{
    Object o;
    if (const dialog::Status st = Object::create(m_types, type, &o); !st.isOk())
        qFatal("cannot create %s: %s", qPrintable(type), qPrintable(st.message()));
    if (o.indexOf(QStringLiteral("host")) >= 0) {
        o.set(QStringLiteral("host"), host);
        o.set(QStringLiteral("pid"), pid);
    }
    return o;
}

void tst_IsRepository::initTestCase()
{
    QString error;
    QVERIFY_OK(m_types.loadDirectory(QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")));
}

void tst_IsRepository::names_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<Result>("result");
    QTest::addColumn<QString>("stored"); // object name, or the error for a failure

    QTest::newRow("bare") << "x" << Result::Ok << "x";
    QTest::newRow("prefixed") << "Srv.x" << Result::Ok << "x";
    QTest::newRow("prefixed-dotted") << "Srv.a.b" << Result::Ok << "a.b";
    QTest::newRow("empty") << "" << Result::InvalidName << "empty object name";
    QTest::newRow("prefix-only") << "Srv." << Result::InvalidName << "empty object name in 'Srv.'";
    QTest::newRow("other-server") << "Other.x" << Result::InvalidName
                                  << "object name 'Other.x' belongs to server 'Other', not 'Srv'";
    QTest::newRow("bare-dotted-is-full-name")
        << "a.b" << Result::InvalidName << "object name 'a.b' belongs to server 'a', not 'Srv'";
    QTest::newRow("server-case-matters")
        << "srv.x" << Result::InvalidName << "object name 'srv.x' belongs to server 'srv', not 'Srv'";
}

void tst_IsRepository::names()
{
    QFETCH(QString, name);
    QFETCH(Result, result);
    QFETCH(QString, stored);
    Repository repo(S, m_types);
    QString error = QStringLiteral("stale");
    QCOMPARE(dialog::test::split(repo.insert(name, make(QStringLiteral("RunInfo"))), &error), result);
    if (result == Result::Ok) {
        QCOMPARE(error, QString());
        QCOMPARE(repo.list().size(), 1);
        QCOMPARE(repo.list().first().name, stored);
        QString objectName;
        QVERIFY_OK(repo.objectName(name, &objectName));
        QCOMPARE(objectName, stored);
        // Both spellings address the same object.
        // (a bare name with a '.' would be read as a full name: "a.b" is server "a").
        QCOMPARE(repo.get(stored, nullptr).code(), stored.contains('.') ? Result::InvalidName : Result::Ok);
        QCOMPARE(repo.get(S + '.' + stored, nullptr).code(), Result::Ok);
    } else {
        QCOMPARE(error, stored);
        QCOMPARE(repo.size(), 0);
        QCOMPARE(repo.get(name, nullptr).code(), Result::InvalidName);
        QCOMPARE(repo.remove(name).code(), Result::InvalidName);
        QString objectName = QStringLiteral("untouched");
        QCOMPARE(repo.objectName(name, &objectName).code(), Result::InvalidName);
        QCOMPARE(objectName, QStringLiteral("untouched"));
    }
}

void tst_IsRepository::insert()
{
    Repository repo(S, m_types);
    const Time before = Time::currentTime();
    QString error;
    QCOMPARE(dialog::test::split(repo.insert(QStringLiteral("p1"), make(QStringLiteral("ProcessStats"), "h1", 1)), &error),
             Result::Ok);
    QCOMPARE(repo.size(), 1);
    QCOMPARE(dialog::test::split(repo.insert(QStringLiteral("Srv.p1"), make(QStringLiteral("ProcessStats"), "h2", 2)), &error),
             Result::AlreadyExists);
    QCOMPARE(error, QStringLiteral("object 'Srv.p1' already exists"));
    Object got;
    ObjectInfo info;
    QCOMPARE(repo.get(QStringLiteral("p1"), &got, {}, &info).code(), Result::Ok);
    QCOMPARE(got.get<QString>(QStringLiteral("host")), QStringLiteral("h1")); // first value kept
    QCOMPARE(info.name, QStringLiteral("p1"));
    QCOMPARE(info.typeName, QStringLiteral("ProcessStats"));
    QCOMPARE(info.updateCount, quint64(0));
    QVERIFY(!(info.time < before));
    QVERIFY(!(Time::currentTime() < info.time));
}

void tst_IsRepository::insertRejectsBadObjects()
{
    Repository repo(S, m_types);
    QString error;
    QCOMPARE(dialog::test::split(repo.insert(QStringLiteral("x"), Object()), &error), Result::InvalidObject);
    QCOMPARE(error, QStringLiteral("invalid object (no type)"));

    TypeRegistry other;
    TypeInfo foo(QStringLiteral("Foo"));
    foo.setAttributes({AttributeInfo(QStringLiteral("a"), BasicType::U32)});
    TypeInfo run(QStringLiteral("RunInfo")); // same name, another definition
    run.setAttributes({AttributeInfo(QStringLiteral("runNumber"), BasicType::U64)});
    QVERIFY_OK(other.declareTypes({foo, run}));
    QCOMPARE(dialog::test::split(repo.insert(QStringLiteral("x"), Object::create(other, QStringLiteral("Foo"))), &error),
             Result::UnknownType);
    QCOMPARE(error, QStringLiteral("unknown type 'Foo' in server 'Srv'"));
    QCOMPARE(dialog::test::split(repo.upsert(QStringLiteral("x"), Object::create(other, QStringLiteral("RunInfo"))), &error),
             Result::InvalidObject);
    QCOMPARE(error,
             QStringLiteral("object of type 'RunInfo' does not match the registry's definition of the type"));
    QCOMPARE(repo.size(), 0);
}

void tst_IsRepository::update()
{
    Repository repo(S, m_types);
    QString error;
    QCOMPARE(dialog::test::split(repo.update(QStringLiteral("p"), make(QStringLiteral("ProcessStats"))), &error),
             Result::NotFound);
    QCOMPARE(error, QStringLiteral("object 'Srv.p' does not exist"));
    QCOMPARE(repo.size(), 0);

    QCOMPARE(repo.insert(QStringLiteral("p"), make(QStringLiteral("ProcessStats"), "a", 1)).code(), Result::Ok);
    const Time created = repo.list().first().time;
    QCOMPARE(dialog::test::split(repo.update(QStringLiteral("Srv.p"), make(QStringLiteral("ProcessStats"), "b", 2)), &error),
             Result::Ok);
    QCOMPARE(error, QString());
    QCOMPARE(dialog::test::split(repo.update(QStringLiteral("p"), make(QStringLiteral("ProcessStats"), "c", 3)), &error),
             Result::Ok);
    Object got;
    ObjectInfo info;
    QCOMPARE(repo.get(QStringLiteral("p"), &got, {}, &info).code(), Result::Ok);
    QCOMPARE(got.get<QString>(QStringLiteral("host")), QStringLiteral("c"));
    QCOMPARE(got.get<qint64>(QStringLiteral("pid")), qint64(3));
    QCOMPARE(info.updateCount, quint64(2));
    QVERIFY(!(info.time < created));
}

void tst_IsRepository::updateTypeMismatch()
{
    Repository repo(S, m_types);
    const Object original = make(QStringLiteral("ProcessStats"), "a", 1);
    QCOMPARE(repo.insert(QStringLiteral("p"), original).code(), Result::Ok);
    QString error;
    // Even a derived type is another type: an update must keep the type.
    QCOMPARE(dialog::test::split(repo.update(QStringLiteral("p"), make(QStringLiteral("ReadoutStats"), "b", 2)), &error),
             Result::TypeMismatch);
    QCOMPARE(error, QStringLiteral("object 'Srv.p' is of type 'ProcessStats', not 'ReadoutStats'"));
    QCOMPARE(dialog::test::split(repo.upsert(QStringLiteral("p"), make(QStringLiteral("RunInfo"))), &error), Result::TypeMismatch);
    QCOMPARE(error, QStringLiteral("object 'Srv.p' is of type 'ProcessStats', not 'RunInfo'"));
    Object got;
    ObjectInfo info;
    QCOMPARE(repo.get(QStringLiteral("p"), &got, {}, &info).code(), Result::Ok);
    QCOMPARE(got, original);
    QCOMPARE(info.updateCount, quint64(0));
}

void tst_IsRepository::upsert()
{
    Repository repo(S, m_types);
    QString error;
    QCOMPARE(dialog::test::split(repo.upsert(QStringLiteral("r"), make(QStringLiteral("RunInfo"))), &error), Result::Ok);
    Object run = make(QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set(QStringLiteral("runNumber"), quint32(42)));
    QCOMPARE(dialog::test::split(repo.upsert(QStringLiteral("Srv.r"), run), &error), Result::Ok);
    Object got;
    ObjectInfo info;
    QCOMPARE(repo.get(QStringLiteral("r"), &got, {}, &info).code(), Result::Ok);
    QCOMPARE(got, run);
    QCOMPARE(info.updateCount, quint64(1));
    const Repository::Statistics s = repo.statistics();
    QCOMPARE(s.inserts, quint64(1));
    QCOMPARE(s.updates, quint64(1));
}

void tst_IsRepository::remove()
{
    Repository repo(S, m_types);
    QString error;
    QCOMPARE(dialog::test::split(repo.remove(QStringLiteral("r")), &error), Result::NotFound);
    QCOMPARE(error, QStringLiteral("object 'Srv.r' does not exist"));
    QCOMPARE(repo.insert(QStringLiteral("r"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
    QCOMPARE(repo.insert(QStringLiteral("s"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
    QCOMPARE(dialog::test::split(repo.remove(QStringLiteral("Srv.r")), &error), Result::Ok);
    QCOMPARE(error, QString());
    QCOMPARE(repo.size(), 1);
    QCOMPARE(repo.get(QStringLiteral("r"), nullptr).code(), Result::NotFound);
    QCOMPARE(repo.remove(QStringLiteral("r")).code(), Result::NotFound);
    // A removed name can be created again, with another type.
    QCOMPARE(repo.insert(QStringLiteral("r"), make(QStringLiteral("ProcessStats"))).code(), Result::Ok);
}

void tst_IsRepository::get()
{
    Repository repo(S, m_types);
    const Object p = make(QStringLiteral("ProcessStats"), "h", 7);
    QCOMPARE(repo.insert(QStringLiteral("p"), p).code(), Result::Ok);
    Object got = make(QStringLiteral("RunInfo"));
    const Object sentinel = got;
    QString error;
    QCOMPARE(dialog::test::split(repo.get(QStringLiteral("q"), &got, {}), &error), Result::NotFound);
    QCOMPARE(error, QStringLiteral("object 'Srv.q' does not exist"));
    QCOMPARE(got, sentinel); // untouched on failure
    QCOMPARE(dialog::test::split(repo.get(QStringLiteral("p"), &got, QStringLiteral("Nope")), &error), Result::UnknownType);
    QCOMPARE(error, QStringLiteral("unknown type 'Nope'"));
    QCOMPARE(got, sentinel);
    QCOMPARE(dialog::test::split(repo.get(QStringLiteral("Srv.p"), &got, QStringLiteral("ProcessStats")), &error), Result::Ok);
    QCOMPARE(got, p);
}

void tst_IsRepository::getAsBase_data()
{
    QTest::addColumn<QString>("expectedType");
    QTest::addColumn<Result>("result");
    QTest::addColumn<int>("attributes");
    QTest::addColumn<QString>("error");

    QTest::newRow("own-type") << "ReadoutStats" << Result::Ok << 12 << "";
    QTest::newRow("base") << "ProcessStats" << Result::Ok << 5 << "";
    QTest::newRow("no-expectation") << "" << Result::Ok << 12 << "";
    QTest::newRow("unrelated")
        << "RunInfo" << Result::TypeMismatch << 0
        << "object 'Srv.ros1': type 'ReadoutStats' is not 'RunInfo' nor derived from it";
}

void tst_IsRepository::getAsBase()
{
    QFETCH(QString, expectedType);
    QFETCH(Result, result);
    QFETCH(int, attributes);
    QFETCH(QString, error);
    Repository repo(S, m_types);
    Object r = make(QStringLiteral("ReadoutStats"), "host9", 99);
    QVERIFY_OK(r.set(QStringLiteral("events"), quint64(1000)));
    QCOMPARE(repo.insert(QStringLiteral("ros1"), r).code(), Result::Ok);
    Object got;
    QString actualError;
    QCOMPARE(dialog::test::split(repo.get(QStringLiteral("ros1"), &got, expectedType), &actualError), result);
    QCOMPARE(actualError, error);
    QCOMPARE(got.attributeCount(), attributes);
    if (result == Result::Ok) {
        QCOMPARE(got.typeName(), expectedType.isEmpty() ? QStringLiteral("ReadoutStats") : expectedType);
        QCOMPARE(got.get<QString>(QStringLiteral("host")), QStringLiteral("host9"));
        QCOMPARE(got.get<qint64>(QStringLiteral("pid")), qint64(99));
    }
}

void tst_IsRepository::list_data()
{
    QTest::addColumn<QString>("regex");
    QTest::addColumn<QString>("type");
    QTest::addColumn<Sel>("selector");
    QTest::addColumn<Logic>("logic");
    QTest::addColumn<QStringList>("expected");

    QTest::newRow("all") << ""
                         << "" << Sel::Any << Logic::And
                         << QStringList{"RunInfo", "ctrl-1", "proc", "ros-1", "ros-2"};
    QTest::newRow("regex") << "ros-[0-9]+"
                           << "" << Sel::Any << Logic::And << QStringList{"ros-1", "ros-2"};
    QTest::newRow("regex-anchored") << "ros"
                                    << "" << Sel::Any << Logic::And << QStringList{};
    QTest::newRow("exactly") << ""
                             << "ProcessStats" << Sel::Exactly << Logic::And << QStringList{"proc"};
    QTest::newRow("subtypes") << ""
                              << "ProcessStats" << Sel::WithSubtypes << Logic::And
                              << QStringList{"proc", "ros-1", "ros-2"};
    QTest::newRow("not-subtypes") << ""
                                  << "ProcessStats" << Sel::NotWithSubtypes << Logic::And
                                  << QStringList{"RunInfo", "ctrl-1"};
    QTest::newRow("regex-and-type") << ".*-1"
                                    << "ReadoutStats" << Sel::Exactly << Logic::And << QStringList{"ros-1"};
    QTest::newRow("regex-or-type") << "ctrl-.*"
                                   << "RunInfo" << Sel::Exactly << Logic::Or
                                   << QStringList{"RunInfo", "ctrl-1"};
    QTest::newRow("invalid-regex-matches-nothing") << "("
                                                   << "" << Sel::Any << Logic::And << QStringList{};
}

void tst_IsRepository::list()
{
    QFETCH(QString, regex);
    QFETCH(QString, type);
    QFETCH(Sel, selector);
    QFETCH(Logic, logic);
    QFETCH(QStringList, expected);
    Repository repo(S, m_types);
    // Inserted out of order: results are sorted by name.
    QCOMPARE(repo.insert(QStringLiteral("ros-2"), make(QStringLiteral("ReadoutStats"))).code(), Result::Ok);
    QCOMPARE(repo.insert(QStringLiteral("proc"), make(QStringLiteral("ProcessStats"))).code(), Result::Ok);
    QCOMPARE(repo.insert(QStringLiteral("ctrl-1"), make(QStringLiteral("RunCtrlState"))).code(), Result::Ok);
    QCOMPARE(repo.insert(QStringLiteral("ros-1"), make(QStringLiteral("ReadoutStats"))).code(), Result::Ok);
    QCOMPARE(repo.insert(QStringLiteral("RunInfo"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);

    const Criteria criteria(regex, type, selector, logic);
    QStringList names, objectNames;
    for (const ObjectInfo &info : repo.list(criteria)) {
        names.append(info.name);
        Object o;
        QCOMPARE(repo.get(info.name, &o).code(), Result::Ok);
        QCOMPARE(info.typeName, o.typeName());
    }
    for (const StoredObject &o : repo.objects(criteria))
        objectNames.append(o.name);
    QCOMPARE(names, expected);
    QCOMPARE(objectNames, expected);
}

void tst_IsRepository::objectsReturnsValues()
{
    Repository repo(S, m_types);
    const Object a = make(QStringLiteral("ProcessStats"), "a", 1);
    Object b = make(QStringLiteral("ReadoutStats"), "b", 2);
    QVERIFY_OK(b.set(QStringLiteral("queueDepths"), QList<quint32>{1, 2, 3}));
    QCOMPARE(repo.insert(QStringLiteral("a"), a).code(), Result::Ok);
    QCOMPARE(repo.insert(QStringLiteral("b"), b).code(), Result::Ok);
    QCOMPARE(repo.update(QStringLiteral("b"), b).code(), Result::Ok);
    const QList<StoredObject> all = repo.objects();
    QCOMPARE(all.size(), 2);
    QCOMPARE(all[0].name, QStringLiteral("a"));
    QCOMPARE(all[0].object, a);
    QCOMPARE(all[0].updateCount, quint64(0));
    QCOMPARE(all[1].object, b);
    QCOMPARE(all[1].updateCount, quint64(1));
    QCOMPARE(all[1].time, repo.list().at(1).time);
    // A returned object is a copy: changing it does not change the repository.
    QList<StoredObject> copy = all;
    QVERIFY_OK(copy[0].object.set(QStringLiteral("pid"), qint64(5)));
    QCOMPARE(repo.objects().first().object, a);
}

// A scan asks before each name whether to go on, and matches what the repository held at its start.
void tst_IsRepository::scanStopsWhenToldAndSeesASnapshot()
{
    Repository repo(S, m_types);
    for (int i = 0; i < 10; ++i)
        QCOMPARE(repo.insert(QStringLiteral("n%1").arg(i), make(QStringLiteral("ProcessStats"))).code(), Result::Ok);
    int asked = 0;
    bool complete = true;
    const QList<ObjectInfo> some = repo.list(
        Criteria(QStringLiteral("n.*")), [&asked] { return ++asked <= 4; }, &complete);
    QVERIFY(!complete);
    QCOMPARE(some.size(), 4);
    QCOMPARE(asked, 5);
    // Written during the scan (from the check, between two names): not seen by this scan.
    const QList<StoredObject> all = repo.objects(
        Criteria(),
        [&repo, this] {
            repo.upsert(QStringLiteral("late"), make(QStringLiteral("ProcessStats")));
            return true;
        },
        &complete);
    QVERIFY(complete);
    QCOMPARE(all.size(), 10);
    QCOMPARE(repo.size(), 11);
}

// The repository's lock was held for a whole scan: a costly pattern over many names stopped every
// writer. Now a writer in another thread finishes while a scan is between two names.
void tst_IsRepository::writesGoOnDuringAScan()
{
    Repository repo(S, m_types);
    for (int i = 0; i < 3; ++i)
        QCOMPARE(repo.insert(QStringLiteral("n%1").arg(i), make(QStringLiteral("ProcessStats"))).code(), Result::Ok);
    const Object value = make(QStringLiteral("ProcessStats"));
    std::atomic<bool> done{false};
    std::thread writer;
    bool waited = false, complete = false;
    repo.list(
        Criteria(QStringLiteral("n.*")),
        [&] {
            if (writer.joinable())
                return true;
            writer = std::thread([&] {
                repo.upsert(QStringLiteral("w"), value);
                done = true;
            });
            // Bounded: were the lock held for the scan, the writer would wait for its end and
            // this wait would run out.
            waited = pollUntil([&] { return bool(done); }, 5000);
            return true;
        },
        &complete);
    writer.join();
    QVERIFY2(waited, "the writer waited for the scan to end");
    QVERIFY(complete);
    QCOMPARE(repo.size(), 4);
}

void tst_IsRepository::listenersSeeChangesInOrder()
{
    Repository repo(S, m_types);
    QList<Change> seen, seen2;
    const int id = repo.addListener([&](const Change &c) { seen.append(c); });
    const int id2 = repo.addListener([&](const Change &c) { seen2.append(c); });
    QVERIFY(id > 0);
    QVERIFY(id2 != id);

    const Object v1 = make(QStringLiteral("ProcessStats"), "a", 1);
    const Object v2 = make(QStringLiteral("ProcessStats"), "b", 2);
    QCOMPARE(repo.insert(QStringLiteral("p"), v1).code(), Result::Ok);
    QCOMPARE(repo.insert(QStringLiteral("p"), v1).code(), Result::AlreadyExists); // no call
    QCOMPARE(repo.update(QStringLiteral("p"), make(QStringLiteral("RunInfo"))).code(),
             Result::TypeMismatch); // no call
    QCOMPARE(repo.update(QStringLiteral("Srv.p"), v2).code(), Result::Ok);
    QCOMPARE(repo.remove(QStringLiteral("q")).code(), Result::NotFound); // no call
    QCOMPARE(repo.remove(QStringLiteral("p")).code(), Result::Ok);
    repo.removeListener(id2);
    QCOMPARE(repo.upsert(QStringLiteral("r"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);

    QCOMPARE(seen.size(), 4);
    QCOMPARE(seen2.size(), 3);
    const QList<Kind> kinds{Kind::Created, Kind::Updated, Kind::Removed, Kind::Created};
    for (int i = 0; i < seen.size(); ++i) {
        QCOMPARE(seen[i].kind, kinds[i]);
        QCOMPARE(seen[i].sequence, quint64(i + 1));
    }
    QCOMPARE(seen[0].name, QStringLiteral("p"));
    QCOMPARE(seen[0].typeName, QStringLiteral("ProcessStats"));
    QCOMPARE(seen[0].object, v1);
    QCOMPARE(seen[0].time, seen2[0].time);
    QCOMPARE(seen[1].object, v2);
    QVERIFY(!(seen[1].time < seen[0].time));
    QCOMPARE(seen[2].name, QStringLiteral("p"));
    QCOMPARE(seen[2].typeName, QStringLiteral("ProcessStats"));
    QVERIFY(!seen[2].object.isValid());
    QCOMPARE(seen[3].name, QStringLiteral("r"));
    QCOMPARE(seen[3].typeName, QStringLiteral("RunInfo"));
    repo.removeListener(id);
    repo.removeListener(12345); // unknown ids are ignored
    QCOMPARE(repo.remove(QStringLiteral("r")).code(), Result::Ok);
    QCOMPARE(seen.size(), 4);
}

void tst_IsRepository::listenerMayCallBack()
{
    // Listeners run with no lock held: reading and writing the repository from one must not deadlock.
    Repository repo(S, m_types);
    QList<qsizetype> sizes;
    repo.addListener([&](const Change &c) {
        Object o;
        const Result r = repo.get(c.name, &o).code();
        sizes.append(repo.size());
        if (c.kind == Kind::Created && c.name == QLatin1String("a")) {
            QCOMPARE(r, Result::Ok);
            QCOMPARE(repo.insert(QStringLiteral("b"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
        }
    });
    QCOMPARE(repo.insert(QStringLiteral("a"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
    // "a"'s listener sees 1 object, inserts "b", whose (nested) call sees 2.
    QCOMPARE(sizes, (QList<qsizetype>{1, 2}));
    QCOMPARE(repo.size(), 2);
}

void tst_IsRepository::replaceAll()
{
    Repository repo(S, m_types);
    int calls = 0;
    repo.addListener([&](const Change &) { ++calls; });
    QCOMPARE(repo.insert(QStringLiteral("old"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
    QString error;
    const StoredObject a{QStringLiteral("a"), make(QStringLiteral("ProcessStats"), "x", 1), Time(1234567), 5};
    const StoredObject dup{QStringLiteral("a"), make(QStringLiteral("RunInfo")), Time(1), 0};
    const StoredObject empty{QString(), make(QStringLiteral("RunInfo")), Time(1), 0};
    const StoredObject unknown{QStringLiteral("u"), Object(), Time(1), 0};
    // Names are object names: a dotted one is taken as it is, not as "Server.Object".
    const StoredObject dotted{QStringLiteral("x.y"), make(QStringLiteral("RunInfo")), Time(2), 1};
    QCOMPARE(dialog::test::split(repo.replaceAll({a, dup}), &error), Result::AlreadyExists);
    QCOMPARE(error, QStringLiteral("object 'Srv.a' appears twice"));
    QCOMPARE(dialog::test::split(repo.replaceAll({a, empty}), &error), Result::InvalidName);
    QCOMPARE(error, QStringLiteral("empty object name"));
    QCOMPARE(dialog::test::split(repo.replaceAll({a, unknown}), &error), Result::InvalidObject);
    QCOMPARE(error, QStringLiteral("object 'Srv.u': invalid object (no type)"));
    QCOMPARE(repo.list().size(), 1);
    QCOMPARE(repo.list().first().name, QStringLiteral("old"));

    QCOMPARE(dialog::test::split(repo.replaceAll({a, dotted}), &error), Result::Ok);
    const QList<StoredObject> now = repo.objects();
    QCOMPARE(now.size(), 2);
    QCOMPARE(now[1].name, QStringLiteral("x.y"));
    QCOMPARE(repo.get(QStringLiteral("Srv.x.y"), nullptr).code(), Result::Ok);
    QCOMPARE(now[0].name, QStringLiteral("a"));
    QCOMPARE(now[0].object, a.object);
    QCOMPARE(now[0].time, Time(1234567));
    QCOMPARE(now[0].updateCount, quint64(5));
    QCOMPARE(calls, 1); // only the insert
}

void tst_IsRepository::statistics()
{
    Repository repo(S, m_types);
    QCOMPARE(repo.insert(QStringLiteral("a"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
    QCOMPARE(repo.insert(QStringLiteral("b"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
    QCOMPARE(repo.insert(QStringLiteral("b"), make(QStringLiteral("RunInfo"))).code(), Result::AlreadyExists);
    QCOMPARE(repo.update(QStringLiteral("a"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
    QCOMPARE(repo.upsert(QStringLiteral("a"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
    QCOMPARE(repo.upsert(QStringLiteral("c"), make(QStringLiteral("RunInfo"))).code(), Result::Ok);
    QCOMPARE(repo.remove(QStringLiteral("b")).code(), Result::Ok);
    QCOMPARE(repo.remove(QStringLiteral("b")).code(), Result::NotFound);
    QCOMPARE(repo.get(QStringLiteral("a"), nullptr).code(), Result::Ok);
    QCOMPARE(repo.get(QStringLiteral("z"), nullptr).code(), Result::NotFound);
    QCOMPARE(repo.get(QStringLiteral(""), nullptr).code(), Result::InvalidName);
    const Repository::Statistics s = repo.statistics();
    QCOMPARE(s.inserts, quint64(3));
    QCOMPARE(s.updates, quint64(2));
    QCOMPARE(s.removes, quint64(1));
    QCOMPARE(s.gets, quint64(1));
    QCOMPARE(s.failures, quint64(4));
    QCOMPARE(s.objects, qsizetype(2));
}

void tst_IsRepository::concurrentReadersAndWriter()
{
    Repository repo(S, m_types);
    constexpr int Objects = 20;
    constexpr int Rounds = 150;
    std::atomic<bool> stop{false};
    std::atomic<int> readerErrors{0};
    std::atomic<quint64> readerGets{0}, readerMisses{0};
    std::atomic<int> notified{0};
    repo.addListener([&](const Change &) { ++notified; });

    // The writer creates, updates and removes; readers check that whatever they see is consistent.
    // std::threads: their join() is a pthread_join that ThreadSanitizer sees (QThread::wait() returns
    // through a futex inside libQt6Core), so their last accesses are ordered before the repository goes.
    std::thread writer([&] {
        for (int round = 0; round < Rounds; ++round) {
            for (int i = 0; i < Objects; ++i) {
                Object o = make(QStringLiteral("ProcessStats"), QStringLiteral("h%1").arg(i), round);
                if (!repo.upsert(QStringLiteral("o%1").arg(i), o).isOk())
                    ++readerErrors;
            }
            if (!repo.remove(QStringLiteral("o%1").arg(round % Objects)).isOk())
                ++readerErrors;
        }
        stop = true;
    });
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; ++t) {
        readers.emplace_back([&] {
            while (!stop) {
                for (const StoredObject &s : repo.objects(Criteria(QStringLiteral("o[0-9]+")))) {
                    if (s.object.get<QString>(QStringLiteral("host")) != QLatin1Char('h') + s.name.mid(1))
                        ++readerErrors;
                }
                Object o;
                const Result r = repo.get(QStringLiteral("o3"), &o, QStringLiteral("ProcessStats")).code();
                if (r == Result::Ok)
                    ++readerGets;
                else if (r == Result::NotFound)
                    ++readerMisses; // removed by the writer just now
                else
                    ++readerErrors;
                if (repo.list().size() > Objects)
                    ++readerErrors;
            }
        });
    }
    writer.join();
    for (std::thread &r : readers)
        r.join();

    QCOMPARE(readerErrors.load(), 0);
    const Repository::Statistics s = repo.statistics();
    QCOMPARE(s.inserts + s.updates, quint64(Objects * Rounds));
    QCOMPARE(s.removes, quint64(Rounds));
    // Every round removes one object that the next round's upserts create again; the last
    // round's removal stays.
    QCOMPARE(s.objects, qsizetype(Objects - 1));
    QCOMPARE(s.inserts, quint64(Objects + Rounds - 1));
    QCOMPARE(s.gets, readerGets.load());
    QCOMPARE(s.failures, readerMisses.load()); // the writer never fails
    QCOMPARE(notified.load(), Objects * Rounds + Rounds);
}

QTEST_GUILESS_MAIN(tst_IsRepository)
#include "tst_isrepository.moc"
