// The web IS of dialog-isserver (--http-port): every HTTP route in XML and JSON, criteria, errors,
// the bound on concurrent requests, and the live WebSocket. Real binaries on loopback.
#include "statuscheck.h"
#include "isweb.h"

#include "dialog/client.h"
#include "dialog/is/codec.h"
#include "dialog/is/dictionary.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QWebSocket>
#include <QXmlStreamReader>
#include <QtTest>
#include <csignal>

using namespace dialog;
using namespace dialog::test;

class tst_IsWeb : public IsWebTest
{
    Q_OBJECT

private Q_SLOTS:
    void init() { setUpFixture(); }
    void cleanup() { tearDownFixture(); }
    void serversAndLists();
    void objectXmlAndJson();
    void nestedTypesAndVectors();
    void types();
    void otherServerThroughTheDictionary();
    void errors_data();
    void errors();
    void malformedAndSplitRequests();
    void openConnectionsBounded();
    void listenFailureIsReported();
    void pageFilesBuiltInAndFromWebRoot();
    void idleConnectionsAreClosed();
    void fourthRequestOverLimitOfThreeGets503();
    void slowLorisIsTimedOutAndCappedPerAddress();
};

namespace {
QJsonObject json(const HttpReply &r)
{
    return QJsonDocument::fromJson(r.body).object();
}

is::TypeInfo innerType()
{
    is::TypeInfo t(QStringLiteral("WebInner"), QStringLiteral("Nested part"));
    t.setAttributes({is::AttributeInfo(QStringLiteral("x"), is::BasicType::U32, QStringLiteral("A number")),
                     is::AttributeInfo(QStringLiteral("samples"), is::BasicType::Double,
                                       QStringLiteral("Samples"), true)});
    return t;
}

is::TypeInfo outerType()
{
    is::TypeInfo t(QStringLiteral("WebOuter"), QStringLiteral("Nested types and vectors"));
    t.setAttributes(
        {is::AttributeInfo(QStringLiteral("label"), is::BasicType::String,
                           QStringLiteral("A <label> & more")),
         is::AttributeInfo::nested(QStringLiteral("inner"), QStringLiteral("WebInner"),
                                   QStringLiteral("One inner")),
         is::AttributeInfo::nested(QStringLiteral("parts"), QStringLiteral("WebInner"),
                                   QStringLiteral("Inner list"), true),
         is::AttributeInfo(QStringLiteral("counts"), is::BasicType::U16, QStringLiteral("Counters"), true),
         is::AttributeInfo(QStringLiteral("flag"), is::BasicType::Bool, QStringLiteral("A flag"))});
    return t;
}
} // namespace

