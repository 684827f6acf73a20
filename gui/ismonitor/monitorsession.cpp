#include "monitorsession.h"

#include "dialog/directory.h"

#include <QPointer>
#include <QTimer>

namespace dialog::ismonitor {

MonitorSession::MonitorSession(const ClientOptions &options, QObject *parent)
    : QObject(parent), m_client(std::make_unique<Client>(options)),
      m_dictionary(std::make_unique<is::Dictionary>(m_client.get())),
      m_receiver(std::make_unique<is::Receiver>(m_dictionary.get()))
{
    m_receiver->setCallback([this](const is::Event &e) { onEvent(e); });
    connect(m_receiver.get(), &is::Receiver::subscriptionChanged, this,
            [this](int id, const is::Status &status) {
                if (id != m_objectsSub)
                    return;
                const bool active = status.isOk();
                const QString error = status.toString();
                if (active) {
                    Q_EMIT typesChanged();
                    list();
                } else {
                    m_loaded = false;
                    Q_EMIT statusChanged(error);
                }
            });
    // Staleness changes without any event (time passes, a writer is lost): asked for every second.
    m_staleTimer = new QTimer(this);
    m_staleTimer->setInterval(1000);
    connect(m_staleTimer, &QTimer::timeout, this, &MonitorSession::pollStale);
    m_staleTimer->start();
    // The IS servers come and go with the DIALOG directory; look again when it changes.
    m_serversTimer = new QTimer(this);
    m_serversTimer->setInterval(300);
    m_serversTimer->setSingleShot(true);
    connect(m_serversTimer, &QTimer::timeout, this, &MonitorSession::lookUpServers);
    m_client->subscribe(directoryServiceName(), this, [this](const Message &) {
        if (!m_serversTimer->isActive())
            m_serversTimer->start();
    });
    m_client->start();
}

MonitorSession::~MonitorSession() = default; // members go in reverse order: receiver, dictionary, client

void MonitorSession::lookUpServers()
{
    QPointer<MonitorSession> guard(this);
    m_dictionary->servers([this, guard](const is::Status &s, const QStringList &names) {
        if (!guard || !s.isOk() || names == m_servers)
            return;
        m_servers = names;
        Q_EMIT serversChanged(names);
    });
}

bool MonitorSession::watchObjects(const QString &server, const is::Criteria &criteria)
{
    if (!criteria.isValid())
        return false;
    ++m_generation;
    if (m_objectsSub)
        m_receiver->unsubscribe(m_objectsSub);
    m_objectsSub = 0;
    m_loaded = false;
    m_listing = false;
    m_server = server;
    m_criteria = criteria;
    Q_EMIT objectsCleared();
    if (server.isEmpty())
        return true;
    // Names only: the value of the selected object comes through its own subscription, so
    // 10,000 busy objects cost names and times, not values.
    m_objectsSub = m_receiver->subscribe(server, criteria, false);
    Q_EMIT statusChanged(QStringLiteral("subscribing to %1…").arg(server));
    return true;
}

void MonitorSession::list()
{
    const int generation = m_generation;
    const QString server = m_server;
    m_listing = true;
    QPointer<MonitorSession> guard(this);
    m_dictionary->list(
        server, m_criteria,
        [this, guard, generation, server](const is::Status &s, const QList<is::Entry> &entries) {
            if (!guard || generation != m_generation)
                return;
            m_listing = false;
            if (!s.isOk()) {
                Q_EMIT statusChanged(s.toString());
                return;
            }
            m_loaded = true;
            Q_EMIT objectsListed(entries);
            Q_EMIT statusChanged(
                QStringLiteral("live: %1 (%2 objects when listed)").arg(server).arg(entries.size()));
        },
        false);
}

void MonitorSession::pollStale()
{
    if (m_server.isEmpty() || !m_loaded || m_stalePolling)
        return;
    m_stalePolling = true;
    const int generation = m_generation;
    QPointer<MonitorSession> guard(this);
    m_dictionary->listStale(m_server, m_criteria,
                            [this, guard, generation](const is::Status &s, const QList<is::Entry> &entries) {
                                if (!guard)
                                    return;
                                m_stalePolling = false;
                                if (generation != m_generation || !s.isOk())
                                    return; // another watch since, or the server is away: next time
                                Q_EMIT staleListed(entries);
                            });
}

void MonitorSession::watchValue(const QString &fullName)
{
    if (m_valueSub)
        m_receiver->unsubscribe(m_valueSub);
    m_valueSub = 0;
    m_valueName = fullName;
    m_valueTime = is::Time();
    if (fullName.isEmpty())
        return;
    QString server, object;
    is::Dictionary::splitName(fullName, &server, &object);
    m_valueSub = m_receiver->subscribe(server, is::Criteria::exactName(object), true);
    QPointer<MonitorSession> guard(this);
    m_dictionary->get(fullName, [this, guard, fullName](const is::Status &s, const is::Entry &e) {
        if (!guard || fullName != m_valueName)
            return;
        if (!s.isOk()) {
            Q_EMIT statusChanged(s.toString());
            return;
        }
        // An update that arrived first is newer than this answer: keep it.
        if (!(e.time < m_valueTime)) {
            m_valueTime = e.time;
            Q_EMIT valueChanged(e.object, e.time);
        }
    });
}

void MonitorSession::readHistory(const QString &fullName, const QString &attribute, int seconds,
                                 int maxPoints)
{
    const int read = ++m_historyRead;
    QPointer<MonitorSession> guard(this);
    const is::Time now = is::Time::currentTime();
    m_dictionary->history(
        fullName, is::Time(now.microsecondsSinceEpoch() - qint64(seconds) * 1000000), now, maxPoints,
        [this, guard, read, fullName](const is::Status &s, const is::History &h) {
            if (!guard || read != m_historyRead)
                return;
            Q_EMIT historyRead(fullName, h.series.value(0), s.isOk() ? QString() : s.toString());
        },
        attribute);
}

void MonitorSession::remove(const QString &fullName)
{
    QPointer<MonitorSession> guard(this);
    m_dictionary->remove(fullName, [this, guard, fullName](const is::Status &s) {
        if (!guard)
            return;
        Q_EMIT statusChanged(s.isOk()
                                 ? QStringLiteral("removed %1").arg(fullName)
                                 : QStringLiteral("could not remove %1: %2").arg(fullName, s.toString()));
        Q_EMIT removeFinished(fullName, s.isOk(), s.toString());
    });
}

void MonitorSession::onEvent(const is::Event &e)
{
    if (e.subscription() == m_objectsSub) {
        ++m_objectEvents;
        Q_EMIT objectChanged(e);
    } else if (e.subscription() == m_valueSub) {
        if (e.kind() == is::Event::Kind::Removed) {
            Q_EMIT valueRemoved();
            return;
        }
        m_valueTime = e.time();
        Q_EMIT valueChanged(e.object(), e.time());
    }
}

} // namespace dialog::ismonitor
