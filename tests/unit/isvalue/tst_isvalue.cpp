// Unit tests of IS values: typed and generic access, reading a derived object as its base type,
// the binary codec (round trips, hostile input, a little fuzzing) and the JSON view
// (libdialog/include/dialog/is/object.h, codec.h).
#include "statuscheck.h"
#include "dialog/is/codec.h"
#include "dialog/is/typeregistry.h"

#include <QJsonArray>
#include <QtEndian>
#include <QtTest>
#include <limits>

Q_DECLARE_METATYPE(dialog::is::Value)

using namespace dialog::is;
using dialog::Status;

namespace {

const QString ResourceDir = QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types");

// Every primitive as scalar and vector, nested objects and vectors of them.
const char AllTypesXml[] = R"(<is-types>
  <type name="AllTypes" description="one attribute of every kind">
    <attribute name="b" type="bool"/>   <attribute name="i8" type="s8"/>   <attribute name="u8" type="u8"/>
    <attribute name="i16" type="s16"/>  <attribute name="u16" type="u16"/> <attribute name="i32" type="s32"/>
    <attribute name="u32" type="u32"/>  <attribute name="i64" type="s64"/> <attribute name="u64" type="u64"/>
    <attribute name="f" type="float"/>  <attribute name="d" type="double"/>
    <attribute name="s" type="string"/> <attribute name="t" type="time"/>
    <attribute name="vb" type="bool" vector="true"/>   <attribute name="vi8" type="s8" vector="true"/>
    <attribute name="vu8" type="u8" vector="true"/>    <attribute name="vi16" type="s16" vector="true"/>
    <attribute name="vu16" type="u16" vector="true"/>  <attribute name="vi32" type="s32" vector="true"/>
    <attribute name="vu32" type="u32" vector="true"/>  <attribute name="vi64" type="s64" vector="true"/>
    <attribute name="vu64" type="u64" vector="true"/>  <attribute name="vf" type="float" vector="true"/>
    <attribute name="vd" type="double" vector="true"/> <attribute name="vs" type="string" vector="true"/>
    <attribute name="vt" type="time" vector="true"/>
    <attribute name="h1" type="Histogram1D"/>
    <attribute name="h2s" type="Histogram2D" vector="true"/>
  </type>
  <type name="Tree"><attribute name="children" type="Tree" vector="true"/></type>
  <type name="OneString"><attribute name="s" type="string"/></type>
  <type name="OneVector"><attribute name="v" type="u64" vector="true"/></type>
  <type name="OneBool"><attribute name="b" type="bool"/></type>
</is-types>)";

template <typename T> QList<T> limits()
{
    return {std::numeric_limits<T>::min(), T(0), T(1), std::numeric_limits<T>::max()};
}

} // namespace

class TestIsValue : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void defaults();
    void getSetByNameAndIndex();
    void wrongAccess_data();
    void wrongAccess();
    void invalidObjectNeverCrashes();
    void variantAccess_data();
    void variantAccess();
    void derivedAsBase();
    void roundTripAllTypes();
    void roundTripHistograms();
    void decodedObjectCarriesItsBytes();
    void decodeErrors_data();
    void decodeErrors();
    void nestingDepthIsBounded();
    void truncationAtEveryLengthFails();
    void corruptedBytesNeverCrash();
    void json();
    void timeToString_data();
    void timeToString();
    void timeAtTheEndsOfTheRange();

private:
    Object allTypes() const;
    Object tree(int depth) const;
    TypeRegistry m_registry;
};

void TestIsValue::initTestCase()
{
    QString error;
    QVERIFY_OK(m_registry.loadDirectory(ResourceDir));
    QVERIFY_OK(m_registry.loadXml(AllTypesXml, QStringLiteral("alltypes.xml")));
}

