#include "webpipeline.h"

#include "dialog/httpstatus.h"

#include <QJsonDocument>
#include <QTcpSocket>

namespace dialog::isd {

WebAnswer WebAnswer::error(int status, const QString &message)
{
    WebAnswer a;
    a.status = status;
    a.body = QByteArray::number(status) + ' ' + http::reasonPhrase(status) + ": " + message.toUtf8() + '\n';
    return a;
}

WebPipeline::WebPipeline(QObject *parent) : QObject(parent) {}

WebPipeline::~WebPipeline() = default;

WebAnswer WebPipeline::ok(const Target &t, const QByteArray &xml, const QJsonObject &json)
{
    WebAnswer a;
    if (t.json) {
        a.contentType = "application/json";
        a.body = QJsonDocument(json).toJson(QJsonDocument::Indented);
    } else {
        a.contentType = "application/xml; charset=utf-8";
        a.body = xml;
    }
    return a;
}

WebPipeline::Target WebPipeline::open(QTcpSocket *socket)
{
    Target t;
    t.socket = socket;
    t.slot = std::make_shared<Slot>();
    auto it = m_pipelines.find(socket);
    if (it == m_pipelines.end()) {
        it = m_pipelines.insert(socket, {});
        connect(socket, &QObject::destroyed, this, [this, socket] { m_pipelines.remove(socket); });
    }
    it->append(t.slot);
    ++m_inProgress;
    return t;
}

void WebPipeline::finish(const Target &t, const WebAnswer &a)
{
    --m_inProgress;
    QTcpSocket *s = t.socket.data();
    if (!s || s->state() != QAbstractSocket::ConnectedState)
        return; // the client left before its answer was ready
    QByteArray out;
    out.reserve(a.body.size() + 256);
    out += "HTTP/1.1 " + QByteArray::number(a.status) + ' ' + http::reasonPhrase(a.status) + "\r\n";
    if (a.status != 304) { // a 304 has no body, and its headers are those of the answer it stands for
        out += "Content-Type: " + a.contentType + "\r\n";
        out += "Content-Length: " + QByteArray::number(a.body.size()) + "\r\n";
    }
    out += "Cache-Control: no-cache\r\n";
    for (const auto &h : a.headers)
        out += h.first + ": " + h.second + "\r\n";
    if (t.close)
        out += "Connection: close\r\n";
    out += "\r\n";
    if (!t.head && a.status != 304)
        out += a.body;
    t.slot->bytes = out;
    t.slot->ready = true;
    t.slot->close = t.close;
    QList<std::shared_ptr<Slot>> &queue = m_pipelines[s];
    while (!queue.isEmpty() && queue.first()->ready) {
        const std::shared_ptr<Slot> next = queue.takeFirst();
        s->write(next->bytes);
        if (next->close) {
            queue.clear();
            s->disconnectFromHost();
        }
    }
}

} // namespace dialog::isd
