// Screenshots of widgets (GUI tests only): the picture of the state a test has just checked.
#pragma once

#include "screenshot.h"

#include <QCoreApplication>
#include <QEvent>
#include <QWidget>

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

} // namespace dialog::test
