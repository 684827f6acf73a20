// IS type evolution: every kind of change between the layout an object was written with and the
// type as declared now, through the decoder, checkpoints and journals.
#include "statuscheck.h"
#include "dialog/is/checkpoint.h"
#include "dialog/is/codec.h"
#include "dialog/is/evolution.h"
#include "dialog/is/journal.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QTemporaryDir>
#include <QtTest>
#include <memory>

using namespace dialog::is;

namespace {

// The type "T" with @p attributes (the inside of its <type> element).
std::unique_ptr<TypeRegistry> typesOf(const QString &attributes)
{
    auto types = std::make_unique<TypeRegistry>();
    const QString xml = QStringLiteral("<is-types><type name=\"Inner\"><attribute name=\"v\" type=\"s32\"/></type>"
                                       "<type name=\"T\">%1</type></is-types>")
                            .arg(attributes);
    const dialog::Status st = types->loadXml(xml.toUtf8(), QStringLiteral("t.xml"));
    if (!st.isOk())
        qFatal("%s", qPrintable(st.message()));
    return types;
}

const QString Old = QStringLiteral("<attribute name=\"count\" type=\"s32\"/>"
                                   "<attribute name=\"label\" type=\"string\"/>"
                                   "<attribute name=\"rates\" type=\"float\" vector=\"true\"/>");

// An object of the old layout with known values, encoded.
QByteArray oldObject(const TypeRegistry &types)
{
    Object o = Object::create(types, QStringLiteral("T"));
    o.set(QStringLiteral("count"), qint32(-7));
    o.set(QStringLiteral("label"), QStringLiteral("forty-two"));
    o.set(QStringLiteral("rates"), QList<float>{1.5f, 2.5f});
    return encode(o);
}

} // namespace

class tst_IsEvolution : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sameLayoutIsIdentity();
    void addedAttributesTakeTheirDefaults();
    void droppedAttributeIsDropped();
    void renamedWithWas();
    void widening_data();
    void widening();
    void incompatibleRefused_data();
    void incompatibleRefused();
    void statedConversions();
    void nestedTypeEvolves();
    void layoutsRoundTrip();
    void damagedLayoutsRefused();
    void layoutsOfDeclarations();
    void xmlErrors_data();
    void xmlErrors();
    void newObjectsTakeTheDefault();
    void checkpointOfOldLayoutLoads();
    void checkpointWithIncompatibleChangeRefused();
    void journalOfOldLayoutReplays();
};

void tst_IsEvolution::sameLayoutIsIdentity()
{
    const auto types = typesOf(Old);
    const QByteArray bytes = oldObject(*types);
    Evolution e(*types, Layouts::of(*types));
    QVERIFY(e.isIdentity());
    QVERIFY(e.changes().isEmpty());
    Object o;
    QVERIFY_OK(e.decode(bytes, o));
    QCOMPARE(encode(o).constData(), bytes.constData()); // the same bytes, not encoded again
}

void tst_IsEvolution::addedAttributesTakeTheirDefaults()
{
    const auto before = typesOf(Old);
    // One in the middle, one at the end with a default, one with the zero of its type.
    const auto after = typesOf(QStringLiteral("<attribute name=\"count\" type=\"s32\"/>"
                                              "<attribute name=\"state\" type=\"string\" default=\"Idle\"/>"
                                              "<attribute name=\"label\" type=\"string\"/>"
                                              "<attribute name=\"rates\" type=\"float\" vector=\"true\"/>"
                                              "<attribute name=\"limit\" type=\"double\" default=\"2.5\"/>"
                                              "<attribute name=\"flags\" type=\"u16\"/>"));
    Evolution e(*after, Layouts::of(*before));
    QVERIFY_OK(e.status());
    QCOMPARE(e.changes().size(), 1);
    QVERIFY2(e.changes().first().contains(QLatin1String("'state' added (default Idle)")), qPrintable(e.changes().first()));
    Object o;
    QVERIFY_OK(e.decode(oldObject(*before), o));
    QCOMPARE(o.attributeCount(), 6);
    QCOMPARE(o.get<qint32>(QStringLiteral("count")), -7);
    QCOMPARE(o.get<QString>(QStringLiteral("state")), QStringLiteral("Idle"));
    QCOMPARE(o.get<QString>(QStringLiteral("label")), QStringLiteral("forty-two"));
    QCOMPARE(o.get<QList<float>>(QStringLiteral("rates")), (QList<float>{1.5f, 2.5f}));
    QCOMPARE(o.get<double>(QStringLiteral("limit")), 2.5);
    QCOMPARE(o.get<quint16>(QStringLiteral("flags")), quint16(0));
    // Encoded again in the new layout, it decodes without evolution.
    Object again;
    QVERIFY_OK(decode(encode(o), *after, again));
    QCOMPARE(again, o);
}

