#include "omdchart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QContextMenuEvent>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLineSeries>
#include <QMenu>
#include <QSaveFile>
#include <QTextStream>
#include <QToolTip>
#include <QValueAxis>
#include <cmath>

namespace dialog::omd {

namespace {
constexpr qint64 KeepMs = 3600 * 1000 + 60 * 1000; // an hour and a margin
constexpr int MaxPointsPerSeries = 40000;

QString formatValue(double v)
{
    return QString::number(v, 'g', 8);
}

bool writeFile(const QString &path, const QString &text, QString *error)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
        *error = f.errorString();
        return false;
    }
    f.write(text.toUtf8());
    if (!f.commit()) {
        *error = f.errorString();
        return false;
    }
    return true;
}

QString csvField(const QString &s)
{
    if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')))
        return s;
    return QLatin1Char('"') + QString(s).replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"');
}
} // namespace

OmdChart::OmdChart(const ChartSpec &spec, QWidget *parent)
    : QChartView(parent), m_spec(spec), m_y(new QValueAxis)
{
    setRenderHint(QPainter::Antialiasing);
    auto *c = new QChart;
    c->setTitle(spec.title);
    c->legend()->setAlignment(Qt::AlignBottom);
    c->setMargins(QMargins(6, 6, 6, 6));
    setChart(c);
    c->addAxis(m_y, Qt::AlignLeft);
    m_y->setLabelFormat(QStringLiteral("%.6g"));
    setMinimumSize(320, 220);
    setRubberBand(QChartView::RectangleRubberBand);
}

bool OmdChart::exportPng(const QString &path) const
{
    return const_cast<OmdChart *>(this)->grab().save(path, "PNG");
}

void OmdChart::setPaused(bool paused)
{
    m_paused = paused;
    if (!paused) {
        m_dirty = true;
        refresh();
    }
}

void OmdChart::setAutoscale(bool on)
{
    m_autoscale = on;
    m_dirty = true;
}

void OmdChart::setStatusText(const QString &text)
{
    m_statusText = text;
    updateTitle();
}

void OmdChart::updateTitle()
{
    QString t =
        m_statusText.isEmpty() ? m_spec.title : QStringLiteral("%1 (%2)").arg(m_spec.title, m_statusText);
    if (!m_staleText.isEmpty())
        t += QStringLiteral(" — ") + m_staleText;
    chart()->setTitle(t);
}

void OmdChart::addThresholdLines()
{
    for (const Threshold &t : std::as_const(m_spec.thresholds))
        m_thresholdLines << addThresholdLine(t);
}

QLineSeries *OmdChart::addThresholdLine(const Threshold &t)
{
    if (!m_thresholdX) {
        // A hidden 0..1 x axis: the lines span the plot whatever the chart's own x axis is.
        m_thresholdX = new QValueAxis;
        m_thresholdX->setRange(0, 1);
        chart()->addAxis(m_thresholdX, Qt::AlignTop);
        m_thresholdX->setVisible(false);
    }
    auto *line = new QLineSeries;
    line->setName(t.displayLabel());
    line->append(0, t.value);
    line->append(1, t.value);
    chart()->addSeries(line);
    line->attachAxis(m_thresholdX);
    line->attachAxis(m_y);
    const QColor c = t.severity == QLatin1String("info")      ? QColor(40, 110, 200)
                     : t.severity == QLatin1String("warning") ? QColor(230, 140, 0)
                     : t.severity == QLatin1String("error")   ? QColor(210, 30, 30)
                                                              : QColor(120, 0, 0);
    line->setPen(QPen(c, 1.5, Qt::DashLine));
    return line;
}

void OmdChart::raiseThresholdLines()
{
    for (QLineSeries *t : m_thresholdLines + m_ruleLines) {
        chart()->removeSeries(t);
        chart()->addSeries(t);
        t->attachAxis(m_thresholdX);
        t->attachAxis(m_y);
    }
}

void OmdChart::setRuleThresholds(const QList<Threshold> &thresholds)
{
    if (thresholds == m_ruleThresholds)
        return;
    for (QLineSeries *l : std::as_const(m_ruleLines)) {
        chart()->removeSeries(l);
        delete l;
    }
    m_ruleLines.clear();
    m_ruleThresholds = thresholds;
    for (const Threshold &t : thresholds)
        m_ruleLines << addThresholdLine(t);
    m_dirty = true;
}