Object TestIsValue::allTypes() const
{
    Object o = Object::create(m_registry, QStringLiteral("AllTypes"));
    bool ok = o.isValid();
    ok &= o.set("b", true).isOk();
    ok &= o.set("i8", qint8(-128)).isOk();
    ok &= o.set("u8", quint8(255)).isOk();
    ok &= o.set("i16", qint16(-32768)).isOk();
    ok &= o.set("u16", quint16(65535)).isOk();
    ok &= o.set("i32", std::numeric_limits<qint32>::min()).isOk();
    ok &= o.set("u32", std::numeric_limits<quint32>::max()).isOk();
    ok &= o.set("i64", std::numeric_limits<qint64>::min()).isOk();
    ok &= o.set("u64", std::numeric_limits<quint64>::max()).isOk();
    ok &= o.set("f", -1.5f).isOk();
    ok &= o.set("d", std::numeric_limits<double>::infinity()).isOk();
    ok &= o.set("s", QStringLiteral("Grüße, 世界")).isOk();
    ok &= o.set("t", Time(-1)).isOk();
    ok &= o.set("vb", QList<bool>{true, false, true}).isOk();
    ok &= o.set("vi8", limits<qint8>()).isOk();
    ok &= o.set("vu8", limits<quint8>()).isOk();
    ok &= o.set("vi16", limits<qint16>()).isOk();
    ok &= o.set("vu16", limits<quint16>()).isOk();
    ok &= o.set("vi32", limits<qint32>()).isOk();
    ok &= o.set("vu32", limits<quint32>()).isOk();
    ok &= o.set("vi64", limits<qint64>()).isOk();
    ok &= o.set("vu64", limits<quint64>()).isOk();
    ok &= o.set("vf", QList<float>{0.25f, -3e38f}).isOk();
    ok &= o.set("vd", QList<double>{1e-300, -0.0, 42.0}).isOk();
    ok &= o.set("vs", QStringList{QString(), QStringLiteral("x"), QString(300, QLatin1Char('y'))}).isOk();
    ok &= o.set("vt", QList<Time>{Time(0), Time(1700000000123456)}).isOk();
    Object h1 = Object::create(m_registry, QStringLiteral("Histogram1D"));
    ok &= h1.set("title", QStringLiteral("event size")).isOk();
    ok &= h1.set("contents", QList<double>{1, 2, 3}).isOk();
    ok &= o.set("h1", h1).isOk();
    Object h2 = Object::create(m_registry, QStringLiteral("Histogram2D"));
    ok &= h2.set("yBins", quint32(2)).isOk();
    ok &= o.set("h2s", QList<Object>{h2, Object::create(m_registry, QStringLiteral("Histogram2D"))}).isOk();
    return ok ? o : Object();
}

Object TestIsValue::tree(int depth) const
{
    Object t = Object::create(m_registry, QStringLiteral("Tree"));
    if (depth > 1)
        t.set("children", QList<Object>{tree(depth - 1)});
    return t;
}

void TestIsValue::defaults()
{
    Object run;
    QVERIFY_OK(Object::create(m_registry, QStringLiteral("RunInfo"), &run));
    QVERIFY(run.isValid());
    QCOMPARE(run.typeName(), QStringLiteral("RunInfo"));
    QCOMPARE(run.attributeCount(), 5);
    QCOMPARE(run.get<quint32>("runNumber"), 0u);
    QCOMPARE(run.get<QString>("state"), QString());
    QCOMPARE(run.get<Time>("startTime"), Time());
    const Object readout = Object::create(m_registry, QStringLiteral("ReadoutStats"));
    QCOMPARE(readout.get<QList<quint32>>("queueDepths"), QList<quint32>());
    const Object histo = readout.get<Object>("eventSize");
    QCOMPARE(histo.typeName(), QStringLiteral("Histogram1D"));
    QCOMPARE(histo.get<quint64>("entries"), 0ull);

    Object nope = run;
    QCOMPARE(Object::create(m_registry, QStringLiteral("Nope"), &nope),
             Status(Status::Code::UnknownType, QStringLiteral("unknown type 'Nope'")));
    QCOMPARE(nope, run); // untouched
    QVERIFY(!Object::create(m_registry, QStringLiteral("Nope")).isValid());
}

