// Replication of an IS server: the copies it keeps of another server (pull mirror, push mirror)
// and the copies it sends out (push senders), with the master's history copied into a mirror.
#pragma once

#include "mirror.h"
#include "pushreceiver.h"
#include "pushsender.h"
#include "serveroptions.h"

#include "dialog/is/typeinfo.h"

#include <QObject>
#include <QStringList>
#include <memory>
#include <vector>

namespace dialog {
class Client;
}
namespace dialog::is {
class Dictionary;
class HistoryStore;
class Repository;
class TypeRegistry;
} // namespace dialog::is

namespace dialog::isd {

/// With ServerOptions::mirrorOf the repository is a read-only copy of another server, kept by a
/// Mirror (and, with a history ring, the master's history is copied once the copy is
/// synchronised); with mirrorListenPort it is a push mirror fed by a PushReceiver; with pushTo every
/// change is pushed to mirrors on other networks by PushSenders.
///
/// Main thread.
class Replication : public QObject
{
    Q_OBJECT
public:
    /// Every reference must outlive this object; @p history may be null (--history 0).
    Replication(const ServerOptions &options, is::Repository &repository, is::TypeRegistry &types,
                Client &client, is::HistoryStore *history, QObject *parent = nullptr);
    ~Replication() override;

    /// Checks the replication options before anything starts. False with a reason.
    static bool checkOptions(const ServerOptions &options, QString *error);
    /// Starts the mirror, the push receiver and the push senders. False with a reason.
    bool start(QString *error);
    /// Why the repository may not be written by clients (empty if it may).
    QString readOnlyReason() const;
    /// Types were declared at run time: the push mirrors are told.
    void typesDeclared(const QList<is::TypeInfo> &types);

signals:
    /// The master's types merged into the registry by a mirror: a checkpoint of the copy needs them.
    void typesAdded(const QList<dialog::is::TypeInfo> &types);

private:
    bool startPush(const push::Security &security, QString *error);
    bool startReceiver(const push::Security &security, QString *error);
    /// A mirror, once synchronised: copies the master's history of every object, one at a time.
    void copyMasterHistory();
    void copyNextHistory();

    const ServerOptions &m_options;
    is::Repository &m_repository;
    is::TypeRegistry &m_types;
    Client &m_client;
    is::HistoryStore *m_history;
    std::unique_ptr<Mirror> m_mirror;                    // with --mirror-of
    std::unique_ptr<PushReceiver> m_pushReceiver;        // with --mirror-listen
    std::vector<std::unique_ptr<PushSender>> m_pushers;  // with --push-to
    std::unique_ptr<is::Dictionary> m_historyDictionary; // a mirror: reads the master's history
    QStringList m_historyToCopy;
};

} // namespace dialog::isd