void tst_IsWeb::serversAndLists()
{
    fill();
    HttpReply r = httpGet(m_http, "/is?format=json");
    QCOMPARE(r.status, 200);
    QCOMPARE(r.header("content-type"), QByteArray("application/json"));
    const QJsonArray servers = json(r).value(QLatin1String("servers")).toArray();
    QCOMPARE(servers.size(), 1);
    QCOMPARE(servers.at(0).toObject().value(QLatin1String("name")).toString(), QStringLiteral("DAQ"));
    QCOMPARE(servers.at(0).toObject().value(QLatin1String("objects")).toInt(), 4); // + DAQ.Statistics
    QVERIFY(servers.at(0).toObject().value(QLatin1String("local")).toBool());

    r = httpGet(m_http, "/is");
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("content-type").startsWith("application/xml"));
    QVERIFY2(r.body.contains("<server name=\"DAQ\" objects=\"4\" local=\"1\"/>"), r.body);

    auto names = [](const HttpReply &r) {
        QStringList out;
        for (const QJsonValue &v : json(r).value(QLatin1String("objects")).toArray())
            out << v.toObject().value(QLatin1String("name")).toString();
        return out;
    };
    // The same criteria as the IS API: whole-name regex, exact type, type with subtypes; Accept header.
    r = httpGet(m_http, "/is/DAQ", "Accept: application/json\r\n");
    QCOMPARE(names(r), (QStringList{"DAQ.Control1", "DAQ.Readout1", "DAQ.RunInfo", "DAQ.Statistics"}));
    QCOMPARE(names(httpGet(m_http, "/is/DAQ?format=json&regex=R.*")),
             (QStringList{"DAQ.Readout1", "DAQ.RunInfo"}));
    QCOMPARE(names(httpGet(m_http, "/is/DAQ?format=json&regex=%5BRC%5D.*1")),
             (QStringList{"DAQ.Control1", "DAQ.Readout1"}));
    QCOMPARE(names(httpGet(m_http, "/is/DAQ?format=json&type=ProcessStats")), (QStringList{"DAQ.Control1"}));
    QCOMPARE(names(httpGet(m_http, "/is/DAQ?format=json&type=ProcessStats&subtypes=1")),
             (QStringList{"DAQ.Control1", "DAQ.Readout1"}));
    QCOMPARE(names(httpGet(m_http, "/is/DAQ?format=json&regex=R.*&type=ProcessStats&subtypes=1")),
             (QStringList{"DAQ.Readout1"}));
    r = httpGet(m_http, "/is/DAQ?format=json&regex=RunInfo");
    const QJsonObject entry = json(r).value(QLatin1String("objects")).toArray().at(0).toObject();
    QCOMPARE(entry.value(QLatin1String("type")).toString(), QStringLiteral("RunInfo"));
    QVERIFY(entry.value(QLatin1String("time")).toString().endsWith(QLatin1Char('Z')));

    r = httpGet(m_http, "/is/DAQ?type=ReadoutStats");
    QCOMPARE(r.status, 200);
    QVERIFY2(r.body.contains("<objects server=\"DAQ\" count=\"1\">"), r.body);
    QVERIFY2(r.body.contains("<obj name=\"DAQ.Readout1\" type=\"ReadoutStats\" time=\""), r.body);
    // HEAD: the headers only.
    HttpConnection c;
    QVERIFY(c.open(m_http));
    c.send("HEAD", "/is/DAQ");
    r = c.wait();
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("content-length").toInt() > 0);
    c.send("GET", "/is/DAQ/DAQ.RunInfo"); // the same connection is kept alive, and no body was left over
    QCOMPARE(c.wait().status, 200);
}

void tst_IsWeb::objectXmlAndJson()
{
    fill();
    HttpReply r = httpGet(m_http, "/is/DAQ/DAQ.RunInfo");
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("content-type").startsWith("application/xml"));
    // The IS paper's shape.
    QXmlStreamReader x(r.body);
    QVERIFY(x.readNextStartElement());
    QCOMPARE(x.name(), QLatin1String("obj"));
    QCOMPARE(x.attributes().value(QLatin1String("name")), QLatin1String("DAQ.RunInfo"));
    QCOMPARE(x.attributes().value(QLatin1String("type")), QLatin1String("RunInfo"));
    QVERIFY(!x.attributes().value(QLatin1String("time")).isEmpty());
    QHash<QString, QStringList> values;
    QHash<QString, QString> types, descrs;
    while (x.readNextStartElement()) {
        QCOMPARE(x.name(), QLatin1String("attr"));
        const QString name = x.attributes().value(QLatin1String("name")).toString();
        types[name] = x.attributes().value(QLatin1String("type")).toString();
        descrs[name] = x.attributes().value(QLatin1String("descr")).toString();
        while (x.readNextStartElement()) {
            QCOMPARE(x.name(), QLatin1String("v"));
            values[name] << x.readElementText();
        }
    }
    QVERIFY2(!x.hasError(), qPrintable(x.errorString()));
    QCOMPARE(values.value(QStringLiteral("activeTime")), QStringList{QStringLiteral("22317")});
    QCOMPARE(types.value(QStringLiteral("activeTime")), QStringLiteral("u32"));
    QCOMPARE(descrs.value(QStringLiteral("activeTime")),
             m_dict->types().type(QStringLiteral("RunInfo")).attributes().at(3).description());
    QCOMPARE(values.value(QStringLiteral("state")), QStringList{QStringLiteral("Running")});
    QCOMPARE(types.value(QStringLiteral("startTime")), QStringLiteral("time"));

    // JSON: by Accept and by ?format=json, the value as dialog::is::toJson (the `dialogctl is get --json`
    // form).
    is::Entry e;
    QVERIFY(m_dict->getSync(QStringLiteral("DAQ.RunInfo"), &e).isOk());
    for (const HttpReply &jr : {httpGet(m_http, "/is/DAQ/DAQ.RunInfo", "Accept: application/json\r\n"),
                                httpGet(m_http, "/is/DAQ/DAQ.RunInfo?format=json")}) {
        QCOMPARE(jr.status, 200);
        const QJsonObject j = json(jr);
        QCOMPARE(j.value(QLatin1String("name")).toString(), QStringLiteral("DAQ.RunInfo"));
        QCOMPARE(j.value(QLatin1String("type")).toString(), QStringLiteral("RunInfo"));
        QCOMPARE(j.value(QLatin1String("time")).toString(), e.time.toString());
        QCOMPARE(j.value(QLatin1String("value")).toObject(), is::toJson(e.object));
    }
    // ?format=xml wins over Accept; read as a base type with ?as=.
    QVERIFY(httpGet(m_http, "/is/DAQ/DAQ.RunInfo?format=xml", "Accept: application/json\r\n")
                .body.startsWith("<?xml"));
    r = httpGet(m_http, "/is/DAQ/DAQ.Readout1?format=json&as=ProcessStats");
    QCOMPARE(r.status, 200);
    QCOMPARE(json(r).value(QLatin1String("value")).toObject().keys(),
             is::toJson(is::Object::create(m_dict->types(), QStringLiteral("ProcessStats"))).keys());

    // A value changed through the IS API is what the next GET returns.
    QVERIFY_OK(e.object.set<quint32>(QStringLiteral("activeTime"), 22318));
    QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.RunInfo"), e.object).isOk());
    QVERIFY(httpGet(m_http, "/is/DAQ/DAQ.RunInfo").body.contains("<v>22318</v>"));
}

