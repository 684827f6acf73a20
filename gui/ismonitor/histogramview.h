// Draws an IS histogram (the built-in types Histogram1D and Histogram2D) with Qt Charts.
#pragma once

#include "dialog/is/object.h"

#include <QChartView>

class QAreaSeries;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace dialog::ismonitor {

class HistogramView : public QChartView
{
    Q_OBJECT
public:
    explicit HistogramView(QWidget *parent = nullptr);

    /// True if @p object is a Histogram1D or Histogram2D (or derives from one).
    static bool isHistogram(const is::Object &object);
    /// Shows @p histogram (same binning as before: the points are replaced in place).
    void setHistogram(const is::Object &histogram, const QString &label = {});
    void clear();
    /// Points drawn (bins of a 1D histogram, non-empty cells of a 2D one).
    int pointCount() const;

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void show1D(const is::Object &h);
    void show2D(const is::Object &h);
    void sizeMarkers();

    QValueAxis *m_x;
    QValueAxis *m_y;
    QLineSeries *m_outline = nullptr;
    QAreaSeries *m_area = nullptr;
    QList<QScatterSeries *> m_levels;
    int m_xBins = 0, m_yBins = 0;
    int m_points = 0;
};

} // namespace dialog::ismonitor
