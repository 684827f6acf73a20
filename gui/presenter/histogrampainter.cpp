#include "histogrampainter.h"

#include "plotaxis.h"

#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace dialog::presenter {

namespace {

using namespace plot;

// Below these sizes a picture has no text: only the frame and the data.
constexpr int MinTextWidth = 120, MinTextHeight = 80;

// One drawn column of a 1D histogram: [x0, x1) at height value. When bins outnumber the pixels,
// each pixel column shows the largest bin it covers, so a single spike stays visible.
struct Step
{
    double x0, x1, value;
};

QList<Step> steps(const Histogram &h, int pixels)
{
    QList<Step> out;
    const int n = h.xBins;
    const double w = (h.xHigh - h.xLow) / n;
    if (n <= pixels || pixels <= 0) {
        out.reserve(n);
        for (int i = 0; i < n; ++i)
            out.append({h.xLow + i * w, h.xLow + (i + 1) * w, h.contents.at(i)});
        return out;
    }
    out.reserve(pixels);
    for (int c = 0; c < pixels; ++c) {
        const int a = int(qint64(c) * n / pixels), b = std::max(a + 1, int(qint64(c + 1) * n / pixels));
        double m = h.contents.at(a);
        for (int i = a + 1; i < b; ++i)
            m = std::max(m, h.contents.at(i));
        out.append({h.xLow + a * w, h.xLow + b * w, m});
    }
    return out;
}

QPainterPath stepPath(const QList<Step> &s, const Axis &x, const Axis &y, double scale)
{
    QPainterPath path;
    bool first = true;
    for (const Step &st : s) {
        const double py = y.toPixel(st.value * scale);
        const double px0 = x.toPixel(st.x0), px1 = x.toPixel(st.x1);
        if (first)
            path.moveTo(px0, py);
        else
            path.lineTo(px0, py);
        path.lineTo(px1, py);
        first = false;
    }
    return path;
}

bool hasText(const QSize &size)
{
    return size.width() >= MinTextWidth && size.height() >= MinTextHeight;
}

QString titleText(const Histogram &h, const PaintOptions &o)
{
    if (h.title.isEmpty() || h.title == o.label)
        return o.label;
    return o.label.isEmpty() ? h.title : QStringLiteral("%1 — %2").arg(o.label, h.title);
}

QString captionText(const PaintOptions &o)
{
    if (o.check.quality == Quality::None)
        return {};
    QString t = CheckResult::qualityName(o.check.quality);
    if (o.check.quality != Quality::Undefined)
        t += QStringLiteral("  %1").arg(label(o.check.value));
    if (!o.check.details.isEmpty())
        t += QStringLiteral("  —  %1").arg(o.check.details);
    return t;
}

// The value range of a 1D picture's y axis (the reference included).
Axis yRange(const Histogram &h, const PaintOptions &o, double refScale)
{
    double top = h.maximum(), low = 0, minPos = h.minimumPositive();
    for (double v : h.contents)
        low = std::min(low, v);
    if (o.reference.isValid()) {
        top = std::max(top, o.reference.maximum() * refScale);
        const double rp = o.reference.minimumPositive() * refScale;
        if (rp > 0 && (minPos == 0 || rp < minPos))
            minPos = rp;
    }
    Axis a;
    if (o.logY) {
        a.log = true;
        a.lo = minPos > 0 ? minPos / 2 : 0.5;
        a.hi = top > a.lo ? top * 2 : a.lo * 20;
    } else {
        a.lo = low;
        a.hi = top > low ? low + (top - low) * 1.1 : low + 1;
    }
    return a;
}

// The z range of a 2D picture: [smallest positive or 0, largest].
Axis zRange(const Histogram &h, bool log)
{
    Axis a;
    const double top = h.maximum();
    if (log) {
        a.log = true;
        a.lo = h.minimumPositive() > 0 ? h.minimumPositive() : 1;
        a.hi = top > a.lo ? top : a.lo * 10;
    } else {
        a.lo = 0;
        a.hi = top > 0 ? top : 1;
    }
    return a;
}

double referenceScale(const Histogram &h, const Histogram &ref)
{
    const double rs = ref.sum();
    return rs > 0 ? h.sum() / rs : 1.0;
}

// "reference" and a sample of its line at the top right of the plot; on a white box over a colour map.
void drawReferenceLegend(QPainter *p, const QRect &plot, const QFontMetrics &fm, bool boxed)
{
    const QString t = QStringLiteral("reference");
    const int w = fm.horizontalAdvance(t);
    const QRect box(plot.right() - w - 24, plot.top() + 4, w + 20, fm.height());
    if (boxed)
        p->fillRect(box.adjusted(-3, -1, 3, 1), QColor(255, 255, 255, 220));
    p->setPen(QPen(HistogramPainter::referenceColor(), 2));
    p->drawLine(box.left(), box.center().y(), box.left() + 12, box.center().y());
    p->setPen(QColor(60, 60, 60));
    p->drawText(box.adjusted(16, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, t);
}

// The reference of a 2D histogram over its colour map: the outline of the reference's cells at or
// above half of its largest content (solid) and at or above a tenth of it (dashed), in the
// reference's own binning, on a white halo. Where the colours leave the outlines (a hole inside,
// hits outside), the histogram differs from the reference. Larger references are not outlined.
void drawReferenceContours(QPainter *p, const Histogram &ref, const Axis &x, const Axis &y, int width)
{
    constexpr qsizetype MaxOutlinedCells = 1 << 20;
    const double top = ref.maximum();
    if (!(top > 0) || qsizetype(ref.xBins) * ref.yBins > MaxOutlinedCells)
        return;
    const double wx = (ref.xHigh - ref.xLow) / ref.xBins, wy = (ref.yHigh - ref.yLow) / ref.yBins;
    const auto at = [&](int i, int j) {
        return i < 0 || j < 0 || i >= ref.xBins || j >= ref.yBins ? 0.0
                                                                   : ref.contents.at(qsizetype(j) * ref.xBins + i);
    };
    for (const double level : {0.1, 0.5}) {
        const double threshold = level * top;
        QPainterPath path;
        const auto edge = [&](double ax, double ay, double bx, double by) {
            path.moveTo(ax, ay);
            path.lineTo(bx, by);
        };
        for (int j = 0; j < ref.yBins; ++j)
            for (int i = 0; i < ref.xBins; ++i) {
                if (!(at(i, j) >= threshold))
                    continue;
                const double x0 = x.toPixel(ref.xLow + i * wx), x1 = x.toPixel(ref.xLow + (i + 1) * wx);
                const double y0 = y.toPixel(ref.yLow + j * wy), y1 = y.toPixel(ref.yLow + (j + 1) * wy);
                if (!(at(i - 1, j) >= threshold))
                    edge(x0, y0, x0, y1);
                if (!(at(i + 1, j) >= threshold))
                    edge(x1, y0, x1, y1);
                if (!(at(i, j - 1) >= threshold))
                    edge(x0, y0, x1, y0);
                if (!(at(i, j + 1) >= threshold))
                    edge(x0, y1, x1, y1);
            }
        p->setPen(QPen(QColor(255, 255, 255, 200), width + 2, Qt::SolidLine, Qt::SquareCap));
        p->drawPath(path);
        p->setPen(QPen(HistogramPainter::referenceColor(), width, level < 0.5 ? Qt::DashLine : Qt::SolidLine,
                       Qt::SquareCap));
        p->drawPath(path);
    }
}

void paint1D(QPainter *p, const Histogram &h, const PaintOptions &o, const HistogramPainter::Layout &l,
             bool text)
{
    const QRect &plot = l.plot;
    const double scale = o.reference.isValid() ? referenceScale(h, o.reference) : 1.0;
    Axis y = yRange(h, o, scale);
    y.p0 = plot.bottom() + 1;
    y.p1 = plot.top();
    Axis x{h.xLow, h.xHigh, o.logX && h.xLow > 0, double(plot.left()), double(plot.right() + 1)};

    p->save();
    p->setClipRect(plot);
    const QList<Step> s = steps(h, plot.width());
    QPainterPath outline = stepPath(s, x, y, 1.0);
    QPainterPath area = outline;
    const double base = y.toPixel(y.log ? y.lo : std::max(y.lo, 0.0));
    if (!s.isEmpty()) {
        area.lineTo(x.toPixel(s.last().x1), base);
        area.lineTo(x.toPixel(s.first().x0), base);
        area.closeSubpath();
    }
    p->fillPath(area, HistogramPainter::barColor());
    p->setPen(QPen(HistogramPainter::barColor().darker(190), 1));
    p->drawPath(outline);
    if (o.reference.isValid() && o.reference.kind == Histogram::Kind::OneD) {
        p->setRenderHint(QPainter::Antialiasing, true);
        p->setPen(QPen(HistogramPainter::referenceColor(), std::max(1.5, plot.height() / 150.0)));
        p->drawPath(stepPath(steps(o.reference, plot.width()), x, y, scale));
        p->setRenderHint(QPainter::Antialiasing, false);
    }
    p->restore();

    if (!text)
        return;
    const QFontMetrics fm(p->font());
    p->setPen(QColor(60, 60, 60));
    drawYTicks(p, y, plot, fm, false);
    drawXTicks(p, x, plot, fm);
    if (o.reference.isValid())
        drawReferenceLegend(p, plot, fm, false);
}

void paint2D(QPainter *p, const Histogram &h, const PaintOptions &o, const HistogramPainter::Layout &l,
             bool text)
{
    const QRect &plot = l.plot;
    const Axis z = zRange(h, o.logZ);
    // One pixel per cell, row 0 at the bottom, scaled onto the plot without smoothing; the colours
    // from a table of 256 levels (opaque, so premultiplied is the same).
    QRgb table[256];
    for (int k = 0; k < 256; ++k)
        table[k] = HistogramPainter::colourAt(k / 255.0).rgba();
    const double lo = z.log ? std::log10(z.lo) : z.lo;
    const double span = (z.log ? std::log10(z.hi) : z.hi) - lo;
    QImage cells(h.xBins, h.yBins, QImage::Format_ARGB32_Premultiplied);
    cells.fill(Qt::transparent);
    const double *c = h.contents.constData();
    for (int j = 0; j < h.yBins; ++j) {
        auto *line = reinterpret_cast<QRgb *>(cells.scanLine(h.yBins - 1 - j));
        const double *row = c + qsizetype(j) * h.xBins;
        for (int i = 0; i < h.xBins; ++i) {
            const double v = row[i];
            if (v <= 0)
                continue;
            const double t = ((z.log ? std::log10(v) : v) - lo) / span;
            line[i] = table[std::clamp(int(t * 255 + 0.5), 0, 255)];
        }
    }
    p->drawImage(plot, cells);
    Axis y{h.yLow, h.yHigh, false, double(plot.bottom() + 1), double(plot.top())};
    Axis x{h.xLow, h.xHigh, false, double(plot.left()), double(plot.right() + 1)};
    const bool reference = o.reference.isValid() && o.reference.kind == Histogram::Kind::TwoD;
    if (reference) {
        p->save();
        p->setClipRect(plot);
        drawReferenceContours(p, o.reference, x, y, std::max(2, plot.height() / 150));
        p->restore();
    }

    if (!l.scale.isEmpty()) {
        QLinearGradient g(l.scale.bottomLeft(), l.scale.topLeft());
        for (int k = 0; k <= 8; ++k)
            g.setColorAt(k / 8.0, HistogramPainter::colourAt(k / 8.0));
        p->fillRect(l.scale, g);
        p->setPen(QColor(120, 120, 120));
        p->drawRect(l.scale.adjusted(0, 0, -1, -1));
    }
    if (!text)
        return;
    const QFontMetrics fm(p->font());
    p->setPen(QColor(60, 60, 60));
    drawYTicks(p, y, plot, fm, false);
    drawXTicks(p, x, plot, fm);
    if (!l.scale.isEmpty()) {
        Axis zs = z;
        zs.p0 = l.scale.bottom() + 1;
        zs.p1 = l.scale.top();
        drawYTicks(p, zs, l.scale, fm, true);
    }
    if (reference)
        drawReferenceLegend(p, plot, fm, true);
}

} // namespace

QColor HistogramPainter::qualityColor(Quality q)
{
    switch (q) {
    case Quality::Good:
        return QColor(0x2e, 0xa0, 0x43);
    case Quality::Warning:
        return QColor(0xf0, 0x90, 0x00);
    case Quality::Bad:
        return QColor(0xd0, 0x30, 0x30);
    case Quality::Undefined:
        return QColor(0x90, 0x90, 0x90);
    case Quality::None:
        break;
    }
    return QColor(0xc8, 0xc8, 0xc8);
}

QColor HistogramPainter::backgroundColor(Quality q)
{
    if (q == Quality::None)
        return QColor(0xf6, 0xf6, 0xf6);
    const QColor c = qualityColor(q);
    // 22 % of the colour over white.
    const auto mix = [](int v) { return int(255 - (255 - v) * 0.22); };
    return QColor(mix(c.red()), mix(c.green()), mix(c.blue()));
}

QColor HistogramPainter::colourAt(double t)
{
    // Viridis, in five stops: dark violet (few) to yellow (many); legible on white and in grey.
    static const QColor stops[] = {QColor(0x44, 0x01, 0x54), QColor(0x3b, 0x52, 0x8b),
                                   QColor(0x21, 0x91, 0x8c), QColor(0x5e, 0xc9, 0x62),
                                   QColor(0xfd, 0xe7, 0x25)};
    t = std::clamp(t, 0.0, 1.0) * 4;
    const int i = std::min(3, int(t));
    const double f = t - i;
    const QColor &a = stops[i], &b = stops[i + 1];
    return QColor(int(a.red() + (b.red() - a.red()) * f), int(a.green() + (b.green() - a.green()) * f),
                  int(a.blue() + (b.blue() - a.blue()) * f));
}

HistogramPainter::Layout HistogramPainter::layout(const QSize &size, const Histogram &h,
                                                  const PaintOptions &o)
{
    Layout l;
    l.frame = QRect(QPoint(0, 0), size);
    l.frameWidth =
        o.check.quality == Quality::None ? 0 : std::clamp(std::min(size.width(), size.height()) / 50, 2, 6);
    QRect inner = l.frame.adjusted(l.frameWidth, l.frameWidth, -l.frameWidth, -l.frameWidth);
    if (!hasText(size)) {
        l.plot = inner.adjusted(1, 1, -1, -1);
        return l;
    }
    const QFontMetrics fm(pictureFont(size));
    const int line = fm.height() + 4;
    l.title = QRect(inner.left() + 4, inner.top() + 2, inner.width() - 8, line);
    if (o.check.quality != Quality::None)
        l.caption = QRect(inner.left() + 4, inner.bottom() - line - 1, inner.width() - 8, line);
    const int yLabels = fm.horizontalAdvance(QStringLiteral("-0.000e+00")) * 3 / 4 + 8;
    const int top = l.title.bottom() + 4;
    const int bottom = (l.caption.isEmpty() ? inner.bottom() : l.caption.top()) - line - 2;
    int right = inner.right() - 10;
    if (h.kind == Histogram::Kind::TwoD) {
        const int bar = std::max(8, size.width() / 40);
        const int scaleLabels = fm.horizontalAdvance(QStringLiteral("0.000e+00")) * 3 / 4 + 8;
        l.scale = QRect(right - scaleLabels - bar + 1, top, bar, std::max(1, bottom - top + 1));
        right = l.scale.left() - 8;
    }
    l.plot = QRect(QPoint(inner.left() + yLabels, top), QPoint(right, bottom));
    if (l.plot.width() < 8 || l.plot.height() < 8) {
        l = Layout{l.frame, l.frameWidth, {}, inner.adjusted(1, 1, -1, -1), {}, {}};
    }
    return l;
}

void HistogramPainter::paint(QPainter *p, const QRect &rect, const Histogram &h, const PaintOptions &o)
{
    p->save();
    p->translate(rect.topLeft());
    p->setClipRect(QRect(QPoint(0, 0), rect.size()));
    p->setRenderHint(QPainter::Antialiasing, false);
    p->setRenderHint(QPainter::TextAntialiasing, true);
    const Layout l = layout(rect.size(), h, o);
    const bool text = !l.title.isEmpty();
    p->setFont(pictureFont(rect.size()));

    p->fillRect(l.frame, o.check.quality == Quality::None ? backgroundColor(Quality::None)
                                                          : qualityColor(o.check.quality));
    p->fillRect(l.frame.adjusted(l.frameWidth, l.frameWidth, -l.frameWidth, -l.frameWidth),
                backgroundColor(o.check.quality));
    p->fillRect(l.plot, Qt::white);

    if (h.isValid()) {
        if (h.kind == Histogram::Kind::TwoD)
            paint2D(p, h, o, l, text);
        else
            paint1D(p, h, o, l, text);
    } else if (text) {
        p->setPen(QColor(110, 110, 110));
        p->drawText(l.plot.adjusted(6, 6, -6, -6), Qt::AlignCenter | Qt::TextWordWrap,
                    o.message.isEmpty() ? QStringLiteral("no histogram") : o.message);
    }
    p->setPen(QColor(150, 150, 150));
    p->drawRect(l.plot.adjusted(-1, -1, 0, 0));

    if (text) {
        const QFontMetrics fm(p->font());
        QFont bold = p->font();
        bold.setBold(true);
        p->setFont(bold);
        p->setPen(QColor(30, 30, 30));
        p->drawText(l.title, Qt::AlignLeft | Qt::AlignVCenter,
                    QFontMetrics(bold).elidedText(titleText(h, o), Qt::ElideMiddle, l.title.width()));
        p->setFont(pictureFont(rect.size()));
        if (!l.caption.isEmpty()) {
            p->setPen(o.check.quality == Quality::Warning ? QColor(120, 70, 0)
                                                          : qualityColor(o.check.quality).darker(150));
            p->drawText(l.caption, Qt::AlignLeft | Qt::AlignVCenter,
                        fm.elidedText(captionText(o), Qt::ElideRight, l.caption.width()));
        }
    }
    p->restore();
}

QImage HistogramPainter::render(const QSize &size, const Histogram &h, const PaintOptions &o)
{
    if (size.isEmpty())
        return {};
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter p(&image);
    paint(&p, QRect(QPoint(0, 0), size), h, o);
    p.end();
    return image;
}

} // namespace dialog::presenter