void tst_IsWeb::nestedTypesAndVectors()
{
    fill();
    QVERIFY(m_dict->declareTypesSync(QStringLiteral("DAQ"), {innerType(), outerType()}).isOk());
    is::Object in1 = is::Object::create(m_dict->types(), QStringLiteral("WebInner"));
    QVERIFY_OK(in1.set<quint32>(QStringLiteral("x"), 7));
    QVERIFY_OK(in1.set(QStringLiteral("samples"), QList<double>{0.5, -2.25}));
    is::Object in2 = is::Object::create(m_dict->types(), QStringLiteral("WebInner"));
    QVERIFY_OK(in2.set<quint32>(QStringLiteral("x"), 8));
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("WebOuter"));
    QVERIFY_OK(o.set(QStringLiteral("label"), QStringLiteral("a<b & \"c\"")));
    QVERIFY_OK(o.set(QStringLiteral("inner"), in1));
    QVERIFY_OK(o.set(QStringLiteral("parts"), QList<is::Object>{in1, in2}));
    QVERIFY_OK(o.set(QStringLiteral("counts"), QList<quint16>{1, 2, 65535}));
    QVERIFY_OK(o.set(QStringLiteral("flag"), true));
    QVERIFY(m_dict->insertSync(QStringLiteral("DAQ.Nested"), o).isOk());

    const HttpReply r = httpGet(m_http, "/is/DAQ/DAQ.Nested");
    QCOMPARE(r.status, 200);
    // Walk the XML back into a JSON value and compare with dialog::is::toJson: nothing lost or added.
    QXmlStreamReader x(r.body);
    std::function<QJsonObject()> readObj = [&]() {
        QJsonObject obj;
        while (x.readNextStartElement()) { // <attr>
            const QString name = x.attributes().value(QLatin1String("name")).toString();
            const QString type = x.attributes().value(QLatin1String("type")).toString();
            const bool array = x.attributes().value(QLatin1String("array")) == QLatin1String("1");
            QJsonArray vs;
            while (x.readNextStartElement()) { // <v>
                if (type.startsWith(QLatin1String("Web"))) {
                    x.readNextStartElement(); // <obj>
                    vs.append(readObj());
                    x.skipCurrentElement(); // </v>
                } else {
                    const QString text = x.readElementText();
                    if (type == QLatin1String("string"))
                        vs.append(text);
                    else if (type == QLatin1String("bool"))
                        vs.append(text == QLatin1String("true"));
                    else
                        vs.append(text.toDouble());
                }
            }
            obj.insert(name, array ? QJsonValue(vs) : vs.at(0));
        }
        return obj;
    };
    QVERIFY(x.readNextStartElement());
    QCOMPARE(x.attributes().value(QLatin1String("type")), QLatin1String("WebOuter"));
    const QJsonObject fromXml = readObj();
    QVERIFY2(!x.hasError(), qPrintable(x.errorString()));
    QCOMPARE(fromXml, is::toJson(o));
    QVERIFY2(r.body.contains("<attr name=\"counts\" descr=\"Counters\" type=\"u16\" array=\"1\">"), r.body);
    QVERIFY2(r.body.contains("descr=\"A &lt;label&gt; &amp; more\""), r.body);
    QCOMPARE(json(httpGet(m_http, "/is/DAQ/DAQ.Nested?format=json")).value(QLatin1String("value")).toObject(),
             is::toJson(o));
}

