#include "historyplot.h"

#include <QDateTimeAxis>
#include <QLineSeries>
#include <QValueAxis>
#include <cmath>

namespace dialog::ismonitor {

namespace {
constexpr int MaxPoints = 4000; // an hour at 1 Hz and a margin; older points go
}

HistoryPlot::HistoryPlot(QWidget *parent) : QChartView(parent)
{
    auto *c = new QChart;
    c->legend()->hide();
    c->setMargins(QMargins(4, 4, 4, 4));
    m_line = new QLineSeries;
    c->addSeries(m_line);
    m_x = new QDateTimeAxis;
    m_x->setFormat(QStringLiteral("HH:mm"));
    m_x->setTickCount(4);
    m_y = new QValueAxis;
    m_y->setLabelFormat(QStringLiteral("%.4g"));
    m_y->setTickCount(3);
    c->addAxis(m_x, Qt::AlignBottom);
    c->addAxis(m_y, Qt::AlignLeft);
    m_line->attachAxis(m_x);
    m_line->attachAxis(m_y);
    setChart(c);
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(140);
}

void HistoryPlot::setHistory(const QString &object, const QString &attribute,
                             const QList<is::HistoryPoint> &points)
{
    m_attribute = attribute;
    chart()->setTitle(QStringLiteral("%1 — last hour").arg(attribute));
    chart()->setToolTip(object + QLatin1Char(' ') + attribute);
    QList<QPointF> pts;
    pts.reserve(points.size());
    for (const is::HistoryPoint &p : points)
        if (std::isfinite(p.value))
            pts.append(QPointF(double(p.time.microsecondsSinceEpoch() / 1000), p.value));
    m_line->replace(pts);
    rescale();
}

void HistoryPlot::addValue(is::Time time, double value)
{
    const double x = double(time.microsecondsSinceEpoch() / 1000);
    if (!std::isfinite(value) || (m_line->count() > 0 && m_line->at(m_line->count() - 1).x() > x))
        return;
    m_line->append(x, value);
    if (m_line->count() > MaxPoints)
        m_line->removePoints(0, m_line->count() - MaxPoints);
    rescale();
}

void HistoryPlot::clear()
{
    m_attribute.clear();
    m_line->clear();
}

int HistoryPlot::pointCount() const
{
    return int(m_line->count());
}

void HistoryPlot::rescale()
{
    if (m_line->count() == 0)
        return;
    double lo = m_line->at(0).y(), hi = lo;
    for (int i = 1; i < m_line->count(); ++i) {
        lo = qMin(lo, m_line->at(i).y());
        hi = qMax(hi, m_line->at(i).y());
    }
    const double pad = hi > lo ? (hi - lo) * 0.05 : qMax(1.0, std::abs(hi) * 0.05);
    m_y->setRange(lo - pad, hi + pad);
    const qint64 first = qint64(m_line->at(0).x()), last = qint64(m_line->at(m_line->count() - 1).x());
    m_x->setRange(QDateTime::fromMSecsSinceEpoch(first),
                  QDateTime::fromMSecsSinceEpoch(qMax(last, first + 1000)));
    m_x->setFormat(last - first > 2 * 3600 * 1000 ? QStringLiteral("dd HH:mm")
                   : last - first > 120 * 1000    ? QStringLiteral("HH:mm")
                                                  : QStringLiteral("HH:mm:ss"));
}

} // namespace dialog::ismonitor
