// The web IS's histograms as PNG (GET /is/<Server>/<Server.Object>.png): drawn by the real
// dialog-render, tagged with ETag and Last-Modified from the object's update, 304 for a conditional
// GET of the same update, bad sizes and non-histograms refused, a numeric attribute's history drawn
// as a time series (GET /is/<Server>/<Server.Object>/history.png), and a renderer that is missing,
// hangs or dies answered with the reason while the server goes on serving. Real binaries on loopback.
#include "isweb.h"
#include "seriespainter.h"
#include "statuscheck.h"

#include <QElapsedTimer>
#include <QFile>
#include <QColor>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

class tst_IsWebPng : public IsWebTest
{
    Q_OBJECT

private Q_SLOTS:
    void init() { setUpFixture(); }
    void cleanup() { tearDownFixture(); }
    void histogramsAreDrawn();
    void conditionalGetsAnswer304();
    void badRequestsAreRefused();
    void checkResultColoursTheFrame();
    void otherServersObjectIsDrawn();
    void timeSeriesIsDrawn();
    void missingRendererIsSaid();
    void hangingRendererDoesNotHoldTheServer();
    void dyingRendererIsRestarted();

private:
    void writeHistograms(const QString &server);
    QString script(const QString &name, const QByteArray &body);
    QTemporaryDir m_dir;
};

namespace {

is::Object histogram1(const is::TypeRegistry &types, double slope)
{
    is::Object h = is::Object::create(types, QStringLiteral("Histogram1D"));
    QList<double> contents;
    for (int i = 0; i < 50; ++i)
        contents.append(1 + slope * i);
    h.set(QStringLiteral("title"), QStringLiteral("event size"));
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), 500.0);
    h.set(QStringLiteral("bins"), quint32(contents.size()));
    h.set(QStringLiteral("contents"), contents);
    h.set(QStringLiteral("entries"), quint64(1000));
    return h;
}

is::Object histogram2(const is::TypeRegistry &types)
{
    is::Object h = is::Object::create(types, QStringLiteral("Histogram2D"));
    QList<double> contents;
    for (int y = 0; y < 100; ++y)
        for (int x = 0; x < 100; ++x)
            contents.append((x - 50) * (x - 50) + (y - 50) * (y - 50));
    h.set(QStringLiteral("title"), QStringLiteral("hit map"));
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), 100.0);
    h.set(QStringLiteral("xBins"), quint32(100));
    h.set(QStringLiteral("yLow"), 0.0);
    h.set(QStringLiteral("yHigh"), 100.0);
    h.set(QStringLiteral("yBins"), quint32(100));
    h.set(QStringLiteral("contents"), contents);
    h.set(QStringLiteral("entries"), quint64(10000));
    return h;
}

QImage image(const HttpReply &r)
{
    return QImage::fromData(r.body, "PNG");
}

} // namespace

void tst_IsWebPng::writeHistograms(const QString &server)
{
    QVERIFY_OK(m_dict->insertSync(server + QStringLiteral(".flat"), histogram1(m_dict->types(), 0)));
    QVERIFY_OK(m_dict->insertSync(server + QStringLiteral(".rising"), histogram1(m_dict->types(), 2)));
    QVERIFY_OK(m_dict->insertSync(server + QStringLiteral(".map"), histogram2(m_dict->types())));
}

QString tst_IsWebPng::script(const QString &name, const QByteArray &body)
{
    const QString path = m_dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write("#!/bin/sh\n" + body + '\n');
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

void tst_IsWebPng::histogramsAreDrawn()
{
    m_server = startWebServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_http != 0);
    writeHistograms(QStringLiteral("DAQ"));

    const HttpReply flat = httpGet(m_http, "/is/DAQ/DAQ.flat.png?width=300&height=200");
    QCOMPARE(flat.status, 200);
    QCOMPARE(flat.header("content-type"), QByteArray("image/png"));
    QVERIFY(!flat.header("etag").isEmpty());
    QVERIFY(flat.header("last-modified").endsWith("GMT"));
    QCOMPARE(image(flat).size(), QSize(300, 200));

    const HttpReply rising = httpGet(m_http, "/is/DAQ/DAQ.rising.png?width=300&height=200");
    QCOMPARE(rising.status, 200);
    QCOMPARE(image(rising).size(), QSize(300, 200));
    QVERIFY2(image(rising) != image(flat), "two different histograms drew the same picture");

    // The default size, the 100 x 100 map, log scales.
    const HttpReply map = httpGet(m_http, "/is/DAQ/DAQ.map.png");
    QCOMPARE(map.status, 200);
    QCOMPARE(image(map).size(), QSize(480, 320));
    const HttpReply logz = httpGet(m_http, "/is/DAQ/DAQ.map.png?logz=1");
    QCOMPARE(logz.status, 200);
    QVERIFY(logz.header("etag") != map.header("etag"));
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.rising.png?logy=1").status, 200);

    // HEAD: the same headers, no body.
    const HttpReply head = httpGet(m_http, "/is/DAQ/DAQ.flat.png?width=300&height=200", {}, "HEAD");
    QCOMPARE(head.status, 200);
    QCOMPARE(head.header("etag"), flat.header("etag"));
    QVERIFY(head.body.isEmpty());
    QFile out(QStringLiteral("%1/screenshots/isweb-png-map.png").arg(QCoreApplication::applicationDirPath() +
                                                                      QStringLiteral("/..")));
    QDir().mkpath(QFileInfo(out).absolutePath());
    if (out.open(QIODevice::WriteOnly))
        out.write(map.body);
}