void tst_IsWeb::types()
{
    fill();
    HttpReply r = httpGet(m_http, "/is/types?format=json");
    QCOMPARE(r.status, 200);
    QStringList names;
    for (const QJsonValue &v : json(r).value(QLatin1String("types")).toArray())
        names << v.toObject().value(QLatin1String("name")).toString();
    QVERIFY2(names.contains(QStringLiteral("RunInfo")) && names.contains(QStringLiteral("ReadoutStats")) &&
                 names.contains(QStringLiteral("Histogram1D")) &&
                 names.contains(QStringLiteral("ISServerStatistics")),
             qPrintable(names.join(QLatin1Char(' '))));
    r = httpGet(m_http, "/is/types/ReadoutStats?format=json");
    QCOMPARE(r.status, 200);
    const QJsonObject t = json(r);
    QCOMPARE(t.value(QLatin1String("base")).toString(), QStringLiteral("ProcessStats"));
    // all attributes, the inherited ones first
    const is::TypeInfo info = m_dict->types().type(QStringLiteral("ReadoutStats"));
    QCOMPARE(t.value(QLatin1String("allAttributes")).toArray().size(), info.allAttributes().size());
    QCOMPARE(t.value(QLatin1String("allAttributes"))
                 .toArray()
                 .at(0)
                 .toObject()
                 .value(QLatin1String("name"))
                 .toString(),
             info.allAttributes().at(0).name());
    r = httpGet(m_http, "/is/types/ProcessStats?format=json");
    QCOMPARE(json(r).value(QLatin1String("subtypes")).toArray(),
             QJsonArray::fromStringList(m_dict->types().subtypesOf(QStringLiteral("ProcessStats"))));
    QVERIFY(json(r).value(QLatin1String("subtypes")).toArray().contains(QStringLiteral("ReadoutStats")));
    r = httpGet(m_http, "/is/types/RunInfo");
    QCOMPARE(r.status, 200);
    QVERIFY2(r.body.contains("<type name=\"RunInfo\"") && r.body.contains("<attr name=\"activeTime\""),
             r.body);
    r = httpGet(m_http, "/is/types");
    QVERIFY(r.body.contains("<types>"));
}

void tst_IsWeb::otherServerThroughTheDictionary()
{
    fill();
    startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set<quint32>(QStringLiteral("activeTime"), 99));
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RunInfo"), run).isOk());

    HttpReply r = httpGet(m_http, "/is/RunParams/RunParams.RunInfo");
    QCOMPARE(r.status, 200);
    QVERIFY2(r.body.contains("<obj name=\"RunParams.RunInfo\" type=\"RunInfo\"") &&
                 r.body.contains("<v>99</v>"),
             r.body);
    r = httpGet(m_http, "/is/RunParams?format=json&regex=Run.*");
    QCOMPARE(r.status, 200);
    QCOMPARE(json(r).value(QLatin1String("objects")).toArray().size(), 1);
    QCOMPARE(httpGet(m_http, "/is/RunParams/RunParams.Missing").status, 404);

    // Both servers with their counts (the other's from its statistics, refreshed every second).
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            const QJsonArray s =
                json(httpGet(m_http, "/is?format=json")).value(QLatin1String("servers")).toArray();
            return s.size() == 2 &&
                   s.at(1).toObject().value(QLatin1String("name")).toString() == QLatin1String("RunParams") &&
                   s.at(1).toObject().value(QLatin1String("objects")).toInt() == 2 &&
                   !s.at(1).toObject().value(QLatin1String("local")).toBool();
        }(),
        5000);
}

