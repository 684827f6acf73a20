#include "renderprotocol.h"

#include <QBuffer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtEndian>
#include <cmath>

namespace dialog::presenter::render {

namespace {

bool intIn(const QJsonValue &v, int lo, int hi, int *out)
{
    if (!v.isDouble())
        return false;
    const double d = v.toDouble();
    if (d != std::floor(d) || d < lo || d > hi)
        return false;
    *out = int(d);
    return true;
}

} // namespace

QString parseRequest(const QByteArray &json, Request *out)
{
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError)
        return QStringLiteral("request is not JSON: %1 at offset %2").arg(pe.errorString()).arg(pe.offset);
    if (!doc.isObject())
        return QStringLiteral("request is not a JSON object");
    const QJsonObject r = doc.object();
    const QJsonValue id = r.value(QStringLiteral("id"));
    if (!id.isDouble() || id.toDouble() != std::floor(id.toDouble()))
        return QStringLiteral("request has no integer \"id\"");
    out->id = qint64(id.toDouble());
    int w = 0, h = 0;
    if (!intIn(r.value(QStringLiteral("width")), MinSize, MaxSize, &w) ||
        !intIn(r.value(QStringLiteral("height")), MinSize, MaxSize, &h))
        return QStringLiteral("width and height must be integers in [%1, %2]").arg(MinSize).arg(MaxSize);
    out->size = QSize(w, h);
    const QString type = r.value(QStringLiteral("type")).toString();
    const bool series = type == QLatin1String("TimeSeries");
    if (type != QLatin1String("Histogram1D") && type != QLatin1String("Histogram2D") && !series)
        return QStringLiteral("type must be Histogram1D, Histogram2D or TimeSeries, not \"%1\"").arg(type);
    if (!r.value(QStringLiteral("value")).isObject())
        return QStringLiteral("request has no \"value\" object");
    if (series) {
        QString error;
        out->series = SeriesData::fromJson(r.value(QStringLiteral("value")).toObject(), &error);
        return out->series.isValid() ? QString() : QStringLiteral("value: %1").arg(error);
    }
    if (const Status s = Histogram::fromJson(r.value(QStringLiteral("value")).toObject(), &out->histogram, type);
        !s.isOk())
        return QStringLiteral("value: %1").arg(s.message());
    PaintOptions &o = out->options;
    o.label = r.value(QStringLiteral("name")).toString();
    o.logX = r.value(QStringLiteral("log_x")).toBool();
    o.logY = r.value(QStringLiteral("log_y")).toBool();
    o.logZ = r.value(QStringLiteral("log_z")).toBool();
    if (r.value(QStringLiteral("reference")).isObject()) {
        if (const Status s = Histogram::fromJson(r.value(QStringLiteral("reference")).toObject(), &o.reference, type);
            !s.isOk())
            return QStringLiteral("reference: %1").arg(s.message());
    }
    if (r.value(QStringLiteral("check")).isObject())
        o.check = CheckResult::fromJson(r.value(QStringLiteral("check")).toObject());
    return {};
}

QByteArray frame(const QByteArray &payload)
{
    char header[4];
    qToBigEndian(quint32(payload.size()), header);
    return QByteArray(header, 4) + payload;
}

quint32 frameLength(const char *header)
{
    return qFromBigEndian<quint32>(header);
}

QByteArray encodeAnswer(qint64 id, const QString &error, const QByteArray &png)
{
    const QByteArray head =
        QJsonDocument(QJsonObject{{QStringLiteral("id"), id}, {QStringLiteral("error"), error}})
            .toJson(QJsonDocument::Compact);
    return frame(head) + frame(error.isEmpty() ? png : QByteArray());
}

QByteArray answer(const QByteArray &requestJson)
{
    Request r;
    if (const QString error = parseRequest(requestJson, &r); !error.isEmpty())
        return encodeAnswer(r.id, error);
    const QImage image = r.series.isValid() ? SeriesPainter::render(r.size, r.series)
                                            : HistogramPainter::render(r.size, r.histogram, r.options);
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    // Quality 80 is zlib's fastest level that still compresses: about half the encoding time of the
    // default for a picture a tenth larger (a 2D histogram's 400 x 300 PNG: ~10 ms instead of ~18).
    if (image.isNull() || !image.save(&buffer, "PNG", 80))
        return encodeAnswer(r.id, QStringLiteral("cannot encode the picture as PNG"));
    return encodeAnswer(r.id, {}, png);
}

} // namespace dialog::presenter::render
