// dialog::Histogram (libdialog/include/dialog/histogram.h): read from IS objects and their JSON,
// written back, the sums and moments the checks use, and every kind of bad input refused with its
// reason (never a crash, the output untouched).
#include "dialog/histogram.h"
#include "dialog/is/codec.h"
#include "dialog/is/object.h"
#include "dialog/is/typeregistry.h"
#include "statuscheck.h"

#include <QJsonArray>
#include <QtTest>
#include <cmath>
#include <limits>

using namespace dialog;

class tst_Histogram : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void oneDFromObjectAndItsJson();
    void twoDFromObjectAndItsJson();
    void referenceFileRoundTrip();
    void derivedTypeCarriesUnderAndOverflow();
    void sumsAndMoments();
    void axisBins();
    void binningDifferenceNamesBoth();
    void badJsonRefused_data();
    void badJsonRefused();
    void badObjectsRefused();
    void validateCatchesHandMadeValues();

private:
    void sameFromViewAndBack(const is::Object &o, const Histogram &h);
    is::TypeRegistry m_types;
};

// The JSON view of @p o (the web IS's and dialog-render's input) reads as @p h, and @p h makes an
// IS object equal to @p o.
void tst_Histogram::sameFromViewAndBack(const is::Object &o, const Histogram &h)
{
    Histogram fromView;
    QVERIFY_OK(Histogram::fromJson(is::toJson(o), &fromView));
    QCOMPARE(fromView.toJson(), h.toJson());
    is::Object back;
    QVERIFY_OK(h.toObject(m_types, &back));
    QCOMPARE(back, o);
}

namespace {

is::Object object1D(const is::TypeRegistry &types, const QList<double> &contents, double low = 0,
                    double high = 10)
{
    is::Object o = is::Object::create(types, QStringLiteral("Histogram1D"));
    o.set(QStringLiteral("title"), QStringLiteral("Event size"));
    o.set(QStringLiteral("xLow"), low);
    o.set(QStringLiteral("xHigh"), high);
    o.set(QStringLiteral("bins"), quint32(contents.size()));
    o.set(QStringLiteral("contents"), contents);
    o.set(QStringLiteral("entries"), quint64(1234));
    return o;
}

QJsonObject json1D(int bins)
{
    QJsonArray c;
    for (int i = 0; i < bins; ++i)
        c.append(i);
    return {{QStringLiteral("bins"), bins},
            {QStringLiteral("xLow"), 0},
            {QStringLiteral("xHigh"), 1},
            {QStringLiteral("entries"), 10},
            {QStringLiteral("contents"), c}};
}

} // namespace

void tst_Histogram::oneDFromObjectAndItsJson()
{
    const is::Object o = object1D(m_types, {1, 2, 3, 4, 0});
    Histogram h;
    QVERIFY_OK(Histogram::fromObject(o, &h));
    QCOMPARE(h.kind, Histogram::Kind::OneD);
    QCOMPARE(h.typeName(), QStringLiteral("Histogram1D"));
    QCOMPARE(h.title, QStringLiteral("Event size"));
    QCOMPARE(h.xBins, 5);
    QCOMPARE(h.yBins, 1);
    QCOMPARE(h.xLow, 0.0);
    QCOMPARE(h.xHigh, 10.0);
    QCOMPARE(h.entries, quint64(1234));
    QCOMPARE(h.contents, QList<double>({1, 2, 3, 4, 0}));
    QVERIFY_OK(h.validate());
    sameFromViewAndBack(o, h);
}

void tst_Histogram::twoDFromObjectAndItsJson()
{
    is::Object o = is::Object::create(m_types, QStringLiteral("Histogram2D"));
    QList<double> c;
    for (int i = 0; i < 12; ++i)
        c.append(i);
    QVERIFY_OK(o.set(QStringLiteral("xLow"), -1.0));
    QVERIFY_OK(o.set(QStringLiteral("xHigh"), 3.0));
    QVERIFY_OK(o.set(QStringLiteral("xBins"), quint32(4)));
    QVERIFY_OK(o.set(QStringLiteral("yLow"), 0.0));
    QVERIFY_OK(o.set(QStringLiteral("yHigh"), 30.0));
    QVERIFY_OK(o.set(QStringLiteral("yBins"), quint32(3)));
    QVERIFY_OK(o.set(QStringLiteral("contents"), c));
    QVERIFY_OK(o.set(QStringLiteral("entries"), quint64(66)));
    Histogram h;
    QVERIFY_OK(Histogram::fromObject(o, &h));
    QCOMPARE(h.kind, Histogram::Kind::TwoD);
    QCOMPARE(h.yAxis(), (HistogramAxis{3, 0, 30}));
    QCOMPARE(h.at(1, 2), 9.0); // row-major: x varies fastest
    QCOMPARE(h.at(4, 0), 0.0); // outside: 0, not a crash
    QCOMPARE(h.at(0, -1), 0.0);
    QCOMPARE(h.mean(), 0.0); // not defined in 2D
    sameFromViewAndBack(o, h);
}

