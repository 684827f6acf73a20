// dialog-render, the off-screen renderer the web IS starts as a child: the real program on pipes.
// 1D and 2D histograms come back as PNGs of the asked size, different histograms as different
// pictures, the same picture as HistogramPainter draws in-process (what dialog-presenter shows);
// bad requests get an error answer and the renderer goes on; EOF ends it with 0.
#include "histogrampainter.h"
#include "processfixture.h"
#include "renderprotocol.h"
#include "screenshot.h"
#include "seriespainter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtEndian>
#include <QtTest>
#include <cmath>
#include <functional>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::presenter;

namespace {

struct Answer
{
    bool complete = false;
    QJsonObject head;
    QByteArray png;
};

QJsonObject histogram1D(int bins, const std::function<double(int)> &content)
{
    QJsonArray c;
    double entries = 0;
    for (int i = 0; i < bins; ++i) {
        c.append(content(i));
        entries += content(i);
    }
    return {{QStringLiteral("title"), QStringLiteral("event size")},
            {QStringLiteral("xLow"), 0.0},
            {QStringLiteral("xHigh"), 4096.0},
            {QStringLiteral("bins"), bins},
            {QStringLiteral("contents"), c},
            {QStringLiteral("entries"), entries}};
}

QJsonObject histogram2D(int xb, int yb, const std::function<double(int, int)> &content)
{
    QJsonArray c;
    for (int j = 0; j < yb; ++j)
        for (int i = 0; i < xb; ++i)
            c.append(content(i, j));
    return {{QStringLiteral("title"), QStringLiteral("hit map")},
            {QStringLiteral("xLow"), 0.0},
            {QStringLiteral("xHigh"), double(xb)},
            {QStringLiteral("xBins"), xb},
            {QStringLiteral("yLow"), 0.0},
            {QStringLiteral("yHigh"), double(yb)},
            {QStringLiteral("yBins"), yb},
            {QStringLiteral("contents"), c},
            {QStringLiteral("entries"), xb * yb}};
}

QJsonObject request(int id, int w, int h, const QString &type, const QJsonObject &value)
{
    return {{QStringLiteral("id"), id},       {QStringLiteral("width"), w},
            {QStringLiteral("height"), h},    {QStringLiteral("type"), type},
            {QStringLiteral("value"), value}, {QStringLiteral("name"), QStringLiteral("Monitor.RO1.h")},
            {QStringLiteral("log_y"), false}, {QStringLiteral("log_z"), false}};
}

int differingPixels(const QImage &a, const QImage &b)
{
    if (a.size() != b.size())
        return -1;
    const QImage x = a.convertToFormat(QImage::Format_ARGB32), y = b.convertToFormat(QImage::Format_ARGB32);
    int n = 0;
    for (int r = 0; r < x.height(); ++r)
        for (int c = 0; c < x.width(); ++c)
            n += x.pixel(c, r) != y.pixel(c, r);
    return n;
}

} // namespace

class tst_Render : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void drawsOneAndTwoDimensional();
    void samePictureAsPresenter();
    void twoDimensionalReferenceIsOutlined();
    void timeSeriesIsDrawn();
    void badRequestsGetAnErrorAndItGoesOn_data(); // and hostile values that are drawn
    void badRequestsGetAnErrorAndItGoesOn();
    void oversizedRequestIsSkipped();
    void endOfInputExitsWithZero();

private:
    /// Sends @p payload as one request frame and reads one whole answer (bounded).
    Answer ask(const QByteArray &payload);
    Answer ask(const QJsonObject &json) { return ask(QJsonDocument(json).toJson(QJsonDocument::Compact)); }
    QImage image(const Answer &a) { return QImage::fromData(a.png, "PNG"); }

    std::unique_ptr<QProcess> m_render;
    QByteArray m_buffer;
};

void tst_Render::init()
{
    m_render = std::make_unique<QProcess>();
    m_render->setProcessChannelMode(QProcess::SeparateChannels);
    m_render->start(bin(QStringLiteral("dialog-render")), {});
    QVERIFY2(m_render->waitForStarted(5000), qPrintable(m_render->errorString()));
    m_buffer.clear();
}

void tst_Render::cleanup()
{
    if (m_render->state() != QProcess::NotRunning) {
        m_render->kill();
        m_render->waitForFinished(5000);
    }
    m_render.reset();
}

