// Draws an IS histogram (Histogram1D, Histogram2D or a type derived from them) with the toolkit's
// one histogram painter (gui/presenter/histogrampainter.h), the same picture as dialog-presenter
// and the web IS's PNGs.
#pragma once

#include "histogrampainter.h"

#include "dialog/histogram.h"
#include "dialog/is/object.h"

#include <QWidget>

class QAction;

namespace dialog::ismonitor {

class HistogramView : public QWidget
{
    Q_OBJECT
public:
    explicit HistogramView(QWidget *parent = nullptr);

    /// True if @p object is a Histogram1D or Histogram2D (or has their attributes: "contents" and
    /// "bins" or "xBins"), even a malformed one (it is shown with the reason).
    static bool isHistogram(const is::Object &object);
    /// Shows @p histogram, titled @p label (the object's name or the attribute's path). One that
    /// dialog::Histogram refuses is shown as its reason (message()).
    void setHistogram(const is::Object &histogram, const QString &label = {});
    /// Shows nothing.
    void clear();

    /// What is drawn (Kind::None when nothing is, or the object was refused).
    const Histogram &histogram() const { return m_histogram; }
    /// The label, scale and message the picture is drawn with.
    const presenter::PaintOptions &options() const { return m_options; }
    /// Why the object is not drawn (empty when it is, or when nothing was set).
    QString message() const { return m_options.message; }
    /// Bins of a 1D histogram, or non-empty cells of a 2D one (0 when nothing is drawn).
    int pointCount() const;
    /// Log y scale (1D) and log colour scale (2D); also the view's context-menu action.
    bool logScale() const { return m_options.logY; }
    void setLogScale(bool on);

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    Histogram m_histogram;
    presenter::PaintOptions m_options;
    QAction *m_log;
};

} // namespace dialog::ismonitor