void OmdChart::includeThresholds(double &lo, double &hi) const
{
    for (const Threshold &t : m_spec.thresholds + m_ruleThresholds) {
        lo = std::min(lo, t.value);
        hi = std::max(hi, t.value);
    }
}

QPair<double, double> OmdChart::padded(double lo, double hi)
{
    if (!(lo <= hi))
        return {0, 1};
    if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
        const double d = std::max(1.0, std::abs(hi) * 0.1);
        return {lo - d, hi + d};
    }
    const double m = (hi - lo) * 0.05;
    return {lo >= 0 && lo - m < 0 ? 0 : lo - m, hi + m};
}

void OmdChart::contextMenuEvent(QContextMenuEvent *event)
{
    QMenu menu;
    menu.addAction(QStringLiteral("Export as PNG…"), this, &OmdChart::exportPngRequested);
    menu.addAction(QStringLiteral("Export data as CSV…"), this, &OmdChart::exportCsvRequested);
    menu.addAction(QStringLiteral("Reset zoom"), this, [this] {
        chart()->zoomReset();
        m_dirty = true;
        refresh();
    });
    menu.addSeparator();
    menu.addAction(QStringLiteral("Remove chart"), this, &OmdChart::removeRequested);
    menu.exec(event->globalPos());
}

// --- time series ---------------------------------------------------------------------------------

TimeSeriesChart::TimeSeriesChart(const ChartSpec &spec, QWidget *parent)
    : OmdChart(spec, parent), m_x(new QDateTimeAxis)
{
    m_spec.series.clear();
    m_x->setFormat(QStringLiteral("HH:mm:ss"));
    m_x->setTickCount(6);
    chart()->addAxis(m_x, Qt::AlignBottom);
    for (const SeriesSpec &s : spec.series)
        addSeries(s);
    addThresholdLines();
}

int TimeSeriesChart::addSeries(const SeriesSpec &s)
{
    auto *line = new QLineSeries;
    line->setName(s.displayLabel());
    chart()->addSeries(line);
    line->attachAxis(m_x);
    line->attachAxis(m_y);
    QPen pen = line->pen();
    pen.setWidthF(2);
    line->setPen(pen);
    const int index = int(m_lines.size());
    m_lines << line;
    m_colors << pen.color();
    m_stale << std::nullopt;
    raiseThresholdLines(); // they stay after the data in the legend
    m_data.append(QList<QPointF>());
    m_spec.series << s;
    connect(line, &QLineSeries::hovered, this, [this, index](const QPointF &p, bool state) {
        if (state)
            QToolTip::showText(QCursor::pos(), tooltipAt(index, p), this);
        else
            QToolTip::hideText();
    });
    m_dirty = true;
    return index;
}

QString TimeSeriesChart::tooltipAt(int series, const QPointF &at) const
{
    const QList<QPointF> &d = m_data.at(series);
    if (d.isEmpty())
        return {};
    auto it =
        std::lower_bound(d.begin(), d.end(), at.x(), [](const QPointF &p, double x) { return p.x() < x; });
    if (it == d.end() || (it != d.begin() && at.x() - (it - 1)->x() < it->x() - at.x()))
        --it;
    return QStringLiteral("%1\n%2\n%3%4")
        .arg(m_lines.at(series)->name(),
             QDateTime::fromMSecsSinceEpoch(qint64(it->x()))
                 .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")),
             formatValue(it->y()),
             m_stale.at(series) ? QStringLiteral("\nstale: %1").arg(m_stale.at(series)->reason())
                                : QString());
}

void TimeSeriesChart::addPoint(int series, qint64 timeMs, double value)
{
    if (series < 0 || series >= m_data.size() || !std::isfinite(value))
        return;
    QList<QPointF> &d = m_data[series];
    const QPointF p(double(timeMs), value);
    if (d.isEmpty() || d.last().x() <= p.x())
        d.append(p);
    else // out of order (an initial read answered after an update): keep the list sorted
        d.insert(
            std::lower_bound(d.begin(), d.end(), p.x(), [](const QPointF &a, double x) { return a.x() < x; }),
            p);
    const double oldest = double(QDateTime::currentMSecsSinceEpoch() - KeepMs);
    qsizetype drop = 0;
    while (drop < d.size() - 1 && d.at(drop).x() < oldest)
        ++drop;
    drop = std::max(drop, d.size() - MaxPointsPerSeries);
    if (drop > 0)
        d.remove(0, drop);
    m_dirty = true;
}

