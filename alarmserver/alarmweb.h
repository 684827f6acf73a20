// dialog-alarmserver's web side (--http-port): GET / serves a page with the alarm table that
// follows it (it asks GET /alarms every second) and acknowledges from it; GET /alarms answers the
// table as ALARM.Table carries it; POST /ack, /shelve, /unshelve (a JSON body as the ALARM.Server
// request, plus "user") are operator actions, which need the web token; GET /metrics answers the
// alarm counts and the history's and the hooks' figures in the Prometheus text format.
#pragma once

#include <QAbstractHttpServer>
#include <QHostAddress>
#include <functional>

namespace dialog::alarm {

class AlarmService;
class AlarmTable;
class HistoryStore;

/// Answers are written whole and close their connection (as the logger's web log does).
class AlarmWeb : public QAbstractHttpServer
{
    Q_OBJECT
public:
    /// The parts must outlive this object.
    AlarmWeb(AlarmService *service, AlarmTable *table, HistoryStore *history, QObject *parent = nullptr);

    /// /alarms and /metrics need `Authorization: Bearer <token>` (401 without); the page itself
    /// (no data) loads without it and asks for it. The actions always need it: without a token
    /// (empty) the web side is read-only and they are answered 403.
    void setToken(const QByteArray &token) { m_token = token; }
    /// More lines for /metrics (the hooks' figures), appended to the alarm server's own.
    void addMetrics(std::function<QByteArray()> metrics) { m_metrics.append(std::move(metrics)); }
    /// Listens on @p address:@p port. False with "cannot listen on ADDR:PORT: reason".
    bool listen(const QHostAddress &address, quint16 port, QString *error);
    quint16 port() const;

    /// The Prometheus text of /metrics.
    QByteArray metrics() const;

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    void act(const QString &op, const QHttpServerRequest &request, QTcpSocket *socket);
    bool tokenGiven(const QHttpServerRequest &request) const;

    AlarmService *m_service;
    AlarmTable *m_table;
    HistoryStore *m_history;
    QTcpServer *m_tcp = nullptr;
    QByteArray m_token;
    QList<std::function<QByteArray()>> m_metrics;
};

} // namespace dialog::alarm