void tst_IsWeb::errors_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("says");
    QTest::newRow("unknown object") << QByteArray("GET") << QByteArray("/is/DAQ/DAQ.Nope") << 404
                                    << QByteArray("no object DAQ.Nope");
    QTest::newRow("unknown server") << QByteArray("GET") << QByteArray("/is/Nope/Nope.X") << 404
                                    << QByteArray("Nope");
    QTest::newRow("unknown server list")
        << QByteArray("GET") << QByteArray("/is/Nope") << 404 << QByteArray("Nope");
    QTest::newRow("unknown type") << QByteArray("GET") << QByteArray("/is/types/Nope") << 404
                                  << QByteArray("unknown type");
    QTest::newRow("unknown type criteria")
        << QByteArray("GET") << QByteArray("/is/DAQ?type=Nope") << 404 << QByteArray("unknown type");
    QTest::newRow("unknown base type")
        << QByteArray("GET") << QByteArray("/is/DAQ/DAQ.RunInfo?as=Nope") << 404 << QByteArray("Nope");
    QTest::newRow("unrelated base type")
        << QByteArray("GET") << QByteArray("/is/DAQ/DAQ.RunInfo?as=ProcessStats") << 400
        << QByteArray("ProcessStats");
    QTest::newRow("bad regex") << QByteArray("GET") << QByteArray("/is/DAQ?regex=(") << 400
                               << QByteArray("bad regular expression");
    // One GET with a nested bounded repetition used to make the server grow by ~1 GB/s.
    QTest::newRow("catastrophic regex")
        << QByteArray("GET") << QByteArray("/is/DAQ?regex=X.(((a%7B1,255%7D)%7B1,255%7D)%7B1,255%7D)") << 400
        << QByteArray("too large");
    QTest::newRow("regex too long") << QByteArray("GET")
                                    << QByteArray("/is/DAQ?regex=") + QByteArray(1500, 'a') << 400
                                    << QByteArray("too long");
    QTest::newRow("bad format") << QByteArray("GET") << QByteArray("/is/DAQ?format=yaml") << 400
                                << QByteArray("unknown format");
    QTest::newRow("bad subtypes") << QByteArray("GET") << QByteArray("/is/DAQ?type=RunInfo&subtypes=maybe")
                                  << 400 << QByteArray("subtypes");
    QTest::newRow("subtypes without type")
        << QByteArray("GET") << QByteArray("/is/DAQ?subtypes=1") << 400 << QByteArray("type=");
    QTest::newRow("name of another server")
        << QByteArray("GET") << QByteArray("/is/DAQ/Other.RunInfo") << 400 << QByteArray("DAQ.<Object>");
    QTest::newRow("name without server")
        << QByteArray("GET") << QByteArray("/is/DAQ/RunInfo") << 400 << QByteArray("DAQ.<Object>");
    QTest::newRow("server with dot") << QByteArray("GET") << QByteArray("/is/D.AQ") << 400
                                     << QByteArray("invalid server name");
    QTest::newRow("POST") << QByteArray("POST") << QByteArray("/is/DAQ/DAQ.RunInfo") << 405
                          << QByteArray("read-only");
    QTest::newRow("PUT") << QByteArray("PUT") << QByteArray("/is/DAQ") << 405 << QByteArray("read-only");
    QTest::newRow("DELETE") << QByteArray("DELETE") << QByteArray("/is/DAQ/DAQ.RunInfo") << 405
                            << QByteArray("read-only");
    QTest::newRow("websocket path without upgrade")
        << QByteArray("GET") << QByteArray("/is/ws") << 400 << QByteArray("WebSocket");
    QTest::newRow("huge query") << QByteArray("GET") << QByteArray("/is/DAQ?regex=") + QByteArray(20000, 'a')
                                << 414 << QByteArray("longer than");
    QTest::newRow("no such page file")
        << QByteArray("GET") << QByteArray("/nope.html") << 404 << QByteArray("no such file");
    QTest::newRow("path traversal") << QByteArray("GET") << QByteArray("/%2e%2e%2fetc%2fpasswd") << 404
                                    << QByteArray("no such");
    QTest::newRow("deep page path") << QByteArray("GET") << QByteArray("/a/b") << 404
                                    << QByteArray("no such resource");
    QTest::newRow("types too deep") << QByteArray("GET") << QByteArray("/is/types/RunInfo/x") << 404
                                    << QByteArray("no such resource");
}

