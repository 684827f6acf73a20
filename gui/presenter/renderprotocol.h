// The protocol of dialog-render, apart from its pipes: one request in, one answer out.
//   request: u32 big-endian length N | N bytes of JSON
//            {"id", "width", "height", "type": "Histogram1D"|"Histogram2D", "value": <dialog::is::toJson>,
//             "name", "log_x", "log_y", "log_z", "reference": <histogram JSON>, "check": {status, value,
//             details}}
//            or {"id", "width", "height", "type": "TimeSeries", "value": <SeriesData::fromJson>}
//   answer:  u32 BE length M | M bytes of JSON {"id", "error"} | u32 BE length K | K bytes of PNG (K = 0 on
//   error)
// Nothing here reads or writes a file descriptor: answer() takes the request's bytes and returns
// the answer's, so the codec is tested with byte arrays (tst_render) and the loop lives in main.
#pragma once

#include "histogrampainter.h"
#include "seriespainter.h"

#include <QByteArray>
#include <QSize>

namespace dialog::presenter::render {

/// Largest request accepted (a larger one is read, discarded and answered with an error).
constexpr quint32 MaxRequestBytes = 16 * 1024 * 1024; // a 1000 x 1000 histogram is about 8 MB of JSON
/// Bounds of width and height, in pixels.
constexpr int MinSize = 16, MaxSize = 4096;

struct Request
{
    qint64 id = -1; ///< -1 until read
    QSize size;
    Histogram histogram;
    PaintOptions options;
    SeriesData series; ///< valid for a TimeSeries request (then histogram is not)
};

/// Parses one request's JSON into @p out; empty on success, else the reason (out->id is set when
/// the request's id could be read).
QString parseRequest(const QByteArray &json, Request *out);

/// The two frames of an answer: {"id", "error"} and the PNG (empty on error).
QByteArray encodeAnswer(qint64 id, const QString &error, const QByteArray &png = {});

/// Serves one request (its JSON, without the length): draws it and returns the whole answer.
QByteArray answer(const QByteArray &requestJson);

/// 4-byte big-endian length then @p payload.
QByteArray frame(const QByteArray &payload);
/// Reads a frame's length from 4 bytes.
quint32 frameLength(const char *header);

} // namespace dialog::presenter::render