void tst_IsWebPng::conditionalGetsAnswer304()
{
    m_server = startWebServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeHistograms(QStringLiteral("DAQ"));
    const QByteArray path = "/is/DAQ/DAQ.rising.png?width=200&height=100";
    const HttpReply first = httpGet(m_http, path);
    QCOMPARE(first.status, 200);
    const QByteArray etag = first.header("etag"), modified = first.header("last-modified");

    HttpReply r = httpGet(m_http, path, "If-None-Match: " + etag + "\r\n");
    QCOMPARE(r.status, 304);
    QVERIFY(r.body.isEmpty());
    QCOMPARE(r.header("etag"), etag);
    QVERIFY(r.header("content-length").isEmpty());
    QCOMPARE(httpGet(m_http, path, "If-None-Match: \"other\", W/" + etag + "\r\n").status, 304);
    QCOMPARE(httpGet(m_http, path, "If-Modified-Since: " + modified + "\r\n").status, 304);
    QCOMPARE(httpGet(m_http, path, "If-Modified-Since: Thu, 01 Jan 2015 00:00:00 GMT\r\n").status, 200);
    // Another size is another picture, with its own tag.
    r = httpGet(m_http, "/is/DAQ/DAQ.rising.png?width=201&height=100", "If-None-Match: " + etag + "\r\n");
    QCOMPARE(r.status, 200);

    // A new value: a new tag, and the old one no longer matches.
    QVERIFY_OK(m_dict->updateSync(QStringLiteral("DAQ.rising"), histogram1(m_dict->types(), 5)));
    r = httpGet(m_http, path, "If-None-Match: " + etag + "\r\n");
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("etag") != etag);
    QVERIFY(image(r) != image(first));
}

void tst_IsWebPng::badRequestsAreRefused()
{
    m_server = startWebServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeHistograms(QStringLiteral("DAQ"));
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(m_dict->insertSync(QStringLiteral("DAQ.RunInfo"), run));

    const struct
    {
        QByteArray path;
        int status;
        QByteArray says;
    } cases[] = {
        {"/is/DAQ/DAQ.flat.png?width=100000", 400, "width must be 16 to 2048 pixels"},
        {"/is/DAQ/DAQ.flat.png?height=8", 400, "height must be 16 to 2048 pixels"},
        {"/is/DAQ/DAQ.flat.png?width=abc", 400, "width must be"},
        {"/is/DAQ/DAQ.flat.png?logy=2", 400, "logy must be 1 or 0"},
        {"/is/DAQ/DAQ.RunInfo.png", 400, "only histograms"},
        {"/is/DAQ/DAQ.nothing.png", 404, "no object DAQ.nothing"},
        {"/is/DAQ/Other.flat.png", 400, "must be named 'DAQ.<Object>'"},
    };
    for (const auto &c : cases) {
        const HttpReply r = httpGet(m_http, c.path);
        QVERIFY2(r.status == c.status, c.path + ": " + QByteArray::number(r.status) + ' ' + r.body);
        QVERIFY2(r.body.contains(c.says), c.path + ": " + r.body);
    }
    // The server is still there, and still draws.
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.flat.png").status, 200);
}

