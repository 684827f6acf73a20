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

HistogramData invalid(QString *error, const QString &why)
{
    if (error)
        *error = why;
    return {};
}

} // namespace

double HistogramData::sum() const
{
    double s = 0;
    for (double v : contents)
        s += v;
    return s;
}

double HistogramData::maximum() const
{
    double m = 0;
    for (double v : contents)
        m = std::max(m, v);
    return m;
}

double HistogramData::minimumPositive() const
{
    double m = 0;
    for (double v : contents)
        if (v > 0 && (m == 0 || v < m))
            m = v;
    return m;
}

HistogramData HistogramData::fromObject(const is::Object &object, QString *error)
{
    if (!object.isValid())
        return invalid(error, QStringLiteral("no value"));
    const QString type = object.typeName();
    HistogramData h = fromJson(is::toJson(object), {}, error);
    if (!h.isValid() && error)
        *error = QStringLiteral("%1: %2").arg(type, *error);
    return h;
}

HistogramData HistogramData::fromJson(const QJsonObject &j, const QString &typeHint, QString *error)
{
    QString type = j.value(QStringLiteral("type")).toString(typeHint);
    if (type.isEmpty())
        type = j.contains(QStringLiteral("yBins")) && !j.contains(QStringLiteral("bins"))
                   ? QStringLiteral("Histogram2D")
                   : QStringLiteral("Histogram1D");
    HistogramData h;
    if (type == QLatin1String("Histogram1D"))
        h.kind = Kind::OneD;
    else if (type == QLatin1String("Histogram2D"))
        h.kind = Kind::TwoD;
    else
        return invalid(error, QStringLiteral("not a histogram (type %1)").arg(type));
    const auto get = [&](const char *name, double *out, bool required = true) {
        const QJsonValue v = j.value(QLatin1String(name));
        if (v.isUndefined())
            return !required;
        return number(v, out);
    };
    double xBins = 0, yBins = 0;
    const bool binsOk = h.kind == Kind::OneD ? (j.contains(QStringLiteral("bins")) ? get("bins", &xBins)
                                                                                   : get("xBins", &xBins))
                                             : get("xBins", &xBins) && get("yBins", &yBins);
    if (!binsOk || !get("xLow", &h.xLow) || !get("xHigh", &h.xHigh) ||
        (h.kind == Kind::TwoD && (!get("yLow", &h.yLow) || !get("yHigh", &h.yHigh))) ||
        !get("entries", &h.entries, false))
        return invalid(error, QStringLiteral("missing or non-numeric bins, edges or entries"));
    if (!(xBins >= 1 && xBins <= MaxBins) || (h.kind == Kind::TwoD && !(yBins >= 1 && yBins <= MaxBins)) ||
        (h.kind == Kind::TwoD && xBins * yBins > MaxBins))
        return invalid(error, QStringLiteral("bins out of range (1 to %1 in all)").arg(MaxBins));
    if (!std::isfinite(h.xLow) || !std::isfinite(h.xHigh) || !(h.xHigh > h.xLow) ||
        (h.kind == Kind::TwoD && (!std::isfinite(h.yLow) || !std::isfinite(h.yHigh) || !(h.yHigh > h.yLow))))
        return invalid(error, QStringLiteral("edges not finite or not increasing"));
    h.xBins = int(xBins);
    h.yBins = h.kind == Kind::TwoD ? int(yBins) : 0;
    const QJsonArray c = j.value(QStringLiteral("contents")).toArray();
    const qsizetype expected = h.kind == Kind::TwoD ? qsizetype(h.xBins) * h.yBins : h.xBins;
    if (c.size() != expected)
        return invalid(error, QStringLiteral("%1 contents for %2 bins").arg(c.size()).arg(expected));
    h.contents.reserve(expected);
    for (const QJsonValue &v : c) {
        double x = 0;
        if (!number(v, &x))
            return invalid(error, QStringLiteral("non-numeric bin content"));
        h.contents.append(std::isfinite(x) ? x : 0.0);
    }
    if (!std::isfinite(h.entries))
        h.entries = 0;
    h.title = j.value(QStringLiteral("title")).toString();
    if (error)
        error->clear();
    return h;
}

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