Answer tst_Render::ask(const QByteArray &payload)
{
    m_render->write(render::frame(payload));
    Answer a;
    // One answer: length + JSON, length + PNG. Whatever comes beyond it stays for the next.
    const auto parse = [&] {
        m_buffer += m_render->readAllStandardOutput();
        if (m_buffer.size() < 4)
            return false;
        const qsizetype m = render::frameLength(m_buffer.constData());
        if (m_buffer.size() < 4 + m + 4)
            return false;
        const qsizetype k = render::frameLength(m_buffer.constData() + 4 + m);
        if (m_buffer.size() < 8 + m + k)
            return false;
        a.head = QJsonDocument::fromJson(m_buffer.mid(4, m)).object();
        a.png = m_buffer.mid(8 + m, k);
        m_buffer.remove(0, 8 + m + k);
        return true;
    };
    a.complete = waitUntil(parse, 20000);
    if (!a.complete)
        qWarning() << "no whole answer; stderr:" << m_render->readAllStandardError();
    return a;
}

void tst_Render::drawsOneAndTwoDimensional()
{
    const Answer one =
        ask(request(1, 400, 300, QStringLiteral("Histogram1D"),
                    histogram1D(128, [](int i) { return 1000.0 * std::exp(-(i - 40) * (i - 40) / 200.0); })));
    QVERIFY(one.complete);
    QCOMPARE(one.head.value(QStringLiteral("id")).toInt(), 1);
    QCOMPARE(one.head.value(QStringLiteral("error")).toString(), QString());
    const QImage a = image(one);
    QCOMPARE(a.size(), QSize(400, 300));
    QVERIFY(a.save(screenshotPath(QStringLiteral("render-1d.png"))));

    // Another histogram, same size: another picture.
    const Answer other =
        ask(request(2, 400, 300, QStringLiteral("Histogram1D"),
                    histogram1D(128, [](int i) { return 1000.0 * std::exp(-(i - 90) * (i - 90) / 50.0); })));
    QVERIFY(other.complete);
    QCOMPARE(other.head.value(QStringLiteral("id")).toInt(), 2);
    QVERIFY(differingPixels(a, image(other)) > 500);

    // A 100 x 100 hit map.
    QJsonObject two = request(3, 320, 240, QStringLiteral("Histogram2D"),
                              histogram2D(100, 100, [](int i, int j) { return double((i * j) % 97); }));
    two.insert(QStringLiteral("log_z"), true);
    const Answer map = ask(two);
    QVERIFY(map.complete);
    QCOMPARE(map.head.value(QStringLiteral("error")).toString(), QString());
    const QImage m = image(map);
    QCOMPARE(m.size(), QSize(320, 240));
    QVERIFY(m.save(screenshotPath(QStringLiteral("render-2d.png"))));
    const Answer map2 = ask(request(4, 320, 240, QStringLiteral("Histogram2D"),
                                    histogram2D(100, 100, [](int i, int) { return double(i); })));
    QVERIFY(map2.complete);
    QVERIFY(differingPixels(m, image(map2)) > 1000);

    // The smallest and a large picture.
    const Answer tiny =
        ask(request(5, 16, 16, QStringLiteral("Histogram1D"), histogram1D(10, [](int i) { return i; })));
    QCOMPARE(image(tiny).size(), QSize(16, 16));
    const Answer large = ask(request(6, 2000, 1200, QStringLiteral("Histogram2D"),
                                     histogram2D(100, 100, [](int i, int j) { return double(i + j); })));
    QCOMPARE(image(large).size(), QSize(2000, 1200));
}

void tst_Render::samePictureAsPresenter()
{
    // The reference and the check's colour travel too: the web shows what the presenter shows.
    const QJsonObject value = histogram1D(64, [](int i) { return 50.0 + (i % 7) * 10; });
    QJsonObject req = request(7, 360, 240, QStringLiteral("Histogram1D"), value);
    req.insert(QStringLiteral("log_y"), true);
    req.insert(QStringLiteral("reference"), histogram1D(64, [](int) { return 5.0; }));
    req.insert(QStringLiteral("check"),
               QJsonObject{{QStringLiteral("status"), QStringLiteral("Bad")},
                           {QStringLiteral("value"), 42.5},
                           {QStringLiteral("details"), QStringLiteral("chi2/ndf 42.5")}});
    const Answer a = ask(req);
    QVERIFY(a.complete);
    QCOMPARE(a.head.value(QStringLiteral("error")).toString(), QString());

    render::Request parsed;
    QCOMPARE(render::parseRequest(QJsonDocument(req).toJson(), &parsed), QString());
    const QImage here = HistogramPainter::render(parsed.size, parsed.histogram, parsed.options);
    const QImage there = image(a);
    QCOMPARE(differingPixels(here, there), 0);
    // Bad: the frame is red.
    QCOMPARE(there.pixelColor(1, 1), HistogramPainter::qualityColor(Quality::Bad));
    QVERIFY(there.save(screenshotPath(QStringLiteral("render-1d-bad.png"))));
}

