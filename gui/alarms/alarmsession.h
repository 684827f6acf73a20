// dialog-alarms apart from its widgets: ALARM.Table followed (the whole table in every message),
// the tree's structure asked of ALARM.Server when the table first comes and whenever the alarm
// server changed (restarted, other rules), and the operators' requests with their answers.
#pragma once

#include "dialog/client.h"

#include <QJsonArray>
#include <QJsonObject>
#include <functional>

namespace dialog::alarms {

class AlarmSession : public QObject
{
    Q_OBJECT
public:
    /// Where the alarm server stands, as ALARM.Table's subscription tells.
    enum class ServerState
    {
        Waiting, ///< no message of ALARM.Table yet (no alarm server, or not connected)
        Serving, ///< the table is current
        Lost,    ///< the alarm server was lost; the table shown is its last
    };
    Q_ENUM(ServerState)

    /// The outcome of an operator's action: @p refusal empty when done (@p alarm is then the alarm
    /// as the server has it after the action).
    using ActionCallback = std::function<void(const QString &refusal, const QJsonObject &alarm)>;
    /// The rows of a history query (newest first), or the reason in @p error; @p warning when the
    /// database failed and only rows in memory were found.
    using HistoryCallback =
        std::function<void(const QJsonArray &rows, const QString &error, const QString &warning)>;

    /// @p client must outlive the session; subscribes at once.
    explicit AlarmSession(Client *client, QObject *parent = nullptr);
    ~AlarmSession() override;

    ServerState serverState() const { return m_state; }
    /// The last message of ALARM.Table (empty before the first).
    const QJsonObject &table() const { return m_table; }
    /// The process that serves ALARM.Table (empty if unknown).
    QString serverProcess() const;

    /// Asks for the tree's structure; treeReceived() follows (or requestFailed()).
    void fetchTree();
    /// Sends an action ("ack", "shelve", "unshelve", "disable", "enable") for @p path with the other
    /// keys of @p params ("comment", "reason", "until_ms", "for_s"); @p done is called once.
    void act(const QString &op, const QString &path, const QJsonObject &params, ActionCallback done);
    /// The history at or below @p path between @p sinceMs and @p untilMs (0: open), at most @p limit.
    void history(const QString &path, qint64 sinceMs, qint64 untilMs, int limit, HistoryCallback done);

    static constexpr int RequestTimeoutMs = 10000;

Q_SIGNALS:
    /// Emitted for every message of ALARM.Table, after table() holds it.
    void tableChanged();
    /// Emitted with the answer to fetchTree().
    void treeReceived(const QJsonObject &tree);
    void serverStateChanged(dialog::alarms::AlarmSession::ServerState state);
    /// A request that is not an action failed (the tree): @p why.
    void requestFailed(const QString &why);

private:
    void onTable(const QByteArray &data);
    void setState(ServerState s);
    void request(const QJsonObject &r, std::function<void(const Reply &)> done);

    Client *m_client;
    QJsonObject m_table;
    ServerState m_state = ServerState::Waiting;
    qint64 m_lastSequence = -1;
    int m_rules = -1;
    QString m_provider;
    bool m_treePending = false;
};

/// The text of a Reply that is not an answer: the alarm server's reason when it refused, else why
/// no answer came.
QString replyProblem(const Reply &reply);

} // namespace dialog::alarms
