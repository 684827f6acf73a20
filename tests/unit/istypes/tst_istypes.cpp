// Unit tests of the IS type system: XML type files, validation, the type registry and inheritance
// queries (libdialog/include/dialog/is/typeregistry.h).
#include "statuscheck.h"
#include "dialog/is/typeregistry.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <atomic>
#include <thread>
#include <vector>

Q_DECLARE_METATYPE(dialog::is::TypeInfo)

using namespace dialog::is;
using dialog::Status;

namespace {

const QString ResourceDir = QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types");

bool writeFile(const QString &path, const QByteArray &content)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(content) == content.size();
}

QStringList names(const QList<AttributeInfo> &attributes)
{
    QStringList out;
    for (const AttributeInfo &a : attributes)
        out.append(a.name());
    return out;
}

} // namespace

class TestIsTypes : public QObject
{
    Q_OBJECT

private slots:
    void primitiveTypeNames();
    void builtinHistograms();
    void loadShippedResources();
    void xmlErrors_data();
    void xmlErrors();
    void failedLoadChangesNothing();
    void vectorOfOwnTypeIsAllowed();
    void derivedAttributesComeAfterBase();
    void loadFileReportsFileName();
    void loadMissingFileOrDirectory();
    void directoryLoadIsAllOrNothing();
    void directoryLoadResolvesAcrossFiles();
    void runtimeDeclaration_data();
    void runtimeDeclaration();
    void inheritanceQueries_data();
    void inheritanceQueries();
    void subtypesAreTransitive();
    void concurrentReadersDuringDeclarations();
    void expectedIntervalFromXml();
    void expectedIntervalThroughJson();
};

void TestIsTypes::primitiveTypeNames()
{
    const QStringList expected{"bool", "s8",  "u8",    "s16",    "u16",    "s32", "u32",
                               "s64",  "u64", "float", "double", "string", "time"};
    for (int i = 0; i < expected.size(); ++i) {
        QCOMPARE(basicTypeName(BasicType(i)), expected.at(i));
        QCOMPARE(basicTypeFromName(expected.at(i)), std::optional<BasicType>(BasicType(i)));
    }
    QVERIFY(!basicTypeFromName(u"u33"));
    QVERIFY(!basicTypeFromName(u""));
    QCOMPARE(AttributeInfo(QStringLiteral("x"), BasicType::U32).typeName(), QStringLiteral("u32"));
    QCOMPARE(AttributeInfo::nested(QStringLiteral("h"), QStringLiteral("Histogram1D")).typeName(),
             QStringLiteral("Histogram1D"));
}

void TestIsTypes::builtinHistograms()
{
    TypeRegistry r;
    QCOMPARE(r.typeNames(), QStringList({"Histogram1D", "Histogram2D"}));
    const TypeInfo h1 = r.type(QStringLiteral("Histogram1D"));
    QVERIFY(h1.isValid());
    QCOMPARE(names(h1.allAttributes()),
             QStringList({"title", "xLow", "xHigh", "bins", "contents", "entries"}));
    const QList<AttributeInfo> a = h1.allAttributes();
    QCOMPARE(a.at(0).type(), BasicType::String);
    QCOMPARE(a.at(1).type(), BasicType::Double);
    QCOMPARE(a.at(3).type(), BasicType::U32);
    QCOMPARE(a.at(4).type(), BasicType::Double);
    QVERIFY(a.at(4).isVector());
    QCOMPARE(a.at(5).type(), BasicType::U64);
    const TypeInfo h2 = r.type(QStringLiteral("Histogram2D"));
    QCOMPARE(names(h2.allAttributes()), QStringList({"title", "xLow", "xHigh", "xBins", "yLow", "yHigh",
                                                     "yBins", "contents", "entries"}));
    QVERIFY(!r.type(QStringLiteral("Nope")).isValid());
}

