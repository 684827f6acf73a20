#include "histogramwidget.h"

#include <QPainter>

namespace dialog::presenter {

HistogramWidget::HistogramWidget(const PageEntry &entry, QWidget *parent) : QWidget(parent), m_entry(entry)
{
    m_options.label = entry.title.isEmpty() ? entry.histogram : entry.title;
    m_options.logX = entry.logX;
    m_options.logY = entry.logY;
    m_options.logZ = entry.logZ;
    if (!entry.check.isEmpty())
        m_options.check = {Quality::Undefined, 0, QStringLiteral("no result %1 in the IS").arg(entry.check)};
    m_options.message = QStringLiteral("waiting for %1").arg(entry.histogram);
    setAttribute(Qt::WA_OpaquePaintEvent);
    updateToolTip();
}

void HistogramWidget::setHistogram(const Histogram &histogram, const QString &message)
{
    m_histogram = histogram;
    m_options.message = message;
    update();
}

void HistogramWidget::setCheck(const CheckResult &result)
{
    if (m_entry.check.isEmpty())
        return;
    m_options.check = result;
    updateToolTip();
    update();
}

void HistogramWidget::setReference(const Histogram &reference)
{
    m_options.reference = reference;
    updateToolTip();
    update();
}

void HistogramWidget::updateToolTip()
{
    QStringList lines{m_entry.histogram};
    if (!m_entry.check.isEmpty()) {
        lines << QStringLiteral("%1: %2").arg(m_entry.check,
                                              CheckResult::qualityName(m_options.check.quality));
        if (m_options.check.quality != Quality::Undefined)
            lines << QStringLiteral("value: %1").arg(m_options.check.value);
        if (!m_options.check.details.isEmpty())
            lines << m_options.check.details;
    }
    if (!m_entry.referenceFile.isEmpty())
        lines << QStringLiteral("reference: %1%2")
                     .arg(m_entry.referenceFile,
                          m_options.reference.isValid() ? QString() : QStringLiteral(" (none)"));
    setToolTip(lines.join(QLatin1Char('\n')));
}

void HistogramWidget::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    HistogramPainter::paint(&p, rect(), m_histogram, m_options);
}

} // namespace dialog::presenter