void tst_Render::twoDimensionalReferenceIsOutlined()
{
    // A flat hit map with one dead cell; its reference: a core of 100 in x 7..12, y 3..6 inside a
    // ring of 30 in x 5..14, y 2..7, nothing elsewhere.
    const auto hitMap = [](int i, int j) { return i == 10 && j == 5 ? 0.0 : 60.0; };
    const auto reference = [](int i, int j) {
        if (i >= 7 && i < 13 && j >= 3 && j < 7)
            return 100.0;
        return i >= 5 && i < 15 && j >= 2 && j < 8 ? 30.0 : 0.0;
    };
    QJsonObject req = request(8, 400, 300, QStringLiteral("Histogram2D"), histogram2D(20, 10, hitMap));
    req.insert(QStringLiteral("reference"), histogram2D(20, 10, reference));
    render::Request parsed;
    QCOMPARE(render::parseRequest(QJsonDocument(req).toJson(), &parsed), QString());
    QVERIFY(parsed.options.reference.kind == Histogram::Kind::TwoD);
    const QImage with = HistogramPainter::render(parsed.size, parsed.histogram, parsed.options)
                            .convertToFormat(QImage::Format_ARGB32);
    PaintOptions plain = parsed.options;
    plain.reference = {};
    const QImage without =
        HistogramPainter::render(parsed.size, parsed.histogram, plain).convertToFormat(QImage::Format_ARGB32);
    const QColor line = HistogramPainter::referenceColor();
    const auto linePixels = [&](const QImage &im, const QRect &area) {
        int n = 0;
        for (int y = area.top(); y <= area.bottom(); ++y)
            for (int x = area.left(); x <= area.right(); ++x)
                n += im.pixelColor(x, y) == line;
        return n;
    };
    const QRect plot = HistogramPainter::layout(parsed.size, parsed.histogram, parsed.options).plot;
    QCOMPARE(linePixels(without, with.rect()), 0);
    // The outlines run along the cells' edges: the core's left edge at x = 7 and the ring's at x = 5,
    // on the rows they span, and nowhere near the plot's corners.
    const auto column = [&](double cell) { return plot.left() + int(std::lround(cell * plot.width() / 20.0)); };
    const auto row = [&](double cell) { return plot.bottom() + 1 - int(std::lround(cell * plot.height() / 10.0)); };
    for (const double edge : {7.0, 5.0}) {
        const QRect around(column(edge) - 2, row(6), 5, row(4) - row(6)); // two rows: past the dashes' gaps
        QVERIFY2(linePixels(with, around) > 0, qPrintable(QStringLiteral("no outline at x cell %1").arg(edge)));
    }
    QVERIFY(linePixels(with, QRect(column(13.5), row(5.5), 1, 1)) == 0); // inside the ring, off the lines
    QCOMPARE(linePixels(with, QRect(plot.left(), row(1), column(4) - plot.left(), row(0) - row(1))), 0);
    QVERIFY(linePixels(with, plot) > 200);
    // The renderer of the web IS draws the same.
    const Answer a = ask(req);
    QVERIFY(a.complete);
    QCOMPARE(a.head.value(QStringLiteral("error")).toString(), QString());
    QCOMPARE(differingPixels(with, image(a)), 0);
    QVERIFY(with.save(screenshotPath(QStringLiteral("render-2d-reference.png"))));
}