void TestIsValue::getSetByNameAndIndex()
{
    Object run = Object::create(m_registry, QStringLiteral("RunInfo"));
    QString error;
    QVERIFY_OK(run.set("runNumber", quint32(4711)));
    QVERIFY_OK(run.set("state", "Running"));
    QCOMPARE(run.get<quint32>("runNumber"), 4711u);
    QCOMPARE(run.get<quint32>(0), 4711u);
    QVERIFY_OK(run.set(3, quint32(60)));
    QCOMPARE(run.get<quint32>("activeTime"), 60u);
    bool ok = false;
    QCOMPARE(run.get<QString>(4, &ok), QStringLiteral("Running"));
    QVERIFY(ok);
    QCOMPARE(run.indexOf(QStringLiteral("state")), 4);
    QCOMPARE(run.indexOf(QStringLiteral("nope")), -1);

    // Copies are independent (implicit sharing detaches on write).
    Object copy = run;
    QVERIFY_OK(copy.set("runNumber", quint32(1)));
    QCOMPARE(run.get<quint32>("runNumber"), 4711u);
    QVERIFY(copy != run);
}

void TestIsValue::wrongAccess_data()
{
    QTest::addColumn<QString>("attribute");
    QTest::addColumn<Value>("value");
    QTest::addColumn<QString>("expected");
    QTest::newRow("intIntoU32") << "runNumber" << Value(5)
                                << "attribute 'runNumber' of type 'RunInfo' is u32, not s32";
    QTest::newRow("stringIntoU32") << "runNumber" << Value("5")
                                   << "attribute 'runNumber' of type 'RunInfo' is u32, not string";
    QTest::newRow("scalarIntoVector")
        << "queueDepths" << Value(quint32(1))
        << "attribute 'queueDepths' of type 'ReadoutStats' is vector of u32, not u32";
    QTest::newRow("wrongVector")
        << "queueDepths" << Value(QList<qint32>{1})
        << "attribute 'queueDepths' of type 'ReadoutStats' is vector of u32, not vector of s32";
    QTest::newRow("empty") << "events" << Value()
                           << "attribute 'events' of type 'ReadoutStats' is u64, not empty";
    QTest::newRow("wrongNestedType")
        << "eventSize" << Value(Object::create(m_registry, QStringLiteral("Histogram2D")))
        << "attribute 'eventSize' of type 'ReadoutStats' holds Histogram1D objects, not Histogram2D";
    QTest::newRow("invalidNested")
        << "eventSize" << Value(Object())
        << "attribute 'eventSize' of type 'ReadoutStats' holds Histogram1D objects, not an invalid object";
    QTest::newRow("unknownName") << "nope" << Value(quint32(1))
                                 << "no attribute 'nope' in type 'ReadoutStats'";
}

void TestIsValue::wrongAccess()
{
    QFETCH(QString, attribute);
    QFETCH(Value, value);
    QFETCH(QString, expected);
    Object o = Object::create(m_registry, QStringLiteral("ReadoutStats"));
    if (attribute == QLatin1String("runNumber"))
        o = Object::create(m_registry, QStringLiteral("RunInfo"));
    const Object before = o;
    QCOMPARE(o.setValue(attribute, value), Status(Status::Code::InvalidObject, expected));
    QCOMPARE(o, before);
}

void TestIsValue::invalidObjectNeverCrashes()
{
    Object run = Object::create(m_registry, QStringLiteral("RunInfo"));
    bool ok = true;
    QCOMPARE(run.get<qint32>("runNumber", &ok), 0); // wrong type
    QVERIFY(!ok);
    ok = true;
    QCOMPARE(run.get<quint32>("nope", &ok), 0u);
    QVERIFY(!ok);
    ok = true;
    run.get<quint32>(99, &ok);
    QVERIFY(!ok);
    QCOMPARE(run.set(-1, quint32(1)),
             Status(Status::Code::InvalidObject,
                    QStringLiteral("attribute index -1 out of range for type 'RunInfo' (5 attributes)")));
    QVERIFY(!run.set(5, quint32(1)).isOk());
    QCOMPARE(run.set("nope", quint32(1)),
             Status(Status::Code::InvalidObject, QStringLiteral("no attribute 'nope' in type 'RunInfo'")));
    QVERIFY(!run.variant(7).isValid());

    Object invalid;
    QVERIFY(!invalid.isValid());
    QCOMPARE(invalid.attributeCount(), 0);
    QVERIFY(!invalid.set(0, quint32(1)).isOk());
    QVERIFY(!invalid.setVariant(0, 1).isOk());
    QCOMPARE(invalid.get<quint32>(0, &ok), 0u);
    QVERIFY(!ok);
    Object none;
    QCOMPARE(invalid.asBase(m_registry, QStringLiteral("RunInfo"), &none).code(), Status::Code::TypeMismatch);
    QVERIFY(!none.isValid());
}