void tst_IsWebPng::checkResultColoursTheFrame()
{
    m_server = startWebServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeHistograms(QStringLiteral("DAQ"));
    const auto result = [&](const char *status) {
        is::Object r = is::Object::create(m_dict->types(), QStringLiteral("DQResult"));
        r.set(QStringLiteral("status"), QString::fromLatin1(status));
        r.set(QStringLiteral("details"), QStringLiteral("1 dead bin(s): 17"));
        return r;
    };
    QVERIFY_OK(m_dict->insertSync(QStringLiteral("DAQ.flat.dead"), result("Bad")));
    // The frame's colour: red for Bad, green for Good (the presenter's colours).
    const auto frameColour = [&](const HttpReply &r) {
        const QImage image = QImage::fromData(r.body, "PNG");
        return image.isNull() ? QColor() : image.pixelColor(1, image.height() / 2);
    };
    const QByteArray path = "/is/DAQ/DAQ.flat.png?width=300&height=200&check=DAQ.flat.dead";
    const HttpReply bad = httpGet(m_http, path);
    QVERIFY2(bad.status == 200, bad.body);
    QColor c = frameColour(bad);
    QVERIFY2(c.red() > 150 && c.green() < 110 && c.blue() < 110, qPrintable(c.name()));
    const HttpReply plain = httpGet(m_http, "/is/DAQ/DAQ.flat.png?width=300&height=200");
    QVERIFY(plain.header("etag") != bad.header("etag"));
    QCOMPARE(httpGet(m_http, path, "If-None-Match: " + bad.header("etag") + "\r\n").status, 304);

    // The check's result changes, the histogram does not: a new picture, green.
    QVERIFY_OK(m_dict->updateSync(QStringLiteral("DAQ.flat.dead"), result("Good")));
    const HttpReply good = httpGet(m_http, path, "If-None-Match: " + bad.header("etag") + "\r\n");
    QCOMPARE(good.status, 200);
    c = frameColour(good);
    QVERIFY2(c.green() > 110 && c.red() < 110, qPrintable(c.name()));

    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.flat.png?check=nodot").status, 400);
    const HttpReply missing = httpGet(m_http, "/is/DAQ/DAQ.flat.png?check=DAQ.nothing");
    QCOMPARE(missing.status, 404);
    QVERIFY2(missing.body.contains("no object DAQ.nothing"), missing.body);
}

void tst_IsWebPng::otherServersObjectIsDrawn()
{
    QProcess *other = startServer(QStringLiteral("FARM"));
    QVERIFY(other);
    QVERIFY(waitForServer(QStringLiteral("FARM")));
    m_server = startWebServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeHistograms(QStringLiteral("FARM"));
    const HttpReply r = httpGet(m_http, "/is/FARM/FARM.map.png?width=160&height=160");
    QVERIFY2(r.status == 200, r.body);
    QCOMPARE(image(r).size(), QSize(160, 160));
    QCOMPARE(httpGet(m_http, "/is/FARM/FARM.map.png?width=160&height=160",
                     "If-None-Match: " + r.header("etag") + "\r\n")
                 .status,
             304);
}

void tst_IsWebPng::timeSeriesIsDrawn()
{
    m_server = startWebServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    // A rate that rises and falls again, and a string attribute.
    const auto write = [&](int i) {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
        QVERIFY_OK(o.set<quint64>(QStringLiteral("events"), quint64(i)));
        QVERIFY_OK(o.set<double>(QStringLiteral("rate"), i < 20 ? i * 10.0 : (40 - i) * 10.0));
        QVERIFY_OK(o.set(QStringLiteral("host"), QStringLiteral("ro1")));
        QVERIFY_OK(m_dict->updateSync(QStringLiteral("DAQ.RO1"), o));
    };
    for (int i = 0; i < 40; ++i)
        write(i);
    // A window of 2 s: the values written just now spread over the picture.
    const QByteArray path = "/is/DAQ/DAQ.RO1/history.png?attr=rate&since=2s&width=400&height=240";
    const HttpReply first = httpGet(m_http, path);
    QVERIFY2(first.status == 200, first.body);
    QCOMPARE(first.header("content-type"), QByteArray("image/png"));
    QCOMPARE(image(first).size(), QSize(400, 240));
    const QByteArray etag = first.header("etag"), modified = first.header("last-modified");
    QVERIFY(!etag.isEmpty());
    QVERIFY(modified.endsWith("GMT"));
    // The line through the values is drawn in its colour.
    const QImage drawn = image(first).convertToFormat(QImage::Format_ARGB32);
    int line = 0;
    for (int y = 0; y < drawn.height(); ++y)
        for (int x = 0; x < drawn.width(); ++x)
            line += drawn.pixelColor(x, y) == presenter::SeriesPainter::lineColor();
    QVERIFY2(line > 20, QByteArray::number(line));

    // The same values: 304 for a conditional GET; another attribute or size: another picture.
    QCOMPARE(httpGet(m_http, path, "If-None-Match: " + etag + "\r\n").status, 304);
    QCOMPARE(httpGet(m_http, path, "If-Modified-Since: " + modified + "\r\n").status, 304);
    const HttpReply events = httpGet(m_http, "/is/DAQ/DAQ.RO1/history.png?attr=events&since=1h&width=400&height=240");
    QCOMPARE(events.status, 200);
    QVERIFY(events.header("etag") != etag);
    QVERIFY(image(events) != image(first));
    // A new value: a new tag and picture.
    write(40);
    const HttpReply next = httpGet(m_http, path, "If-None-Match: " + etag + "\r\n");
    QCOMPARE(next.status, 200);
    QVERIFY(next.header("etag") != etag);
    QVERIFY(image(next) != image(first));

    const struct
    {
        QByteArray path;
        int status;
        QByteArray says;
    } cases[] = {
        {"/is/DAQ/DAQ.RO1/history.png", 400, "attr= must name the numeric attribute"},
        {"/is/DAQ/DAQ.RO1/history.png?attr=host", 400, "'host' is not a numeric attribute of RO1"},
        {"/is/DAQ/DAQ.RO1/history.png?attr=nosuch", 400, "nosuch"},
        {"/is/DAQ/DAQ.RO1/history.png?attr=rate&since=soon", 400, "invalid since 'soon'"},
        {"/is/DAQ/DAQ.RO1/history.png?attr=rate&width=5000", 400, "width must be 16 to 2048 pixels"},
        {"/is/DAQ/DAQ.nothing/history.png?attr=rate", 404, ""},
        {"/is/DAQ/Other.RO1/history.png?attr=rate", 400, "must be named 'DAQ.<Object>'"},
    };
    for (const auto &c : cases) {
        const HttpReply r = httpGet(m_http, c.path);
        QVERIFY2(r.status == c.status, c.path + ": " + QByteArray::number(r.status) + ' ' + r.body);
        QVERIFY2(r.body.contains(c.says), c.path + ": " + r.body);
    }
    QFile out(QStringLiteral("%1/screenshots/isweb-png-series.png").arg(QCoreApplication::applicationDirPath() +
                                                                         QStringLiteral("/..")));
    QDir().mkpath(QFileInfo(out).absolutePath());
    if (out.open(QIODevice::WriteOnly))
        out.write(next.body);
}

