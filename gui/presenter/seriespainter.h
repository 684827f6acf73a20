// Draws a time-series picture: one numeric attribute of an IS object over a window of time (its
// history, as the IS server's ring keeps it), as a line, with the band between the smallest and
// largest value where a point summarises several values; the window ends at its newest value, so
// the same history always gives the same picture (HTTP caches can keep it). The look of the
// histogram pictures: the same font, axes and colours. dialog-render draws it for the web IS.
#pragma once

#include <QColor>
#include <QImage>
#include <QJsonObject>
#include <QList>
#include <QRect>
#include <QString>

class QPainter;

namespace dialog::presenter {

struct SeriesPoint
{
    qint64 ms = 0; ///< milliseconds since the epoch (UTC)
    double value = 0;
    double min = 0; ///< equal to value for a single value
    double max = 0;
};

struct SeriesData
{
    QString label;    ///< the title: the object and the attribute
    qint64 endMs = 0; ///< the window's end, milliseconds since the epoch
    qint64 spanMs = 0;
    QList<SeriesPoint> points; ///< oldest first, inside the window

    /// Most points one picture takes (more are refused, not drawn).
    static constexpr qsizetype MaxPoints = 100000;

    bool isValid() const { return spanMs > 0; }
    /// From {"label", "end_ms", "span_ms", "points": [[ms, value] or [ms, mean, min, max, …], …]}
    /// (the web IS's history points); invalid with the reason in @p error when it is not one.
    static SeriesData fromJson(const QJsonObject &json, QString *error = nullptr);
};

class SeriesPainter
{
public:
    struct Layout
    {
        QRect title; ///< empty when the picture is too small for text
        QRect plot;
    };
    static Layout layout(const QSize &size);
    /// Paints into @p rect of @p painter. The painter's state is restored.
    static void paint(QPainter *painter, const QRect &rect, const SeriesData &series);
    /// The picture as an image of @p size (a null image for an empty size).
    static QImage render(const QSize &size, const SeriesData &series);

    /// The line through the values.
    static QColor lineColor() { return QColor(31, 100, 170); }
    /// The band between the smallest and largest values of summarised points.
    static QColor bandColor() { return QColor(150, 190, 225); }
};

} // namespace dialog::presenter
