// The registrations of connected processes: the services they provide, the commands they take and
// the services they ask for (REGISTER_/UNREGISTER_SERVICE, REGISTER_/UNREGISTER_COMMAND,
// REQUEST_SERVICE, CANCEL_REQUEST), bounded per process and in all. A requester is told where a
// service is (INFO_SERVICE) at once, or when it appears: start order never matters.
#pragma once

#include "servercontext.h"

#include <QHash>
#include <QObject>

namespace dialog::cs {

class DirectoryPublisher;

class Registry : public QObject
{
    Q_OBJECT
public:
    Registry(ServerContext &context, const DirectoryPublisher &publisher, QObject *parent = nullptr);

    /// One registration frame of a connected process; false if @p in is of another type.
    bool handle(const net::Inbound &in);
    /// Registers @p service of @p process, or refuses it (REFUSED back, logged); requesters are told.
    void registerService(const QString &process, const QString &service);
    void registerCommand(const QString &process, const QString &command);
    /// Records the request and answers it (INFO_SERVICE, available or not yet).
    void request(const QString &process, const QString &service);
    /// @p process is gone: its refusals are counted afresh when the name comes back.
    void forget(const QString &process)
    {
        m_refusedNames.remove(process);
        m_refusedServices.remove(process);
    }
    /// Why @p process may not register @p name (a service or a command), empty when it may. The
    /// names of the run-control and IS protocols belong to one process each: RunCtrl.P.X to the
    /// process P, IS.S to the IS server IS.Server.S. (The Control Server's own names, DIALOG.Directory
    /// and the others, are refused as provided by it.)
    static QString reservedNameError(const QString &process, const QString &name);

Q_SIGNALS:
    /// Emitted once per handled frame that changed the directory; @p routes when commands changed.
    void directoryChanged(bool routes);

private:
    static QStringList namesIn(const net::Inbound &in);
    void unregisterService(const QString &process, const QString &service);
    /// True if @p process may have @p name in @p have (its commands or requests); else false, and
    /// the refusal is sent back as REFUSED of @p what (and logged at the 1st, 2nd, 4th … time).
    bool admitName(const QString &process, const QString &what, const QString &name,
                   const QSet<QString> &have);
    /// Why @p process may not provide @p service (empty: it may, as far as the bounds go);
    /// @p transient when the refusal may pass (room in the directory may appear).
    QString serviceLimit(const QString &process, const QString &service, bool *transient) const;
    /// The process a reserved name belongs to (RunCtrl.P.X: P; IS.S: IS.Server.S), empty for others.
    static QString reservedOwner(const QString &name);
    void sendInfo(const QString &to, const QString &service);

    ServerContext &m_ctx;
    const DirectoryPublisher &m_publisher;
    QHash<QString, int> m_refusedNames;    // command/subscription refusals per process (for the log)
    QHash<QString, int> m_refusedServices; // service refusals per process (for the log)
};

} // namespace dialog::cs
