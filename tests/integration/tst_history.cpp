// The IS history ring (dialog-isserver --history), its API, tool and web forms, and the archive
// (dialog-archiver) that answers beyond the ring.
#include "statuscheck.h"
#include "isfixture.h"
#include "isweb.h"

#include "dialog/is/history.h"
#include "dialog/is/receiver.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

class tst_History : public IsWebTest
{
    Q_OBJECT
private Q_SLOTS:
    void init() { setUpFixture(); }
    void cleanup() { tearDownFixture(); }

    void ringKeepsTheNewestValues();
    void downsamplesToMinMaxMeanBuckets();
    void badAttributeAndMissingObject();
    void toolAndWebAnswerWithTheRing();
    void webSocketSendsHistoryFirst();
    void receiverGetsHistoryFirst();
    void configOverridesByNameAndType();
    void badConfigIsRefused();
    void archiverAnswersBeyondTheRing();
    void mirrorCopiesTheHistory();

private:
    void writeReadout(const QString &name, int count, int first = 0)
    {
        for (int i = first; i < first + count; ++i) {
            is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
            QVERIFY_OK(o.set<quint64>(QStringLiteral("events"), quint64(i)));
            QVERIFY_OK(o.set<double>(QStringLiteral("rate"), i * 1.5));
            QVERIFY_OK(o.set(QStringLiteral("host"), QStringLiteral("ro1")));
            QCOMPARE(m_dict->updateSync(name, o).code(), is::Status::Code::Ok);
        }
    }
    static is::Time hourAgo()
    {
        return is::Time(is::Time::currentTime().microsecondsSinceEpoch() - 3600LL * 1000000);
    }
    static is::Time later()
    {
        return is::Time(is::Time::currentTime().microsecondsSinceEpoch() + 60LL * 1000000);
    }
    static const is::HistorySeries *series(const is::History &h, const QString &attribute)
    {
        for (const is::HistorySeries &s : h.series)
            if (s.attribute == attribute)
                return &s;
        return nullptr;
    }
};

