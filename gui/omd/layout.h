// An OMD layout: which charts a window shows and what they plot. Saved as JSON:
//   {"title": "...", "window_s": 600, "columns": 2, "autoscale": true, "charts": [
//     {"kind": "timeseries", "title": "Event rate",
//      "series": [{"object": "DAQ.RO1", "attribute": "rate", "label": "RO1"}, ...]},
//     {"kind": "bar", "title": "Rate per readout", "server": "DAQ", "regex": "RO.*",
//      "type": "ReadoutStats", "subtypes": true, "attribute": "rate",
//      "thresholds": [{"value": 10, "label": "rate too low", "severity": "error"}]}]}
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>

namespace dialog::omd {

/// One time series: a numeric attribute of an IS object ("Server.Object"); the attribute may be a
/// path into nested objects ("eventSize.entries").
struct SeriesSpec
{
    QString object;
    QString attribute;
    QString label; ///< legend text; empty: "Object.attribute"
    QString displayLabel() const;
    friend bool operator==(const SeriesSpec &a, const SeriesSpec &b)
    {
        return a.object == b.object && a.attribute == b.attribute && a.label == b.label;
    }
};

/// A horizontal line drawn across a chart at a value (an alarm limit): dashed, in the colour of
/// its severity (info blue, warning orange, error red, fatal dark red), with its label in the legend.
struct Threshold
{
    double value = 0;
    QString label;                                ///< legend text; empty: "<severity> <value>"
    QString severity = QStringLiteral("warning"); ///< info, warning, error or fatal
    QString displayLabel() const;
    friend bool operator==(const Threshold &a, const Threshold &b)
    {
        return a.value == b.value && a.label == b.label && a.severity == b.severity;
    }
};

struct ChartSpec
{
    enum class Kind
    {
        TimeSeries, ///< several series against time
        Bar,        ///< one attribute across the objects matching criteria
    };
    Kind kind = Kind::TimeSeries;
    QString title;
    QList<SeriesSpec> series;               ///< TimeSeries
    QString server, regex, type, attribute; ///< Bar
    bool subtypes = true;                   ///< Bar: the type and its subtypes
    QList<Threshold> thresholds;            ///< both kinds

    friend bool operator==(const ChartSpec &a, const ChartSpec &b)
    {
        return a.kind == b.kind && a.title == b.title && a.series == b.series && a.server == b.server &&
               a.regex == b.regex && a.type == b.type && a.attribute == b.attribute &&
               a.subtypes == b.subtypes && a.thresholds == b.thresholds;
    }
};

struct Layout
{
    QString title;
    int windowSeconds = 600; ///< 60, 600 or 3600
    int columns = 2;
    bool autoscale = true;
    QList<ChartSpec> charts;

    QJsonObject toJson() const;
    /// False with @p error on malformed input (unknown kind, missing object or attribute...).
    static bool fromJson(const QJsonObject &json, Layout *out, QString *error);
    bool save(const QString &path, QString *error) const;
    static bool load(const QString &path, Layout *out, QString *error);

    friend bool operator==(const Layout &a, const Layout &b)
    {
        return a.title == b.title && a.windowSeconds == b.windowSeconds && a.columns == b.columns &&
               a.autoscale == b.autoscale && a.charts == b.charts;
    }
};

} // namespace dialog::omd