void tst_IsEvolution::droppedAttributeIsDropped()
{
    const auto before = typesOf(Old);
    const auto after = typesOf(QStringLiteral("<attribute name=\"rates\" type=\"float\" vector=\"true\"/>"
                                              "<attribute name=\"count\" type=\"s32\"/>"));
    Evolution e(*after, Layouts::of(*before));
    QVERIFY_OK(e.status());
    QVERIFY2(e.changes().first().contains(QLatin1String("'label' dropped")), qPrintable(e.changes().first()));
    Object o;
    QVERIFY_OK(e.decode(oldObject(*before), o));
    QCOMPARE(o.attributeCount(), 2);
    QCOMPARE(o.get<qint32>(QStringLiteral("count")), -7);
    QCOMPARE(o.get<QList<float>>(QStringLiteral("rates")), (QList<float>{1.5f, 2.5f}));
}

void tst_IsEvolution::renamedWithWas()
{
    const auto before = typesOf(Old);
    const auto after = typesOf(QStringLiteral("<attribute name=\"events\" type=\"s32\" was=\"count\"/>"
                                              "<attribute name=\"title\" type=\"string\" was=\"label\"/>"
                                              "<attribute name=\"rates\" type=\"float\" vector=\"true\"/>"));
    Evolution e(*after, Layouts::of(*before));
    QVERIFY_OK(e.status());
    QVERIFY2(e.changes().first().contains(QLatin1String("'count' renamed to 'events'")),
             qPrintable(e.changes().first()));
    Object o;
    QVERIFY_OK(e.decode(oldObject(*before), o));
    QCOMPARE(o.get<qint32>(QStringLiteral("events")), -7);
    QCOMPARE(o.get<QString>(QStringLiteral("title")), QStringLiteral("forty-two"));
    // Written with the new name already, the former name plays no part.
    Evolution same(*after, Layouts::of(*after));
    QVERIFY(same.isIdentity());
}

void tst_IsEvolution::widening_data()
{
    QTest::addColumn<QString>("countType");
    QTest::addColumn<QString>("ratesType");
    QTest::newRow("int -> long") << "s64" << "float";
    QTest::newRow("int -> double") << "double" << "float";
    QTest::newRow("float -> double (vector)") << "s32" << "double";
}

void tst_IsEvolution::widening()
{
    QFETCH(QString, countType);
    QFETCH(QString, ratesType);
    const auto before = typesOf(Old);
    const auto after = typesOf(QStringLiteral("<attribute name=\"count\" type=\"%1\"/>"
                                              "<attribute name=\"label\" type=\"string\"/>"
                                              "<attribute name=\"rates\" type=\"%2\" vector=\"true\"/>")
                                   .arg(countType, ratesType));
    Evolution e(*after, Layouts::of(*before));
    QVERIFY_OK(e.status());
    Object o;
    QVERIFY_OK(e.decode(oldObject(*before), o));
    QCOMPARE(o.variant(QStringLiteral("count")).toDouble(), -7.0);
    const QVariantList rates = o.variant(QStringLiteral("rates")).toList();
    QCOMPARE(rates.size(), 2);
    QCOMPARE(rates.at(1).toDouble(), 2.5);

    // And long -> double after int -> long: a chain of upgrades.
    const auto later = typesOf(QStringLiteral("<attribute name=\"count\" type=\"double\"/>"
                                              "<attribute name=\"label\" type=\"string\"/>"
                                              "<attribute name=\"rates\" type=\"double\" vector=\"true\"/>"));
    Evolution e2(*later, Layouts::of(*after));
    QVERIFY_OK(e2.status());
    Object o2;
    QVERIFY_OK(e2.decode(encode(o), o2));
    QCOMPARE(o2.get<double>(QStringLiteral("count")), -7.0);
}