void tst_IsWeb::errors()
{
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, path);
    QFETCH(int, status);
    QFETCH(QByteArray, says);
    fill();
    const HttpReply r = httpGet(m_http, path, {}, method);
    QCOMPARE(r.status, status);
    QVERIFY(r.header("content-type").startsWith("text/plain"));
    QVERIFY2(r.body.startsWith(QByteArray::number(status)) && r.body.contains(says), r.body);
    if (status == 405)
        QCOMPARE(r.header("allow"), QByteArray("GET, HEAD"));
    // The server is unharmed.
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.RunInfo").status, 200);
}

// Requests cut in pieces, a WebSocket handshake cut in pieces, an oversized head, garbage.
void tst_IsWeb::malformedAndSplitRequests()
{
    fill();
    HttpConnection split;
    QVERIFY(split.open(m_http));
    // The pauses make the server read each piece on its own; meanwhile it must not answer.
    const auto answered = [&split] { return split.hasReply(); };
    split.socket().write("GET /is/DAQ/DAQ.Run");
    split.socket().flush();
    QVERIFY(expectNothingFor(100, answered, "an answer to half a request line"));
    split.socket().write("Info HTTP/1.1\r\nHost: x\r\n");
    split.socket().flush();
    QVERIFY(expectNothingFor(100, answered, "an answer to a request head without its end"));
    split.socket().write("\r\n");
    QCOMPARE(split.wait().status, 200);

    QTcpSocket ws;
    ws.connectToHost(QHostAddress::LocalHost, m_http);
    QVERIFY(ws.waitForConnected(5000));
    // In pieces again, read apart by the server.
    const auto wsAnswered = [&ws] { return ws.bytesAvailable() > 0; };
    ws.write("GET /is/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: web");
    ws.flush();
    QVERIFY(expectNothingFor(100, wsAnswered, "an answer to a third of a handshake"));
    ws.write("socket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n");
    ws.flush();
    QVERIFY(expectNothingFor(100, wsAnswered, "an answer to two thirds of a handshake"));
    ws.write("Sec-WebSocket-Version: 13\r\n\r\n");
    QByteArray in;
    QElapsedTimer t;
    t.start();
    while (!in.contains("\r\n\r\n") && t.elapsed() < 5000) {
        ws.waitForReadyRead(50);
        in += ws.readAll();
    }
    QVERIFY2(in.startsWith("HTTP/1.1 101"), in);

    HttpConnection big;
    QVERIFY(big.open(m_http));
    big.send("GET", "/is", "X-Big: " + QByteArray(100 * 1024, 'a') + "\r\n");
    const HttpReply r = big.wait();
    QCOMPARE(r.status, 431);
    QVERIFY(r.body.contains("longer than 65536 bytes"));
    QTRY_COMPARE_WITH_TIMEOUT(big.socket().state(), QAbstractSocket::UnconnectedState, 5000);

    // Not HTTP: a 400 that says so, at the first line, and the connection closed.
    for (const QByteArray &garbage :
         {QByteArray("HELLO WORLD\r\n\r\n"), QByteArray("\x00\xff\xfe\r\n\r\n", 7),
          QByteArray("SSH-2.0-OpenSSH_9.2\r\n")}) {
        HttpConnection g;
        QVERIFY(g.open(m_http));
        g.socket().write(garbage);
        const HttpReply bad = g.wait(5000);
        QCOMPARE(bad.status, 400);
        QVERIFY2(bad.body.contains("not an HTTP/1.x request line"), bad.body.constData());
        QTRY_COMPARE_WITH_TIMEOUT(g.socket().state(), QAbstractSocket::UnconnectedState, 5000);
    }
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.RunInfo").status, 200);
}

// Open connections are bounded (--http-max-websockets + 4 x --http-max-requests = 1 + 4 here):
// the one over gets 503; closed ones make room again.
void tst_IsWeb::openConnectionsBounded()
{
    m_server =
        startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-max-requests"), QStringLiteral("1"),
                                               QStringLiteral("--http-max-websockets"), QStringLiteral("1")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_http != 0);
    std::vector<std::unique_ptr<HttpConnection>> open;
    for (int i = 0; i < 5; ++i) {
        open.push_back(std::make_unique<HttpConnection>());
        QVERIFY(open.back()->open(m_http));
        open.back()->send("GET", "/is/DAQ");
        QCOMPARE(open.back()->wait().status, 200); // kept alive
    }
    HttpConnection over;
    QVERIFY(over.open(m_http));
    const HttpReply refused = over.wait(5000);
    QCOMPARE(refused.status, 503);
    QVERIFY2(refused.body.contains("5 connections are open"), refused.body.constData());
    open.clear();
    // Many short connections after that: each one's slot is given back when it closes.
    for (int i = 0; i < 30; ++i)
        QTRY_COMPARE_WITH_TIMEOUT(httpGet(m_http, "/is/DAQ").status, 200, 5000);
}

