// The web IS WebSocket protocol apart from any socket: criteria messages read into a subscription
// or refused with the reason a client is sent, and the messages sent back.
#include "statuscheck.h"
#include "websocketprotocol.h"

#include "dialog/is/typeregistry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace dialog;
using namespace dialog::isd;

class tst_WsProtocol : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        is::TypeInfo t(QStringLiteral("Rate"));
        t.setAttributes({is::AttributeInfo(QStringLiteral("hz"), is::BasicType::Double)});
        QString error;
        QVERIFY_OK(m_types.declareType(t));
    }

    void subscriptionRead()
    {
        QString error;
        const auto local = ws::parseSubscription(
            QStringLiteral(
                "{\"regex\": \"RO.*\", \"type\": \"Rate\", \"subtypes\": true, \"history\": \"10m\"}"),
            QStringLiteral("DAQ"), m_types, &error);
        QVERIFY2(local, qPrintable(error));
        QCOMPARE(local->server, QStringLiteral("DAQ"));
        QVERIFY(!local->remote);
        QCOMPARE(local->historyUs, qint64(600) * 1000000);
        QVERIFY(local->criteria.matches(QStringLiteral("RO1"), QStringLiteral("Rate"), m_types));
        QVERIFY(!local->criteria.matches(QStringLiteral("FE1"), QStringLiteral("Rate"), m_types));
        // Another server's objects: its types are not this server's to check.
        const auto remote =
            ws::parseSubscription(QStringLiteral("{\"server\": \"RunParams\", \"type\": \"Other\"}"),
                                  QStringLiteral("DAQ"), m_types, &error);
        QVERIFY2(remote, qPrintable(error));
        QVERIFY(remote->remote);
        QCOMPARE(remote->server, QStringLiteral("RunParams"));
    }

    void badSubscriptionRefused_data()
    {
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("refusal");
        QTest::newRow("not-json") << QStringLiteral("{") << QStringLiteral("bad JSON at offset");
        QTest::newRow("not-an-object") << QStringLiteral("[1]") << QStringLiteral("expected a JSON object");
        QTest::newRow("unknown-field")
            << QStringLiteral("{\"regexp\": \"x\"}") << QStringLiteral("unknown field 'regexp'");
        QTest::newRow("regex-not-a-string")
            << QStringLiteral("{\"regex\": 3}") << QStringLiteral("server, regex and type must be strings");
        QTest::newRow("dotted-server")
            << QStringLiteral("{\"server\": \"A.B\"}") << QStringLiteral("invalid server name 'A.B'");
        QTest::newRow("bad-regex") << QStringLiteral("{\"regex\": \"(\"}")
                                   << QStringLiteral("bad regular expression");
        QTest::newRow("bad-history") << QStringLiteral("{\"history\": \"soon\"}")
                                     << QStringLiteral("history must be a duration");
        QTest::newRow("history-of-another-server")
            << QStringLiteral("{\"server\": \"RunParams\", \"history\": \"1m\"}")
            << QStringLiteral("history first is offered for this server's objects (DAQ)");
        QTest::newRow("unknown-local-type")
            << QStringLiteral("{\"type\": \"Nothing\"}") << QStringLiteral("unknown type 'Nothing'");
    }

    void badSubscriptionRefused()
    {
        QFETCH(QString, message);
        QFETCH(QString, refusal);
        QString error;
        QVERIFY(!ws::parseSubscription(message, QStringLiteral("DAQ"), m_types, &error));
        QVERIFY2(error.startsWith(refusal), qPrintable(error));
    }

    void messagesAreOneJsonObjectEach()
    {
        const auto object = [](const QByteArray &m) {
            QJsonParseError e;
            const QJsonDocument d = QJsonDocument::fromJson(m, &e);
            return d.isObject() ? d.object() : QJsonObject();
        };
        const is::Criteria c(QStringLiteral("RO.*"));
        QCOMPARE(object(ws::subscribedMessage(QStringLiteral("DAQ"), c, 3))
                     .value(QStringLiteral("objects"))
                     .toInt(),
                 3);
        QVERIFY(!object(ws::subscribedMessage(QStringLiteral("DAQ"), c)).contains(QStringLiteral("objects")));
        QCOMPARE(object(ws::syncedMessage()),
                 (QJsonObject{{QStringLiteral("event"), QStringLiteral("synced")}}));
        QCOMPARE(object(ws::errorMessage(QStringLiteral("no"))).value(QStringLiteral("error")).toString(),
                 QStringLiteral("no"));
        const QJsonObject removed =
            object(ws::eventMessage(ws::kindName(is::Change::Kind::Removed), QStringLiteral("DAQ.RO1"),
                                    QStringLiteral("Rate"), is::Time(1000000), is::Object()));
        QCOMPARE(removed.value(QStringLiteral("event")).toString(), QStringLiteral("removed"));
        QVERIFY(!removed.contains(QStringLiteral("value"))); // a removal has none
        is::History h;
        h.typeName = QStringLiteral("Rate");
        is::HistorySeries s;
        s.attribute = QStringLiteral("hz");
        is::HistoryPoint one;
        one.time = is::Time(2000000);
        one.value = 5;
        one.count = 1;
        is::HistoryPoint bucket = one;
        bucket.count = 4;
        bucket.min = 1;
        bucket.max = 9;
        s.points = {one, bucket};
        h.series = {s};
        const QJsonObject history = object(ws::historyMessage(QStringLiteral("DAQ.RO1"), h));
        const QJsonArray points = history.value(QStringLiteral("series"))
                                      .toArray()
                                      .at(0)
                                      .toObject()
                                      .value(QStringLiteral("points"))
                                      .toArray();
        const auto numbers = [](const QJsonValue &v) {
            QList<double> out;
            for (const QJsonValue &x : v.toArray())
                out << x.toDouble();
            return out;
        };
        QCOMPARE(numbers(points.at(0)), (QList<double>{2000, 5}));          // [ms, value]
        QCOMPARE(numbers(points.at(1)), (QList<double>{2000, 5, 1, 9, 4})); // [ms, mean, min, max, count]
    }

private:
    is::TypeRegistry m_types;
};

QTEST_GUILESS_MAIN(tst_WsProtocol)
#include "tst_wsprotocol.moc"