void tst_IsEvolution::incompatibleRefused_data()
{
    QTest::addColumn<QString>("attributes");
    QTest::addColumn<QString>("attribute");
    QTest::newRow("string -> int") << "<attribute name=\"count\" type=\"s32\"/><attribute name=\"label\" type=\"s32\"/>"
                                      "<attribute name=\"rates\" type=\"float\" vector=\"true\"/>"
                                   << "label";
    QTest::newRow("vector -> scalar") << "<attribute name=\"count\" type=\"s32\"/><attribute name=\"label\" type=\"string\"/>"
                                         "<attribute name=\"rates\" type=\"float\"/>"
                                      << "rates";
    QTest::newRow("narrowing") << "<attribute name=\"count\" type=\"s16\"/><attribute name=\"label\" type=\"string\"/>"
                                  "<attribute name=\"rates\" type=\"float\" vector=\"true\"/>"
                               << "count";
    QTest::newRow("signed -> unsigned") << "<attribute name=\"count\" type=\"u64\"/><attribute name=\"label\" type=\"string\"/>"
                                           "<attribute name=\"rates\" type=\"float\" vector=\"true\"/>"
                                        << "count";
}

void tst_IsEvolution::incompatibleRefused()
{
    QFETCH(QString, attributes);
    QFETCH(QString, attribute);
    const auto before = typesOf(Old);
    const auto after = typesOf(attributes);
    Evolution e(*after, Layouts::of(*before));
    QCOMPARE(e.status().code(), dialog::Status::Code::TypeMismatch);
    const QString why = e.status().message();
    QVERIFY2(why.contains(QLatin1String("type 'T', attribute '") + attribute + QLatin1Char('\'')), qPrintable(why));
    QVERIFY2(why.contains(QLatin1String("dialogctl is migrate --convert T.") + attribute), qPrintable(why));
    Object o;
    QCOMPARE(e.decode(oldObject(*before), o).code(), dialog::Status::Code::TypeMismatch);
}

void tst_IsEvolution::statedConversions()
{
    const auto before = typesOf(Old);
    Object o = Object::create(*before, QStringLiteral("T"));
    o.set(QStringLiteral("label"), QStringLiteral(" 42 "));
    o.set(QStringLiteral("rates"), QList<float>{3.5f, 9.f});
    const auto after = typesOf(QStringLiteral("<attribute name=\"count\" type=\"string\"/>"
                                              "<attribute name=\"label\" type=\"s32\"/>"
                                              "<attribute name=\"rates\" type=\"double\"/>"));
    Conversions how{{QStringLiteral("T.count"), Conversion::Convert},
                    {QStringLiteral("T.label"), Conversion::Convert},
                    {QStringLiteral("T.rates"), Conversion::Convert}};
    Evolution e(*after, Layouts::of(*before), how);
    QVERIFY_OK(e.status());
    Object got;
    QVERIFY_OK(e.decode(encode(o), got));
    QCOMPARE(got.get<QString>(QStringLiteral("count")), QStringLiteral("0"));
    QCOMPARE(got.get<qint32>(QStringLiteral("label")), 42);
    QCOMPARE(got.get<double>(QStringLiteral("rates")), 3.5);

    how[QStringLiteral("T.label")] = Conversion::Default;
    Evolution reset(*after, Layouts::of(*before), how);
    QVERIFY_OK(reset.status());
    QVERIFY_OK(reset.decode(encode(o), got));
    QCOMPARE(got.get<qint32>(QStringLiteral("label")), 0);
}