void TestIsValue::variantAccess_data()
{
    QTest::addColumn<QString>("attribute");
    QTest::addColumn<QVariant>("input");
    QTest::addColumn<bool>("accepted");
    QTest::addColumn<QVariant>("stored");
    // RunCtrlState: state, substate, lastTransition (string), lastTransitionTime (time),
    // transitionDuration (u32), busy (bool); ReadoutStats for 64-bit and vectors.
    QTest::newRow("intToU32") << "transitionDuration" << QVariant(5) << true
                              << QVariant::fromValue(quint32(5));
    QTest::newRow("negativeToU32") << "transitionDuration" << QVariant(-1) << false << QVariant();
    QTest::newRow("tooBigForU32") << "transitionDuration" << QVariant(qint64(1) << 32) << false << QVariant();
    QTest::newRow("integralDouble") << "transitionDuration" << QVariant(7.0) << true
                                    << QVariant::fromValue(quint32(7));
    QTest::newRow("fractionalDouble") << "transitionDuration" << QVariant(7.5) << false << QVariant();
    QTest::newRow("decimalString") << "transitionDuration" << QVariant(QStringLiteral("12")) << true
                                   << QVariant::fromValue(quint32(12));
    QTest::newRow("garbageString") << "transitionDuration" << QVariant(QStringLiteral("12x")) << false
                                   << QVariant();
    QTest::newRow("boolToU32") << "transitionDuration" << QVariant(true) << false << QVariant();
    QTest::newRow("bool") << "busy" << QVariant(true) << true << QVariant(true);
    QTest::newRow("intToBool") << "busy" << QVariant(1) << false << QVariant();
    QTest::newRow("string") << "state" << QVariant(QStringLiteral("Running")) << true
                            << QVariant(QStringLiteral("Running"));
    QTest::newRow("numberToString") << "state" << QVariant(3) << false << QVariant();
    QTest::newRow("dateTimeToTime") << "lastTransitionTime"
                                    << QVariant(QDateTime::fromMSecsSinceEpoch(1500, Qt::UTC)) << true
                                    << QVariant::fromValue(Time(1500000));
    QTest::newRow("timeToTime") << "lastTransitionTime" << QVariant::fromValue(Time(3)) << true
                                << QVariant::fromValue(Time(3));
    QTest::newRow("invalid") << "state" << QVariant() << false << QVariant();
    QTest::newRow("u64Max") << "memoryBytes" << QVariant(std::numeric_limits<quint64>::max()) << true
                            << QVariant::fromValue(std::numeric_limits<quint64>::max());
    QTest::newRow("s64Min") << "pid" << QVariant(std::numeric_limits<qint64>::min()) << true
                            << QVariant::fromValue(std::numeric_limits<qint64>::min());
    QTest::newRow("u64MaxToS64") << "pid" << QVariant(std::numeric_limits<quint64>::max()) << false
                                 << QVariant();
    QTest::newRow("intToDouble") << "rate" << QVariant(3) << true << QVariant(3.0);
    QTest::newRow("hugeToFloat") << "cpuLoad" << QVariant(1e300) << false << QVariant();
    QTest::newRow("list") << "queueDepths" << QVariant(QVariantList{1, 2u, 3.0}) << true
                          << QVariant(QVariantList{QVariant::fromValue(quint32(1)),
                                                   QVariant::fromValue(quint32(2)),
                                                   QVariant::fromValue(quint32(3))});
    QTest::newRow("listWithBadElement")
        << "queueDepths" << QVariant(QVariantList{1, -2}) << false << QVariant();
    QTest::newRow("stringList") << "errorMessages" << QVariant(QStringList{"a", "b"}) << true
                                << QVariant(QVariantList{QStringLiteral("a"), QStringLiteral("b")});
    QTest::newRow("scalarToList") << "queueDepths" << QVariant(1) << false << QVariant();
    QTest::newRow("unknown") << "nope" << QVariant(1) << false << QVariant();
}