void tst_Histogram::referenceFileRoundTrip()
{
    Histogram h;
    QVERIFY_OK(Histogram::fromObject(object1D(m_types, {0.5, 1e300, 0}), &h));
    h.entries = (quint64(1) << 60) + 1; // beyond a double's exact integers
    const QJsonObject j = h.toJson();
    QCOMPARE(j.value(QStringLiteral("type")).toString(), QStringLiteral("Histogram1D"));
    QCOMPARE(j.value(QStringLiteral("yBins")).toInt(), 1);
    Histogram back;
    QVERIFY_OK(Histogram::fromJson(j, &back));
    QCOMPARE(back.entries, h.entries);
    QCOMPARE(back.contents, h.contents);
    QVERIFY(back.sameBinning(h));
    QCOMPARE(back.toJson(), j);
    QVERIFY(Histogram().toJson().isEmpty());
    // A sum of weights as entries is rounded, not refused.
    QJsonObject weighted = j;
    weighted.insert(QStringLiteral("entries"), 41.7);
    QVERIFY_OK(Histogram::fromJson(weighted, &back));
    QCOMPARE(back.entries, quint64(42));
}

void tst_Histogram::derivedTypeCarriesUnderAndOverflow()
{
    is::TypeRegistry types;
    QVERIFY_OK(types.loadXml("<is-types><type name=\"SizeHistogram\" base=\"Histogram1D\">"
                             "<attribute name=\"underflow\" type=\"double\"/>"
                             "<attribute name=\"overflow\" type=\"double\"/></type></is-types>",
                             QStringLiteral("t.xml")));
    is::Object o = is::Object::create(types, QStringLiteral("SizeHistogram"));
    QVERIFY_OK(o.set(QStringLiteral("xLow"), 0.0));
    QVERIFY_OK(o.set(QStringLiteral("xHigh"), 2.0));
    QVERIFY_OK(o.set(QStringLiteral("bins"), quint32(2)));
    QVERIFY_OK(o.set(QStringLiteral("contents"), QList<double>{1, 2}));
    QVERIFY_OK(o.set(QStringLiteral("underflow"), 3.0));
    QVERIFY_OK(o.set(QStringLiteral("overflow"), 4.0));
    Histogram h;
    QVERIFY_OK(Histogram::fromObject(o, &h));
    QCOMPARE(h.kind, Histogram::Kind::OneD);
    QCOMPARE(h.underflow, 3.0);
    QCOMPARE(h.overflow, 4.0);
    QCOMPARE(h.sum(), 3.0); // the bins only
    Histogram back;
    QVERIFY_OK(Histogram::fromJson(h.toJson(), &back));
    QCOMPARE(back.underflow, 3.0);
    QCOMPARE(back.overflow, 4.0);

    // An underflow of another type is refused, not read as 0.
    QVERIFY_OK(types.loadXml("<is-types><type name=\"OddHistogram\" base=\"Histogram1D\">"
                             "<attribute name=\"underflow\" type=\"string\"/></type></is-types>",
                             QStringLiteral("u.xml")));
    is::Object odd = is::Object::create(types, QStringLiteral("OddHistogram"));
    QVERIFY_OK(odd.set(QStringLiteral("xHigh"), 1.0));
    QVERIFY_OK(odd.set(QStringLiteral("bins"), quint32(1)));
    QVERIFY_OK(odd.set(QStringLiteral("contents"), QList<double>{1}));
    QCOMPARE(Histogram::fromObject(odd, &h).code(), Status::Code::InvalidObject);
}

