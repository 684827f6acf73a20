#include "histogramview.h"

#include <QAction>
#include <QPainter>

namespace dialog::ismonitor {

HistogramView::HistogramView(QWidget *parent)
    : QWidget(parent), m_log(new QAction(tr("Logarithmic scale"), this))
{
    setMinimumHeight(160);
    m_log->setCheckable(true);
    connect(m_log, &QAction::toggled, this, &HistogramView::setLogScale);
    addAction(m_log);
    setContextMenuPolicy(Qt::ActionsContextMenu);
}

bool HistogramView::isHistogram(const is::Object &o)
{
    return o.isValid() && o.indexOf(QStringLiteral("contents")) >= 0 &&
           (o.indexOf(QStringLiteral("bins")) >= 0 || o.indexOf(QStringLiteral("xBins")) >= 0);
}

void HistogramView::setHistogram(const is::Object &object, const QString &label)
{
    m_histogram = {};
    m_options.label = label;
    const Status s = Histogram::fromObject(object, &m_histogram);
    m_options.message =
        s.isOk() || label.isEmpty() ? s.message() : QStringLiteral("%1: %2").arg(label, s.message());
    update();
}

void HistogramView::clear()
{
    m_histogram = {};
    m_options.label.clear();
    m_options.message.clear();
    update();
}

int HistogramView::pointCount() const
{
    if (m_histogram.kind == Histogram::Kind::OneD)
        return m_histogram.xBins;
    int cells = 0;
    if (m_histogram.kind == Histogram::Kind::TwoD)
        for (double v : m_histogram.contents)
            cells += v > 0 ? 1 : 0;
    return cells;
}

void HistogramView::setLogScale(bool on)
{
    m_options.logY = m_options.logZ = on;
    m_log->setChecked(on);
    update();
}

void HistogramView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    presenter::HistogramPainter::paint(&p, rect(), m_histogram, m_options);
}

} // namespace dialog::ismonitor
