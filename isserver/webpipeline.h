// Web IS: the answers of the HTTP front end, written in the order of their requests.
#pragma once

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPair>
#include <QPointer>
#include <QString>
#include <memory>

class QTcpSocket;

namespace dialog::isd {

/// One HTTP answer: status, content type, body and extra headers.
struct WebAnswer
{
    int status = 200;
    QByteArray contentType = "text/plain; charset=utf-8";
    QByteArray body;
    QList<QPair<QByteArray, QByteArray>> headers;

    /// A plain-text error answer "<status> <reason>: <message>".
    static WebAnswer error(int status, const QString &message);
};

/// Writes the answers of the web IS. Answers are written here rather than through
/// QHttpServerResponder because an answer may come long after the request (another server's
/// reply), and in Qt 6.4 a responder may not outlive its request; the connection is watched with a
/// QPointer and a closed one is skipped. Answers leave in the order of the requests (HTTP/1.1
/// pipelining), also when a later request is answered first. Lives in the web server's thread.
class WebPipeline : public QObject
{
    Q_OBJECT
public:
    /// An answer's place in its connection.
    struct Slot
    {
        QByteArray bytes;
        bool ready = false;
        bool close = false;
    };
    /// Where and how an answer goes: taken at the request, used once when the answer is ready.
    struct Target
    {
        QPointer<QTcpSocket> socket;
        std::shared_ptr<Slot> slot;
        bool head = false;  ///< HEAD: the headers only
        bool close = false; ///< the connection closes after this answer
        bool json = false;  ///< JSON rather than XML
        QByteArray ifNoneMatch;     ///< the request's If-None-Match (conditional GET)
        QByteArray ifModifiedSince; ///< the request's If-Modified-Since
    };

    explicit WebPipeline(QObject *parent = nullptr);
    ~WebPipeline() override;

    /// Takes the next answer slot of @p socket; the request counts as in progress until finish().
    Target open(QTcpSocket *socket);
    /// Writes @p answer (when the answers before it are written) and ends the request.
    void finish(const Target &target, const WebAnswer &answer);
    /// An XML or JSON answer, as @p target asks.
    static WebAnswer ok(const Target &target, const QByteArray &xml, const QJsonObject &json);
    /// Requests in progress (opened, not yet finished).
    int inProgress() const { return m_inProgress; }
    /// True while @p socket has an answer not yet written.
    bool busy(QTcpSocket *socket) const { return !m_pipelines.value(socket).isEmpty(); }

private:
    int m_inProgress = 0;
    QHash<QTcpSocket *, QList<std::shared_ptr<Slot>>> m_pipelines; // answers not yet written, per connection
};

} // namespace dialog::isd
