// dialog-alarmserver on the DIALOG side: ALARM.Table, the whole table of listed alarms (every
// message carries all of it, so a subscriber that starts late or missed messages is current with
// the next one), and the requests on ALARM.Server (JSON objects with "op": ls, tree, history, ack,
// shelve, unshelve, disable, enable), the changing ones checked against the access list and
// recorded in the audit trail with the identity of the requester.
#pragma once

#include "alarmtable.h"
#include "historystore.h"

#include "dialog/audit.h"
#include "dialog/client.h"

#include <QSet>
#include <QTimer>
#include <functional>
#include <memory>
#include <utility>

namespace dialog::alarm {

/// The reserved service names: one alarm server per partition.
QString serverServiceName();
QString tableServiceName();

class AlarmService : public QObject
{
    Q_OBJECT
public:
    /// @p client, @p table and @p history must outlive the service.
    AlarmService(Client *client, AlarmTable *table, HistoryStore *history, const AccessOptions &access,
                 QObject *parent = nullptr);
    ~AlarmService() override;

    /// Opens the audit trail and publishes both services. False with the reason.
    bool start(const QByteArray &secret, QString *error);

    /// The message ALARM.Table carries now.
    QJsonObject tableJson() const;

    /// An operator action (@p op: ack, shelve, unshelve, disable, enable; @p r as an ALARM.Server
    /// request) from @p from, shown in the history as @p who: checked against the access list and
    /// recorded in the audit trail. Ok with the alarm's JSON in @p done; else BadRequest (an
    /// unknown action), PermissionDenied (the access list), NotFound (no such alarm) or Failed (the
    /// table refuses it: already acknowledged, a comment required, …).
    Status operate(const QString &op, const QJsonObject &r, const Origin &from, const Actor &who,
                   QJsonObject *done);
    /// Operator actions refused (from ALARM.Server and the web page).
    quint64 refused() const { return m_refused; }
    /// Adds @p figures to every table message under @p key (the hooks' counters).
    void addFigures(const QString &key, std::function<QJsonObject()> figures);
    /// A new message of ALARM.Table within 100 ms although no alarm changed (figures did).
    void figuresChanged();

private:
    void onChanged(const AlarmEvent &e);
    void onRequest(const Request &request);
    /// The answer to @p r, or an error text in @p refused.
    QJsonObject answer(const QJsonObject &r, const Request &origin, QString *refused);
    void publish();

    Client *m_client;
    AlarmTable *m_table;
    HistoryStore *m_history;
    AccessOptions m_access;
    bool m_proven = false;
    std::unique_ptr<AuditTrail> m_audit;
    Service *m_tableService = nullptr;
    QSet<int> m_listed;
    QStringList m_changed; ///< paths changed since the last message
    QTimer m_publishTimer;
    QTimer m_historyTimer;
    std::pair<int, quint64> m_historyFigures{0, 0}; ///< as last published
    quint64 m_refused = 0;
    QList<std::pair<QString, std::function<QJsonObject()>>> m_figures;
    mutable quint64 m_sequence = 0; ///< of the table's messages and answers
};

} // namespace dialog::alarm
