// A small plot of one numeric attribute's recent values (the IS server's history, then the live
// values), shown beside the attribute values of the IS monitor.
#pragma once

#include "dialog/is/history.h"

#include <QChartView>

class QDateTimeAxis;
class QLineSeries;
class QValueAxis;

namespace dialog::ismonitor {

class HistoryPlot : public QChartView
{
    Q_OBJECT
public:
    explicit HistoryPlot(QWidget *parent = nullptr);

    /// Starts plotting @p attribute of @p object from @p points (oldest first).
    void setHistory(const QString &object, const QString &attribute, const QList<is::HistoryPoint> &points);
    /// Appends a live value (ignored if older than the last point).
    void addValue(is::Time time, double value);
    void clear();
    QString attribute() const { return m_attribute; }
    int pointCount() const;

private:
    void rescale();

    QLineSeries *m_line;
    QDateTimeAxis *m_x;
    QValueAxis *m_y;
    QString m_attribute;
};

} // namespace dialog::ismonitor
