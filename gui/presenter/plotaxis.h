// The axes of the toolkit's pictures (histograms, time series): value-to-pixel mappings, tick
// values and their labels, the one font size rule. Internal to the painters.
#pragma once

#include <QFont>
#include <QList>
#include <QRect>
#include <QString>
#include <algorithm>
#include <cmath>
#include <functional>

class QFontMetrics;
class QPainter;

namespace dialog::presenter::plot {

// A linear or logarithmic mapping of [lo, hi] onto pixels [p0, p1] (p1 < p0 for a y axis).
struct Axis
{
    double lo = 0, hi = 1;
    bool log = false;
    double p0 = 0, p1 = 1;

    double fraction(double v) const
    {
        if (log)
            return v > 0 ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : -1.0;
        return (v - lo) / (hi - lo);
    }
    double toPixel(double v) const
    {
        const double f = fraction(v);
        return p0 + (std::isnan(f) ? 0.0 : std::clamp(f, -0.01, 1.01)) * (p1 - p0);
    }
};

/// A tick's label: 4 significant digits, "0" for what is zero but for rounding.
QString label(double v);
/// Tick values: 1-2-5 steps for a linear axis, decades (with 2 and 5 when few) for a log one; at
/// most about @p maxTicks, none for a range that is empty or not finite.
QList<double> ticks(double lo, double hi, bool log, int maxTicks);
/// The ticks of @p y on the left of @p plot (or on its right), labelled.
void drawYTicks(QPainter *p, const Axis &y, const QRect &plot, const QFontMetrics &fm, bool labelsRight);
/// The ticks of @p x under @p plot, labelled by label().
void drawXTicks(QPainter *p, const Axis &x, const QRect &plot, const QFontMetrics &fm);
/// The ticks @p values of @p x under @p plot, labelled by @p text.
void drawXTicks(QPainter *p, const Axis &x, const QRect &plot, const QFontMetrics &fm,
                const QList<double> &values, const std::function<QString(double)> &text);
/// The text size of a picture of @p size, in pixels.
int fontPixels(const QSize &size);
QFont pictureFont(const QSize &size);

} // namespace dialog::presenter::plot
