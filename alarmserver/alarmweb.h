// dialog-alarmserver's web side (--http-port): GET / serves a page with the alarm table that
// follows it (it asks GET /alarms every second) and acknowledges from it; GET /alarms answers the
// table as ALARM.Table carries it; POST /ack, /shelve, /unshelve (a JSON body as the ALARM.Server
// request, plus "user") are operator actions, which need the web token; GET /metrics answers the
// alarm counts and the history's and the hooks' figures in the Prometheus text format.
#pragma once

#include "webfrontend.h"

#include <functional>

namespace dialog::alarm {

class AlarmService;
class AlarmTable;
class HistoryStore;

/// The alarm server's pages and resources over http::WebFrontend.
class AlarmWeb : public http::WebFrontend
{
    Q_OBJECT
public:
    /// The parts must outlive this object.
    AlarmWeb(AlarmService *service, AlarmTable *table, HistoryStore *history, QObject *parent = nullptr);

    /// More lines for /metrics (the hooks' figures), appended to the alarm server's own.
    void addMetrics(std::function<QByteArray()> metrics) { m_metrics.append(std::move(metrics)); }
    /// The Prometheus text of /metrics.
    QByteArray metrics() const;

protected:
    /// With a token set (setToken()), /alarms and /metrics need `Authorization: Bearer <token>`
    /// (401 without); the page itself (no data) loads without it and asks for it. The actions
    /// always need it: without a token the web side is read-only and they are answered 403.
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    void act(const QString &op, const QHttpServerRequest &request, QTcpSocket *socket);

    AlarmService *m_service;
    AlarmTable *m_table;
    HistoryStore *m_history;
    QList<std::function<QByteArray()>> m_metrics;
};

} // namespace dialog::alarm
