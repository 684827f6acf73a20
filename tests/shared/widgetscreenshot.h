// Screenshots of widgets (GUI tests only): the picture of the state a test has just checked.
#pragma once

#include "screenshot.h"

#include <QCoreApplication>
#include <QColor>
#include <QEvent>
#include <QImage>
#include <QWidget>
#include <cstdlib>

namespace dialog::test {

/// Saves what @p widget shows now as screenshot @p file (screenshotPath()). The events already
/// posted (the layout of texts just set, geometry changes) are delivered first; grab() then paints
/// the widget as it is. Nothing is waited for: a test first waits for what the picture must show.
inline bool saveScreenshot(QWidget *widget, const QString &file)
{
    QCoreApplication::sendPostedEvents();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    return widget->grab().save(screenshotPath(file));
}

/// Pixels of @p image within a small distance of @p colour (the sum of the channels' differences
/// under 40): how much of a picture is drawn in that colour.
inline int pixelsNear(const QImage &image, const QColor &colour)
{
    const QImage im = image.convertToFormat(QImage::Format_ARGB32);
    int n = 0;
    for (int y = 0; y < im.height(); ++y)
        for (int x = 0; x < im.width(); ++x) {
            const QColor c = im.pixelColor(x, y);
            n += std::abs(c.red() - colour.red()) + std::abs(c.green() - colour.green()) +
                     std::abs(c.blue() - colour.blue()) <
                 40;
        }
    return n;
}

} // namespace dialog::test