void tst_History::ringKeepsTheNewestValues()
{
    startServer(QStringLiteral("DAQ"), {QStringLiteral("--history"), QStringLiteral("50")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeReadout(QStringLiteral("DAQ.RO1"), 80);
    is::History h;
    QCOMPARE(m_dict->historySync(QStringLiteral("DAQ.RO1"), hourAgo(), later(), 0, &h).code(),
             is::Status::Code::Ok);
    QCOMPARE(h.typeName, QStringLiteral("ReadoutStats"));
    // Numeric scalars only: no host (string), updateTime (time), queueDepths (vector), eventSize (object).
    QStringList attributes;
    for (const is::HistorySeries &s : std::as_const(h.series))
        attributes << s.attribute;
    QCOMPARE(attributes,
             (QStringList{QStringLiteral("pid"), QStringLiteral("cpuLoad"), QStringLiteral("memoryBytes"),
                          QStringLiteral("events"), QStringLiteral("bytes"), QStringLiteral("rate"),
                          QStringLiteral("errors")}));
    const is::HistorySeries *events = series(h, QStringLiteral("events"));
    QVERIFY(events);
    QCOMPARE(events->points.size(), 50);
    QCOMPARE(events->points.first().value, 30.0);
    QCOMPARE(events->points.last().value, 79.0);
    const is::HistorySeries *rate = series(h, QStringLiteral("rate"));
    QCOMPARE(rate->points.last().value, 79 * 1.5);
    for (qsizetype i = 1; i < events->points.size(); ++i)
        QVERIFY(!(events->points.at(i).time < events->points.at(i - 1).time));
    QCOMPARE(h.oldest, events->points.first().time);
    // One attribute only.
    QCOMPARE(m_dict->historySync(QStringLiteral("DAQ.RO1"), hourAgo(), later(), 0, &h, QStringLiteral("rate"))
                 .code(),
             is::Status::Code::Ok);
    QCOMPARE(h.series.size(), 1);
    QCOMPARE(h.series.first().points.size(), 50);
    // A removed object's history goes with it.
    QCOMPARE(m_dict->removeSync(QStringLiteral("DAQ.RO1")).code(), is::Status::Code::Ok);
    QCOMPARE(m_dict->historySync(QStringLiteral("DAQ.RO1"), hourAgo(), later(), 0, &h).code(),
             is::Status::Code::NotFound);
}

void tst_History::downsamplesToMinMaxMeanBuckets()
{
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeReadout(QStringLiteral("DAQ.RO1"), 200);
    is::History h;
    QCOMPARE(
        m_dict->historySync(QStringLiteral("DAQ.RO1"), hourAgo(), later(), 20, &h, QStringLiteral("events"))
            .code(),
        is::Status::Code::Ok);
    const QList<is::HistoryPoint> &pts = h.series.first().points;
    QVERIFY(pts.size() <= 20);
    QVERIFY(pts.size() >= 2);
    quint64 total = 0;
    double lo = 1e9, hi = -1;
    for (const is::HistoryPoint &p : pts) {
        QVERIFY(p.min <= p.value && p.value <= p.max);
        total += p.count;
        lo = qMin(lo, p.min);
        hi = qMax(hi, p.max);
    }
    QCOMPARE(total, quint64(200));
    QCOMPARE(lo, 0.0);
    QCOMPARE(hi, 199.0);
}

void tst_History::badAttributeAndMissingObject()
{
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeReadout(QStringLiteral("DAQ.RO1"), 3);
    is::History h;
    const is::Status notNumeric =
        m_dict->historySync(QStringLiteral("DAQ.RO1"), hourAgo(), later(), 0, &h, QStringLiteral("host"));
    QCOMPARE(notNumeric.code(), is::Status::Code::BadRequest);
    QVERIFY2(notNumeric.message().contains(QLatin1String("host")), qPrintable(notNumeric.message()));
    QCOMPARE(m_dict->historySync(QStringLiteral("DAQ.Nope"), hourAgo(), later(), 0, &h).code(),
             is::Status::Code::NotFound);
    QCOMPARE(m_dict->historySync(QStringLiteral("DAQ.RO1"), later(), hourAgo(), 0, &h).code(),
             is::Status::Code::BadRequest);
}

void tst_History::toolAndWebAnswerWithTheRing()
{
    startWebServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_http != 0);
    writeReadout(QStringLiteral("DAQ.RO1"), 12);
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("history"), QStringLiteral("DAQ.RO1"),
                        QStringLiteral("events"), QStringLiteral("--since"), QStringLiteral("10m"),
                        QStringLiteral("--json")},
                       &out, &err),
             0);
    const QJsonObject line = QJsonDocument::fromJson(out.trimmed()).object();
    QCOMPARE(line.value(QStringLiteral("attribute")).toString(), QStringLiteral("events"));
    const QJsonArray points = line.value(QStringLiteral("points")).toArray();
    QCOMPARE(points.size(), 12);
    QCOMPARE(points.last().toObject().value(QStringLiteral("value")).toDouble(), 11.0);
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("history"), QStringLiteral("DAQ.RO1"),
                        QStringLiteral("--since"), QStringLiteral("ten")},
                       &out, &err),
             1);
    QVERIFY2(err.contains("invalid --since"), err.constData());

    const HttpReply r = httpGet(m_http, "/is/DAQ/DAQ.RO1/history?attr=rate&since=1h");
    QCOMPARE(r.status, 200);
    const QJsonObject j = QJsonDocument::fromJson(r.body).object();
    QCOMPARE(j.value(QStringLiteral("type")).toString(), QStringLiteral("ReadoutStats"));
    const QJsonArray s = j.value(QStringLiteral("series")).toArray();
    QCOMPARE(s.size(), 1);
    const QJsonArray pts = s.first().toObject().value(QStringLiteral("points")).toArray();
    QCOMPARE(pts.size(), 12);
    QCOMPARE(pts.last().toArray().at(1).toDouble(), 11 * 1.5);
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.RO1/history?since=soon").status, 400);
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.Nope/history").status, 404);
}