void TestIsTypes::loadShippedResources()
{
    TypeRegistry r;
    QVERIFY_OK(r.loadDirectory(ResourceDir));
    for (const char *name : {"RunInfo", "RunCtrlState", "ProcessStats", "ReadoutStats"})
        QVERIFY2(r.contains(QString::fromLatin1(name)), name);
    const TypeInfo run = r.type(QStringLiteral("RunInfo"));
    QCOMPARE(run.description(), QStringLiteral("Parameters of the current run"));
    QCOMPARE(run.allAttributes().at(0).name(), QStringLiteral("runNumber"));
    QCOMPARE(run.allAttributes().at(0).type(), BasicType::U32);
    QCOMPARE(run.allAttributes().at(0).description(), QStringLiteral("Run number"));
    QCOMPARE(r.type(QStringLiteral("RunCtrlState")).allAttributes().at(3).type(), BasicType::Time);

    const TypeInfo readout = r.type(QStringLiteral("ReadoutStats"));
    QCOMPARE(readout.baseName(), QStringLiteral("ProcessStats"));
    const QList<AttributeInfo> base = r.type(QStringLiteral("ProcessStats")).allAttributes();
    QCOMPARE(readout.allAttributes().mid(0, base.size()), base);
    QCOMPARE(readout.allAttributes().size(), base.size() + readout.attributes().size());
    const AttributeInfo queues = readout.allAttributes().at(base.size() + 3);
    QCOMPARE(queues.name(), QStringLiteral("queueDepths"));
    QVERIFY(queues.isVector());
    QCOMPARE(readout.allAttributes().last().typeName(), QStringLiteral("Histogram1D"));
    QVERIFY(r.isSameOrDerived(QStringLiteral("ReadoutStats"), QStringLiteral("ProcessStats")));

    // Loading the same files again is a duplicate, reported against the first file.
    const Status again = r.loadDirectory(ResourceDir);
    QCOMPARE(again.code(), Status::Code::BadRequest);
    const QString error = again.message();
    const QString first =
        QDir(ResourceDir).entryList({QStringLiteral("*.xml")}, QDir::Files, QDir::Name).value(0);
    QVERIFY2(error.startsWith(first + QLatin1Char(':')) && error.contains(QLatin1String("duplicate type '")),
             qPrintable(error));
}