void tst_IsEvolution::nestedTypeEvolves()
{
    TypeRegistry before, after;
    QVERIFY_OK(before.loadXml("<is-types><type name=\"In\"><attribute name=\"a\" type=\"u8\"/></type>"
                              "<type name=\"Out\"><attribute name=\"one\" type=\"In\"/>"
                              "<attribute name=\"many\" type=\"In\" vector=\"true\"/></type></is-types>",
                              QStringLiteral("b.xml")));
    QVERIFY_OK(after.loadXml("<is-types><type name=\"In\"><attribute name=\"b\" type=\"string\" default=\"x\"/>"
                             "<attribute name=\"a\" type=\"u32\"/></type>"
                             "<type name=\"Out\"><attribute name=\"one\" type=\"In\"/>"
                             "<attribute name=\"many\" type=\"In\" vector=\"true\"/></type></is-types>",
                             QStringLiteral("a.xml")));
    Object in = Object::create(before, QStringLiteral("In"));
    in.set(QStringLiteral("a"), quint8(200));
    Object out = Object::create(before, QStringLiteral("Out"));
    out.set(QStringLiteral("one"), in);
    out.set(QStringLiteral("many"), QList<Object>{in, in});
    Layouts written;
    written.add(out);
    QVERIFY(written.contains(QStringLiteral("In")));
    Evolution e(after, written);
    QVERIFY_OK(e.status());
    Object got;
    QVERIFY_OK(e.decode(encode(out), got));
    const Object one = got.get<Object>(QStringLiteral("one"));
    QCOMPARE(one.get<quint32>(QStringLiteral("a")), 200u);
    QCOMPARE(one.get<QString>(QStringLiteral("b")), QStringLiteral("x"));
    QCOMPARE(got.get<QList<Object>>(QStringLiteral("many")).size(), 2);
}

void tst_IsEvolution::layoutsRoundTrip()
{
    const auto types = typesOf(Old);
    const Layouts all = Layouts::of(*types);
    Layouts back;
    QVERIFY_OK(Layouts::decode(all.encode(), &back));
    QCOMPARE(back.encode(), all.encode());
    QCOMPARE(back.attributes(QStringLiteral("T")).size(), 3);
    QCOMPARE(back.attributes(QStringLiteral("T")).at(2).isVector(), true);
    Layouts empty;
    QVERIFY_OK(Layouts::decode(empty.encode(), &back));
    QVERIFY(back.isEmpty());
}

void tst_IsEvolution::layoutsOfDeclarations()
{
    // Declarations as a master IS server sends them: the layouts of its types, bases resolved.
    const auto types = typesOf(Old);
    QList<TypeInfo> declared;
    QVERIFY_OK(typesFromJson(typesToJson(*types), &declared));
    Layouts layouts;
    QVERIFY_OK(Layouts::of(declared, &layouts));
    QCOMPARE(layouts.encode(), Layouts::of(*types).encode());
    // A base that none of them declares: the registry's code, and the layouts untouched.
    declared << TypeInfo(QStringLiteral("Orphan"), {}, QStringLiteral("NoSuchBase"));
    const dialog::Status refused = Layouts::of(declared, &layouts);
    QCOMPARE(refused.code(), dialog::Status::Code::UnknownType);
    QVERIFY2(refused.message().contains(QStringLiteral("NoSuchBase")), qPrintable(refused.message()));
    QCOMPARE(layouts.encode(), Layouts::of(*types).encode());
}

void tst_IsEvolution::damagedLayoutsRefused()
{
    const auto types = typesOf(Old);
    const QByteArray good = Layouts::of(*types).encode();
    for (qsizetype cut = 0; cut < good.size(); ++cut) {
        Layouts out;
        QCOMPARE(Layouts::decode(QByteArrayView(good).first(cut), &out).code(), dialog::Status::Code::BadRequest);
    }
    QByteArray huge = good;
    huge[0] = char(0xff);
    huge[3] = char(0x7f);
    Layouts out;
    QCOMPARE(Layouts::decode(huge, &out).code(), dialog::Status::Code::BadRequest);
}

