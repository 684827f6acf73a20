// The IS write-ahead journal without a server: record round trip, a segment cut at every byte or
// damaged at every byte is read up to the damage and never more, replay into a repository,
// rotation and the segments kept.
#include "statuscheck.h"
#include "is/journal_p.h"

#include "dialog/is/codec.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog::is;
using namespace dialog::is::journalformat;

namespace {
const QString S = QStringLiteral("Srv");
} // namespace

class tst_IsJournalFormat : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void recordRoundTrip();
    void cutAtEveryByte();
    void damagedAtEveryByte();
    void otherServerOrVersionRefused();
    void replayRebuildsTheRepository();
    void rotateAndRemoveKeepTheOpenSegment();

private:
    QList<Change> changes() const;
    QByteArray segmentOf(const QList<Change> &list, QList<qsizetype> *ends = nullptr) const;

    TypeRegistry m_types;
};

void tst_IsJournalFormat::initTestCase()
{
    QString error;
    QVERIFY_OK(m_types.loadDirectory(QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")));
}

QList<Change> tst_IsJournalFormat::changes() const
{
    QList<Change> out;
    for (int i = 0; i < 5; ++i) {
        Change c;
        c.kind = i == 3 ? Change::Kind::Removed : i == 2 ? Change::Kind::Updated : Change::Kind::Created;
        c.name = i == 4 ? QStringLiteral("a.b.Ünï") : QStringLiteral("obj%1").arg(i);
        c.time = Time(1700000000000000LL + i);
        if (c.kind != Change::Kind::Removed) {
            c.object = Object::create(m_types, QStringLiteral("RunInfo"));
            c.object.set<quint32>(QStringLiteral("runNumber"), quint32(100 + i));
            c.typeName = c.object.typeName();
        }
        out << c;
    }
    return out;
}

QByteArray tst_IsJournalFormat::segmentOf(const QList<Change> &list, QList<qsizetype> *ends) const
{
    QByteArray bytes = encodeHeader(S, 7);
    if (ends)
        ends->append(bytes.size());
    for (const Change &c : list) {
        appendRecord(bytes, c);
        if (ends)
            ends->append(bytes.size());
    }
    return bytes;
}

void tst_IsJournalFormat::recordRoundTrip()
{
    const QList<Change> in = changes();
    const QByteArray bytes = segmentOf(in);
    QList<Record> out;
    const Decoded d = decodeSegment(bytes, S, [&](const Record &r) { out << r; });
    QVERIFY2(d.headerOk && d.error.isEmpty(), qPrintable(d.error));
    QCOMPARE(d.segment, quint64(7));
    QCOMPARE(d.records, in.size());
    QCOMPARE(d.droppedBytes, 0);
    QCOMPARE(out.size(), in.size());
    for (int i = 0; i < in.size(); ++i) {
        QCOMPARE(out[i].name, in[i].name);
        QCOMPARE(out[i].timeUs, in[i].time.microsecondsSinceEpoch());
        QCOMPARE(int(out[i].kind), in[i].kind == Change::Kind::Removed   ? 3
                                   : in[i].kind == Change::Kind::Updated ? 2
                                                                         : 1);
        if (in[i].kind == Change::Kind::Removed) {
            QVERIFY(out[i].value.isEmpty());
            continue;
        }
        Object o;
        QVERIFY(decode(out[i].value, m_types, o).isOk());
        QCOMPARE(o.get<quint32>(QStringLiteral("runNumber")), quint32(100 + i));
    }
}

void tst_IsJournalFormat::cutAtEveryByte()
{
    QList<qsizetype> ends;
    const QByteArray bytes = segmentOf(changes(), &ends);
    for (qsizetype cut = 0; cut <= bytes.size(); ++cut) {
        qsizetype complete = 0;
        while (complete + 1 < ends.size() && ends[complete + 1] <= cut)
            ++complete;
        int seen = 0;
        const Decoded d = decodeSegment(QByteArrayView(bytes).first(cut), S, [&](const Record &) { ++seen; });
        if (cut < ends.first()) {
            QVERIFY2(!d.headerOk, qPrintable(QString::number(cut)));
            QCOMPARE(seen, 0);
            continue;
        }
        QVERIFY(d.headerOk);
        QCOMPARE(d.records, complete);
        QCOMPARE(seen, int(complete));
        QCOMPARE(d.goodBytes, ends[complete]);
        QCOMPARE(d.droppedBytes, cut - ends[complete]);
        QCOMPARE(d.error.isEmpty(), d.droppedBytes == 0);
        if (d.droppedBytes > 0)
            QVERIFY2(d.error.contains(QLatin1String("torn tail")), qPrintable(d.error));
    }
}

void tst_IsJournalFormat::damagedAtEveryByte()
{
    QList<qsizetype> ends;
    const QByteArray good = segmentOf(changes(), &ends);
    for (qsizetype at = 0; at < good.size(); ++at) {
        QByteArray bytes = good;
        bytes[at] = char(bytes[at] ^ 0x5a);
        // The record holding the damaged byte, and every one after it, must not be delivered.
        qsizetype damagedRecord = 0;
        while (damagedRecord + 1 < ends.size() && ends[damagedRecord + 1] <= at)
            ++damagedRecord;
        int seen = 0;
        const Decoded d = decodeSegment(bytes, S, [&](const Record &) { ++seen; });
        if (at < ends.first()) {
            QVERIFY2(!d.headerOk, qPrintable(QString::number(at)));
            continue;
        }
        QCOMPARE(d.records, damagedRecord);
        QCOMPARE(seen, int(damagedRecord));
        QVERIFY(!d.error.isEmpty());
    }
}

void tst_IsJournalFormat::otherServerOrVersionRefused()
{
    const QByteArray bytes = segmentOf(changes());
    int seen = 0;
    Decoded d = decodeSegment(bytes, QStringLiteral("Other"), [&](const Record &) { ++seen; });
    QVERIFY(!d.headerOk);
    QVERIFY2(d.error.contains(QLatin1String("'Srv'")), qPrintable(d.error));
    QByteArray newer = bytes;
    newer[8] = char(FormatVersion + 1);
    d = decodeSegment(newer, S, [&](const Record &) { ++seen; });
    QVERIFY(!d.headerOk);
    QVERIFY2(d.error.contains(QStringLiteral("version %1").arg(FormatVersion + 1)), qPrintable(d.error));
    QCOMPARE(seen, 0);
}

void tst_IsJournalFormat::replayRebuildsTheRepository()
{
    QTemporaryDir dir;
    Repository repo(S, m_types);
    Journal journal(dir.path(), S, Journal::Sync::Batch);
    QVERIFY(journal.open().isOk());
    repo.addListener([&](const Change &c) { journal.append(c); });
    Object o = Object::create(m_types, QStringLiteral("RunInfo"));
    for (int i = 0; i < 50; ++i) {
        o.set<quint32>(QStringLiteral("runNumber"), quint32(i));
        QCOMPARE(repo.upsert(QStringLiteral("obj%1").arg(i % 20), o).code(), dialog::Status::Code::Ok);
    }
    QCOMPARE(repo.remove(QStringLiteral("obj3")).code(), dialog::Status::Code::Ok);
    QCOMPARE(repo.upsert(QStringLiteral("Srv.dotted.name"), o).code(), dialog::Status::Code::Ok);
    QVERIFY(journal.commit().isOk());
    QVERIFY(journal.syncs() >= 1);

    Repository copy(S, m_types);
    const Journal::ReplayResult rr = Journal::replay(copy, dir.path());
    QVERIFY2(rr.problems.isEmpty(), qPrintable(rr.problems.join(QLatin1Char('\n'))));
    QCOMPARE(rr.segments, 1);
    QCOMPARE(rr.records, 52);
    QCOMPARE(copy.size(), repo.size());
    for (const StoredObject &so : repo.objects()) {
        Object got;
        ObjectInfo info;
        QCOMPARE(copy.get(S + QLatin1Char('.') + so.name, &got, {}, &info).code(), dialog::Status::Code::Ok);
        QCOMPARE(got.get<quint32>(QStringLiteral("runNumber")),
                 so.object.get<quint32>(QStringLiteral("runNumber")));
        QCOMPARE(info.time.microsecondsSinceEpoch(),
                 so.time.microsecondsSinceEpoch()); // kept from the record
    }
    // Replaying again over the result changes nothing (a checkpoint holding some records already).
    QCOMPARE(Journal::replay(copy, dir.path()).problems, QStringList());
    QCOMPARE(copy.size(), repo.size());
}

void tst_IsJournalFormat::rotateAndRemoveKeepTheOpenSegment()
{
    QTemporaryDir dir;
    Journal journal(dir.path(), S, Journal::Sync::None);
    QVERIFY(journal.open().isOk());
    QCOMPARE(journal.segment(), quint64(1));
    quint64 closed = 0;
    QVERIFY(journal.rotate(&closed).isOk());
    QCOMPARE(closed, quint64(1));
    QVERIFY(journal.rotate(&closed).isOk());
    QCOMPARE(closed, quint64(2));
    QCOMPARE(Journal::segments(dir.path(), S), (QList<quint64>{1, 2, 3}));
    journal.removeUpTo(1);
    QCOMPARE(Journal::segments(dir.path(), S), (QList<quint64>{2, 3}));
    journal.removeUpTo(100); // never the open one
    QCOMPARE(Journal::segments(dir.path(), S), (QList<quint64>{3}));
    // A second journal (the next start) continues after the newest segment present.
    Journal next(dir.path(), S, Journal::Sync::Always);
    QVERIFY(next.open().isOk());
    QCOMPARE(next.segment(), quint64(4));
    // Names that only look like segments are not taken for them.
    QFile stray(QDir(dir.path()).filePath(S + QStringLiteral(".is.journal.4.tmp")));
    QVERIFY(stray.open(QIODevice::WriteOnly));
    stray.close();
    QCOMPARE(Journal::segments(dir.path(), S), (QList<quint64>{3, 4}));
}

QTEST_GUILESS_MAIN(tst_IsJournalFormat)
#include "tst_isjournalformat.moc"
