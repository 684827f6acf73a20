#include "dialog/histogram.h"

#include "dialog/is/object.h"

#include <QJsonArray>
#include <cmath>

namespace dialog {

namespace {

const QString Type1D = QStringLiteral("Histogram1D");
const QString Type2D = QStringLiteral("Histogram2D");

Status invalid(const QString &why)
{
    return Status(Status::Code::InvalidObject, why);
}

// A number of the JSON view: non-finite values and 64-bit integers beyond 2^53 come as text.
bool number(const QJsonValue &v, double *out)
{
    if (v.isDouble()) {
        *out = v.toDouble();
        return true;
    }
    if (!v.isString())
        return false;
    bool ok = false;
    *out = v.toString().toDouble(&ok);
    return ok;
}

// The same for a count in [0, 2^64): exact from text, a fractional number rounded (a sum of weights).
bool count(const QJsonValue &v, quint64 *out)
{
    if (v.isString()) {
        bool ok = false;
        *out = v.toString().toULongLong(&ok);
        if (ok)
            return true;
    }
    double d = 0;
    if (!number(v, &d) || !(d >= 0) || !(d < 18446744073709551616.0))
        return false;
    *out = quint64(d + 0.5);
    return true;
}

// An attribute of @p o read as T; false when it is missing or of another type.
template <typename T> bool attribute(const is::Object &o, const QString &name, T *out)
{
    bool ok = false;
    *out = o.get<T>(name, &ok);
    return ok;
}

// An optional double attribute (underflow, overflow): true when absent (then 0) or a double.
bool optional(const is::Object &o, const QString &name, double *out)
{
    *out = 0;
    return o.indexOf(name) < 0 || attribute(o, name, out);
}

QString binningText(const Histogram &h)
{
    if (h.kind == Histogram::Kind::TwoD)
        return QStringLiteral("%1 x %2 bins in [%3, %4) x [%5, %6)")
            .arg(h.xBins)
            .arg(h.yBins)
            .arg(h.xLow)
            .arg(h.xHigh)
            .arg(h.yLow)
            .arg(h.yHigh);
    if (h.kind == Histogram::Kind::OneD)
        return QStringLiteral("%1 bins in [%2, %3)").arg(h.xBins).arg(h.xLow).arg(h.xHigh);
    return QStringLiteral("no histogram");
}

} // namespace

int HistogramAxis::binOf(double x) const
{
    if (!(x >= low))
        return -1;
    if (x >= high)
        return bins;
    return qBound(0, int((x - low) / binWidth()), bins - 1);
}

QString Histogram::typeName() const
{
    switch (kind) {
    case Kind::OneD:
        return Type1D;
    case Kind::TwoD:
        return Type2D;
    case Kind::None:
        break;
    }
    return {};
}

double Histogram::at(int x, int y) const
{
    if (x < 0 || x >= xBins || y < 0 || y >= yBins)
        return 0;
    const qsizetype i = qsizetype(y) * xBins + x;
    return i < contents.size() ? contents.at(i) : 0;
}

double Histogram::sum() const
{
    double s = 0;
    for (double v : contents)
        s += v;
    return s;
}

double Histogram::maximum() const
{
    double m = 0;
    for (double v : contents)
        m = std::max(m, v);
    return m;
}

double Histogram::minimumPositive() const
{
    double m = 0;
    for (double v : contents)
        if (v > 0 && (m == 0 || v < m))
            m = v;
    return m;
}

double Histogram::mean() const
{
    if (kind != Kind::OneD)
        return 0;
    const HistogramAxis x = xAxis();
    double n = 0, sx = 0;
    for (int i = 0; i < xBins && i < contents.size(); ++i) {
        n += contents.at(i);
        sx += contents.at(i) * x.binCentre(i);
    }
    return n > 0 ? sx / n : 0;
}

double Histogram::rms() const
{
    if (kind != Kind::OneD)
        return 0;
    const HistogramAxis x = xAxis();
    double n = 0, sx = 0, sxx = 0;
    for (int i = 0; i < xBins && i < contents.size(); ++i) {
        const double c = contents.at(i), at = x.binCentre(i);
        n += c;
        sx += c * at;
        sxx += c * at * at;
    }
    if (n <= 0)
        return 0;
    const double m = sx / n;
    return std::sqrt(std::max(0.0, sxx / n - m * m));
}

bool Histogram::sameBinning(const Histogram &o) const
{
    return kind == o.kind && xAxis() == o.xAxis() && yAxis() == o.yAxis();
}

QString Histogram::binningDifference(const Histogram &o) const
{
    if (sameBinning(o))
        return {};
    return QStringLiteral("the histogram has %1, the reference %2").arg(binningText(*this), binningText(o));
}

Status Histogram::validate() const
{
    if (kind == Kind::None)
        return Status(Status::Code::TypeMismatch, QStringLiteral("not a histogram"));
    const bool twoD = kind == Kind::TwoD;
    if (xBins < 1 || yBins < 1 || (!twoD && yBins != 1) || qsizetype(xBins) * yBins > MaxBins)
        return invalid(QStringLiteral("%1 x %2 bins out of range (1 to %3 in all, 1 y bin for 1D)")
                           .arg(xBins)
                           .arg(yBins)
                           .arg(MaxBins));
    if (!std::isfinite(xLow) || !std::isfinite(xHigh) || !(xHigh > xLow) ||
        (twoD && (!std::isfinite(yLow) || !std::isfinite(yHigh) || !(yHigh > yLow))))
        return invalid(QStringLiteral("edges not finite or not increasing: %1").arg(binningText(*this)));
    if (contents.size() != qsizetype(xBins) * yBins)
        return invalid(QStringLiteral("%1 contents for %2").arg(contents.size()).arg(binningText(*this)));
    for (qsizetype i = 0; i < contents.size(); ++i)
        if (!std::isfinite(contents.at(i)))
            return invalid(QStringLiteral("bin %1's content is not finite").arg(i));
    if (!std::isfinite(underflow) || !std::isfinite(overflow))
        return invalid(QStringLiteral("underflow or overflow not finite"));
    return {};
}

Status Histogram::fromObject(const is::Object &o, Histogram *out)
{
    if (!o.isValid())
        return Status(Status::Code::TypeMismatch, QStringLiteral("no value"));
    const QString type = o.typeName();
    Histogram h;
    if (type == Type1D || (type != Type2D && o.indexOf(QStringLiteral("bins")) >= 0))
        h.kind = Kind::OneD;
    else if (type == Type2D ||
             (o.indexOf(QStringLiteral("xBins")) >= 0 && o.indexOf(QStringLiteral("yBins")) >= 0))
        h.kind = Kind::TwoD;
    else
        return Status(Status::Code::TypeMismatch, QStringLiteral("is a %1, not a histogram").arg(type));
    quint32 xBins = 0, yBins = 1;
    const bool binsOk = h.kind == Kind::OneD ? attribute(o, QStringLiteral("bins"), &xBins)
                                             : attribute(o, QStringLiteral("xBins"), &xBins) &&
                                                   attribute(o, QStringLiteral("yBins"), &yBins);
    if (!binsOk || !attribute(o, QStringLiteral("xLow"), &h.xLow) ||
        !attribute(o, QStringLiteral("xHigh"), &h.xHigh) ||
        (h.kind == Kind::TwoD && (!attribute(o, QStringLiteral("yLow"), &h.yLow) ||
                                  !attribute(o, QStringLiteral("yHigh"), &h.yHigh))) ||
        !attribute(o, QStringLiteral("contents"), &h.contents) ||
        !attribute(o, QStringLiteral("entries"), &h.entries) ||
        !optional(o, QStringLiteral("underflow"), &h.underflow) ||
        !optional(o, QStringLiteral("overflow"), &h.overflow))
        return invalid(QStringLiteral("%1 lacks an attribute of %2 or has one of another type")
                           .arg(type, h.kind == Kind::OneD ? Type1D : Type2D));
    if (xBins > quint32(MaxBins) || yBins > quint32(MaxBins))
        return invalid(
            QStringLiteral("%1 x %2 bins out of range (1 to %3 in all)").arg(xBins).arg(yBins).arg(MaxBins));
    h.xBins = int(xBins);
    h.yBins = int(yBins);
    if (const int t = o.indexOf(QStringLiteral("title")); t >= 0)
        h.title = o.get<QString>(t);
    if (const Status s = h.validate(); !s.isOk())
        return invalid(QStringLiteral("%1: %2").arg(type, s.message()));
    *out = std::move(h);
    return {};
}

Status Histogram::fromJson(const QJsonObject &j, Histogram *out, const QString &typeHint)
{
    QString type = j.value(QStringLiteral("type")).toString(typeHint);
    const bool has1D = j.contains(QStringLiteral("bins"));
    if (type.isEmpty())
        type = !has1D && j.contains(QStringLiteral("yBins")) ? Type2D : Type1D;
    Histogram h;
    if (type == Type1D)
        h.kind = Kind::OneD;
    else if (type == Type2D)
        h.kind = Kind::TwoD;
    else
        return Status(Status::Code::TypeMismatch, QStringLiteral("not a histogram (type %1)").arg(type));
    const auto get = [&](const char *name, double *value, bool required = true) {
        const QJsonValue v = j.value(QLatin1String(name));
        return v.isUndefined() ? !required : number(v, value);
    };
    double xBins = 0, yBins = 1;
    const bool binsOk = h.kind == Kind::OneD ? (has1D ? get("bins", &xBins) : get("xBins", &xBins)) &&
                                                   get("yBins", &yBins, false)
                                             : get("xBins", &xBins) && get("yBins", &yBins);
    const QJsonValue entries = j.value(QStringLiteral("entries"));
    if (!binsOk || !get("xLow", &h.xLow) || !get("xHigh", &h.xHigh) ||
        (h.kind == Kind::TwoD && (!get("yLow", &h.yLow) || !get("yHigh", &h.yHigh))) ||
        (!entries.isUndefined() && !count(entries, &h.entries)) || !get("underflow", &h.underflow, false) ||
        !get("overflow", &h.overflow, false))
        return invalid(QStringLiteral("%1: missing or non-numeric bins, edges or entries").arg(type));
    if (!(xBins >= 1 && xBins <= MaxBins && xBins == std::floor(xBins)) ||
        !(yBins >= 1 && yBins <= MaxBins && yBins == std::floor(yBins)) || xBins * yBins > MaxBins)
        return invalid(
            QStringLiteral("%1: bins out of range (integers, 1 to %2 in all)").arg(type).arg(MaxBins));
    h.xBins = int(xBins);
    h.yBins = int(yBins);
    const QJsonArray c = j.value(QStringLiteral("contents")).toArray();
    // Checked before the copy so that a huge array is not converted only to be refused.
    if (c.size() != qsizetype(h.xBins) * h.yBins)
        return invalid(QStringLiteral("%1: %2 contents for %3").arg(type).arg(c.size()).arg(binningText(h)));
    h.contents.reserve(c.size());
    for (const QJsonValue &v : c) {
        double x = 0;
        if (!number(v, &x))
            return invalid(
                QStringLiteral("%1: bin %2's content is not a number").arg(type).arg(h.contents.size()));
        h.contents.append(x);
    }
    h.title = j.value(QStringLiteral("title")).toString();
    if (const Status s = h.validate(); !s.isOk())
        return invalid(QStringLiteral("%1: %2").arg(type, s.message()));
    *out = std::move(h);
    return {};
}

QJsonObject Histogram::toJson() const
{
    if (kind == Kind::None)
        return {};
    QJsonArray c;
    for (double v : contents)
        c.append(v);
    QJsonObject j{{QStringLiteral("type"), typeName()}, {QStringLiteral("title"), title},
                  {QStringLiteral("xLow"), xLow},       {QStringLiteral("xHigh"), xHigh},
                  {QStringLiteral("yLow"), yLow},       {QStringLiteral("yHigh"), yHigh},
                  {QStringLiteral("xBins"), xBins},     {QStringLiteral("yBins"), yBins},
                  {QStringLiteral("contents"), c}};
    // Beyond 2^53 a double loses the count: as text, which fromJson() reads back exactly.
    j.insert(QStringLiteral("entries"), entries < (quint64(1) << 53) ? QJsonValue(qint64(entries))
                                                                     : QJsonValue(QString::number(entries)));
    if (underflow != 0)
        j.insert(QStringLiteral("underflow"), underflow);
    if (overflow != 0)
        j.insert(QStringLiteral("overflow"), overflow);
    return j;
}

Status Histogram::toObject(const is::TypeRegistry &types, is::Object *out) const
{
    if (kind == Kind::None)
        return Status(Status::Code::TypeMismatch, QStringLiteral("not a histogram"));
    is::Object o;
    if (const Status s = is::Object::create(types, typeName(), &o); !s.isOk())
        return s;
    Status s = o.set(QStringLiteral("title"), title);
    const auto set = [&](const QString &name, auto value) {
        if (s.isOk())
            s = o.set(name, value);
    };
    set(QStringLiteral("xLow"), xLow);
    set(QStringLiteral("xHigh"), xHigh);
    if (kind == Kind::OneD) {
        set(QStringLiteral("bins"), quint32(xBins));
    } else {
        set(QStringLiteral("xBins"), quint32(xBins));
        set(QStringLiteral("yBins"), quint32(yBins));
        set(QStringLiteral("yLow"), yLow);
        set(QStringLiteral("yHigh"), yHigh);
    }
    set(QStringLiteral("contents"), contents);
    set(QStringLiteral("entries"), entries);
    if (o.indexOf(QStringLiteral("underflow")) >= 0)
        set(QStringLiteral("underflow"), underflow);
    if (o.indexOf(QStringLiteral("overflow")) >= 0)
        set(QStringLiteral("overflow"), overflow);
    if (!s.isOk())
        return s;
    *out = std::move(o);
    return {};
}

} // namespace dialog