void tst_IsEvolution::xmlErrors_data()
{
    QTest::addColumn<QString>("attributes");
    QTest::addColumn<QString>("error");
    QTest::newRow("bad default") << "<attribute name=\"a\" type=\"u8\"\n default=\"300\"/>"
                                 << "t.xml:2: attribute 'a' of type 'T': default '300' is not a u8";
    QTest::newRow("default of a vector") << "<attribute name=\"a\" type=\"u8\" vector=\"true\" default=\"1\"/>"
                                         << "a default is for a scalar of a primitive type";
    QTest::newRow("was names a present attribute")
        << "<attribute name=\"a\" type=\"u8\"/><attribute name=\"b\" type=\"u8\" was=\"a\"/>"
        << "attribute 'b' of type 'T' was 'a', which the type still has";
    QTest::newRow("invalid was") << "<attribute name=\"a\" type=\"u8\" was=\"1x\"/>" << "invalid former name '1x'";
}

void tst_IsEvolution::xmlErrors()
{
    QFETCH(QString, attributes);
    QFETCH(QString, error);
    TypeRegistry types;
    const dialog::Status st =
        types.loadXml(QStringLiteral("<is-types><type name=\"T\">%1</type></is-types>").arg(attributes).toUtf8(),
                      QStringLiteral("t.xml"));
    QCOMPARE(st.code(), dialog::Status::Code::BadRequest);
    QVERIFY2(st.message().contains(error), qPrintable(st.message()));
}

void tst_IsEvolution::newObjectsTakeTheDefault()
{
    const auto types = typesOf(QStringLiteral("<attribute name=\"on\" type=\"bool\" default=\"true\"/>"
                                              "<attribute name=\"n\" type=\"s16\" default=\"-3\"/>"
                                              "<attribute name=\"t\" type=\"time\" default=\"2026-01-02T03:04:05Z\"/>"));
    const Object o = Object::create(*types, QStringLiteral("T"));
    QCOMPARE(o.get<bool>(QStringLiteral("on")), true);
    QCOMPARE(o.get<qint16>(QStringLiteral("n")), qint16(-3));
    QCOMPARE(o.get<Time>(QStringLiteral("t")).toString().left(19), QStringLiteral("2026-01-02T03:04:05"));
    // Defaults travel with the type as JSON.
    QList<TypeInfo> back;
    QVERIFY_OK(typesFromJson(QJsonArray{typeToJson(types->type(QStringLiteral("T")))}, &back));
    QCOMPARE(back.first().attributes().at(1).defaultText(), QStringLiteral("-3"));
}

void tst_IsEvolution::checkpointOfOldLayoutLoads()
{
    QTemporaryDir dir;
    const auto before = typesOf(Old);
    {
        Repository repo(QStringLiteral("Srv"), *before);
        Object o;
        QVERIFY_OK(decode(oldObject(*before), *before, o));
        QVERIFY_OK(repo.upsert(QStringLiteral("a"), o));
        QVERIFY_OK(repo.upsert(QStringLiteral("b"), o));
        QVERIFY_OK(Checkpoint::save(repo, dir.path()));
    }
    const auto after = typesOf(QStringLiteral("<attribute name=\"rates\" type=\"double\" vector=\"true\"/>"
                                              "<attribute name=\"events\" type=\"s64\" was=\"count\"/>"
                                              "<attribute name=\"state\" type=\"string\" default=\"Idle\"/>"));
    Repository repo(QStringLiteral("Srv"), *after);
    Checkpoint::LoadResult lr;
    QVERIFY_OK(Checkpoint::load(repo, dir.path(), {}, &lr));
    QCOMPARE(lr.objects, 2);
    QCOMPARE(lr.evolved.size(), 1);
    Object got;
    QVERIFY_OK(repo.get(QStringLiteral("Srv.b"), &got));
    QCOMPARE(got.get<qint64>(QStringLiteral("events")), qint64(-7));
    QCOMPARE(got.get<QString>(QStringLiteral("state")), QStringLiteral("Idle"));
    QCOMPARE(got.get<QList<double>>(QStringLiteral("rates")), (QList<double>{1.5, 2.5}));
    // Saved again, it is a checkpoint of the new layout.
    QVERIFY_OK(Checkpoint::save(repo, dir.path()));
    Repository again(QStringLiteral("Srv"), *after);
    QVERIFY_OK(Checkpoint::load(again, dir.path(), {}, &lr));
    QVERIFY(lr.evolved.isEmpty());
}

