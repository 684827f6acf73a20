#include "seriespainter.h"

#include "histogrampainter.h"
#include "plotaxis.h"

#include <QDateTime>
#include <QFontMetrics>
#include <QJsonArray>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace dialog::presenter {

using namespace plot;

namespace {

constexpr int MinTextWidth = 120, MinTextHeight = 80;

// Time ticks: the first of these steps (seconds) that gives at most @p maxTicks, at its multiples.
QList<double> timeTicks(qint64 fromMs, qint64 toMs, int maxTicks)
{
    static const qint64 steps[] = {1,   2,    5,    10,   15,    30,    60,    120,   300,    600,
                                   900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800};
    QList<double> out;
    const qint64 span = toMs - fromMs;
    if (span <= 0)
        return out;
    qint64 step = steps[std::size(steps) - 1] * 1000;
    for (qint64 s : steps)
        if (span / (s * 1000) <= std::max(2, maxTicks)) {
            step = s * 1000;
            break;
        }
    for (qint64 t = (fromMs + step - 1) / step * step; t <= toMs && out.size() < 1000; t += step)
        out << double(t);
    return out;
}

QString timeLabel(double ms, qint64 spanMs)
{
    const QDateTime t = QDateTime::fromMSecsSinceEpoch(qint64(ms), Qt::UTC);
    if (spanMs > 2 * 86400 * 1000LL)
        return t.toString(QStringLiteral("dd MMM hh:mm"));
    return t.toString(spanMs >= 600 * 1000 ? QStringLiteral("hh:mm") : QStringLiteral("hh:mm:ss"));
}

QString spanText(qint64 ms)
{
    const qint64 s = ms / 1000;
    if (s % 86400 == 0)
        return QStringLiteral("%1 d").arg(s / 86400);
    if (s % 3600 == 0)
        return QStringLiteral("%1 h").arg(s / 3600);
    if (s % 60 == 0)
        return QStringLiteral("%1 min").arg(s / 60);
    return QStringLiteral("%1 s").arg(s);
}

// The value axis: the smallest min to the largest max, a tenth more on each side.
Axis valueRange(const SeriesData &s)
{
    double lo = 0, hi = 0;
    bool first = true;
    for (const SeriesPoint &p : s.points) {
        lo = first ? p.min : std::min(lo, p.min);
        hi = first ? p.max : std::max(hi, p.max);
        first = false;
    }
    const double pad = hi > lo ? (hi - lo) * 0.1 : std::max(1.0, std::abs(hi) * 0.1);
    return Axis{lo - pad, hi + pad, false, 0, 1};
}

double finite(const QJsonValue &v, bool *ok)
{
    const double d = v.toDouble(std::nan(""));
    *ok = *ok && std::isfinite(d);
    return d;
}

} // namespace

SeriesData SeriesData::fromJson(const QJsonObject &json, QString *error)
{
    const auto fail = [error](const QString &why) {
        if (error)
            *error = why;
        return SeriesData();
    };
    SeriesData s;
    s.label = json.value(QStringLiteral("label")).toString();
    const double end = json.value(QStringLiteral("end_ms")).toDouble(-1);
    const double span = json.value(QStringLiteral("span_ms")).toDouble(-1);
    if (!(end >= 0) || !(span >= 1) || end > 1e15 || span > 1e12)
        return fail(QStringLiteral("a time series needs \"end_ms\" >= 0 and \"span_ms\" >= 1"));
    s.endMs = qint64(end);
    s.spanMs = qint64(span);
    const QJsonArray points = json.value(QStringLiteral("points")).toArray();
    if (points.size() > MaxPoints)
        return fail(QStringLiteral("%1 points, more than %2").arg(points.size()).arg(MaxPoints));
    s.points.reserve(points.size());
    for (const QJsonValue &v : points) {
        const QJsonArray a = v.toArray();
        bool ok = a.size() >= 2;
        SeriesPoint p;
        p.ms = qint64(finite(a.at(0), &ok));
        p.value = finite(a.at(1), &ok);
        p.min = a.size() >= 4 ? finite(a.at(2), &ok) : p.value;
        p.max = a.size() >= 4 ? finite(a.at(3), &ok) : p.value;
        if (!ok)
            return fail(
                QStringLiteral("point %1 is not [ms, value] or [ms, mean, min, max] of finite numbers")
                    .arg(s.points.size() + 1));
        if (p.ms >= s.endMs - s.spanMs && p.ms <= s.endMs)
            s.points.append(p);
    }
    std::stable_sort(s.points.begin(), s.points.end(),
                     [](const SeriesPoint &a, const SeriesPoint &b) { return a.ms < b.ms; });
    return s;
}