void tst_IsWebPng::missingRendererIsSaid()
{
    m_server = startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-renderer"),
                                                      m_dir.filePath(QStringLiteral("no-such-renderer"))});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeHistograms(QStringLiteral("DAQ"));
    const HttpReply r = httpGet(m_http, "/is/DAQ/DAQ.flat.png");
    QCOMPARE(r.status, 501);
    QVERIFY2(r.body.contains("no renderer") && r.body.contains("no-such-renderer") &&
                 r.body.contains("dialog-toolkit-gui"),
             r.body);
    // What needs no drawing still works: the rest of the web IS.
    QCOMPARE(httpGet(m_http, "/is/DAQ?format=json").status, 200);
}

void tst_IsWebPng::hangingRendererDoesNotHoldTheServer()
{
    // A renderer that reads its requests and never answers.
    const QString hang = script(QStringLiteral("hang.sh"), "exec sleep 120");
    m_server = startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-renderer"), hang});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeHistograms(QStringLiteral("DAQ"));
    HttpConnection drawing;
    QVERIFY(drawing.open(m_http));
    drawing.send("GET", "/is/DAQ/DAQ.flat.png");
    // While that drawing waits, the server answers everything else.
    for (int i = 0; i < 5; ++i)
        QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.flat?format=json").status, 200);
    QVERIFY(!drawing.hasReply());
    const HttpReply r = drawing.wait(15000);
    QCOMPARE(r.status, 503);
    QVERIFY2(r.body.contains("drawing took longer than"), r.body);
}

void tst_IsWebPng::dyingRendererIsRestarted()
{
    // A renderer that dies at its first request, then (the next one started) draws for real.
    const QString real = QCoreApplication::applicationDirPath() + QStringLiteral("/dialog-render");
    const QString flag = m_dir.filePath(QStringLiteral("died-once"));
    const QString dying = script(QStringLiteral("dying.sh"),
                                 QStringLiteral("if [ ! -e '%1' ]; then touch '%1'; echo 'out of luck' >&2; "
                                                "head -c 4 >/dev/null; exit 3; fi\nexec '%2'")
                                     .arg(flag, real)
                                     .toUtf8());
    m_server = startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-renderer"), dying});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeHistograms(QStringLiteral("DAQ"));
    const HttpReply died = httpGet(m_http, "/is/DAQ/DAQ.flat.png");
    QCOMPARE(died.status, 502);
    QVERIFY2(died.body.contains("exited with status 3"), died.body);
    const HttpReply drawn = httpGet(m_http, "/is/DAQ/DAQ.flat.png");
    QVERIFY2(drawn.status == 200, drawn.body);
    QVERIFY(!image(drawn).isNull());
}

QTEST_GUILESS_MAIN(tst_IsWebPng)
#include "tst_isweb_png.moc"
