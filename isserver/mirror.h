// IS streaming (ATLAS IS paper, section 5): a read-only, real-time copy of all or part of another
// IS server, kept by subscribing to it with a snapshot.
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/evolution.h"
#include "dialog/is/receiver.h"
#include "dialog/is/repository.h"

#include <QObject>
#include <QSet>
#include <memory>
#include <vector>

namespace dialog {
class Client;
}

namespace dialog::isd {

/// Keeps @p repository an exact copy of the objects of the IS server @p master that match
/// @p criteria. Every time the subscription is made (at start, after the master or this process
/// reconnects) the master sends its matching content first; what the copy holds and the master does
/// not is removed, so a mirror that was away resynchronises fully. The master never waits for the
/// mirror: a slow mirror is a slow subscriber to it (bounded queue, newest values re-sent).
///
/// The copy keeps the master's times. The master's own statistics object is not copied (the mirror
/// has its own). Chains work: a mirror serves subscriptions with snapshots like any IS server.
class Mirror : public QObject
{
    Q_OBJECT
public:
    struct Statistics
    {
        quint64 applied = 0;   ///< changes applied (snapshot objects included)
        quint64 snapshots = 0; ///< snapshots received (1 + resynchronisations)
        quint64 errors = 0;    ///< changes that could not be applied (reported on stderr)
        bool synchronised = false;
    };

    /// @p types is the registry of @p repository: the master's types are merged into it.
    Mirror(is::Repository &repository, is::TypeRegistry &types, Client &client, const QString &master,
           const is::Criteria &criteria, QObject *parent = nullptr);
    ~Mirror() override;

    void start();
    QString master() const { return m_master; }
    Statistics statistics() const { return m_stats; }

Q_SIGNALS:
    /// Types of the master that this registry did not have (to be kept with a checkpoint).
    void typesAdded(const QList<dialog::is::TypeInfo> &types);
    /// Emitted at the end of every snapshot: the copy equals the master's content at that point.
    void synchronised(qsizetype objects);

private:
    void onEvent(const is::Event &event);
    bool apply(const is::Event &event, bool mayFetchTypes);
    bool mergeMasterTypes();
    void fetchTypesAndReplay();
    void report(const QString &what);

    is::Repository &m_repository;
    is::TypeRegistry &m_types;
    Client &m_client;
    const QString m_master;
    const is::Criteria m_criteria;
    std::unique_ptr<is::Dictionary> m_dictionary;
    std::unique_ptr<is::Receiver> m_receiver;
    std::unique_ptr<is::Evolution> m_evolution; // from the master's layouts to ours
    QStringList m_evolutionReported;            // its changes, reported once
    QSet<QString> m_seen; // object names received since SnapshotBegin
    bool m_inSnapshot = false;
    bool m_fetching = false;       // fetching types of the master: events are held
    std::vector<is::Event> m_held; // in arrival order
    Statistics m_stats;
};

} // namespace dialog::isd
