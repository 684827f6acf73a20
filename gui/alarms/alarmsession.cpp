#include "alarmsession.h"

#include "dialog/request.h"
#include "dialog/subscription.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace dialog::alarms {

namespace {
const QString TableService = u"ALARM.Table"_s;
const QString ServerService = u"ALARM.Server"_s;
} // namespace

QString replyProblem(const Reply &reply)
{
    if (reply.error() == Status::Code::Failed)
        return reply.status().message();
    return u"no answer from the alarm server (ALARM.Server): %1"_s.arg(reply.status().toString());
}

AlarmSession::AlarmSession(Client *client, QObject *parent) : QObject(parent), m_client(client)
{
    Subscription *s = m_client->subscribe(TableService, this, [this](const Message &m) { onTable(m.data()); });
    if (s)
        connect(s, &Subscription::stateChanged, this, [this](Subscription::State st) {
            if (st == Subscription::State::Lost && m_state == ServerState::Serving)
                setState(ServerState::Lost);
        });
}

AlarmSession::~AlarmSession() = default;

QString AlarmSession::serverProcess() const
{
    return m_client->providerOf(TableService);
}

void AlarmSession::setState(ServerState s)
{
    if (s == m_state)
        return;
    m_state = s;
    Q_EMIT serverStateChanged(s);
}

void AlarmSession::onTable(const QByteArray &data)
{
    QJsonParseError e;
    const QJsonDocument doc = QJsonDocument::fromJson(data, &e);
    if (!doc.isObject())
        return; // not a table: the alarm server never sends one, so nothing to show
    m_table = doc.object();
    const qint64 sequence = m_table.value(u"sequence"_s).toInteger();
    const int rules = m_table.value(u"rules"_s).toInt();
    // A restarted alarm server counts its messages from 1 again; other rules mean another tree.
    const bool changed = sequence <= m_lastSequence || rules != m_rules;
    m_lastSequence = sequence;
    m_rules = rules;
    m_provider = serverProcess();
    setState(ServerState::Serving);
    Q_EMIT tableChanged();
    if (changed)
        fetchTree();
}

void AlarmSession::request(const QJsonObject &r, std::function<void(const Reply &)> done)
{
    m_client->request(ServerService, QJsonDocument(r).toJson(QJsonDocument::Compact), RequestTimeoutMs, this,
                      std::move(done));
}

void AlarmSession::fetchTree()
{
    if (m_treePending)
        return;
    m_treePending = true;
    request({{u"op"_s, u"tree"_s}}, [this](const Reply &reply) {
        m_treePending = false;
        if (!reply.isOk()) {
            Q_EMIT requestFailed(u"the tree: "_s + replyProblem(reply));
            return;
        }
        Q_EMIT treeReceived(QJsonDocument::fromJson(reply.data()).object());
    });
}

void AlarmSession::act(const QString &op, const QString &path, const QJsonObject &params, ActionCallback done)
{
    QJsonObject r = params;
    r.insert(u"op"_s, op);
    r.insert(u"path"_s, path);
    request(r, [done = std::move(done)](const Reply &reply) {
        if (!reply.isOk())
            return done(replyProblem(reply), QJsonObject());
        done(QString(), QJsonDocument::fromJson(reply.data()).object().value(u"alarm"_s).toObject());
    });
}

void AlarmSession::history(const QString &path, qint64 sinceMs, qint64 untilMs, int limit, HistoryCallback done)
{
    request({{u"op"_s, u"history"_s},
             {u"path"_s, path},
             {u"since_ms"_s, sinceMs},
             {u"until_ms"_s, untilMs},
             {u"limit"_s, limit}},
            [done = std::move(done)](const Reply &reply) {
                if (!reply.isOk())
                    return done({}, replyProblem(reply), {});
                const QJsonObject a = QJsonDocument::fromJson(reply.data()).object();
                done(a.value(u"rows"_s).toArray(), QString(), a.value(u"warning"_s).toString());
            });
}

} // namespace dialog::alarms