void tst_IsWeb::pageFilesBuiltInAndFromWebRoot()
{
    fill();
    // Built in: the files of resources/web, byte for byte, with their content types.
    const QString src = QStringLiteral(DIALOG_SOURCE_DIR "/resources/web/");
    const QList<QPair<QByteArray, QString>> files{{"/", QStringLiteral("index.html")},
                                                  {"/app.js", QStringLiteral("app.js")},
                                                  {"/style.css", QStringLiteral("style.css")},
                                                  {"/favicon.svg", QStringLiteral("favicon.svg")}};
    const QList<QByteArray> types{"text/html", "text/javascript", "text/css", "image/svg+xml"};
    for (int i = 0; i < files.size(); ++i) {
        QFile f(src + files.at(i).second);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const HttpReply r = httpGet(m_http, files.at(i).first);
        QCOMPARE(r.status, 200);
        QVERIFY2(r.header("content-type").startsWith(types.at(i)), r.head);
        QCOMPARE(r.body, f.readAll());
    }
    // --web-root: the page from a directory.
    QTemporaryDir root;
    QFile index(root.filePath(QStringLiteral("index.html")));
    QVERIFY(index.open(QIODevice::WriteOnly));
    index.write("<p>development copy</p>");
    index.close();
    const quint16 port =
        httpPortOf(startServer(QStringLiteral("Dev"), {QStringLiteral("--http-port"), QStringLiteral("0"),
                                                       QStringLiteral("--web-root"), root.path()}));
    QVERIFY(port != 0);
    QCOMPARE(httpGet(port, "/").body, QByteArray("<p>development copy</p>"));
    QCOMPARE(httpGet(port, "/app.js").status, 404); // not in that directory
}

void tst_IsWeb::listenFailureIsReported()
{
    QTcpServer taken;
    QVERIFY(taken.listen(QHostAddress::LocalHost, 0));
    QProcess *p = startServer(QStringLiteral("DAQ"),
                              {QStringLiteral("--http-port"), QString::number(taken.serverPort())});
    QVERIFY(p->waitForFinished(10000));
    QCOMPARE(p->exitCode(), 1);
    const QByteArray err = p->readAllStandardError();
    QVERIFY2(err.contains("cannot listen on 127.0.0.1:" + QByteArray::number(taken.serverPort()) + ": "),
             err);
}

