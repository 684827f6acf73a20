// The conditions of dialog-alarmserver's rules, evaluated from what the system publishes: IS
// objects (one subscription with snapshot per IS server), stale IS objects (the servers' own
// verdict, asked every --stale-poll-ms), the directory of processes (DIALOG.Directory) and the
// run-control states (RunCtrl.<P>.State), the message log's stored messages (DIALOG.Logger.Live,
// counted per rule over a sliding window). Each change of a rule's condition goes to the table.
#pragma once

#include "alarmtable.h"

#include "dialog/client.h"
#include "dialog/directory.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QTimer>

namespace dialog::alarm {

class Evaluator : public QObject
{
    Q_OBJECT
public:
    /// @p client, @p dictionary and @p table must outlive the evaluator.
    Evaluator(Client *client, is::Dictionary *dictionary, AlarmTable *table, int stalePollMs,
              QObject *parent = nullptr);
    ~Evaluator() override;

    /// Subscribes to everything the rules need.
    void start();
    /// Leaf conditions evaluated, values received (for statistics).
    quint64 updates() const { return m_updates; }

private:
    struct Leaf
    {
        const Condition *condition = nullptr;
        int rule = -1;
        bool on = false;
        bool known = false;
        QString value;
        QRegularExpression processGlob; ///< Messages: the process names counted
        QList<qint64> times; ///< Messages: the newest matching messages' times, oldest first (bounded)
    };
    void addLeaves(const Condition &c, int rule);
    void onIsEvent(const is::Event &e);
    void onDirectory(const Message &m);
    void onState(const QString &process, const Message &m);
    void pollStale();
    void onMessages(const Message &m);
    /// Messages leaves: drops the times that left the window and sets each leaf.
    void countMessages(qint64 now);
    void setLeaf(int leaf, bool on, const QString &value);
    void evaluate(int rule);
    bool holds(const Condition &c, QStringList *values) const;
    bool compare(Leaf &leaf, const QVariant &v);

    Client *m_client;
    is::Dictionary *m_dictionary;
    AlarmTable *m_table;
    std::unique_ptr<is::Receiver> m_receiver;
    QList<Leaf> m_leaves;
    QHash<const Condition *, int> m_leafOf;
    QHash<QString, QList<int>> m_valueLeaves;                 // Server.Object -> IsValue leaves
    QHash<QString, QHash<QString, QList<int>>> m_staleLeaves; // server -> object -> IsStale leaves
    QHash<QString, QList<int>> m_lostLeaves;                  // process -> ProcessLost leaves
    QHash<QString, QList<int>> m_stateLeaves;                 // process -> ProcessError / RunState leaves
    QList<int> m_messageLeaves;
    QTimer m_messageTimer; ///< the windows slide although no message comes
    QSet<QString> m_staleInFlight;
    QSet<QString> m_warned; ///< mismatches already logged (once per leaf and reason)
    DirectoryAssembler m_directory;
    QTimer m_staleTimer;
    quint64 m_updates = 0;
};

} // namespace dialog::alarm
