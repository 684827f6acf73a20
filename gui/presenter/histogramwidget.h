// One histogram of a presenter page: draws what HistogramPainter draws (the same picture as
// dialog-render's PNG), with the check's result and details in its tooltip.
#pragma once

#include "histogrampainter.h"
#include "pages.h"

#include <QWidget>

namespace dialog::presenter {

class HistogramWidget : public QWidget
{
    Q_OBJECT
public:
    explicit HistogramWidget(const PageEntry &entry, QWidget *parent = nullptr);

    const PageEntry &entry() const { return m_entry; }
    const Histogram &histogram() const { return m_histogram; }
    const PaintOptions &options() const { return m_options; }
    /// The check's verdict as drawn (Quality::None when the entry has no check).
    Quality quality() const { return m_options.check.quality; }

    void setHistogram(const Histogram &histogram, const QString &message);
    void setCheck(const CheckResult &result);
    void setReference(const Histogram &reference);

    QSize sizeHint() const override { return QSize(420, 300); }
    QSize minimumSizeHint() const override { return QSize(160, 120); }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    void updateToolTip();

    PageEntry m_entry;
    Histogram m_histogram;
    PaintOptions m_options;
};

} // namespace dialog::presenter