void TestIsTypes::xmlErrors_data()
{
    QTest::addColumn<QByteArray>("xml");
    QTest::addColumn<QString>("expected");

    const auto doc = [](const char *body) { return QByteArray("<is-types>\n") + body + "</is-types>\n"; };
    QTest::newRow("unknownPrimitive")
        << doc("<type name=\"X\">\n<attribute name=\"a\" type=\"u33\"/>\n</type>\n")
        << "types.xml:3: unknown attribute type 'u33' in type 'X'";
    QTest::newRow("unknownNested")
        << doc("<type name=\"X\">\n<attribute name=\"h\" type=\"Histo\"/>\n</type>\n")
        << "types.xml:3: unknown attribute type 'Histo' in type 'X'";
    QTest::newRow("duplicateType") << doc("<type name=\"X\"/>\n<type name=\"X\"/>\n")
                                   << "types.xml:3: duplicate type 'X'";
    QTest::newRow("duplicateBuiltin")
        << doc("<type name=\"Histogram1D\"/>\n") << "types.xml:2: duplicate type 'Histogram1D'";
    QTest::newRow("duplicateAttribute")
        << doc("<type name=\"X\">\n<attribute name=\"a\" type=\"u8\"/>\n<attribute name=\"a\" type=\"s8\"/>\n"
               "</type>\n")
        << "types.xml:4: duplicate attribute 'a' in type 'X'";
    QTest::newRow("attributeClashesWithBase")
        << doc("<type name=\"D\" base=\"B\">\n<attribute name=\"a\" type=\"u8\"/>\n</type>\n"
               "<type name=\"B\">\n<attribute name=\"a\" type=\"u8\"/>\n</type>\n")
        << "types.xml:3: duplicate attribute 'a' in type 'D' (already in base type 'B')";
    QTest::newRow("attributeClashesWithGrandBase")
        << doc("<type name=\"A\">\n<attribute name=\"x\" type=\"u8\"/>\n</type>\n<type name=\"B\" "
               "base=\"A\"/>\n"
               "<type name=\"C\" base=\"B\">\n<attribute name=\"x\" type=\"string\"/>\n</type>\n")
        << "types.xml:7: duplicate attribute 'x' in type 'C' (already in base type 'B')";
    QTest::newRow("unknownBase") << doc("<type name=\"X\" base=\"Nope\"/>\n")
                                 << "types.xml:2: unknown base type 'Nope' of type 'X'";
    QTest::newRow("inheritanceCycle") << doc("<type name=\"A\" base=\"B\"/>\n<type name=\"B\" base=\"A\"/>\n")
                                      << "types.xml:2: inheritance cycle: A -> B -> A";
    QTest::newRow("inheritsItself") << doc("<type name=\"A\" base=\"A\"/>\n")
                                    << "types.xml:2: inheritance cycle: A -> A";
    QTest::newRow("containsItself") << doc("<type name=\"A\">\n<attribute name=\"a\" type=\"A\"/>\n</type>\n")
                                    << "types.xml:2: nested type cycle: A -> A";
    QTest::newRow("containsItselfIndirectly")
        << doc("<type name=\"A\">\n<attribute name=\"b\" type=\"B\"/>\n</type>\n"
               "<type name=\"B\">\n<attribute name=\"a\" type=\"A\"/>\n</type>\n")
        << "types.xml:2: nested type cycle: A -> B -> A";
    QTest::newRow("containsItselfThroughBase")
        << doc("<type name=\"B\">\n<attribute name=\"d\" type=\"D\"/>\n</type>\n<type name=\"D\" "
               "base=\"B\"/>\n")
        << "types.xml:2: nested type cycle: D -> D";
    QTest::newRow("malformed") << QByteArray("<is-types>\n<type name=\"X\">\n</is-types>\n")
                               << "types.xml:3: malformed XML: ";
    QTest::newRow("notXml") << QByteArray("hello") << "types.xml:1: malformed XML: ";
    QTest::newRow("trailingGarbage") << QByteArray("<is-types/>\n<is-types/>\n")
                                     << "types.xml:2: malformed XML: ";
    QTest::newRow("wrongRoot") << QByteArray("<types/>") << "types.xml:1: expected <is-types>, found <types>";
    QTest::newRow("unexpectedElement")
        << doc("<typo name=\"X\"/>\n") << "types.xml:2: unexpected element <typo> in <is-types>";
    QTest::newRow("missingTypeName") << doc("<type description=\"d\"/>\n")
                                     << "types.xml:2: missing 'name' in <type>";
    QTest::newRow("missingAttributeName") << doc("<type name=\"X\">\n<attribute type=\"u8\"/>\n</type>\n")
                                          << "types.xml:3: missing 'name' in attribute of type 'X'";
    QTest::newRow("missingAttributeType") << doc("<type name=\"X\">\n<attribute name=\"a\"/>\n</type>\n")
                                          << "types.xml:3: missing 'type' in attribute 'a' of type 'X'";
    QTest::newRow("badVectorFlag")
        << doc("<type name=\"X\">\n<attribute name=\"a\" type=\"u8\" vector=\"yes\"/>\n</type>\n")
        << "types.xml:3: invalid vector value 'yes' in attribute 'a' of type 'X'";
    QTest::newRow("primitiveAsTypeName")
        << doc("<type name=\"u32\"/>\n") << "types.xml:2: invalid type name 'u32'";
    QTest::newRow("badTypeName") << doc("<type name=\"A.B\"/>\n") << "types.xml:2: invalid type name 'A.B'";
    QTest::newRow("badAttributeName")
        << doc("<type name=\"X\">\n<attribute name=\"a b\" type=\"u8\"/>\n</type>\n")
        << "types.xml:3: invalid attribute name 'a b' in type 'X'";
    QTest::newRow("intervalZero") << doc("<type name=\"X\" expected_interval_s=\"0\">\n</type>\n")
                                  << "types.xml:2: invalid expected_interval_s '0' in type 'X'";
    QTest::newRow("intervalNegative") << doc("<type name=\"X\" expected_interval_s=\"-1\">\n</type>\n")
                                      << "types.xml:2: invalid expected_interval_s '-1' in type 'X'";
    QTest::newRow("intervalNotANumber") << doc("<type name=\"X\" expected_interval_s=\"5s\">\n</type>\n")
                                        << "types.xml:2: invalid expected_interval_s '5s' in type 'X'";
    QTest::newRow("intervalOverAYear") << doc("<type name=\"X\" expected_interval_s=\"1e9\">\n</type>\n")
                                       << "types.xml:2: invalid expected_interval_s '1e9' in type 'X'";
}