void TimeSeriesChart::addHistory(int series, const QList<QPointF> &points)
{
    if (series < 0 || series >= m_data.size() || points.isEmpty())
        return;
    // The history holds every value up to its last one (the server stamps changes to the
    // millisecond, so times alone cannot tell a value from another): it replaces what the chart
    // holds up to then, and the live values received since follow it.
    QList<QPointF> &d = m_data[series];
    const double oldest = double(QDateTime::currentMSecsSinceEpoch() - KeepMs);
    const double last = points.last().x();
    QList<QPointF> merged;
    merged.reserve(d.size() + points.size());
    for (const QPointF &p : points)
        if (p.x() >= oldest && std::isfinite(p.y()))
            merged.append(p);
    for (const QPointF &p : std::as_const(d))
        if (p.x() > last)
            merged.append(p);
    if (merged.size() > MaxPointsPerSeries)
        merged.remove(0, merged.size() - MaxPointsPerSeries);
    d = merged;
    m_dirty = true;
}

void TimeSeriesChart::setStale(int series, const std::optional<is::Staleness> &staleness)
{
    if (series < 0 || series >= m_lines.size())
        return;
    const bool was = m_stale.at(series).has_value();
    m_stale[series] = staleness;
    QLineSeries *line = m_lines.at(series);
    const QString label = m_spec.series.at(series).displayLabel();
    if (!staleness) {
        if (was) {
            line->setName(label);
            line->setPen(QPen(m_colors.at(series), 2));
        }
    } else {
        // Grey and dashed: the last values are still there, but nothing new is coming.
        line->setName(QStringLiteral("%1 — stale %2").arg(label, is::Staleness::ageText(staleness->ageUs)));
        if (!was)
            line->setPen(QPen(QColor(150, 150, 150), 2, Qt::DashLine));
    }
    QStringList stale;
    for (int i = 0; i < m_stale.size(); ++i)
        if (m_stale.at(i))
            stale << m_spec.series.at(i).displayLabel();
    m_staleText =
        stale.isEmpty() ? QString() : QStringLiteral("stale: %1").arg(stale.join(QLatin1String(", ")));
    updateTitle();
}

int TimeSeriesChart::drawnCount(int series) const
{
    return int(m_lines.at(series)->count());
}

void TimeSeriesChart::setWindowSeconds(int seconds)
{
    m_windowS = seconds;
    m_x->setFormat(seconds > 600 ? QStringLiteral("HH:mm") : QStringLiteral("HH:mm:ss"));
    m_dirty = true;
}

void TimeSeriesChart::refresh()
{
    if (m_paused)
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const double from = double(now - qint64(m_windowS) * 1000);
    double lo = INFINITY, hi = -INFINITY;
    if (m_dirty) {
        for (int i = 0; i < m_data.size(); ++i) {
            const QList<QPointF> &d = m_data.at(i);
            // One point before the window, so the line enters from the left edge.
            auto first = std::lower_bound(d.begin(), d.end(), from,
                                          [](const QPointF &p, double x) { return p.x() < x; });
            if (first != d.begin())
                --first;
            const QList<QPointF> visible(first, d.end());
            for (const QPointF &p : visible) {
                lo = std::min(lo, p.y());
                hi = std::max(hi, p.y());
            }
            m_lines[i]->replace(visible);
            // Markers help to find the points while there are few of them.
            m_lines[i]->setPointsVisible(visible.size() <= 60);
        }
        if (m_autoscale) {
            includeThresholds(lo, hi);
            const auto r = padded(lo, hi);
            m_y->setRange(r.first, r.second);
            m_y->applyNiceNumbers();
        }
        m_dirty = false;
    }
    m_x->setRange(QDateTime::fromMSecsSinceEpoch(qint64(from)), QDateTime::fromMSecsSinceEpoch(now));
}

bool TimeSeriesChart::exportCsv(const QString &path, QString *error) const
{
    QString text;
    QTextStream out(&text);
    out << "series,object,attribute,time,time_ms,value\n";
    for (int i = 0; i < m_data.size(); ++i) {
        const SeriesSpec &s = m_spec.series.at(i);
        for (const QPointF &p : m_data.at(i))
            out << csvField(s.displayLabel()) << ',' << csvField(s.object) << ',' << csvField(s.attribute)
                << ',' << QDateTime::fromMSecsSinceEpoch(qint64(p.x()), Qt::UTC).toString(Qt::ISODateWithMs)
                << ',' << qint64(p.x()) << ',' << formatValue(p.y()) << '\n';
    }
    out.flush();
    return writeFile(path, text, error);
}