void tst_History::webSocketSendsHistoryFirst()
{
    startWebServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeReadout(QStringLiteral("DAQ.RO1"), 15);
    WsClient ws;
    ws.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_VERIFY_WITH_TIMEOUT(ws.socket.state() == QAbstractSocket::ConnectedState, 5000);
    ws.socket.sendTextMessage(QStringLiteral(R"({"regex": "RO1", "history": "10m"})"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("synced")) >= 0, 5000);
    // The object's history, then its current value, then synced.
    const int h = ws.indexOf(QStringLiteral("history"), QStringLiteral("DAQ.RO1"));
    const int v = ws.indexOf(QStringLiteral("value"), QStringLiteral("DAQ.RO1"));
    QVERIFY(h >= 0 && h < v);
    QJsonArray events;
    for (const QJsonValue &s : ws.received.at(h).value(QStringLiteral("series")).toArray())
        if (s.toObject().value(QStringLiteral("attribute")).toString() == QLatin1String("events"))
            events = s.toObject().value(QStringLiteral("points")).toArray();
    QCOMPARE(events.size(), 15);
    QCOMPARE(events.last().toArray().at(1).toDouble(), 14.0);
    // A bad duration is refused; another server's history is not sent first.
    ws.socket.sendTextMessage(QStringLiteral(R"({"regex": "RO1", "history": "soon"})"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("error")) >= 0, 5000);
}

void tst_History::receiverGetsHistoryFirst()
{
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeReadout(QStringLiteral("DAQ.RO1"), 12);
    writeReadout(QStringLiteral("DAQ.RO2"), 3);
    is::Receiver receiver(m_dict.get());
    receiver.setHistoryFirst(600);
    QList<is::Event> events;
    receiver.setCallback([&](const is::Event &e) { events.append(e); });
    QSignalSpy active(&receiver, &is::Receiver::subscriptionChanged);
    receiver.subscribe(QStringLiteral("DAQ"), is::Criteria(QStringLiteral("RO.*")));
    QTRY_COMPARE_WITH_TIMEOUT(events.size(), 2, 5000);
    QCOMPARE(events.at(0).kind(), is::Event::Kind::History);
    const is::History h1 = events.at(0).history();
    QCOMPARE(h1.name, QStringLiteral("DAQ.RO1"));
    QCOMPARE(series(h1, QStringLiteral("events"))->points.size(), 12);
    QCOMPARE(events.at(1).history().name, QStringLiteral("DAQ.RO2"));
    QCOMPARE(series(events.at(1).history(), QStringLiteral("rate"))->points.size(), 3);
    // Then the changes.
    writeReadout(QStringLiteral("DAQ.RO1"), 1, 12);
    QTRY_COMPARE_WITH_TIMEOUT(events.size(), 3, 5000);
    QCOMPARE(events.at(2).kind(), is::Event::Kind::Updated);
    QVERIFY(events.at(2).history().series.isEmpty());
}