void TestIsValue::variantAccess()
{
    QFETCH(QString, attribute);
    QFETCH(QVariant, input);
    QFETCH(bool, accepted);
    QFETCH(QVariant, stored);
    const bool run = Object::create(m_registry, QStringLiteral("RunCtrlState")).indexOf(attribute) >= 0;
    Object o =
        Object::create(m_registry, run ? QStringLiteral("RunCtrlState") : QStringLiteral("ReadoutStats"));
    const Object before = o;
    const Status set = o.setVariant(attribute, input);
    QCOMPARE(set.isOk(), accepted);
    if (accepted) {
        QCOMPARE(o.variant(attribute), stored);
    } else {
        QCOMPARE(set.code(), Status::Code::InvalidObject);
        QVERIFY(!set.message().isEmpty());
        QCOMPARE(o, before);
    }
}

void TestIsValue::derivedAsBase()
{
    Object readout = Object::create(m_registry, QStringLiteral("ReadoutStats"));
    QVERIFY_OK(readout.set("host", "pc-tdq-01"));
    QVERIFY_OK(readout.set("pid", qint64(1234)));
    QVERIFY_OK(readout.set("events", quint64(99)));
    Object base;
    QVERIFY_OK(readout.asBase(m_registry, QStringLiteral("ProcessStats"), &base));
    QCOMPARE(base.typeName(), QStringLiteral("ProcessStats"));
    QCOMPARE(base.attributes(), m_registry.type(QStringLiteral("ProcessStats")).allAttributes());
    QCOMPARE(base.get<QString>("host"), QStringLiteral("pc-tdq-01"));
    QCOMPARE(base.get<qint64>("pid"), 1234);
    QCOMPARE(base.indexOf(QStringLiteral("events")), -1);
    // The base view encodes and decodes as a ProcessStats.
    Object decoded;
    QVERIFY2(decode(encode(base), m_registry, decoded).isOk(), "decode failed");
    QCOMPARE(decoded, base);

    Object same;
    QVERIFY_OK(readout.asBase(m_registry, QStringLiteral("ReadoutStats"), &same));
    QCOMPARE(same, readout);
    Object other;
    QCOMPARE(readout.asBase(m_registry, QStringLiteral("RunInfo"), &other),
             Status(Status::Code::TypeMismatch,
                    QStringLiteral("type 'ReadoutStats' is not 'RunInfo' nor derived from it")));
    QCOMPARE(base.asBase(m_registry, QStringLiteral("ReadoutStats"), &other).code(), Status::Code::TypeMismatch);
    QCOMPARE(readout.asBase(m_registry, QStringLiteral("Nope"), &other).code(), Status::Code::UnknownType);
    QVERIFY(!other.isValid());
}

void TestIsValue::decodedObjectCarriesItsBytes()
{
    const QByteArray bytes = encode(allTypes());
    Object decoded;
    QVERIFY(decode(bytes, m_registry, decoded).isOk());
    // The same bytes, shared, not a new encoding; copies carry them too.
    QVERIFY(encode(decoded).isSharedWith(bytes));
    const Object copy = decoded;
    QVERIFY(encode(copy).isSharedWith(bytes));
    // A change drops them: the changed object is encoded afresh, the copy keeps the old bytes.
    QVERIFY_OK(decoded.set("u8", quint8(7)));
    const QByteArray changed = encode(decoded);
    QVERIFY(!changed.isSharedWith(bytes));
    QVERIFY(changed != bytes);
    Object again;
    QVERIFY(decode(QByteArrayView(changed), m_registry, again).isOk());
    QCOMPARE(again.get<quint8>("u8"), quint8(7));
    QVERIFY(encode(copy).isSharedWith(bytes));
    // A failed decode leaves nothing behind.
    Object untouched;
    QCOMPARE(decode(bytes.left(bytes.size() - 1), m_registry, untouched).code(),
             dialog::Status::Code::InvalidObject);
    QVERIFY(!untouched.isValid());
}

