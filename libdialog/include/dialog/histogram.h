// dialog::Histogram: the values of one IS histogram (the built-in types Histogram1D and Histogram2D,
// or a type derived from them), read from an is::Object or from JSON with a Status on bad input.
// The one reading of histograms in the toolkit: dialog-dqm judges it, dialog-presenter,
// dialog-render and dialog-ismonitor draw it.
#pragma once

#include "dialog/status.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace dialog {

namespace is {
class Object;
class TypeRegistry;
} // namespace is

/// One axis of fixed-width bins: @c bins bins covering [low, high).
struct HistogramAxis
{
    int bins = 0;    ///< number of bins (1 for the y axis of a 1D histogram)
    double low = 0;  ///< lower edge of the first bin
    double high = 0; ///< upper edge of the last bin

    /// Width of one bin ((high - low) / bins; 0 for an axis without bins).
    double binWidth() const { return bins > 0 ? (high - low) / bins : 0; }
    /// Centre of bin @p i (0-based).
    double binCentre(int i) const { return low + (i + 0.5) * binWidth(); }
    /// The bin that holds @p x: -1 below low, bins at or above high (underflow and overflow).
    int binOf(double x) const;
    /// Equal when bins and both edges are.
    friend bool operator==(const HistogramAxis &a, const HistogramAxis &b)
    {
        return a.bins == b.bins && a.low == b.low && a.high == b.high;
    }
    /// Not equal when bins or an edge differ.
    friend bool operator!=(const HistogramAxis &a, const HistogramAxis &b) { return !(a == b); }
};

/// A histogram of fixed-width bins, one or two dimensional: its axes, its bin contents (finite
/// numbers, row-major with x varying fastest), the content outside its axes and its entries.
///
/// A plain value (copies are cheap: the contents are an implicitly shared QList). One made by
/// fromObject() or fromJson() that returned Ok satisfies validate(); one filled by hand should be
/// checked with validate() before it is trusted. A default-constructed one is not valid (Kind::None).
struct Histogram
{
    /// Which histogram this is.
    enum class Kind
    {
        None, ///< no histogram (not read yet, removed, or not a histogram)
        OneD, ///< a Histogram1D: x axis only, yBins is 1
        TwoD, ///< a Histogram2D
    };

    /// Most bins one histogram may have (xBins * yBins): a larger one is refused.
    static constexpr qsizetype MaxBins = 16 * 1024 * 1024;

    Kind kind = Kind::None; ///< None until read
    QString title;          ///< the histogram's own title (may be empty)
    double xLow = 0;        ///< lower edge of the first x bin
    double xHigh = 0;       ///< upper edge of the last x bin
    double yLow = 0;        ///< 2D: lower edge of the first y bin (0 for 1D)
    double yHigh = 0;       ///< 2D: upper edge of the last y bin (0 for 1D)
    int xBins = 0;          ///< number of x bins
    int yBins = 1;          ///< number of y bins (1 for 1D)
    /// xBins * yBins bin contents, row-major: bin (x, y) is contents[y * xBins + x].
    QList<double> contents;
    quint64 entries = 0; ///< the number of fills (what the IS object says, not derived from contents)
    /// Content below the x axis (1D), or outside the axes (2D); 0 when the object does not carry
    /// an "underflow" attribute (the built-in types do not; a derived type may).
    double underflow = 0;
    /// Content at or above the x axis' upper edge (1D); 0 when the object has no "overflow".
    double overflow = 0;

    /// True unless Kind::None.
    bool isValid() const { return kind != Kind::None; }
    /// "Histogram1D", "Histogram2D", or empty for Kind::None.
    QString typeName() const;
    /// The x axis (bins, edges).
    HistogramAxis xAxis() const { return {xBins, xLow, xHigh}; }
    /// The y axis (1 bin over [0, 0) for 1D).
    HistogramAxis yAxis() const { return {yBins, yLow, yHigh}; }
    /// Content of bin (@p x, @p y); 0 outside the bins.
    double at(int x, int y = 0) const;

    /// Sum of the bin contents (without underflow and overflow).
    double sum() const;
    /// The largest bin content (0 when none is above 0).
    double maximum() const;
    /// The smallest content above 0 (0 when none is).
    double minimumPositive() const;
    /// 1D: the mean of x over the bin centres, weighted by contents (0 for an empty or 2D one).
    double mean() const;
    /// 1D: the RMS (standard deviation) of x over the bin centres (0 for an empty or 2D one).
    double rms() const;

    /// True when @p other has the same kind, bins and edges (contents may differ).
    bool sameBinning(const Histogram &other) const;
    /// Empty when sameBinning(@p other); else what differs ("the histogram has 100 bins in [0, 1000),
    /// the reference 50 bins in [0, 1000)").
    QString binningDifference(const Histogram &other) const;

    /// Ok, or InvalidObject with the reason: bins out of [1, MaxBins] (in all), edges not finite or
    /// not increasing, contents not xBins * yBins, a content or underflow/overflow not finite.
    Status validate() const;

    /// Reads an IS object of type Histogram1D / Histogram2D, or of a type with their attributes
    /// ("bins" or "xBins" and "yBins", "xLow", "xHigh", "contents", …). On Ok, @p out holds it; else
    /// @p out is untouched and the status is TypeMismatch (not a histogram) or InvalidObject (a
    /// histogram whose values fail validate(), named in the message).
    static Status fromObject(const is::Object &object, Histogram *out);
    /// Reads the JSON view of an IS histogram (dialog::is::toJson: "bins" for 1D; numbers or
    /// their text) or what toJson() writes (a dialog-dqm reference file: "type", "xBins",
    /// "yBins" = 1 for 1D). @p typeHint ("Histogram1D" / "Histogram2D") is used when the JSON has
    /// no "type"; empty: told by the attributes present. On Ok, @p out holds it; else @p out is
    /// untouched and the status is TypeMismatch or InvalidObject with the reason.
    static Status fromJson(const QJsonObject &json, Histogram *out, const QString &typeHint = {});
    /// The JSON that fromJson() reads back: type, title, edges, xBins, yBins, entries, contents,
    /// and underflow/overflow when not 0 (empty for Kind::None).
    QJsonObject toJson() const;
    /// An IS object of typeName() from @p types with these values (underflow and overflow set when
    /// the type has those attributes). TypeMismatch for Kind::None, UnknownType when @p types does
    /// not know the type.
    Status toObject(const is::TypeRegistry &types, is::Object *out) const;
};

} // namespace dialog