void tst_Histogram::sumsAndMoments()
{
    Histogram h;
    // Bin centres 1, 3, 5, 7 with contents 0, 1, 2, 1: mean 5, variance (4 + 0 + 4) / 4 = 2.
    QVERIFY_OK(Histogram::fromObject(object1D(m_types, {0, 1, 2, 1}, 0, 8), &h));
    QCOMPARE(h.sum(), 4.0);
    QCOMPARE(h.maximum(), 2.0);
    QCOMPARE(h.minimumPositive(), 1.0);
    QCOMPARE(h.mean(), 5.0);
    QCOMPARE(h.rms(), std::sqrt(2.0));
    Histogram empty;
    QVERIFY_OK(Histogram::fromObject(object1D(m_types, {0, 0}), &empty));
    QCOMPARE(empty.sum(), 0.0);
    QCOMPARE(empty.maximum(), 0.0);
    QCOMPARE(empty.minimumPositive(), 0.0);
    QCOMPARE(empty.mean(), 0.0);
    QCOMPARE(empty.rms(), 0.0);
}

void tst_Histogram::axisBins()
{
    const HistogramAxis a{4, 0, 8};
    QCOMPARE(a.binWidth(), 2.0);
    QCOMPARE(a.binCentre(0), 1.0);
    QCOMPARE(a.binOf(-0.1), -1);
    QCOMPARE(a.binOf(0), 0);
    QCOMPARE(a.binOf(7.999), 3);
    QCOMPARE(a.binOf(8), 4); // overflow
    QCOMPARE(a.binOf(std::numeric_limits<double>::quiet_NaN()), -1);
    QCOMPARE(HistogramAxis().binWidth(), 0.0);
}

void tst_Histogram::binningDifferenceNamesBoth()
{
    Histogram a, b;
    QVERIFY_OK(Histogram::fromObject(object1D(m_types, QList<double>(100, 1.0), 0, 1000), &a));
    QVERIFY_OK(Histogram::fromObject(object1D(m_types, QList<double>(100, 2.0), 0, 1000), &b));
    QVERIFY(a.sameBinning(b));
    QVERIFY(a.binningDifference(b).isEmpty());
    QVERIFY_OK(Histogram::fromObject(object1D(m_types, QList<double>(50, 1.0), 0, 1000), &b));
    QVERIFY(!a.sameBinning(b));
    QCOMPARE(a.binningDifference(b),
             QStringLiteral("the histogram has 100 bins in [0, 1000), the reference 50 bins in [0, 1000)"));
}

void tst_Histogram::badJsonRefused_data()
{
    QTest::addColumn<QJsonObject>("json");
    QTest::addColumn<QString>("typeHint");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("reason");
    const int invalid = int(Status::Code::InvalidObject), mismatch = int(Status::Code::TypeMismatch);
    QJsonObject j = json1D(4);
    QTest::newRow("another type") << j << "RunInfo" << mismatch << "not a histogram (type RunInfo)";
    j.insert(QStringLiteral("contents"), QJsonArray{1, 2});
    QTest::newRow("contents do not match bins") << j << "" << invalid << "2 contents for 4 bins in [0, 1)";
    j = json1D(4);
    j.insert(QStringLiteral("bins"), 0);
    QTest::newRow("no bins") << j << "" << invalid << "bins out of range";
    j.insert(QStringLiteral("bins"), 2.5);
    QTest::newRow("fractional bins") << j << "" << invalid << "bins out of range";
    j = json1D(1);
    j.insert(QStringLiteral("type"), QStringLiteral("Histogram2D"));
    j.insert(QStringLiteral("xBins"), 100000);
    j.insert(QStringLiteral("yBins"), 100000);
    j.insert(QStringLiteral("yLow"), 0);
    j.insert(QStringLiteral("yHigh"), 1);
    QTest::newRow("too many bins") << j << "" << invalid << "bins out of range";
    j = json1D(4);
    j.insert(QStringLiteral("xHigh"), -1);
    QTest::newRow("edges reversed") << j << "" << invalid << "edges not finite or not increasing";
    j.insert(QStringLiteral("xHigh"), QStringLiteral("inf"));
    QTest::newRow("edge infinite") << j << "" << invalid << "edges not finite";
    j = json1D(4);
    j.remove(QStringLiteral("xLow"));
    QTest::newRow("no lower edge") << j << "" << invalid << "missing or non-numeric";
    j = json1D(4);
    j.insert(QStringLiteral("entries"), -3);
    QTest::newRow("negative entries") << j << "" << invalid << "missing or non-numeric";
    j.insert(QStringLiteral("entries"), QStringLiteral("many"));
    QTest::newRow("entries not a number") << j << "" << invalid << "missing or non-numeric";
    j = json1D(2);
    j.insert(QStringLiteral("contents"), QJsonArray{1, QStringLiteral("many")});
    QTest::newRow("a content not a number") << j << "" << invalid << "bin 1's content is not a number";
    j.insert(QStringLiteral("contents"), QJsonArray{1, QStringLiteral("nan")});
    QTest::newRow("a content not finite") << j << "" << invalid << "bin 1's content";
    j = json1D(2);
    j.insert(QStringLiteral("yBins"), 2);
    QTest::newRow("1D with 2 y bins") << j << "" << invalid << "contents for";
    QTest::newRow("empty") << QJsonObject() << "" << invalid << "missing or non-numeric";
}

