#include "histogramview.h"

#include <QAreaSeries>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

namespace dialog::ismonitor {

namespace {
constexpr int Levels = 6;

double number(const is::Object &o, const char *name)
{
    return o.variant(QString::fromLatin1(name)).toDouble();
}

QList<double> contents(const is::Object &o)
{
    QList<double> out;
    for (const QVariant &v : o.variant(QStringLiteral("contents")).toList())
        out << v.toDouble();
    return out;
}
} // namespace

HistogramView::HistogramView(QWidget *parent) : QChartView(parent), m_x(new QValueAxis), m_y(new QValueAxis)
{
    setRenderHint(QPainter::Antialiasing);
    auto *c = new QChart;
    c->addAxis(m_x, Qt::AlignBottom);
    c->addAxis(m_y, Qt::AlignLeft);
    m_x->setLabelFormat(QStringLiteral("%.4g"));
    m_y->setLabelFormat(QStringLiteral("%.4g"));
    c->legend()->hide();
    c->setMargins(QMargins(4, 4, 4, 4));
    setChart(c);
    setMinimumHeight(160);
}

bool HistogramView::isHistogram(const is::Object &o)
{
    return o.isValid() && o.indexOf(QStringLiteral("contents")) >= 0 &&
           (o.indexOf(QStringLiteral("bins")) >= 0 || o.indexOf(QStringLiteral("xBins")) >= 0);
}

void HistogramView::clear()
{
    chart()->removeAllSeries();
    m_outline = nullptr;
    m_area = nullptr;
    m_levels.clear();
    m_xBins = m_yBins = 0;
    m_points = 0;
    chart()->setTitle({});
}

int HistogramView::pointCount() const
{
    return m_points;
}

void HistogramView::setHistogram(const is::Object &h, const QString &label)
{
    if (h.indexOf(QStringLiteral("xBins")) >= 0)
        show2D(h);
    else
        show1D(h);
    // After show*(): a change of kind clears the chart, title included.
    const QString title = h.variant(QStringLiteral("title")).toString();
    chart()->setTitle(
        title.isEmpty() ? label : (label.isEmpty() ? title : QStringLiteral("%1 — %2").arg(label, title)));
}

void HistogramView::show1D(const is::Object &h)
{
    const int bins = int(number(h, "bins"));
    const double lo = number(h, "xLow"), hi = number(h, "xHigh");
    const QList<double> c = contents(h);
    if (!m_outline || m_yBins != 0) {
        clear();
        m_outline = new QLineSeries;
        m_area = new QAreaSeries(m_outline);
        m_outline->setParent(m_area); // an area series does not own its line: it goes with the area
        m_area->setColor(QColor(70, 130, 180, 160));
        m_area->setBorderColor(QColor(30, 70, 120));
        chart()->addSeries(m_area);
        m_area->attachAxis(m_x);
        m_area->attachAxis(m_y);
    }
    m_xBins = bins;
    QList<QPointF> pts;
    double top = 0;
    const double w = bins > 0 ? (hi - lo) / bins : 1;
    // A step outline: two points per bin.
    for (int i = 0; i < bins && i < c.size(); ++i) {
        pts << QPointF(lo + i * w, c.at(i)) << QPointF(lo + (i + 1) * w, c.at(i));
        top = std::max(top, c.at(i));
    }
    m_outline->replace(pts);
    m_points = int(pts.size() / 2);
    m_x->setRange(lo, hi > lo ? hi : lo + 1);
    m_y->setRange(0, top > 0 ? top * 1.1 : 1);
    m_x->setTitleText({});
    m_y->setTitleText(QStringLiteral("entries"));
}

void HistogramView::show2D(const is::Object &h)
{
    const int xb = int(number(h, "xBins")), yb = int(number(h, "yBins"));
    const double xlo = number(h, "xLow"), xhi = number(h, "xHigh"), ylo = number(h, "yLow"),
                 yhi = number(h, "yHigh");
    const QList<double> c = contents(h);
    if (m_levels.isEmpty()) {
        clear();
        // A colour scale from pale yellow to dark red, one scatter series per level.
        for (int l = 0; l < Levels; ++l) {
            auto *s = new QScatterSeries;
            s->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
            s->setBorderColor(Qt::transparent);
            const double t = double(l) / (Levels - 1);
            s->setColor(QColor::fromHsvF(0.16 * (1 - t), 0.3 + 0.7 * t, 1.0 - 0.45 * t));
            chart()->addSeries(s);
            s->attachAxis(m_x);
            s->attachAxis(m_y);
            m_levels << s;
        }
    }
    m_xBins = xb;
    m_yBins = yb;
    double top = 0;
    for (double v : c)
        top = std::max(top, v);
    QList<QList<QPointF>> pts(Levels);
    const double wx = xb > 0 ? (xhi - xlo) / xb : 1, wy = yb > 0 ? (yhi - ylo) / yb : 1;
    m_points = 0;
    for (int j = 0; j < yb; ++j)
        for (int i = 0; i < xb; ++i) {
            const qsizetype k = qsizetype(j) * xb + i;
            if (k >= c.size() || c.at(k) <= 0)
                continue;
            const int level = std::min(Levels - 1, int(c.at(k) / top * Levels));
            pts[level] << QPointF(xlo + (i + 0.5) * wx, ylo + (j + 0.5) * wy);
            ++m_points;
        }
    for (int l = 0; l < Levels; ++l)
        m_levels[l]->replace(pts[l]);
    m_x->setRange(xlo, xhi > xlo ? xhi : xlo + 1);
    m_y->setRange(ylo, yhi > ylo ? yhi : ylo + 1);
    m_y->setTitleText({});
    sizeMarkers();
}

void HistogramView::sizeMarkers()
{
    if (m_levels.isEmpty() || m_xBins <= 0 || m_yBins <= 0)
        return;
    const QRectF area = chart()->plotArea();
    const double size = std::max(3.0, std::min(area.width() / m_xBins, area.height() / m_yBins));
    for (QScatterSeries *s : std::as_const(m_levels))
        s->setMarkerSize(size);
}

void HistogramView::resizeEvent(QResizeEvent *event)
{
    QChartView::resizeEvent(event);
    sizeMarkers();
}

} // namespace dialog::ismonitor