void TestIsValue::roundTripAllTypes()
{
    const Object o = allTypes();
    QVERIFY(o.isValid());
    const QByteArray bytes = encode(o);
    QCOMPARE(quint8(bytes.at(0)), EncodingVersion);
    Object decoded;
    QString error;
    // From a view: the object keeps no bytes, so encode() below really encodes.
    QVERIFY2(decode(QByteArrayView(bytes), m_registry, decoded).isOk(), "decode failed");
    QCOMPARE(decoded, o);
    QCOMPARE(decoded.get<quint64>("u64"), std::numeric_limits<quint64>::max());
    QCOMPARE(decoded.get<QString>("s"), QStringLiteral("Grüße, 世界"));
    QCOMPARE(decoded.get<QList<Object>>("h2s").size(), 2);
    QCOMPARE(decoded.get<Object>("h1").get<QList<double>>("contents"), QList<double>({1, 2, 3}));
    QCOMPARE(encode(decoded), bytes);

    // Defaults round-trip too.
    const Object empty = Object::create(m_registry, QStringLiteral("AllTypes"));
    QVERIFY2(decode(encode(empty), m_registry, decoded).isOk(), "decode failed");
    QCOMPARE(decoded, empty);
}

void TestIsValue::roundTripHistograms()
{
    Object h2 = Object::create(m_registry, QStringLiteral("Histogram2D"));
    QVERIFY_OK(h2.set("title", "hit map"));
    QVERIFY_OK(h2.set("xBins", quint32(3)));
    QVERIFY_OK(h2.set("yBins", quint32(2)));
    QVERIFY_OK(h2.set("contents", QList<double>{1, 2, 3, 4, 5, 6}));
    QVERIFY_OK(h2.set("entries", quint64(21)));
    Object decoded;
    QString error;
    QVERIFY2(decode(encode(h2), m_registry, decoded).isOk(), "decode failed");
    QCOMPARE(decoded, h2);
    QCOMPARE(decoded.get<quint32>("yBins"), 2u);

    const Object t = tree(5);
    QVERIFY2(decode(encode(t), m_registry, decoded).isOk(), "decode failed");
    QCOMPARE(decoded, t);
}

void TestIsValue::decodeErrors_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("expected");

    const QByteArray oneString = encode(Object::create(m_registry, QStringLiteral("OneString")));
    const QByteArray oneVector = encode(Object::create(m_registry, QStringLiteral("OneVector")));
    // version(1) | nameLen(2) | name | count(2) | tag(1) | value
    const qsizetype stringValue = 1 + 2 + 9 + 2 + 1;
    const qsizetype vectorValue = 1 + 2 + 9 + 2 + 1;
    const auto patch32 = [](QByteArray b, qsizetype at, quint32 v) {
        qToLittleEndian(v, b.data() + at);
        return b;
    };

    QTest::newRow("empty") << QByteArray() << "truncated input at offset 0";
    QTest::newRow("badVersion") << QByteArray("\x02") + oneString.mid(1) << "unsupported encoding version 2";
    QTest::newRow("unknownType") << QByteArray::fromHex("01"
                                                        "0300"
                                                        "4e6f70"
                                                        "0000")
                                 << "unknown type 'Nop'";
    QTest::newRow("hugeNameLength") << QByteArray::fromHex("01"
                                                           "ffff"
                                                           "41")
                                    << "truncated input at offset 3";
    QTest::newRow("hugeString") << patch32(oneString, stringValue, 0xffffffffu) << "truncated input";
    QTest::newRow("hugeVector") << patch32(oneVector, vectorValue, 0xffffffffu)
                                << "vector length 4294967295 exceeds the input";
    QTest::newRow("trailingBytes") << oneString + "xy"
                                   << "2 trailing bytes";
    QTest::newRow("wrongTag") << [&] {
        QByteArray b = oneString;
        b[stringValue - 1] = char(BasicType::U32);
        return b;
    }() << "tag 0x06 for attribute 's' of type 'OneString' (string)";
    QTest::newRow("vectorTag") << [&] {
        QByteArray b = oneString;
        b[stringValue - 1] = char(0x8b);
        return b;
    }() << "tag 0x8b for attribute 's'";
    QTest::newRow("attributeCount") << [&] {
        QByteArray b = oneString;
        b[stringValue - 3] = 2;
        return b;
    }() << "type 'OneString' has 1 attributes, the input 2";
    QTest::newRow("badBool") << [&] {
        QByteArray b = encode(Object::create(m_registry, QStringLiteral("OneBool")));
        b[b.size() - 1] = 2;
        return b;
    }() << "invalid bool 2";
    // A Histogram2D where the Histogram1D is expected.
    Object h1Holder = Object::create(m_registry, QStringLiteral("ReadoutStats"));
    QByteArray holder = encode(h1Holder);
    const qsizetype at = holder.indexOf("Histogram1D");
    holder[at + 9] = '2';
    QTest::newRow("wrongNestedType") << holder
                                     << "nested object of type 'Histogram2D' where 'Histogram1D' is expected";
}

