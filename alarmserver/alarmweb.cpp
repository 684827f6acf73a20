#include "alarmweb.h"

#include "alarmservice.h"
#include "alarmtable.h"
#include "historystore.h"

#include <QFile>
#include <QHttpServerRequest>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QTcpSocket>

using namespace Qt::StringLiterals;

Q_LOGGING_CATEGORY(lcAlarmWeb, "dialog.alarm.web", QtInfoMsg)

namespace dialog::alarm {

namespace {

constexpr qsizetype MaxBody = 64 * 1024;

void family(QByteArray &out, const char *name, const char *type, const char *help)
{
    out += QByteArray("# HELP ") + name + ' ' + help + "\n# TYPE " + name + ' ' + type + '\n';
}

} // namespace

AlarmWeb::AlarmWeb(AlarmService *service, AlarmTable *table, HistoryStore *history, QObject *parent)
    : WebFrontend(u"this alarm page"_s, u"alarm server's --http-token-file"_s, parent), m_service(service),
      m_table(table), m_history(history)
{
}

bool AlarmWeb::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    const QString path = request.url().path();
    const auto method = request.method();
    const bool head = method == QHttpServerRequest::Method::Head;
    static const QStringList actions{u"/ack"_s, u"/shelve"_s, u"/unshelve"_s};
    if (actions.contains(path)) {
        if (method != QHttpServerRequest::Method::Post) {
            answerError(socket, 405, u"%1 takes POST with a JSON body"_s.arg(path));
            return true;
        }
        act(path.mid(1), request, socket);
        return true;
    }
    if (method != QHttpServerRequest::Method::Get && !head) {
        answerError(socket, 405, u"only GET and HEAD here (POST /ack, /shelve, /unshelve)"_s);
        return true;
    }
    const bool data = path == u"/alarms"_s || path == u"/metrics"_s;
    if (data && !requireToken(request, socket))
        return true;
    if (path == u"/"_s || path == u"/index.html"_s) {
        QFile page(u":/dialog-alarmserver/web/index.html"_s);
        if (!page.open(QIODevice::ReadOnly))
            answerError(socket, 500, u"the alarm page is missing from the build"_s);
        else
            answer(socket, 200, "text/html; charset=utf-8", page.readAll(), head);
    } else if (path == u"/alarms"_s) {
        QJsonObject t = m_service->tableJson();
        t.insert(u"actions"_s, hasToken()); // the page offers Ack only where it can work
        answerJson(socket, 200, t, head);
    } else if (path == u"/metrics"_s) {
        answer(socket, 200, "text/plain; version=0.0.4; charset=utf-8", metrics(), head);
    } else {
        answerError(socket, 404, u"no such resource (try /, /alarms or /metrics)"_s);
    }
    return true;
}

void AlarmWeb::act(const QString &op, const QHttpServerRequest &request, QTcpSocket *socket)
{
    // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d: the record names them as IPv4.
    bool v4 = false;
    const QHostAddress peerAddress(socket->peerAddress().toIPv4Address(&v4));
    const QString peer = v4 ? peerAddress.toString() : socket->peerAddress().toString();
    if (!hasToken()) {
        answerError(socket, 403,
                    u"this alarm page is read-only: the alarm server takes actions from the web only with "
                    "--http-token-file"_s);
        return;
    }
    if (!tokenGiven(request)) {
        qCWarning(lcAlarmWeb).noquote() << op << "from" << peer << "refused: no valid token";
        answerError(socket, 401, u"%1 needs the web token: send 'Authorization: Bearer <token>'"_s.arg(op));
        return;
    }
    if (request.body().size() > MaxBody) {
        answerError(socket, 413, u"the body is larger than %1 bytes"_s.arg(MaxBody));
        return;
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body(), &pe);
    if (!doc.isObject()) {
        answerError(socket, 400, u"expected a JSON object: %1"_s.arg(pe.errorString()));
        return;
    }
    const QJsonObject r = doc.object();
    // The token says the requester may act; the name is the one the page's user gives (claimed,
    // like the user of a DIALOG connection without a shared secret).
    const QString user = r.value(u"user"_s).toString(u"web"_s).trimmed();
    static const QRegularExpression validUser(u"^[A-Za-z0-9._@-]{1,64}$"_s);
    if (!validUser.match(user).hasMatch()) {
        answerError(socket, 400,
                    u"invalid user '%1' (1 to 64 letters, digits, '.', '_', '@', '-')"_s.arg(user.left(80)));
        return;
    }
    const Origin from{u"web"_s, user, peer, peer};
    const Actor who{u"%1@%2 (web)"_s.arg(user, peer), false};
    QJsonObject done;
    if (const Status refused = m_service->operate(op, r, from, who, &done); !refused.isOk()) {
        const int status = refused.code() == Status::Code::PermissionDenied ? 403
                           : refused.code() == Status::Code::NotFound       ? 404
                           : refused.code() == Status::Code::BadRequest     ? 400
                                                                            : 409;
        answerError(socket, status, refused.message());
        return;
    }
    qCInfo(lcAlarmWeb).noquote() << op << r.value(u"path"_s).toString() << "by" << who.who;
    answerJson(socket, 200, done);
}

