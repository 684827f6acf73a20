// Draws one histogram picture: a 1D histogram as filled steps, a 2D one as a colour map with its
// scale, the reference overlaid (1D: a line scaled to the histogram's contents; 2D: the outlines of
// the reference's cells above half and a tenth of its maximum), the frame and
// background coloured by the check's result, its value and details in a caption. The one drawing of
// the toolkit's histograms: dialog-presenter paints its widgets with it and dialog-render (the web
// IS's PNGs) renders images with it, so both show the same picture for the same input.
#pragma once

#include "histogramdata.h"

#include <QColor>
#include <QImage>
#include <QRect>

class QPainter;

namespace dialog::presenter {

struct PaintOptions
{
    QString label;           ///< drawn before the histogram's title (the object's name)
    bool logX = false;       ///< 1D: log x axis (ignored when xLow <= 0)
    bool logY = false;       ///< 1D: log y axis
    bool logZ = false;       ///< 2D: log colour scale
    Histogram reference; ///< overlaid when valid and of the histogram's dimension
    CheckResult check;       ///< Quality::None: no frame, no caption
    QString message;         ///< drawn instead of the histogram when it is not valid
};

class HistogramPainter
{
public:
    /// Where the parts of a picture of @p size go (the same for every paint of that size and input).
    struct Layout
    {
        QRect frame; ///< the whole picture; its outer frameWidth pixels take the check's colour
        int frameWidth = 0;
        QRect title;   ///< the title line (empty when the picture is too small for text)
        QRect plot;    ///< the data area
        QRect scale;   ///< 2D: the colour scale bar (empty otherwise)
        QRect caption; ///< the check's line (empty without a check or text)
    };
    static Layout layout(const QSize &size, const Histogram &h, const PaintOptions &options);

    /// Paints into @p rect of @p painter (any QPaintDevice). The painter's state is restored.
    static void paint(QPainter *painter, const QRect &rect, const Histogram &h,
                      const PaintOptions &options);
    /// The picture as an image of @p size (ARGB32 premultiplied; a null image for an empty size).
    static QImage render(const QSize &size, const Histogram &h, const PaintOptions &options);

    /// The frame colour of a check's result (Good green, Warning orange, Bad red, Undefined grey).
    static QColor qualityColor(Quality q);
    /// The background inside the frame (a pale tint of qualityColor(); white-grey without a check).
    static QColor backgroundColor(Quality q);
    /// The colour of a 2D cell at @p t in [0, 1] of the scale.
    static QColor colourAt(double t);
    /// The step line of a 1D reference, the outlines of a 2D one.
    static QColor referenceColor() { return QColor(200, 0, 160); }
    /// The fill of 1D bars.
    static QColor barColor() { return QColor(128, 170, 206); }
};

} // namespace dialog::presenter