void tst_History::configOverridesByNameAndType()
{
    QTemporaryDir dir;
    QFile f(dir.filePath(QStringLiteral("history.conf")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("# bounds per object\nname RO2 count=5\ntype RunInfo count=0   # not plotted\n");
    f.close();
    startServer(QStringLiteral("DAQ"), {QStringLiteral("--history"), QStringLiteral("100"),
                                        QStringLiteral("--history-config"), f.fileName()});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeReadout(QStringLiteral("DAQ.RO1"), 20);
    writeReadout(QStringLiteral("DAQ.RO2"), 20);
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QCOMPARE(m_dict->updateSync(QStringLiteral("DAQ.Run"), run).code(), is::Status::Code::Ok);
    is::History h;
    QVERIFY(
        m_dict->historySync(QStringLiteral("DAQ.RO1"), hourAgo(), later(), 0, &h, QStringLiteral("events"))
            .isOk());
    QCOMPARE(h.series.first().points.size(), 20);
    QVERIFY(
        m_dict->historySync(QStringLiteral("DAQ.RO2"), hourAgo(), later(), 0, &h, QStringLiteral("events"))
            .isOk());
    QCOMPARE(h.series.first().points.size(), 5);
    QCOMPARE(h.series.first().points.last().value, 19.0);
    QVERIFY(m_dict->historySync(QStringLiteral("DAQ.Run"), hourAgo(), later(), 0, &h).isOk());
    QVERIFY(h.series.isEmpty());
}

void tst_History::badConfigIsRefused()
{
    QTemporaryDir dir;
    QFile f(dir.filePath(QStringLiteral("history.conf")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("name RO.* count=5\nobject RO2 count=1\n");
    f.close();
    QProcess *p = startServer(QStringLiteral("DAQ"), {QStringLiteral("--history-config"), f.fileName()});
    QVERIFY(p->waitForFinished(10000));
    QCOMPARE(p->exitCode(), 1);
    const QByteArray err = p->readAllStandardError();
    QVERIFY2(err.contains("line 2") && err.contains("object"), err.constData());
}

void tst_History::archiverAnswersBeyondTheRing()
{
    QTemporaryDir dir;
    startServer(QStringLiteral("DAQ"), {QStringLiteral("--history"), QStringLiteral("5")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QProcess *archiver =
        m_fx->start(QStringLiteral("dialog-archiver"),
                    {QStringLiteral("--server"), QStringLiteral("DAQ"), QStringLiteral("--data-dir"),
                     dir.path(), QStringLiteral("--criteria"), QStringLiteral("RO.*")});
    archiver->setProcessChannelMode(QProcess::SeparateChannels);
    QVERIFY(waitUntil(
        [&] {
            return archiver->peek(4096).contains("archiving IS server DAQ") ||
                   QString::fromUtf8(archiver->readAllStandardError()).contains(QLatin1String("archiving"));
        },
        10000));
    writeReadout(QStringLiteral("DAQ.RO1"), 30);
    // The ring holds 5; the 25 before come from the archive (once written: it never slows the server).
    is::History h;
    is::Status st;
    const bool complete = waitUntil(
        [&] {
            st = m_dict->historySync(QStringLiteral("DAQ.RO1"), hourAgo(), later(), 0, &h,
                                     QStringLiteral("events"));
            return st.isOk() && h.series.size() == 1 && h.series.first().points.size() == 30;
        },
        10000, 100);
    QVERIFY2(complete, qPrintable(QStringLiteral("%1; %2 series, %3 points; archiver: %4")
                                      .arg(st.toString())
                                      .arg(h.series.size())
                                      .arg(h.series.isEmpty() ? 0 : h.series.first().points.size())
                                      .arg(QString::fromUtf8(archiver->readAllStandardError()))));
    for (int i = 0; i < 30; ++i)
        QCOMPARE(h.series.first().points.at(i).value, double(i));
    // Downsampled across both.
    QVERIFY(
        m_dict->historySync(QStringLiteral("DAQ.RO1"), hourAgo(), later(), 3, &h, QStringLiteral("events"))
            .isOk());
    QVERIFY(h.series.first().points.size() <= 3);
    quint64 n = 0;
    for (const is::HistoryPoint &p : std::as_const(h.series.first().points))
        n += p.count;
    // The values of the ring's oldest millisecond that the ring dropped are left out of a downsampled answer.
    QVERIFY2(n > 5 && n <= 30, qPrintable(QString::number(n)));
    // Objects outside the archiver's criteria: only the ring.
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    for (quint32 i = 0; i < 8; ++i) {
        QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), i));
        QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.Run"), run).isOk());
    }
    QVERIFY(
        m_dict->historySync(QStringLiteral("DAQ.Run"), hourAgo(), later(), 0, &h, QStringLiteral("runNumber"))
            .isOk());
    QCOMPARE(h.series.first().points.size(), 5);
}

void tst_History::mirrorCopiesTheHistory()
{
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeReadout(QStringLiteral("DAQ.RO1"), 25);
    startMirror(QStringLiteral("Copy"), QStringLiteral("DAQ"));
    // Once synchronised, the mirror holds the master's history, then goes on with the live values.
    is::History h;
    QVERIFY(waitUntil(
        [&] {
            return m_dict
                       ->historySync(QStringLiteral("Copy.RO1"), hourAgo(), later(), 0, &h,
                                     QStringLiteral("events"))
                       .isOk() &&
                   h.series.first().points.size() == 25;
        },
        10000, 50));
    for (int i = 0; i < 25; ++i)
        QCOMPARE(h.series.first().points.at(i).value, double(i));
    writeReadout(QStringLiteral("DAQ.RO1"), 5, 25);
    QVERIFY(waitUntil(
        [&] {
            return m_dict
                       ->historySync(QStringLiteral("Copy.RO1"), hourAgo(), later(), 0, &h,
                                     QStringLiteral("events"))
                       .isOk() &&
                   h.series.first().points.size() == 30;
        },
        10000, 50));
    QCOMPARE(h.series.first().points.last().value, 29.0);
}

QTEST_GUILESS_MAIN(tst_History)
#include "tst_history.moc"