void tst_Render::timeSeriesIsDrawn()
{
    // 60 values a second apart, the last three summarising several (a band), in a window of 90 s.
    QJsonArray points;
    const qint64 end = 1767225600000; // 2026-01-01T00:00:00Z
    for (int i = 0; i < 60; ++i) {
        const double v = 100 + 40 * std::sin(i / 6.0);
        points.append(i < 57 ? QJsonArray{double(end - (59 - i) * 1000), v}
                             : QJsonArray{double(end - (59 - i) * 1000), v, v - 20, v + 20, 5});
    }
    QJsonObject series{{QStringLiteral("label"), QStringLiteral("DAQ.RO1 rate")},
                       {QStringLiteral("end_ms"), double(end)},
                       {QStringLiteral("span_ms"), 90000.0},
                       {QStringLiteral("points"), points}};
    const QJsonObject req = request(9, 400, 240, QStringLiteral("TimeSeries"), series);
    render::Request parsed;
    QCOMPARE(render::parseRequest(QJsonDocument(req).toJson(), &parsed), QString());
    QCOMPARE(parsed.series.points.size(), 60);
    QCOMPARE(parsed.series.points.at(58).max, parsed.series.points.at(58).value + 20);
    const Answer a = ask(req);
    QVERIFY(a.complete);
    QCOMPARE(a.head.value(QStringLiteral("error")).toString(), QString());
    const QImage here = SeriesPainter::render(parsed.size, parsed.series);
    QCOMPARE(differingPixels(here, image(a)), 0);
    // The line in its colour, the band of the summarised points in its own; left of the first value
    // (the window's first third) nothing is drawn.
    const QImage im = here.convertToFormat(QImage::Format_ARGB32);
    const QRect plot = SeriesPainter::layout(parsed.size).plot;
    int line = 0, band = 0, early = 0;
    for (int y = plot.top(); y <= plot.bottom(); ++y)
        for (int x = plot.left(); x <= plot.right(); ++x) {
            const QColor c = im.pixelColor(x, y);
            line += c == SeriesPainter::lineColor();
            band += c == SeriesPainter::bandColor();
            early += x < plot.left() + plot.width() / 3 - 2 && y < plot.bottom() && c != Qt::white;
        }
    QVERIFY2(line > 200, QByteArray::number(line));
    QVERIFY2(band > 20, QByteArray::number(band));
    QCOMPARE(early, 0);
    QVERIFY(here.save(screenshotPath(QStringLiteral("render-series.png"))));

    // A point that is not numbers, or no window: an error answer.
    series.insert(QStringLiteral("points"), QJsonArray{QJsonArray{double(end), QStringLiteral("high")}});
    const Answer bad = ask(request(10, 400, 240, QStringLiteral("TimeSeries"), series));
    QVERIFY(bad.complete);
    QVERIFY2(bad.head.value(QStringLiteral("error")).toString().contains(QLatin1String("point 1 is not")),
             qPrintable(bad.head.value(QStringLiteral("error")).toString()));
    series.remove(QStringLiteral("span_ms"));
    const Answer noSpan = ask(request(11, 400, 240, QStringLiteral("TimeSeries"), series));
    QVERIFY(noSpan.head.value(QStringLiteral("error")).toString().contains(QLatin1String("span_ms")));
}

void tst_Render::badRequestsGetAnErrorAndItGoesOn_data()
{
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<QString>("error");
    const auto json = [](QJsonObject o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); };
    const QJsonObject good =
        request(10, 200, 100, QStringLiteral("Histogram1D"), histogram1D(8, [](int i) { return i; }));
    QJsonObject o = good;
    o.insert(QStringLiteral("width"), 15);
    QTest::newRow("too narrow") << json(o) << QStringLiteral("width and height");
    o = good;
    o.insert(QStringLiteral("height"), 4097);
    QTest::newRow("too high") << json(o) << QStringLiteral("width and height");
    o = good;
    o.insert(QStringLiteral("width"), QStringLiteral("wide"));
    QTest::newRow("width not a number") << json(o) << QStringLiteral("width and height");
    o = good;
    o.insert(QStringLiteral("type"), QStringLiteral("RunInfo"));
    QTest::newRow("not a histogram type") << json(o) << QStringLiteral("type must be");
    o = good;
    o.insert(QStringLiteral("value"), QJsonObject{{QStringLiteral("bins"), 8},
                                                  {QStringLiteral("xLow"), 0},
                                                  {QStringLiteral("xHigh"), 1},
                                                  {QStringLiteral("contents"), QJsonArray{1, 2}}});
    QTest::newRow("contents do not match bins") << json(o) << QStringLiteral("2 contents for 8 bins");
    o = good;
    o.insert(QStringLiteral("value"), histogram2D(1, 1, [](int, int) { return 1; }));
    o.insert(QStringLiteral("type"), QStringLiteral("Histogram2D"));
    QJsonObject v = o.value(QStringLiteral("value")).toObject();
    v.insert(QStringLiteral("xBins"), 100000);
    v.insert(QStringLiteral("yBins"), 100000);
    o.insert(QStringLiteral("value"), v);
    QTest::newRow("too many bins") << json(o) << QStringLiteral("bins out of range");
    // Edges near 1e20, a few units of the last place apart, on a wide picture: the ticks' steps are
    // smaller than what a double can add there. Drawn (no ticks), never a loop that does not end.
    o = good;
    v = histogram1D(8, [](int i) { return i; });
    v.insert(QStringLiteral("xLow"), 1e20);
    v.insert(QStringLiteral("xHigh"), 1e20 + 65536);
    o.insert(QStringLiteral("value"), v);
    o.insert(QStringLiteral("width"), 4000);
    QTest::newRow("edges a few ulps apart (drawn)") << json(o) << QString();
    o = good;
    v = histogram1D(8, [](int i) { return i < 4 ? 1e308 : -1e308; });
    v.insert(QStringLiteral("entries"), 8); // their sum is not a number JSON has
    o.insert(QStringLiteral("value"), v);
    o.insert(QStringLiteral("log_y"), true);
    QTest::newRow("contents at the limits of double (drawn)") << json(o) << QString();
    o = good;
    o.remove(QStringLiteral("value"));
    QTest::newRow("no value") << json(o) << QStringLiteral("no \"value\"");
    QTest::newRow("not JSON") << QByteArray("{\"id\": 10, \"width\"") << QStringLiteral("not JSON");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("not JSON");
    QTest::newRow("an array") << QByteArray("[1,2]") << QStringLiteral("not a JSON object");
    QTest::newRow("binary") << QByteArray("\x00\xff\x10\x80garbage", 11) << QStringLiteral("not JSON");
}