SeriesPainter::Layout SeriesPainter::layout(const QSize &size)
{
    Layout l;
    const QRect inner(QPoint(0, 0), size);
    if (size.width() < MinTextWidth || size.height() < MinTextHeight) {
        l.plot = inner.adjusted(1, 1, -1, -1);
        return l;
    }
    const QFontMetrics fm(pictureFont(size));
    const int line = fm.height() + 4;
    l.title = QRect(4, 2, size.width() - 8, line);
    const int yLabels = fm.horizontalAdvance(QStringLiteral("-0.000e+00")) * 3 / 4 + 8;
    // Room on the right for half of the last time label.
    const int right = size.width() - 6 - fm.horizontalAdvance(QStringLiteral("00:00:00")) / 2;
    l.plot = QRect(QPoint(yLabels, l.title.bottom() + 4), QPoint(right, size.height() - line - 3));
    if (l.plot.width() < 8 || l.plot.height() < 8)
        l = Layout{{}, inner.adjusted(1, 1, -1, -1)};
    return l;
}

void SeriesPainter::paint(QPainter *p, const QRect &rect, const SeriesData &s)
{
    p->save();
    p->translate(rect.topLeft());
    p->setClipRect(QRect(QPoint(0, 0), rect.size()));
    p->setRenderHint(QPainter::TextAntialiasing, true);
    const Layout l = layout(rect.size());
    const bool text = !l.title.isEmpty();
    const QFont font = pictureFont(rect.size());
    p->setFont(font);
    p->fillRect(QRect(QPoint(0, 0), rect.size()), HistogramPainter::backgroundColor(Quality::None));
    p->fillRect(l.plot, Qt::white);

    const qint64 from = s.endMs - s.spanMs;
    const Axis x{double(from), double(s.endMs), false, double(l.plot.left()), double(l.plot.right() + 1)};
    Axis y = valueRange(s);
    y.p0 = l.plot.bottom() + 1;
    y.p1 = l.plot.top();
    const QFontMetrics fm(font);
    if (!s.points.isEmpty()) {
        p->save();
        p->setClipRect(l.plot);
        p->setRenderHint(QPainter::Antialiasing, true);
        QPainterPath band, line;
        for (qsizetype i = 0; i < s.points.size(); ++i) {
            const SeriesPoint &pt = s.points.at(i);
            const QPointF at(x.toPixel(double(pt.ms)), y.toPixel(pt.value));
            i == 0 ? line.moveTo(at) : line.lineTo(at);
            const QPointF top(at.x(), y.toPixel(pt.max));
            i == 0 ? band.moveTo(top) : band.lineTo(top);
        }
        for (qsizetype i = s.points.size() - 1; i >= 0; --i)
            band.lineTo(x.toPixel(double(s.points.at(i).ms)), y.toPixel(s.points.at(i).min));
        band.closeSubpath();
        p->fillPath(band, bandColor());
        p->setPen(QPen(lineColor(), 2, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        p->drawPath(line);
        // Few values: each one marked, so that a lone value shows.
        if (s.points.size() * 6 < l.plot.width()) {
            p->setBrush(lineColor());
            for (const SeriesPoint &pt : s.points)
                p->drawEllipse(QPointF(x.toPixel(double(pt.ms)), y.toPixel(pt.value)), 2.5, 2.5);
        }
        p->restore();
    } else if (text) {
        p->setPen(QColor(110, 110, 110));
        p->drawText(l.plot.adjusted(6, 6, -6, -6), Qt::AlignCenter | Qt::TextWordWrap,
                    QStringLiteral("no value in the last %1").arg(spanText(s.spanMs)));
    }
    p->setPen(QColor(150, 150, 150));
    p->drawRect(l.plot.adjusted(-1, -1, 0, 0));

    if (text) {
        p->setPen(QColor(60, 60, 60));
        if (!s.points.isEmpty())
            drawYTicks(p, y, l.plot, fm, false);
        const int count =
            std::max(2, l.plot.width() / (fm.horizontalAdvance(QStringLiteral("00:00:00")) + 12));
        drawXTicks(p, x, l.plot, fm, timeTicks(from, s.endMs, count),
                   [&](double ms) { return timeLabel(ms, s.spanMs); });
        QString title = QStringLiteral("%1  (last %2, UTC)").arg(s.label, spanText(s.spanMs));
        const QString newest =
            s.points.isEmpty() ? QString() : QStringLiteral("newest %1").arg(label(s.points.last().value));
        QFont bold = font;
        bold.setBold(true);
        p->setFont(bold);
        p->setPen(QColor(30, 30, 30));
        const int newestWidth = newest.isEmpty() ? 0 : QFontMetrics(bold).horizontalAdvance(newest) + 12;
        p->drawText(l.title.adjusted(0, 0, -newestWidth, 0), Qt::AlignLeft | Qt::AlignVCenter,
                    QFontMetrics(bold).elidedText(title, Qt::ElideMiddle, l.title.width() - newestWidth));
        p->setPen(lineColor());
        p->drawText(l.title, Qt::AlignRight | Qt::AlignVCenter, newest);
    }
    p->restore();
}

QImage SeriesPainter::render(const QSize &size, const SeriesData &s)
{
    if (size.isEmpty())
        return {};
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter p(&image);
    paint(&p, QRect(QPoint(0, 0), size), s);
    p.end();
    return image;
}

} // namespace dialog::presenter
