// Publishing run-control information to IS servers (fire and forget, coalesced).
#pragma once

#include <QHash>
#include <QObject>
#include <QSet>

#include "dialog/is/typeinfo.h"
#include "dialog/status.h"
#include <QString>
#include <functional>
#include <memory>

namespace dialog {
class Client;
namespace is {
class Dictionary;
class Object;
} // namespace is
} // namespace dialog

namespace dialog::rc {

/// Keeps IS objects up to date for a process. publish() never blocks: at most one update per
/// object is in flight; while it is, newer values replace each other and only the latest is sent.
/// Until the client is connected to its Control Server, the latest value of each object waits and
/// is sent once it is (a process publishes its state before it has registered, which is no error).
/// Failures (server not running, unknown type) are reported once per object through the
/// @p warn callback, and again only after the object was published successfully in between.
class IsPublisher : public QObject
{
    Q_OBJECT
public:
    using Fill = std::function<void(is::Object &)>;
    using Warn = std::function<void(const QString &)>;

    /// @p typesDir: the IS type XML files (resources/is-types); an empty or unreadable directory
    /// makes the types be fetched from each server instead.
    IsPublisher(Client *client, const QString &typesDir, Warn warn, QObject *parent = nullptr);
    ~IsPublisher() override;

    /// Creates or updates @p name ("Server.Object") as a @p type filled by @p fill.
    void publish(const QString &name, const QString &type, Fill fill);
    /// Loads the types of @p xmlFile (a process's own, shipped with it; they may derive from the
    /// types directory's) and declares them on each IS server before the first object of one of
    /// them is sent there (again after a reconnection or a refusal). Errors as
    /// TypeRegistry::loadFile().
    Status addTypes(const QString &xmlFile);
    /// Objects published successfully so far (for tests and statistics).
    quint64 successCount() const { return m_ok; }

private:
    struct Slot
    {
        bool inFlight = false;
        bool failed = false;
        std::shared_ptr<std::pair<QString, Fill>> next;
    };
    void send(const QString &name, const QString &type, const Fill &fill);
    void sendWaiting();
    void sendBuilt(const QString &name, const QString &type, const Fill &fill);
    void fillProcessUsage(is::Object &obj);
    void declareThenSend(const QString &server, const QString &name, const QString &type, const Fill &fill);

    Client *m_client;
    std::unique_ptr<is::Dictionary> m_dictionary;
    Warn m_warn;
    bool m_typesLoaded = false;
    QHash<QString, bool> m_fetchedServers;
    QList<is::TypeInfo> m_ownTypes; ///< addTypes()'s, declared on the servers of m_declared
    QSet<QString> m_ownTypeNames;
    QSet<QString> m_declared;
    QHash<QString, Slot> m_slots;
    quint64 m_ok = 0;
    // CPU load of this process, measured between publications (at least 500 ms apart).
    qint64 m_lastCpuUs = -1, m_lastWallMs = 0;
    float m_cpuLoad = 0;
};

} // namespace dialog::rc