void tst_Render::badRequestsGetAnErrorAndItGoesOn()
{
    QFETCH(QByteArray, payload);
    QFETCH(QString, error);
    const Answer bad = ask(payload);
    QVERIFY(bad.complete);
    const QString got = bad.head.value(QStringLiteral("error")).toString();
    if (error.isEmpty()) { // hostile but valid: a picture
        QCOMPARE(got, QString());
        QVERIFY(!image(bad).isNull());
    } else {
        QVERIFY2(got.contains(error), qPrintable(got));
        QVERIFY(bad.png.isEmpty());
    }
    // It goes on answering.
    const Answer good =
        ask(request(11, 200, 100, QStringLiteral("Histogram1D"), histogram1D(8, [](int i) { return i; })));
    QVERIFY(good.complete);
    QCOMPARE(good.head.value(QStringLiteral("id")).toInt(), 11);
    QCOMPARE(image(good).size(), QSize(200, 100));
}

void tst_Render::oversizedRequestIsSkipped()
{
    // A length over the limit: its bytes are read and dropped, the answer is an error, the next
    // request is served (the stream stays in step).
    const quint32 n = render::MaxRequestBytes + 1;
    char header[4];
    qToBigEndian(n, header);
    m_render->write(header, 4);
    const QByteArray chunk(1 << 20, 'x');
    for (quint32 sent = 0; sent < n;) {
        const QByteArray part = chunk.left(qsizetype(std::min<quint32>(n - sent, quint32(chunk.size()))));
        m_render->write(part);
        sent += quint32(part.size());
        QVERIFY(waitUntil([&] { return m_render->bytesToWrite() < (4 << 20); }, 20000));
    }
    const Answer good =
        ask(request(12, 100, 100, QStringLiteral("Histogram1D"), histogram1D(8, [](int i) { return i; })));
    QVERIFY(good.complete);
    // The oversized request's answer came first (it is parsed by ask() as the first whole answer).
    QVERIFY2(good.head.value(QStringLiteral("error")).toString().contains(QStringLiteral("over the limit")),
             qPrintable(QJsonDocument(good.head).toJson()));
    const Answer next = ask(QByteArray()); // reads the answer to request 12, then the one to this
    QVERIFY(next.complete);
    QCOMPARE(next.head.value(QStringLiteral("id")).toInt(), 12);
    QCOMPARE(image(next).size(), QSize(100, 100));
}

void tst_Render::endOfInputExitsWithZero()
{
    QVERIFY(ask(request(13, 64, 64, QStringLiteral("Histogram1D"), histogram1D(4, [](int i) { return i; })))
                .complete);
    m_render->closeWriteChannel();
    QVERIFY(m_render->waitForFinished(10000));
    QCOMPARE(m_render->exitStatus(), QProcess::NormalExit);
    QCOMPARE(m_render->exitCode(), 0);
}

QTEST_MAIN(tst_Render)
#include "tst_render.moc"
