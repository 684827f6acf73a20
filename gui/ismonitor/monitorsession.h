// The IS side of dialog-ismonitor, apart from its widgets: which IS servers exist, the objects of the
// watched server (names only, by criteria, listed once then followed live), the value of the selected
// object, and removals. The window shows what this reports; nothing here touches a widget.
#pragma once

#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QObject>
#include <QStringList>
#include <memory>

class QTimer;

namespace dialog::ismonitor {

class MonitorSession : public QObject
{
    Q_OBJECT
public:
    explicit MonitorSession(const ClientOptions &options, QObject *parent = nullptr);
    ~MonitorSession() override;

    Client *client() const { return m_client.get(); }
    is::Dictionary *dictionary() const { return m_dictionary.get(); }
    /// The IS servers last found (in the order the Control Server lists them).
    QStringList servers() const { return m_servers; }
    /// The server whose objects are watched (empty: none).
    QString server() const { return m_server; }
    /// True once the objects of the watched server were listed (after each (re)subscription).
    bool isLoaded() const { return m_loaded; }
    /// True while the listing of the watched objects is on its way.
    bool isListing() const { return m_listing; }
    /// Events received for the watched objects since the session started.
    quint64 objectEvents() const { return m_objectEvents; }

    /// Watches the objects of @p server that match @p criteria (names, types and times only): the
    /// previous watch goes, objectsCleared() is emitted, then objectsListed() once the subscription
    /// is active, and objectChanged() for every change. False (nothing changes) if @p criteria is
    /// invalid.
    bool watchObjects(const QString &server, const is::Criteria &criteria);
    /// Follows the value of the object @p fullName ("Server.Object"; empty: none): its current value
    /// and every change come through valueChanged(), its removal through valueRemoved().
    void watchValue(const QString &fullName);
    /// The object whose value is followed.
    QString watchedValue() const { return m_valueName; }
    /// Reads the last @p seconds of the numeric attribute @p attribute of @p fullName from the IS
    /// server's history (and its archive); historyRead() brings it, unless another read was asked
    /// for since.
    void readHistory(const QString &fullName, const QString &attribute, int seconds, int maxPoints);
    /// Removes @p fullName from its server; removeFinished() tells how it went.
    void remove(const QString &fullName);
    /// Asks the watched server which of the watched objects are stale (done every second while
    /// objects are watched); staleListed() brings the answer.
    void pollStale();

Q_SIGNALS:
    /// The list of IS servers changed (looked up again whenever the DIALOG directory changes,
    /// at most every 300 ms). Emitted in the session's thread.
    void serversChanged(const QStringList &servers);
    /// The watched objects are gone (a new watch begins): clear the view.
    void objectsCleared();
    /// The watched objects as listed once the subscription became active (after every
    /// (re)subscription, also after a reconnection).
    void objectsListed(const QList<dialog::is::Entry> &entries);
    /// One change of a watched object (created, updated, removed); emitted per event, so a view
    /// should batch what it does with it.
    void objectChanged(const dialog::is::Event &event);
    /// The followed object's value (its current value first, then every update); never older than
    /// the last one emitted.
    void valueChanged(const dialog::is::Object &object, dialog::is::Time time);
    /// The followed object was removed from its server.
    void valueRemoved();
    /// The IS types known to the session may have grown (emitted when a watch becomes active).
    void typesChanged();
    /// A one-line status for the user (subscribing, live, errors).
    void statusChanged(const QString &message);
    /// The answer to the last readHistory() (an empty series and the reason when it failed).
    void historyRead(const QString &fullName, const dialog::is::HistorySeries &series, const QString &error);
    /// The stale objects among the watched ones (Entry::staleness says why and how old), as the
    /// server answered the last pollStale(); every other watched object is fresh.
    void staleListed(const QList<dialog::is::Entry> &stale);
    /// Emitted once per remove() when the server answered.
    void removeFinished(const QString &name, bool ok, const QString &message);

private:
    void lookUpServers();
    void list();
    void onEvent(const is::Event &e);

    // Declared in this order so that they are destroyed receiver first, client last (the receiver
    // and the dictionary use the client).
    std::unique_ptr<Client> m_client;
    std::unique_ptr<is::Dictionary> m_dictionary;
    std::unique_ptr<is::Receiver> m_receiver;
    QTimer *m_serversTimer = nullptr;
    QTimer *m_staleTimer = nullptr;
    bool m_stalePolling = false; ///< a pollStale() answer is on its way
    QStringList m_servers;
    QString m_server;
    is::Criteria m_criteria;
    QString m_valueName;
    is::Time m_valueTime;  ///< of the last value emitted
    int m_objectsSub = 0;  ///< subscription to the server's objects (names only)
    int m_valueSub = 0;    ///< subscription to the followed object (with values)
    int m_generation = 0;  ///< bumped at every (re)subscription; stale listings are ignored
    int m_historyRead = 0; ///< bumped at every readHistory(); stale answers are ignored
    bool m_loaded = false;
    bool m_listing = false;
    quint64 m_objectEvents = 0;
};

} // namespace dialog::ismonitor