void TestIsValue::decodeErrors()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, expected);
    Object out = Object::create(m_registry, QStringLiteral("RunInfo"));
    const Object before = out;
    const dialog::Status st = decode(input, m_registry, out);
    QVERIFY(!st.isOk());
    QVERIFY2(st.message().startsWith(expected), qPrintable(QStringLiteral("got: ") + st.message()));
    // The decoder says which: a type this process does not know, or a malformed value.
    QCOMPARE(st.code(), QByteArray(QTest::currentDataTag()) == "unknownType"
                            ? dialog::Status::Code::UnknownType
                            : dialog::Status::Code::InvalidObject);
    QCOMPARE(out, before); // untouched on failure
}

void TestIsValue::nestingDepthIsBounded()
{
    Object out;
    const dialog::Status deepest = decode(encode(tree(MaxNestingDepth + 1)), m_registry, out);
    QVERIFY2(deepest.isOk(), qPrintable(deepest.message()));
    const dialog::Status tooDeep = decode(encode(tree(MaxNestingDepth + 2)), m_registry, out);
    QVERIFY2(tooDeep.message().startsWith(QLatin1String("objects nested deeper than 32")),
             qPrintable(tooDeep.message()));
}

void TestIsValue::truncationAtEveryLengthFails()
{
    const QByteArray bytes = encode(allTypes());
    QVERIFY(bytes.size() > 100);
    for (qsizetype n = 0; n < bytes.size(); ++n) {
        Object out;
        const dialog::Status st = decode(QByteArrayView(bytes).first(n), m_registry, out);
        if (st.isOk())
            QFAIL(qPrintable(QStringLiteral("prefix of %1 bytes decoded").arg(n)));
        QVERIFY(!st.message().isEmpty());
    }
}

void TestIsValue::corruptedBytesNeverCrash()
{
    const QByteArray bytes = encode(allTypes());
    int accepted = 0;
    for (qsizetype i = 0; i < bytes.size(); ++i) {
        for (const quint8 mask : {quint8(0x01), quint8(0x80), quint8(0xff)}) {
            QByteArray corrupt = bytes;
            corrupt[i] = char(quint8(corrupt[i]) ^ mask);
            Object out;
            const dialog::Status st = decode(corrupt, m_registry, out);
            if (st.isOk()) {
                ++accepted; // a flipped payload byte is a different valid value
                QVERIFY(decode(encode(out), m_registry, out).isOk());
            } else {
                QVERIFY(!st.message().isEmpty());
            }
        }
    }
    QVERIFY(accepted > 0);
    QVERIFY(accepted < bytes.size() * 3);
}

