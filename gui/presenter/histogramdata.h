// A histogram as the presenter and the off-screen renderer draw it: the values of an IS Histogram1D
// or Histogram2D (from an is::Object, from its JSON view, or from a dialog-dqm reference file), and
// the result of a data-quality check (a DQResult object). Plain values, no widget, no painting.
#pragma once

#include "dialog/is/object.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace dialog::presenter {

struct HistogramData
{
    enum class Kind
    {
        None, ///< no histogram (not read yet, removed, or not a histogram)
        OneD,
        TwoD,
    };
    Kind kind = Kind::None;
    QString title;
    double xLow = 0, xHigh = 0, yLow = 0, yHigh = 0;
    int xBins = 0, yBins = 0; ///< yBins is 0 for a 1D histogram
    QList<double> contents;   ///< row-major for 2D (x varies fastest); non-finite values read as 0
    double entries = 0;

    /// Most bins one histogram may have (1D or 2D): larger ones are refused, not drawn.
    static constexpr qsizetype MaxBins = 16 * 1024 * 1024;

    bool isValid() const { return kind != Kind::None; }
    double sum() const;
    double maximum() const;
    /// The smallest content above 0 (0 when none is).
    double minimumPositive() const;

    /// From an IS object of type Histogram1D / Histogram2D (or a type that has their attributes).
    /// An invalid value and the reason in @p error when it is not one, or its contents do not
    /// match its bins.
    static HistogramData fromObject(const is::Object &object, QString *error = nullptr);
    /// From the JSON view of one (dialog::is::toJson: "bins" for 1D, "xBins"/"yBins" for 2D) or
    /// from a dialog-dqm reference file ("type", "xBins", "yBins" = 1 for 1D). @p type
    /// ("Histogram1D" / "Histogram2D") is used when the JSON has no "type"; empty: told by the
    /// attributes present.
    static HistogramData fromJson(const QJsonObject &json, const QString &type = {},
                                  QString *error = nullptr);
};

/// The verdict of a data-quality check as the pictures colour it.
enum class Quality
{
    None, ///< no check configured for the histogram
    Good,
    Warning,
    Bad,
    Undefined, ///< a check that cannot judge, or whose result is not (yet) in the IS
};

struct CheckResult
{
    Quality quality = Quality::None;
    double value = 0;
    QString details;

    /// "Good" / "Warning" / "Bad" / "Undefined" (any other text: Undefined).
    static Quality parseQuality(const QString &status);
    static QString qualityName(Quality q);
    /// From a DQResult object (status, value, details).
    static CheckResult fromObject(const is::Object &object);
    /// From {"status": …, "value": …, "details": …}.
    static CheckResult fromJson(const QJsonObject &json);
};

} // namespace dialog::presenter