// The IS paper's servers bound concurrent requests to protect data taking. Requests for objects of
// another server are in progress until it answers: with that server stopped (SIGSTOP), three
// requests stay in progress and the fourth is answered 503 at once.
void tst_IsWeb::fourthRequestOverLimitOfThreeGets503()
{
    startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-max-requests"), QStringLiteral("3"),
                                           QStringLiteral("--http-idle-s"), QStringLiteral("1")});
    QProcess *slow = startServer(QStringLiteral("Slow"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(waitForServer(QStringLiteral("Slow")));
    QVERIFY(m_http != 0);
    QCOMPARE(httpGet(m_http, "/is/Slow/Slow.Statistics").status, 200); // the path to Slow is known
    QCOMPARE(::kill(pid_t(slow->processId()), SIGSTOP), 0);

    HttpConnection held[3];
    for (HttpConnection &c : held) {
        QVERIFY(c.open(m_http));
        c.send("GET", "/is/Slow/Slow.Statistics");
    }
    // Once the server has read all three, a fourth request is refused.
    HttpReply r;
    QTRY_COMPARE_WITH_TIMEOUT((r = httpGet(m_http, "/is/DAQ/DAQ.Statistics")).status, 503, 10000);
    for (HttpConnection &c : held)
        QVERIFY(!c.hasReply()); // all three in progress
    QVERIFY2(r.body.contains("3 requests in progress (limit 3)"), r.body);
    // A request pipelined behind a held one: its answer (ready at once) waits for the first one's.
    held[0].send("GET", "/is/DAQ/DAQ.Statistics");
    // Longer than --http-idle-s: connections waiting for an answer are not idle.
    QVERIFY(expectNothingFor(
        1500,
        [&held] {
            return held[0].hasReply() || std::any_of(std::begin(held), std::end(held), [](HttpConnection &c) {
                       return c.socket().state() != QAbstractSocket::ConnectedState;
                   });
        },
        "a connection waiting for an answer closed as idle, or an answer overtaking the one before"));

    QCOMPARE(::kill(pid_t(slow->processId()), SIGCONT), 0);
    for (HttpConnection &c : held) {
        r = c.wait(10000);
        QVERIFY2(r.status == 200 || r.status == 504, r.head); // answered, or timed out while stopped
        if (r.status == 200)
            QVERIFY(r.body.contains("<obj name=\"Slow.Statistics\""));
    }
    r = held[0].wait(10000);
    QVERIFY2(r.status == 503 || r.status == 200, r.head); // the pipelined one, after
    if (r.status == 200)
        QVERIFY(r.body.contains("<obj name=\"DAQ.Statistics\""));
    // Below the limit again.
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.Statistics").status, 200);
}

void tst_IsWeb::idleConnectionsAreClosed()
{
    startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-idle-s"), QStringLiteral("1")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_http != 0);
    HttpConnection silent, used;
    QVERIFY(silent.open(m_http));
    QVERIFY(used.open(m_http));
    WsClient ws;
    ws.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_COMPARE_WITH_TIMEOUT(ws.socket.state(), QAbstractSocket::ConnectedState, 5000);
    QElapsedTimer t;
    t.start();
    used.send("GET", "/is/DAQ/DAQ.Statistics");
    QCOMPARE(used.wait().status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(silent.socket().state(), QAbstractSocket::UnconnectedState, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(used.socket().state(), QAbstractSocket::UnconnectedState, 5000);
    QVERIFY(t.elapsed() >= 900);
    // A WebSocket is not an idle HTTP connection: it is still open half an idle period later.
    QVERIFY(expectNothingFor(
        500, [&ws] { return ws.closed; }, "a WebSocket closed as an idle connection"));
    ws.socket.sendTextMessage(QStringLiteral("{}"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("synced")) >= 0, 5000);
}

// Connections trickling a request head one byte at a time used to hold every slot for as long as
// they trickled (each byte reset the idle timer), and everybody else got 503.
void tst_IsWeb::slowLorisIsTimedOutAndCappedPerAddress()
{
    startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-head-s"), QStringLiteral("1"),
                                           QStringLiteral("--http-max-per-address"), QStringLiteral("3")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_http != 0);
    std::vector<std::unique_ptr<HttpConnection>> loris;
    for (int i = 0; i < 3; ++i) {
        loris.push_back(std::make_unique<HttpConnection>());
        QVERIFY(loris.back()->open(m_http));
    }
    // The same address again: over its share, refused although the server has room.
    HttpConnection over;
    QVERIFY(over.open(m_http));
    const HttpReply refused = over.wait(5000);
    QCOMPARE(refused.status, 503);
    QVERIFY2(refused.body.contains("connections from 127.0.0.1"), refused.body.constData());
    // Another address is served meanwhile.
    HttpConnection other;
    QVERIFY(other.open(m_http, QHostAddress(QStringLiteral("127.0.0.2"))));
    other.send("GET", "/is/DAQ/DAQ.Statistics");
    QCOMPARE(other.wait().status, 200);
    // Trickling does not keep the connections: the head is not complete in time, 408.
    const QByteArray head = "GET /is/DAQ HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (int i = 0; i < head.size(); ++i) {
        for (auto &c : loris) {
            if (c->socket().state() == QAbstractSocket::ConnectedState) {
                c->socket().write(head.mid(i, 1));
                c->socket().flush();
            }
        }
        if (std::all_of(loris.begin(), loris.end(), [](auto &c) { return c->hasReply(); }))
            break;
        letTimePass(100, "a slow client: one byte of the head every 100 ms");
    }
    for (auto &c : loris) {
        const HttpReply r = c->wait(5000);
        QCOMPARE(r.status, 408);
        QVERIFY2(r.body.contains("not complete within"), r.body.constData());
    }
    loris.clear();
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(m_http, "/is/DAQ").status, 200, 5000);
}

QTEST_GUILESS_MAIN(tst_IsWeb)
#include "tst_isweb.moc"