void TestIsTypes::xmlErrors()
{
    QFETCH(QByteArray, xml);
    QFETCH(QString, expected);
    TypeRegistry r;
    const QStringList before = r.typeNames();
    const Status refused = r.loadXml(xml, QStringLiteral("types.xml"));
    QVERIFY(!refused.isOk());
    const QString error = refused.message();
    QVERIFY2(error.startsWith(expected), qPrintable(QStringLiteral("got: ") + error));
    QCOMPARE(r.typeNames(), before);
}

void TestIsTypes::failedLoadChangesNothing()
{
    TypeRegistry r;
    QCOMPARE(r.loadXml("<is-types><type name=\"Good\"><attribute name=\"a\" type=\"u8\"/></type>"
                       "<type name=\"Bad\" base=\"Nope\"/></is-types>",
                       QStringLiteral("t.xml"))
                 .code(),
             Status::Code::UnknownType);
    QVERIFY(!r.contains(QStringLiteral("Good")));
    QVERIFY(!r.contains(QStringLiteral("Bad")));
    // The same type is accepted afterwards: nothing of the failed batch was kept.
    QVERIFY_OK(r.loadXml("<is-types><type name=\"Good\"/></is-types>", QStringLiteral("t.xml")));
    QVERIFY(r.contains(QStringLiteral("Good")));
}

void TestIsTypes::vectorOfOwnTypeIsAllowed()
{
    TypeRegistry r;
    QString error;
    QVERIFY_OK(r.loadXml("<is-types><type name=\"Tree\"><attribute name=\"children\" type=\"Tree\" vector=\"true\"/>"
                  "</type></is-types>",
                  QStringLiteral("t.xml")));
    const AttributeInfo a = r.type(QStringLiteral("Tree")).allAttributes().first();
    QCOMPARE(a.type(), BasicType::Object);
    QVERIFY(a.isVector());
    QCOMPARE(a.typeName(), QStringLiteral("Tree"));
}

void TestIsTypes::derivedAttributesComeAfterBase()
{
    TypeRegistry r;
    QString error;
    // Declared derived-first on purpose: order within a batch does not matter.
    QVERIFY_OK(r.loadXml("<is-types>"
                       "<type name=\"C\" base=\"B\"><attribute name=\"c\" type=\"u8\"/></type>"
                       "<type name=\"B\" base=\"A\"><attribute name=\"b1\" type=\"u8\"/>"
                       "<attribute name=\"b2\" type=\"u8\"/></type>"
                       "<type name=\"A\"><attribute name=\"a\" type=\"u8\"/></type>"
                       "</is-types>",
                       QStringLiteral("t.xml")));
    QCOMPARE(names(r.type(QStringLiteral("C")).allAttributes()), QStringList({"a", "b1", "b2", "c"}));
    QCOMPARE(names(r.type(QStringLiteral("C")).attributes()), QStringList({"c"}));
    QCOMPARE(names(r.type(QStringLiteral("B")).allAttributes()), QStringList({"a", "b1", "b2"}));
}

void TestIsTypes::loadFileReportsFileName()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("bad.xml"));
    QVERIFY(writeFile(path, "<is-types>\n<type name=\"X\">\n<attribute name=\"a\" type=\"u33\"/>\n</type>\n"
                            "</is-types>\n"));
    TypeRegistry r;
    QCOMPARE(r.loadFile(path),
             Status(Status::Code::UnknownType, QStringLiteral("bad.xml:3: unknown attribute type 'u33' in type 'X'")));
    QVERIFY_OK(r.loadFile(ResourceDir + QStringLiteral("/runcontrol.xml")));
    QVERIFY(r.contains(QStringLiteral("RunInfo")));
}