// --- bar chart -----------------------------------------------------------------------------------

BarChart::BarChart(const ChartSpec &spec, QWidget *parent)
    : OmdChart(spec, parent), m_x(new QBarCategoryAxis), m_series(new QBarSeries),
      m_set(new QBarSet(spec.attribute))
{
    m_set->setColor(QColor(70, 130, 180));
    m_series->append(m_set);
    m_series->setLabelsVisible(true);
    m_series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    m_series->setLabelsFormat(QStringLiteral("@value"));
    m_series->setLabelsPrecision(6);
    chart()->addSeries(m_series);
    chart()->addAxis(m_x, Qt::AlignBottom);
    m_series->attachAxis(m_x);
    m_series->attachAxis(m_y);
    m_set->setLabelColor(QColor(40, 40, 40));
    m_set->setSelectedColor(QColor(175, 175, 175)); // the stale bars
    addThresholdLines();
    connect(m_series, &QBarSeries::hovered, this, [this](bool state, int index, QBarSet *set) {
        if (state && index < categories().size())
            QToolTip::showText(QCursor::pos(),
                               QStringLiteral("%1\n%2 = %3%4")
                                   .arg(categories().at(index), m_spec.attribute, formatValue(set->at(index)),
                                        m_stale.contains(categories().at(index))
                                            ? QStringLiteral("\nstale: %1")
                                                  .arg(m_stale.value(categories().at(index)).reason())
                                            : QString()),
                               this);
        else
            QToolTip::hideText();
    });
}

void BarChart::setValue(const QString &object, double value)
{
    if (!std::isfinite(value))
        return;
    m_values.insert(object, value);
    m_dirty = true;
}

void BarChart::removeObject(const QString &object)
{
    m_dirty |= m_values.remove(object) > 0;
}

void BarChart::setStale(const QHash<QString, is::Staleness> &stale)
{
    m_stale = stale;
    QStringList names = stale.keys();
    names.sort();
    QStringList parts;
    for (const QString &n : std::as_const(names))
        parts << QStringLiteral("%1 %2").arg(n, is::Staleness::ageText(stale.value(n).ageUs));
    m_staleText =
        parts.isEmpty() ? QString() : QStringLiteral("stale: %1").arg(parts.join(QLatin1String(", ")));
    updateTitle();
    m_dirty = true;
}

void BarChart::markFresh(const QString &object)
{
    if (!m_stale.contains(object))
        return;
    QHash<QString, is::Staleness> stale = m_stale;
    stale.remove(object);
    setStale(stale);
}

QStringList BarChart::categories() const
{
    return m_x->categories();
}

QList<double> BarChart::barValues() const
{
    QList<double> out;
    for (int i = 0; i < m_set->count(); ++i)
        out << m_set->at(i);
    return out;
}

void BarChart::refresh()
{
    if (m_paused || !m_dirty)
        return;
    m_dirty = false;
    const QStringList names = m_values.keys();
    QList<qreal> values;
    double lo = 0, hi = 0;
    for (double v : m_values) {
        values << v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (m_x->categories() != names) {
        m_x->clear();
        m_x->append(names);
    }
    if (m_set->count() == values.size()) {
        for (int i = 0; i < values.size(); ++i)
            if (m_set->at(i) != values.at(i))
                m_set->replace(i, values.at(i));
    } else {
        m_set->remove(0, m_set->count());
        m_set->append(values);
    }
    QList<int> stale;
    for (int i = 0; i < names.size(); ++i)
        if (m_stale.contains(names.at(i)))
            stale << i;
    if (stale != m_set->selectedBars()) {
        m_set->deselectAllBars();
        m_set->selectBars(stale);
    }
    if (m_autoscale) {
        includeThresholds(lo, hi);
        const auto r = padded(lo, hi * 1.08); // room for the labels above the bars
        m_y->setRange(r.first, r.second);
        m_y->applyNiceNumbers();
    }
}

bool BarChart::exportCsv(const QString &path, QString *error) const
{
    QString text;
    QTextStream out(&text);
    out << "object," << csvField(m_spec.attribute) << '\n';
    for (auto it = m_values.cbegin(); it != m_values.cend(); ++it)
        out << csvField(it.key()) << ',' << formatValue(it.value()) << '\n';
    out.flush();
    return writeFile(path, text, error);
}

} // namespace dialog::omd
