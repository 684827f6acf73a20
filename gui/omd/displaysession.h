// The IS side of dialog-omd, apart from its charts: subscriptions to single objects (time series)
// and to objects by criteria (bar charts, listed again whenever their subscription becomes active,
// so that a server restart loses nothing), and one-off reads of current values. Nothing here
// touches a widget; the window maps subscriptions to charts.
#pragma once

#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QHash>
#include <QObject>
#include <QSet>
#include <functional>
#include <memory>

namespace dialog::omd {

class DisplaySession : public QObject
{
    Q_OBJECT
public:
    explicit DisplaySession(const ClientOptions &options, QObject *parent = nullptr);
    ~DisplaySession() override;

    Client *client() const { return m_client.get(); }
    is::Dictionary *dictionary() const { return m_dictionary.get(); }
    /// Events received for every subscription since the session started.
    quint64 events() const { return m_events; }

    /// Follows the object @p fullName ("Server.Object"), values included: its changes come through
    /// objectChanged(). Returns the subscription id, 0 if @p fullName is not "Server.Object".
    int followObject(const QString &fullName);
    /// Follows the objects of @p server that match @p criteria, values included: listed() after
    /// each activation of the subscription, objectChanged() for every change. 0 if @p criteria is
    /// invalid.
    int followObjects(const QString &server, const is::Criteria &criteria);
    /// Ends a subscription of followObject() or followObjects(); its pending listing is dropped.
    void unfollow(int id);
    /// Reads the current value of @p fullName once; @p done is called in this thread unless
    /// @p context was destroyed meanwhile.
    void read(const QString &fullName, QObject *context,
              std::function<void(const is::Status &, const is::Entry &)> done);

    /// Reads the last @p seconds of the numeric attribute @p attribute of @p fullName from the IS
    /// server's history (and its archive), at most @p maxPoints points; @p done is called once in
    /// this thread unless @p context was destroyed meanwhile.
    void readHistory(const QString &fullName, const QString &attribute, int seconds, int maxPoints,
                     QObject *context,
                     std::function<void(const is::Status &, const is::HistorySeries &)> done);

Q_SIGNALS:
    /// One change of a followed object. Emitted per event (a view batches its redraws).
    void objectChanged(int id, const dialog::is::Event &event);
    /// The objects of a followObjects() subscription as listed once it became active. @p entries
    /// leaves out the objects that changed while the listing was on its way (their events are
    /// newer); @p present names every object known to exist (listed, or changed meanwhile): any
    /// other the view still shows is gone.
    void listed(int id, const QList<dialog::is::Entry> &entries, const QSet<QString> &present);
    /// The listing of a followObjects() subscription failed.
    void listFailed(int id, const QString &error);
    /// A subscription became active, or inactive with @p error (its server went away).
    void followChanged(int id, bool active, const QString &error);

private:
    struct Criteria
    {
        QString server;
        is::Criteria criteria;
    };
    void list(int id);
    void onEvent(const is::Event &e);

    // Declared in this order so that they are destroyed receiver first, client last (the receiver
    // and the dictionary use the client).
    std::unique_ptr<Client> m_client;
    std::unique_ptr<is::Dictionary> m_dictionary;
    std::unique_ptr<is::Receiver> m_receiver;
    QHash<int, Criteria> m_byCriteria;
    /// Objects changed while a listing is on its way (subscription → names).
    QHash<int, std::shared_ptr<QSet<QString>>> m_seen;
    quint64 m_events = 0;
};

} // namespace dialog::omd