void TestIsTypes::loadMissingFileOrDirectory()
{
    TypeRegistry r;
    const Status file = r.loadFile(QStringLiteral("/nonexistent/types.xml"));
    QCOMPARE(file.code(), Status::Code::StorageError);
    QVERIFY2(file.message().startsWith(QLatin1String("/nonexistent/types.xml: cannot read")),
             qPrintable(file.message()));
    QCOMPARE(r.loadDirectory(QStringLiteral("/nonexistent")),
             Status(Status::Code::StorageError, QStringLiteral("/nonexistent: no such directory")));
}

void TestIsTypes::directoryLoadIsAllOrNothing()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(writeFile(dir.filePath(QStringLiteral("a.xml")), "<is-types><type name=\"A\"/></is-types>"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("b.xml")),
                      "<is-types>\n<type name=\"B\" base=\"Z\"/></is-types>"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("notes.txt")), "<not xml"));
    TypeRegistry r;
    QCOMPARE(r.loadDirectory(dir.path()),
             Status(Status::Code::UnknownType, QStringLiteral("b.xml:2: unknown base type 'Z' of type 'B'")));
    QVERIFY(!r.contains(QStringLiteral("A")));
    // A malformed file also stops the whole directory.
    QVERIFY(writeFile(dir.filePath(QStringLiteral("b.xml")), "<is-types>"));
    const Status malformed = r.loadDirectory(dir.path());
    QCOMPARE(malformed.code(), Status::Code::BadRequest);
    QVERIFY2(malformed.message().startsWith(QLatin1String("b.xml:1: malformed XML")), qPrintable(malformed.message()));
    QVERIFY(!r.contains(QStringLiteral("A")));
}

void TestIsTypes::directoryLoadResolvesAcrossFiles()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(writeFile(dir.filePath(QStringLiteral("a.xml")),
                      "<is-types><type name=\"Derived\" base=\"Base\"><attribute name=\"n\" type=\"Nested\"/>"
                      "</type></is-types>"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("b.xml")),
                      "<is-types><type name=\"Base\"><attribute name=\"x\" type=\"s32\"/></type>"
                      "<type name=\"Nested\"><attribute name=\"y\" type=\"time\"/></type></is-types>"));
    TypeRegistry r;
    QString error;
    QVERIFY_OK(r.loadDirectory(dir.path()));
    QCOMPARE(names(r.type(QStringLiteral("Derived")).allAttributes()), QStringList({"x", "n"}));
}

void TestIsTypes::runtimeDeclaration_data()
{
    QTest::addColumn<TypeInfo>("type");
    QTest::addColumn<QString>("expected"); // empty: accepted

    TypeInfo ok(QStringLiteral("Temperature"), QStringLiteral("A sensor"));
    ok.addAttribute(AttributeInfo(QStringLiteral("celsius"), BasicType::Float, QStringLiteral("Value")));
    ok.addAttribute(AttributeInfo::nested(QStringLiteral("history"), QStringLiteral("Histogram1D")));
    QTest::newRow("valid") << ok << QString();

    TypeInfo derived(QStringLiteral("Named1D"), {}, QStringLiteral("Histogram1D"));
    derived.addAttribute(AttributeInfo(QStringLiteral("owner"), BasicType::String));
    QTest::newRow("derivedFromBuiltin") << derived << QString();

    QTest::newRow("duplicate") << TypeInfo(QStringLiteral("Histogram2D")) << "duplicate type 'Histogram2D'";
    QTest::newRow("noName") << TypeInfo() << "missing type name";
    QTest::newRow("unknownBase") << TypeInfo(QStringLiteral("X"), {}, QStringLiteral("Y"))
                                 << "unknown base type 'Y' of type 'X'";

    TypeInfo clash(QStringLiteral("X"), {}, QStringLiteral("Histogram1D"));
    clash.addAttribute(AttributeInfo(QStringLiteral("bins"), BasicType::U64));
    QTest::newRow("clashWithBase")
        << clash << "duplicate attribute 'bins' in type 'X' (already in base type 'Histogram1D')";

    TypeInfo nested(QStringLiteral("X"));
    nested.addAttribute(AttributeInfo::nested(QStringLiteral("n"), QStringLiteral("Nope")));
    QTest::newRow("unknownNested") << nested << "unknown attribute type 'Nope' in type 'X'";

    TypeInfo self(QStringLiteral("X"));
    self.addAttribute(AttributeInfo::nested(QStringLiteral("me"), QStringLiteral("X")));
    QTest::newRow("containsItself") << self << "nested type cycle: X -> X";
}

