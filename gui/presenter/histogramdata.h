// What the presenter and the off-screen renderer draw besides the histogram (dialog::Histogram,
// dialog/histogram.h): the result of a data-quality check (a DQResult object). Plain values, no
// widget, no painting.
#pragma once

#include "dialog/histogram.h"
#include "dialog/is/object.h"

#include <QJsonObject>
#include <QString>

namespace dialog::presenter {

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