void tst_IsEvolution::checkpointWithIncompatibleChangeRefused()
{
    QTemporaryDir dir;
    const auto before = typesOf(Old);
    {
        Repository repo(QStringLiteral("Srv"), *before);
        Object o;
        QVERIFY_OK(decode(oldObject(*before), *before, o));
        QVERIFY_OK(repo.upsert(QStringLiteral("a"), o));
        QVERIFY_OK(Checkpoint::save(repo, dir.path()));
    }
    const auto after = typesOf(QStringLiteral("<attribute name=\"count\" type=\"s32\"/>"
                                              "<attribute name=\"label\" type=\"double\"/>"));
    Repository repo(QStringLiteral("Srv"), *after);
    const dialog::Status st = Checkpoint::load(repo, dir.path());
    QCOMPARE(st.code(), dialog::Status::Code::StorageError);
    QVERIFY2(st.message().contains(QLatin1String("type 'T', attribute 'label': string")), qPrintable(st.message()));
    QCOMPARE(repo.size(), 0);
    // The stated conversion loads it.
    Checkpoint::LoadOptions lo;
    lo.conversions.insert(QStringLiteral("T.label"), Conversion::Convert);
    QVERIFY_OK(Checkpoint::load(repo, dir.path(), lo));
    QCOMPARE(repo.size(), 1);
}

void tst_IsEvolution::journalOfOldLayoutReplays()
{
    QTemporaryDir dir;
    const auto before = typesOf(Old);
    {
        Repository repo(QStringLiteral("Srv"), *before);
        Journal journal(dir.path(), QStringLiteral("Srv"), Journal::Sync::None);
        QVERIFY_OK(journal.open());
        repo.addListener([&](const Change &c) { journal.append(c); });
        Object o;
        QVERIFY_OK(decode(oldObject(*before), *before, o));
        QVERIFY_OK(repo.upsert(QStringLiteral("a"), o));
        QVERIFY_OK(journal.commit());
        quint64 closed = 0;
        QVERIFY_OK(journal.rotate(&closed)); // the second segment starts with the layouts again
        o.set(QStringLiteral("count"), qint32(9));
        QVERIFY_OK(repo.upsert(QStringLiteral("b"), o));
        QVERIFY_OK(journal.commit());
    }
    const auto after = typesOf(QStringLiteral("<attribute name=\"events\" type=\"double\" was=\"count\"/>"
                                              "<attribute name=\"extra\" type=\"u8\" default=\"5\"/>"));
    Repository repo(QStringLiteral("Srv"), *after);
    const Journal::ReplayResult rr = Journal::replay(repo, dir.path());
    QVERIFY2(rr.problems.isEmpty(), qPrintable(rr.problems.join(QLatin1Char('\n'))));
    QCOMPARE(rr.segments, 2);
    QCOMPARE(rr.applied, 2);
    Object got;
    QVERIFY_OK(repo.get(QStringLiteral("Srv.b"), &got));
    QCOMPARE(got.get<double>(QStringLiteral("events")), 9.0);
    QCOMPARE(got.get<quint8>(QStringLiteral("extra")), quint8(5));
}

QTEST_GUILESS_MAIN(tst_IsEvolution)
#include "tst_isevolution.moc"