void tst_Histogram::badJsonRefused()
{
    QFETCH(QJsonObject, json);
    QFETCH(QString, typeHint);
    QFETCH(int, code);
    QFETCH(QString, reason);
    Histogram out;
    out.title = QStringLiteral("untouched");
    const Status s = Histogram::fromJson(json, &out, typeHint);
    QCOMPARE(int(s.code()), code);
    QVERIFY2(s.message().contains(reason), qPrintable(s.message()));
    QCOMPARE(out.title, QStringLiteral("untouched"));
    QVERIFY(!out.isValid());
}

void tst_Histogram::badObjectsRefused()
{
    Histogram out;
    QCOMPARE(Histogram::fromObject(is::Object(), &out).code(), Status::Code::TypeMismatch);
    QVERIFY_OK(m_types.loadXml("<is-types><type name=\"RunInfo\"><attribute name=\"run\" type=\"u32\"/>"
                               "</type></is-types>",
                               QStringLiteral("t.xml")));
    const Status other = Histogram::fromObject(is::Object::create(m_types, QStringLiteral("RunInfo")), &out);
    QCOMPARE(other.code(), Status::Code::TypeMismatch);
    QCOMPARE(other.message(), QStringLiteral("is a RunInfo, not a histogram"));

    is::Object o = object1D(m_types, {1, 2, 3});
    QVERIFY_OK(o.set(QStringLiteral("bins"), quint32(4)));
    const Status mismatch = Histogram::fromObject(o, &out);
    QCOMPARE(mismatch.code(), Status::Code::InvalidObject);
    QCOMPARE(mismatch.message(), QStringLiteral("Histogram1D: 3 contents for 4 bins in [0, 10)"));
    QVERIFY_OK(o.set(QStringLiteral("bins"), quint32(3)));
    QVERIFY_OK(o.set(QStringLiteral("xHigh"), 0.0));
    QVERIFY(Histogram::fromObject(o, &out).message().contains(QLatin1String("not increasing")));
    QVERIFY_OK(o.set(QStringLiteral("xHigh"), 1.0));
    QVERIFY_OK(
        o.set(QStringLiteral("contents"), QList<double>{1, std::numeric_limits<double>::infinity(), 3}));
    QVERIFY(
        Histogram::fromObject(o, &out).message().contains(QLatin1String("bin 1's content is not finite")));
    QVERIFY_OK(o.set(QStringLiteral("bins"), quint32(0xffffffff)));
    QVERIFY(Histogram::fromObject(o, &out).message().contains(QLatin1String("bins out of range")));
    QVERIFY(!out.isValid()); // untouched by every refusal

    is::Object back;
    QCOMPARE(Histogram().toObject(m_types, &back).code(), Status::Code::TypeMismatch);
    QVERIFY(!back.isValid());
}

void tst_Histogram::validateCatchesHandMadeValues()
{
    Histogram h;
    QCOMPARE(h.validate().code(), Status::Code::TypeMismatch);
    h.kind = Histogram::Kind::OneD;
    h.xBins = 2;
    h.xHigh = 1;
    h.contents = {1, 2};
    QVERIFY_OK(h.validate());
    h.yBins = 2;
    QCOMPARE(h.validate().code(), Status::Code::InvalidObject);
    h.yBins = 1;
    h.overflow = std::numeric_limits<double>::quiet_NaN();
    QVERIFY(h.validate().message().contains(QLatin1String("overflow")));
    h.overflow = 0;
    h.kind = Histogram::Kind::TwoD; // 2D without y edges
    QVERIFY(h.validate().message().contains(QLatin1String("edges")));
}

QTEST_GUILESS_MAIN(tst_Histogram)
#include "tst_histogram.moc"
