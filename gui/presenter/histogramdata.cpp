#include "histogramdata.h"

#include "dialog/is/codec.h"

#include <QJsonArray>
#include <cmath>

namespace dialog::presenter {

namespace {

// A number of the JSON view: non-finite values and 64-bit integers beyond 2^53 come as strings.
bool number(const QJsonValue &v, double *out)
{
    if (v.isDouble()) {
        *out = v.toDouble();
        return true;
    }
    if (v.isString()) {
        bool ok = false;
        *out = v.toString().toDouble(&ok);
        return ok || v.toString() == QLatin1String("nan") || v.toString().endsWith(QLatin1String("inf"));
    }
    return false;
}

} // namespace

Quality CheckResult::parseQuality(const QString &status)
{
    if (status == QLatin1String("Good"))
        return Quality::Good;
    if (status == QLatin1String("Warning"))
        return Quality::Warning;
    if (status == QLatin1String("Bad"))
        return Quality::Bad;
    return Quality::Undefined;
}

QString CheckResult::qualityName(Quality q)
{
    switch (q) {
    case Quality::None:
        return {};
    case Quality::Good:
        return QStringLiteral("Good");
    case Quality::Warning:
        return QStringLiteral("Warning");
    case Quality::Bad:
        return QStringLiteral("Bad");
    case Quality::Undefined:
        break;
    }
    return QStringLiteral("Undefined");
}

CheckResult CheckResult::fromObject(const is::Object &object)
{
    if (!object.isValid() || object.indexOf(QStringLiteral("status")) < 0)
        return {Quality::Undefined, 0, QStringLiteral("not a DQResult")};
    return fromJson(is::toJson(object));
}

CheckResult CheckResult::fromJson(const QJsonObject &json)
{
    CheckResult r;
    r.quality = parseQuality(json.value(QStringLiteral("status")).toString());
    number(json.value(QStringLiteral("value")), &r.value);
    r.details = json.value(QStringLiteral("details")).toString();
    return r;
}

} // namespace dialog::presenter