QByteArray AlarmWeb::metrics() const
{
    QByteArray out;
    family(out, "dialog_alarm_rules", "gauge", "Alarms in the rules");
    out += "dialog_alarm_rules " + QByteArray::number(m_table->size()) + '\n';
    // By state and severity: every combination, zeros included, so that a series never vanishes.
    constexpr Severity severities[] = {Severity::Minor, Severity::Major, Severity::Invalid};
    constexpr State states[] = {State::Normal, State::Active, State::Acknowledged, State::Latched};
    int counts[4][4] = {}, shelved[4] = {}, disabled[4] = {};
    for (int i = 0; i < m_table->size(); ++i) {
        const AlarmState &s = m_table->state(i);
        const int sev = int(m_table->rules().rules.at(i).severity);
        ++counts[int(s.state)][sev];
        shelved[sev] += s.shelved ? 1 : 0;
        disabled[sev] += s.disabled ? 1 : 0;
    }
    family(out, "dialog_alarm_alarms", "gauge", "Alarms by state and severity");
    for (State st : states)
        for (Severity sev : severities)
            out += "dialog_alarm_alarms{state=\"" + stateName(st).toLatin1() + "\",severity=\"" +
                   severityName(sev).toLatin1() + "\"} " + QByteArray::number(counts[int(st)][int(sev)]) + '\n';
    family(out, "dialog_alarm_shelved", "gauge", "Shelved alarms by severity");
    for (Severity sev : severities)
        out += "dialog_alarm_shelved{severity=\"" + severityName(sev).toLatin1() + "\"} " +
               QByteArray::number(shelved[int(sev)]) + '\n';
    family(out, "dialog_alarm_disabled", "gauge", "Disabled alarms by severity");
    for (Severity sev : severities)
        out += "dialog_alarm_disabled{severity=\"" + severityName(sev).toLatin1() + "\"} " +
               QByteArray::number(disabled[int(sev)]) + '\n';
    family(out, "dialog_alarm_worst_severity", "gauge",
           "Worst annunciated severity (0 ok, 1 minor, 2 major, 3 invalid)");
    out += "dialog_alarm_worst_severity " + QByteArray::number(int(m_table->worst())) + '\n';
    family(out, "dialog_alarm_history_pending", "gauge", "History rows and states waiting to be written");
    out += "dialog_alarm_history_pending " + QByteArray::number(m_history->pending()) + '\n';
    family(out, "dialog_alarm_history_written", "counter", "History rows written");
    out += "dialog_alarm_history_written_total " + QByteArray::number(m_history->written()) + '\n';
    family(out, "dialog_alarm_history_failures", "counter", "Failed writes of the history");
    out += "dialog_alarm_history_failures_total " + QByteArray::number(m_history->failures()) + '\n';
    family(out, "dialog_alarm_history_dropped", "counter", "History rows dropped (the queue was full)");
    out += "dialog_alarm_history_dropped_total " + QByteArray::number(m_history->dropped()) + '\n';
    family(out, "dialog_alarm_actions_refused", "counter", "Operator actions refused");
    out += "dialog_alarm_actions_refused_total " + QByteArray::number(m_service->refused()) + '\n';
    for (const auto &more : m_metrics)
        out += more();
    return out;
}

} // namespace dialog::alarm