void TestIsTypes::runtimeDeclaration()
{
    QFETCH(TypeInfo, type);
    QFETCH(QString, expected);
    TypeRegistry r;
    const Status declared = r.declareType(type);
    if (expected.isEmpty()) {
        QVERIFY_OK(declared);
        const TypeInfo stored = r.type(type.name());
        QCOMPARE(stored.attributes(), type.attributes());
        QCOMPARE(stored.description(), type.description());
        QVERIFY(stored.allAttributes().size() >= type.attributes().size());
    } else {
        QCOMPARE(declared.code(), expected.startsWith(QLatin1String("unknown")) ? Status::Code::UnknownType
                                                                                : Status::Code::BadRequest);
        QCOMPARE(declared.message(), expected);
        QCOMPARE(r.typeNames(), QStringList({"Histogram1D", "Histogram2D"}));
    }
}

void TestIsTypes::inheritanceQueries_data()
{
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("base");
    QTest::addColumn<bool>("expected");
    QTest::newRow("same") << "ReadoutStats"
                          << "ReadoutStats" << true;
    QTest::newRow("direct") << "ReadoutStats"
                            << "ProcessStats" << true;
    QTest::newRow("reverse") << "ProcessStats"
                             << "ReadoutStats" << false;
    QTest::newRow("unrelated") << "RunInfo"
                               << "ProcessStats" << false;
    QTest::newRow("unknownType") << "Nope"
                                 << "ProcessStats" << false;
    QTest::newRow("unknownBase") << "ReadoutStats"
                                 << "Nope" << false;
    QTest::newRow("empty") << ""
                           << "" << false;
}

void TestIsTypes::inheritanceQueries()
{
    QFETCH(QString, type);
    QFETCH(QString, base);
    QFETCH(bool, expected);
    TypeRegistry r;
    QString error;
    QVERIFY_OK(r.loadDirectory(ResourceDir));
    QCOMPARE(r.isSameOrDerived(type, base), expected);
}

void TestIsTypes::subtypesAreTransitive()
{
    TypeRegistry r;
    QString error;
    QVERIFY_OK(r.loadXml("<is-types><type name=\"A\"/><type name=\"B\" base=\"A\"/><type name=\"C\" base=\"B\"/>"
                  "<type name=\"D\" base=\"A\"/><type name=\"E\"/></is-types>",
                  QStringLiteral("t.xml")));
    QCOMPARE(r.subtypesOf(QStringLiteral("A")), QStringList({"B", "C", "D"}));
    QCOMPARE(r.subtypesOf(QStringLiteral("B")), QStringList({"C"}));
    QCOMPARE(r.subtypesOf(QStringLiteral("C")), QStringList());
    QCOMPARE(r.subtypesOf(QStringLiteral("Nope")), QStringList());
    QVERIFY(r.isSameOrDerived(QStringLiteral("C"), QStringLiteral("A")));
    QVERIFY(!r.isSameOrDerived(QStringLiteral("E"), QStringLiteral("A")));
}

