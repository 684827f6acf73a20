#include "alarmservice.h"

#include "dialog/request.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>

using namespace Qt::StringLiterals;

Q_LOGGING_CATEGORY(lcAlarmService, "dialog.alarm.service", QtInfoMsg)

namespace dialog::alarm {

QString serverServiceName()
{
    return u"ALARM.Server"_s;
}

QString tableServiceName()
{
    return u"ALARM.Table"_s;
}

namespace {

/// Who a request comes from: the user and host its process claims in HELLO (proven when the
/// partition has a secret), and the process.
QString actorOf(const Request &r)
{
    if (r.originUser().isEmpty() && r.originHost().isEmpty())
        return r.origin();
    return u"%1@%2 (%3)"_s.arg(r.originUser(), r.originHost(), r.origin());
}

const QStringList changingOps{u"ack"_s, u"shelve"_s, u"unshelve"_s, u"disable"_s, u"enable"_s};

} // namespace

AlarmService::AlarmService(Client *client, AlarmTable *table, HistoryStore *history,
                           const AccessOptions &access, QObject *parent)
    : QObject(parent), m_client(client), m_table(table), m_history(history), m_access(access),
      m_proven(!client->options().secretFile.isEmpty())
{
    m_publishTimer.setSingleShot(true);
    m_publishTimer.setInterval(100); // a storm of changes is one message per 100 ms
    connect(&m_publishTimer, &QTimer::timeout, this, &AlarmService::publish);
    for (int i = 0; i < m_table->size(); ++i)
        if (m_table->state(i).listed())
            m_listed.insert(i);
    connect(m_table, &AlarmTable::changed, this, &AlarmService::onChanged);
    // The history's figures (rows waiting, failures) change without an alarm changing: published
    // when they do, at most once a second.
    m_historyTimer.setInterval(1000);
    connect(&m_historyTimer, &QTimer::timeout, this, [this] {
        const auto figures = std::pair{m_history->pending(), m_history->failures()};
        if (figures != m_historyFigures && !m_publishTimer.isActive())
            publish();
    });
}

AlarmService::~AlarmService() = default;

bool AlarmService::start(const QByteArray &secret, QString *error)
{
    AuditTrail::Options trail = m_access.trail;
    trail.secret = secret;
    m_audit = std::make_unique<AuditTrail>(trail);
    if (const Status st = m_audit->open(); !st.isOk()) {
        *error = st.message();
        return false;
    }
    if (!m_client->publish(serverServiceName()) ||
        !(m_tableService = m_client->publish(tableServiceName()))) {
        *error = m_client->errorString();
        return false;
    }
    connect(m_client, &Client::requestReceived, this, &AlarmService::onRequest);
    publish();
    m_historyTimer.start();
    return true;
}

void AlarmService::onChanged(const AlarmEvent &e)
{
    const AlarmState &s = m_table->state(e.alarm);
    const Rule &r = m_table->rules().rules.at(e.alarm);
    if (s.listed())
        m_listed.insert(e.alarm);
    else
        m_listed.remove(e.alarm);
    m_changed << r.path;
    m_history->append(HistoryRow{e.timeMs, r.path, e.event, stateName(s.state), severityName(r.severity),
                                 s.value, e.actor.who, e.comment, e.actor.proven},
                      s.persistent());
    if (!m_publishTimer.isActive())
        m_publishTimer.start();
}

QJsonObject AlarmService::tableJson() const
{
    QJsonArray alarms;
    QList<int> listed(m_listed.begin(), m_listed.end());
    std::sort(listed.begin(), listed.end());
    int active = 0, unacknowledged = 0, latched = 0, shelved = 0, disabled = 0;
    for (int i : std::as_const(listed)) {
        const AlarmState &s = m_table->state(i);
        active += s.raised() && !s.shelved ? 1 : 0;
        unacknowledged += (s.state == State::Active || s.state == State::Latched) && !s.shelved ? 1 : 0;
        latched += s.state == State::Latched ? 1 : 0;
        shelved += s.shelved ? 1 : 0;
        disabled += s.disabled ? 1 : 0;
        alarms.append(m_table->toJson(i));
    }
    QJsonObject history{{u"database"_s, m_history->display()},
                        {u"written"_s, qint64(m_history->written())},
                        {u"pending"_s, m_history->pending()},
                        {u"failures"_s, qint64(m_history->failures())},
                        {u"dropped"_s, qint64(m_history->dropped())}};
    if (!m_history->lastError().isEmpty())
        history.insert(u"error"_s, m_history->lastError());
    QJsonObject t{{u"sequence"_s, qint64(++m_sequence)},
            {u"time_ms"_s, QDateTime::currentMSecsSinceEpoch()},
            {u"rules"_s, m_table->size()},
            {u"worst"_s, severityName(m_table->worst())},
            {u"counts"_s, QJsonObject{{u"listed"_s, alarms.size()},
                                      {u"active"_s, active},
                                      {u"unacknowledged"_s, unacknowledged},
                                      {u"latched"_s, latched},
                                      {u"shelved"_s, shelved},
                                      {u"disabled"_s, disabled}}},
            {u"history"_s, history},
            {u"alarms"_s, alarms}};
    for (const auto &[key, figures] : m_figures)
        t.insert(key, figures());
    return t;
}

void AlarmService::figuresChanged()
{
    if (!m_publishTimer.isActive())
        m_publishTimer.start();
}

void AlarmService::addFigures(const QString &key, std::function<QJsonObject()> figures)
{
    m_figures.append({key, std::move(figures)});
}

void AlarmService::publish()
{
    if (!m_tableService)
        return;
    m_historyFigures = {m_history->pending(), m_history->failures()};
    QJsonObject t = tableJson();
    t.insert(u"changed"_s, QJsonArray::fromStringList(m_changed));
    m_changed.clear();
    m_tableService->update(QJsonDocument(t).toJson(QJsonDocument::Compact));
}

void AlarmService::onRequest(const Request &request)
{
    if (request.service() != serverServiceName())
        return;
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(request.data(), &pe);
    QString refused;
    const QJsonObject a = doc.isObject() ? answer(doc.object(), request, &refused) : QJsonObject();
    if (!doc.isObject())
        refused = u"malformed request: expected a JSON object"_s;
    if (!refused.isEmpty()) {
        m_client->replyError(request, refused);
        return;
    }
    m_client->reply(request, QJsonDocument(a).toJson(QJsonDocument::Compact));
}

QJsonObject AlarmService::answer(const QJsonObject &r, const Request &origin, QString *refused)
{
    const QString op = r.value(u"op"_s).toString();
    const QString path = r.value(u"path"_s).toString();
    if (op == u"ls"_s || op == u"table"_s) {
        QJsonObject t = tableJson();
        if (r.value(u"all"_s).toBool()) {
            QJsonArray all;
            for (int i = 0; i < m_table->size(); ++i)
                all.append(m_table->toJson(i));
            t.insert(u"alarms"_s, all);
        }
        return t;
    }
    if (op == u"tree"_s) {
        if (!path.isEmpty() && m_table->indexOf(path) < 0 &&
            m_table->tree(path).value(u"alarms"_s).toInt() == 0)
            return *refused = u"no alarm at or below '%1'"_s.arg(path), QJsonObject();
        return m_table->tree(path);
    }
    if (op == u"history"_s) {
        QJsonArray rows;
        QString error;
        const int limit = int(std::clamp<qint64>(r.value(u"limit"_s).toInteger(100), 1, 100000));
        if (!m_history->query(path, r.value(u"since_ms"_s).toInteger(), r.value(u"until_ms"_s).toInteger(),
                              limit, &rows, &error))
            return *refused = error, QJsonObject();
        QJsonObject a{{u"rows"_s, rows}};
        if (!error.isEmpty())
            a.insert(u"warning"_s, error);
        return a;
    }
    if (changingOps.contains(op)) {
        QJsonObject done;
        const Status st = operate(
            op, r, Origin{origin.origin(), origin.originUser(), origin.originHost(), origin.originAddress()},
            Actor{actorOf(origin), m_proven}, &done);
        if (!st.isOk())
            *refused = st.message();
        return done;
    }
    *refused =
        u"unknown op '%1' (expected ls, tree, history, ack, shelve, unshelve, disable, enable)"_s.arg(op);
    return {};
}

Status AlarmService::operate(const QString &op, const QJsonObject &r, const Origin &from, const Actor &actor,
                             QJsonObject *done)
{
    const QString path = r.value(u"path"_s).toString();
    // The access list names operator actions as commands "ALARM.<op>.<path>".
    const AccessList::Decision d =
        m_access.access.check(AccessList::Kind::Command, u"ALARM.%1.%2"_s.arg(op, path), from);
    const int i = m_table->indexOf(path);
    const QString comment = r.value(u"comment"_s).toString();
    QString why;
    Status::Code code = Status::Code::Failed; // the table's refusals (already acknowledged, …)
    if (!changingOps.contains(op)) {
        code = Status::Code::BadRequest;
        why = u"unknown action '%1' (expected %2)"_s.arg(op, changingOps.join(u", "_s));
    } else if (!d.allowed) {
        code = Status::Code::PermissionDenied;
        why = u"permission denied: the access list (%1) does not let %2 (user '%3', host '%4') %5 %6"_s.arg(
            d.because, from.process, from.user, from.host, op, path);
    } else if (i < 0) {
        code = Status::Code::NotFound;
        why = u"unknown alarm '%1'"_s.arg(path);
    } else if (op == u"ack"_s) {
        why = m_table->acknowledge(i, actor, comment);
    } else if (op == u"shelve"_s) {
        qint64 until = r.value(u"until_ms"_s).toInteger();
        if (until == 0 && r.value(u"for_s"_s).toDouble() > 0)
            until = QDateTime::currentMSecsSinceEpoch() + qint64(r.value(u"for_s"_s).toDouble() * 1000);
        why = m_table->shelve(i, actor, until, r.value(u"reason"_s).toString());
    } else if (op == u"unshelve"_s) {
        why = m_table->unshelve(i, actor);
    } else if (op == u"disable"_s) {
        why = m_table->disable(i, actor, comment);
    } else {
        why = m_table->enable(i, actor);
    }
    AuditRecord a;
    a.timeMs = QDateTime::currentMSecsSinceEpoch();
    a.daemon = m_client->options().name;
    a.kind = AccessList::Kind::Command;
    a.name = u"ALARM.%1"_s.arg(path);
    a.operation = op;
    a.origin = from;
    a.allowed = why.isEmpty();
    a.because = !d.allowed      ? d.because
                : why.isEmpty() ? (m_access.access.isEmpty() ? QString() : d.because)
                                : why;
    m_audit->record(a);
    if (!why.isEmpty()) {
        qCWarning(lcAlarmService).noquote() << op << path << "from" << actor.who << "refused:" << why;
        ++m_refused;
        return Status(code, why);
    }
    *done = {{u"alarm"_s, m_table->toJson(i)}};
    return {};
}

} // namespace dialog::alarm
