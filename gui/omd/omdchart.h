// The charts of an OMD window: a time-series chart and a bar chart, both Qt Charts views that
// are fed values by the window and repaint only in refresh() (the window calls it at most ten
// times a second).
#pragma once

#include "layout.h"

#include "dialog/is/staleness.h"

#include <QChartView>
#include <QHash>
#include <QMap>
#include <optional>

class QBarCategoryAxis;
class QBarSeries;
class QBarSet;
class QDateTimeAxis;
class QLineSeries;
class QValueAxis;

namespace dialog::omd {

class OmdChart : public QChartView
{
    Q_OBJECT
public:
    explicit OmdChart(const ChartSpec &spec, QWidget *parent = nullptr);
    virtual ChartSpec spec() const { return m_spec; }
    /// Repaints with the values received since the last call (no-op while paused).
    virtual void refresh() = 0;
    virtual bool exportCsv(const QString &path, QString *error) const = 0;
    bool exportPng(const QString &path) const;
    void setPaused(bool paused);
    bool isPaused() const { return m_paused; }
    void setAutoscale(bool on);
    void setStatusText(const QString &text);
    /// The threshold lines drawn (one per spec().thresholds, in order).
    const QList<QLineSeries *> &thresholdLines() const { return m_thresholdLines; }
    /// Threshold lines that come from alarm rules (dialog-omd --alarms), drawn after the layout's own
    /// and not part of spec(); replaces the previous ones.
    void setRuleThresholds(const QList<Threshold> &thresholds);
    const QList<QLineSeries *> &ruleThresholdLines() const { return m_ruleLines; }

Q_SIGNALS:
    void exportPngRequested();
    void exportCsvRequested();
    void removeRequested();

protected:
    void contextMenuEvent(QContextMenuEvent *event) override;
    /// y range of @p lo..@p hi with a margin (autoscale).
    static QPair<double, double> padded(double lo, double hi);
    /// Widens @p lo..@p hi to the thresholds, so that autoscale keeps their lines in view.
    void includeThresholds(double &lo, double &hi) const;
    /// Draws spec().thresholds (called by the subclasses once their own axes are in place).
    void addThresholdLines();
    QLineSeries *addThresholdLine(const Threshold &t);
    /// Moves the threshold lines after the data series (legend order).
    void raiseThresholdLines();
    /// The title with the status and the stale note.
    void updateTitle();

    ChartSpec m_spec;
    QValueAxis *m_y;
    QValueAxis *m_thresholdX = nullptr; ///< hidden 0..1 axis the threshold lines span
    QList<QLineSeries *> m_thresholdLines;
    QList<Threshold> m_ruleThresholds;
    QList<QLineSeries *> m_ruleLines;
    QString m_statusText;
    QString m_staleText;
    bool m_paused = false;
    bool m_autoscale = true;
    bool m_dirty = true;
};

/// Numeric attributes of IS objects against time. The time axis shows the last windowSeconds()
/// and slides with the clock; points older than an hour are dropped.
class TimeSeriesChart : public OmdChart
{
    Q_OBJECT
public:
    explicit TimeSeriesChart(const ChartSpec &spec, QWidget *parent = nullptr);
    /// Adds a series to the chart (and to spec()); returns its index.
    int addSeries(const SeriesSpec &series);
    int seriesCount() const { return int(m_data.size()); }
    void addPoint(int series, qint64 timeMs, double value);
    /// Puts the history of @p series (x: ms since the epoch, sorted) in place of the points held up
    /// to its last one: a chart opened with its history (OMD backfill).
    void addHistory(int series, const QList<QPointF> &points);
    /// Points held for @p series (all of the last hour, not only the visible ones).
    const QList<QPointF> &points(int series) const { return m_data.at(series); }
    /// Points currently drawn for @p series.
    int drawnCount(int series) const;
    QLineSeries *lineSeries(int series) const { return m_lines.at(series); }
    void setWindowSeconds(int seconds);
    int windowSeconds() const { return m_windowS; }
    void refresh() override;
    bool exportCsv(const QString &path, QString *error) const override;
    /// The tooltip text for the point of @p series nearest to @p at (x in ms since the epoch).
    QString tooltipAt(int series, const QPointF &at) const;
    /// Marks @p series stale (drawn grey and dashed, its age in the legend) or fresh (nullopt).
    void setStale(int series, const std::optional<is::Staleness> &staleness);
    bool isStale(int series) const { return m_stale.value(series).has_value(); }

private:
    QDateTimeAxis *m_x;
    QList<QLineSeries *> m_lines;
    QList<QColor> m_colors; ///< each series' own colour (a stale one is drawn grey)
    QList<std::optional<is::Staleness>> m_stale;
    QList<QList<QPointF>> m_data;
    int m_windowS = 600;
};

/// One attribute across a set of homogeneous objects (selected by regex/type), one bar each,
/// kept sorted by object name.
class BarChart : public OmdChart
{
    Q_OBJECT
public:
    explicit BarChart(const ChartSpec &spec, QWidget *parent = nullptr);
    void setValue(const QString &object, double value);
    void removeObject(const QString &object);
    QMap<QString, double> values() const { return m_values; }
    /// The bars drawn: category names and values, in order.
    QStringList categories() const;
    QList<double> barValues() const;
    /// The stale objects among the bars (their bars greyed, their ages in the title); the others
    /// are fresh.
    void setStale(const QHash<QString, is::Staleness> &stale);
    bool isStale(const QString &object) const { return m_stale.contains(object); }
    /// @p object was written: fresh.
    void markFresh(const QString &object);
    void refresh() override;
    bool exportCsv(const QString &path, QString *error) const override;

private:
    QHash<QString, is::Staleness> m_stale;
    QBarCategoryAxis *m_x;
    QBarSeries *m_series;
    QBarSet *m_set;
    QMap<QString, double> m_values;
};

} // namespace dialog::omd
