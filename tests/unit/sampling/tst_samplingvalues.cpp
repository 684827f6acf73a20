// dialog::sampling's values without a network: the criteria's text form (what is refused, and why),
// what they select, and the sample's wire form.
#include "dialog/sampling.h"

#include <QtTest>

using namespace dialog;
using namespace dialog::sampling;

class tst_SamplingValues : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void criteriaParsed_data();
    void criteriaParsed();
    void badCriteriaRefusedWithTheItem_data();
    void badCriteriaRefusedWithTheItem();
    void selectsTriggerAndSpill();
    void sampleRoundTrip();
    void malformedSamplesRefused();
};

void tst_SamplingValues::criteriaParsed_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("canonical");
    QTest::newRow("empty") << QString() << QString();
    QTest::newRow("names") << "trigger=physics,calibration" << "trigger=physics,calibration";
    QTest::newRow("kind and numbers") << "kind=3,7" << "trigger=random,7";
    QTest::newRow("all, with semicolons") << "spill=4;every=100 ; rate=2.5 count=9"
                                          << "spill=4 every=100 rate=2.5 count=9";
    QTest::newRow("case of keys and names") << "TRIGGER=Physics" << "trigger=physics";
}

void tst_SamplingValues::criteriaParsed()
{
    QFETCH(QString, text);
    QFETCH(QString, canonical);
    Criteria c;
    QVERIFY(Criteria::parse(text, &c).isOk());
    QCOMPARE(c.toString(), canonical);
    Criteria again;
    QVERIFY(Criteria::parse(c.toString(), &again).isOk());
    QCOMPARE(again.toString(), canonical);
}

void tst_SamplingValues::badCriteriaRefusedWithTheItem_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("unknown key") << "every=2 colour=blue" << "unknown criterion 'colour'";
    QTest::newRow("no value") << "every" << "criterion 'every' is not key=value";
    QTest::newRow("every 0") << "every=0" << "invalid every=0";
    QTest::newRow("count not a number") << "count=many" << "invalid count=many";
    QTest::newRow("negative spill") << "spill=-1" << "invalid spill=-1";
    QTest::newRow("rate 0") << "rate=0" << "invalid rate=0";
    QTest::newRow("unknown trigger") << "trigger=physics,cosmic" << "unknown trigger type 'cosmic'";
    QTest::newRow("no trigger") << "trigger=," << "names no trigger type";
}

void tst_SamplingValues::badCriteriaRefusedWithTheItem()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    Criteria c;
    c.everyNth = 77;
    const Status s = Criteria::parse(text, &c);
    QCOMPARE(s.code(), Status::Code::BadRequest);
    QVERIFY2(s.message().contains(reason), qPrintable(s.message()));
    QCOMPARE(c.everyNth, 77u); // untouched
}

void tst_SamplingValues::selectsTriggerAndSpill()
{
    Criteria c;
    QVERIFY(Criteria::parse(QStringLiteral("trigger=calibration,random spill=2"), &c).isOk());
    QVERIFY(c.selects(Calibration, 2));
    QVERIFY(c.selects(Random, 2));
    QVERIFY(!c.selects(Physics, 2));
    QVERIFY(!c.selects(Calibration, 3));
    QVERIFY(Criteria().selects(42, 0));
}

void tst_SamplingValues::sampleRoundTrip()
{
    Sample s;
    s.header = {1234567890123ull, Calibration, 12, 7, 1700000000123456ll, 42, 3};
    s.data = QByteArray("event bytes");
    const QByteArray wire = s.encode();
    QCOMPARE(wire.size(), Sample::HeaderBytes + s.data.size());
    Sample back;
    QVERIFY(Sample::decode(wire, &back).isOk());
    QCOMPARE(back.header.eventNumber, s.header.eventNumber);
    QCOMPARE(back.header.triggerType, s.header.triggerType);
    QCOMPARE(back.header.run, 12u);
    QCOMPARE(back.header.spill, s.header.spill);
    QCOMPARE(back.header.timeUs, s.header.timeUs);
    QCOMPARE(back.header.sequence, s.header.sequence);
    QCOMPARE(back.header.dropped, s.header.dropped);
    QCOMPARE(back.data, s.data);
}

void tst_SamplingValues::malformedSamplesRefused()
{
    Sample out;
    QCOMPARE(Sample::decode(QByteArray(10, 'x'), &out).code(), Status::Code::BadRequest);
    QByteArray wire = Sample{{}, QByteArray("x")}.encode();
    wire[0] = 'Z';
    QVERIFY(Sample::decode(wire, &out).message().contains(QLatin1String("magic")));
    wire = Sample{{}, QByteArray("x")}.encode();
    wire[4] = char(200); // a header longer than the sample
    QVERIFY(Sample::decode(wire, &out).message().contains(QLatin1String("header")));
}

QTEST_GUILESS_MAIN(tst_SamplingValues)
#include "tst_samplingvalues.moc"