void TestIsValue::json()
{
    const QJsonObject j = toJson(allTypes(), m_registry);
    QCOMPARE(j.value("b"), QJsonValue(true));
    QCOMPARE(j.value("i8"), QJsonValue(-128));
    QCOMPARE(j.value("u32"), QJsonValue(4294967295.0));
    QCOMPARE(j.value("i64"), QJsonValue(QStringLiteral("-9223372036854775808")));
    QCOMPARE(j.value("u64"), QJsonValue(QStringLiteral("18446744073709551615")));
    QCOMPARE(j.value("f"), QJsonValue(-1.5));
    QCOMPARE(j.value("d"), QJsonValue(QStringLiteral("inf")));
    QCOMPARE(j.value("s"), QJsonValue(QStringLiteral("Grüße, 世界")));
    QCOMPARE(j.value("t"), QJsonValue(QStringLiteral("1969-12-31T23:59:59.999999Z")));
    QCOMPARE(j.value("vb"), QJsonValue(QJsonArray{true, false, true}));
    QCOMPARE(j.value("vt"),
             QJsonValue(QJsonArray{"1970-01-01T00:00:00.000000Z", "2023-11-14T22:13:20.123456Z"}));
    QCOMPARE(j.value("vu64").toArray().at(1), QJsonValue(0));
    QCOMPARE(j.value("vu64").toArray().at(3), QJsonValue(QStringLiteral("18446744073709551615")));
    QCOMPARE(j.value("h1").toObject().value("title"), QJsonValue(QStringLiteral("event size")));
    QCOMPARE(j.value("h1").toObject().value("contents"), QJsonValue(QJsonArray{1, 2, 3}));
    QCOMPARE(j.value("h2s").toArray().at(0).toObject().value("yBins"), QJsonValue(2));
    QCOMPARE(j.size(), allTypes().attributeCount());

    Object r = Object::create(m_registry, QStringLiteral("ProcessStats"));
    QVERIFY_OK(r.set("memoryBytes", quint64(1) << 53));
    QVERIFY_OK(r.set("pid", -(qint64(1) << 53) - 1));
    const QJsonObject p = toJson(r);
    QCOMPARE(p.value("memoryBytes"), QJsonValue(9007199254740992.0));
    QCOMPARE(p.value("pid"), QJsonValue(QStringLiteral("-9007199254740993")));
}

void TestIsValue::timeToString_data()
{
    QTest::addColumn<qint64>("us");
    QTest::addColumn<QString>("expected");
    QTest::newRow("epoch") << qint64(0) << "1970-01-01T00:00:00.000000Z";
    QTest::newRow("micro") << qint64(1) << "1970-01-01T00:00:00.000001Z";
    QTest::newRow("beforeEpoch") << qint64(-1500000) << "1969-12-31T23:59:58.500000Z";
    QTest::newRow("recent") << qint64(1714564800123456) << "2024-05-01T12:00:00.123456Z";
}

void TestIsValue::timeToString()
{
    QFETCH(qint64, us);
    QFETCH(QString, expected);
    QCOMPARE(Time(us).toString(), expected);
    QCOMPARE(Time(us).toDateTime().toMSecsSinceEpoch(), us >= 0 ? us / 1000 : -((-us + 999) / 1000));
    QCOMPARE(Time::fromDateTime(Time(us).toDateTime()).microsecondsSinceEpoch() / 1000, us / 1000);
}

// Found by fuzz_isvalue: the fraction was m_us - secs * 1000000, which overflows at the ends of
// the range (a time attribute of INT64_MIN in a decoded object).
void TestIsValue::timeAtTheEndsOfTheRange()
{
    QVERIFY(Time(std::numeric_limits<qint64>::min()).toString().endsWith(QLatin1String(".224192Z")));
    QVERIFY(Time(std::numeric_limits<qint64>::max()).toString().endsWith(QLatin1String(".775807Z")));
    // Milliseconds a QDateTime holds but microseconds since the epoch cannot: no overflow.
    const QDateTime far = QDateTime::fromMSecsSinceEpoch(std::numeric_limits<qint64>::max() / 100, Qt::UTC);
    QCOMPARE(Time::fromDateTime(far).microsecondsSinceEpoch(), Time().microsecondsSinceEpoch());
}

QTEST_GUILESS_MAIN(TestIsValue)
#include "tst_isvalue.moc"