void TestIsTypes::concurrentReadersDuringDeclarations()
{
    TypeRegistry r;
    std::atomic<bool> stop{false};
    std::atomic<int> bad{0};
    // std::thread, not QThread: its join() is a pthread_join that ThreadSanitizer sees (QThread::wait()
    // returns through a futex inside libQt6Core), so the readers' last reads are ordered before the
    // stack they read goes.
    std::vector<std::thread> readers;
    auto joinReaders = qScopeGuard([&] { // also when a check below returns early
        stop = true;
        for (std::thread &t : readers)
            if (t.joinable())
                t.join();
    });
    for (int i = 0; i < 3; ++i) {
        readers.emplace_back([&] {
            while (!stop) {
                const QStringList all = r.typeNames();
                for (const QString &name : all) {
                    const TypeInfo t = r.type(name);
                    if (!t.isValid() || t.allAttributes().size() < t.attributes().size())
                        ++bad;
                    r.isSameOrDerived(name, QStringLiteral("T0"));
                }
                r.subtypesOf(QStringLiteral("T0"));
            }
        });
    }
    for (int i = 0; i < 200; ++i) {
        TypeInfo t(QStringLiteral("T%1").arg(i), {}, i > 0 ? QStringLiteral("T%1").arg(i - 1) : QString());
        t.addAttribute(AttributeInfo(QStringLiteral("a%1").arg(i), BasicType::U32));
        QString error;
        QVERIFY_OK(r.declareType(t));
    }
    joinReaders.dismiss();
    stop = true;
    for (std::thread &t : readers)
        t.join();
    QCOMPARE(bad.load(), 0);
    QCOMPARE(r.subtypesOf(QStringLiteral("T0")).size(), 199);
    QCOMPARE(r.type(QStringLiteral("T199")).allAttributes().size(), 200);
}

void TestIsTypes::expectedIntervalFromXml()
{
    TypeRegistry r;
    QString error;
    QVERIFY_OK(r.loadXml("<is-types>\n"
                       "<type name=\"Base\" expected_interval_s=\"2.5\"/>\n"
                       "<type name=\"Inherits\" base=\"Base\"/>\n"
                       "<type name=\"Own\" base=\"Inherits\" expected_interval_s=\"10\"/>\n"
                       "<type name=\"None\"/>\n"
                       "</is-types>\n",
                       QStringLiteral("t.xml")));
    QCOMPARE(r.type(QStringLiteral("Base")).expectedIntervalS(), 2.5);
    QCOMPARE(r.type(QStringLiteral("Inherits")).expectedIntervalS(), 0.0); // its own: none
    QCOMPARE(r.expectedIntervalS(QStringLiteral("Inherits")), 2.5);        // the one that applies
    QCOMPARE(r.expectedIntervalS(QStringLiteral("Own")), 10.0);
    QCOMPARE(r.expectedIntervalS(QStringLiteral("None")), 0.0);
    QCOMPARE(r.expectedIntervalS(QStringLiteral("Histogram1D")), 0.0);
    QCOMPARE(r.expectedIntervalS(QStringLiteral("Unknown")), 0.0);
    // The shipped process statistics are expected every 5 s, and so are their subtypes.
    TypeRegistry shipped;
    QVERIFY_OK(shipped.loadDirectory(ResourceDir));
    QCOMPARE(shipped.expectedIntervalS(QStringLiteral("ReadoutStats")), 5.0);
    QCOMPARE(shipped.expectedIntervalS(QStringLiteral("RunInfo")), 0.0);
}

void TestIsTypes::expectedIntervalThroughJson()
{
    // Clients learn the interval with the server's types (JSON), and a checkpoint keeps it.
    TypeRegistry r;
    TypeInfo t(QStringLiteral("Beat"));
    t.addAttribute(AttributeInfo(QStringLiteral("n"), BasicType::U32));
    t.setExpectedIntervalS(1);
    QVERIFY_OK(r.declareType(t));
    const QJsonObject json = typeToJson(r.type(QStringLiteral("Beat")));
    QCOMPARE(json.value(QLatin1String("expected_interval_s")).toDouble(), 1.0);
    QVERIFY(
        !typeToJson(r.type(QStringLiteral("Histogram1D"))).contains(QLatin1String("expected_interval_s")));
    QList<TypeInfo> back;
    QVERIFY_OK(typesFromJson(QJsonArray{json}, &back));
    QCOMPARE(back.size(), 1);
    QCOMPARE(back.first().expectedIntervalS(), 1.0);
    QJsonObject bad = json;
    bad.insert(QStringLiteral("expected_interval_s"), QStringLiteral("1"));
    const Status refused = typesFromJson(QJsonArray{bad}, &back);
    QCOMPARE(refused.code(), Status::Code::BadRequest);
    QVERIFY2(refused.message().contains(QLatin1String("expected_interval_s")), qPrintable(refused.message()));
}

QTEST_GUILESS_MAIN(TestIsTypes)
#include "tst_istypes.moc"
