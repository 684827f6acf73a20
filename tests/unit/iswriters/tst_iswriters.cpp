// WriterTracker: the objects of a writer the Control Server declared lost are stale until written
// again, whatever thread asks.
#include "statuscheck.h"
#include "writertracker.h"

#include "dialog/is/typeregistry.h"

#include <QTest>

using namespace dialog;
using namespace dialog::isd;

namespace {
ProcessEntry process(const QString &name)
{
    ProcessEntry p;
    p.name = name;
    return p;
}

DirectorySnapshot directory(const QStringList &alive, const QStringList &lost)
{
    DirectorySnapshot d;
    for (const QString &name : alive)
        d.processes << process(name);
    for (const QString &name : lost)
        d.lost << process(name);
    return d;
}
} // namespace

class tst_IsWriters : public QObject
{
    Q_OBJECT
private slots:
    void init()
    {
        is::TypeInfo t(QStringLiteral("Rate"));
        t.setAttributes({is::AttributeInfo(QStringLiteral("hz"), is::BasicType::Double)});
        t.setExpectedIntervalS(3600);
        QString error;
        if (!m_types.contains(t.name()))
            QVERIFY_OK(m_types.declareType(t));
    }

    void lostWriterMakesItsObjectsStale()
    {
        WriterTracker w(m_types);
        w.written(QStringLiteral("a"), QStringLiteral("P1"));
        w.written(QStringLiteral("b"), QStringLiteral("P2"));
        w.written(QStringLiteral("c"), QStringLiteral("P1"));
        QStringList lost = w.lostWriters(directory({QStringLiteral("P2")}, {QStringLiteral("P1")}));
        lost.sort();
        QCOMPARE(lost, QStringList({QStringLiteral("a"), QStringLiteral("c")}));
        QVERIFY(w.isWriterLost(QStringLiteral("a")));
        QVERIFY(!w.isWriterLost(QStringLiteral("b")));
        const is::Staleness st =
            w.staleness(QStringLiteral("a"), QStringLiteral("Rate"), is::Time::currentTime());
        QVERIFY(st.writerLost);
        QVERIFY(st.isStale());
        QCOMPARE(st.expectedIntervalS, 3600.0);
        QVERIFY(!w.staleness(QStringLiteral("b"), QStringLiteral("Rate"), is::Time::currentTime()).isStale());
        // Told once per loss: the same directory again names nothing new.
        QVERIFY(w.lostWriters(directory({QStringLiteral("P2")}, {QStringLiteral("P1")})).isEmpty());
        QVERIFY(w.isWriterLost(QStringLiteral("c")));
    }

    void writerAliveAgainIsNotLost()
    {
        WriterTracker w(m_types);
        w.written(QStringLiteral("a"), QStringLiteral("P1"));
        // A replacement of the same name took over: its objects are not stale.
        QVERIFY(w.lostWriters(directory({QStringLiteral("P1")}, {QStringLiteral("P1")})).isEmpty());
        QVERIFY(!w.isWriterLost(QStringLiteral("a")));
    }

    void writtenAgainIsNotStale()
    {
        WriterTracker w(m_types);
        w.written(QStringLiteral("a"), QStringLiteral("P1"));
        QCOMPARE(w.lostWriters(directory({}, {QStringLiteral("P1")})), QStringList{QStringLiteral("a")});
        w.written(QStringLiteral("a"), QStringLiteral("P3"));
        QVERIFY(!w.isWriterLost(QStringLiteral("a")));
        QVERIFY(w.lostWriters(directory({}, {QStringLiteral("P1")})).isEmpty());
        QCOMPARE(w.lostWriters(directory({}, {QStringLiteral("P3")})), QStringList{QStringLiteral("a")});
    }

    void removedObjectIsForgotten()
    {
        WriterTracker w(m_types);
        w.written(QStringLiteral("a"), QStringLiteral("P1"));
        w.removed(QStringLiteral("a"));
        QVERIFY(w.lostWriters(directory({}, {QStringLiteral("P1")})).isEmpty());
        QVERIFY(!w.isWriterLost(QStringLiteral("a")));
    }

private:
    is::TypeRegistry m_types;
};

QTEST_GUILESS_MAIN(tst_IsWriters)
#include "tst_iswriters.moc"
