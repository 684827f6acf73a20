#include "displaysession.h"

#include <QPointer>

namespace dialog::omd {

DisplaySession::DisplaySession(const ClientOptions &options, QObject *parent)
    : QObject(parent), m_client(std::make_unique<Client>(options)),
      m_dictionary(std::make_unique<is::Dictionary>(m_client.get())),
      m_receiver(std::make_unique<is::Receiver>(m_dictionary.get()))
{
    m_receiver->setCallback([this](const is::Event &e) { onEvent(e); });
    connect(m_receiver.get(), &is::Receiver::subscriptionChanged, this,
            [this](int id, const is::Status &status) {
                // Listed now that no change can be missed (also after a server restart).
                if (status.isOk() && m_byCriteria.contains(id))
                    list(id);
                Q_EMIT followChanged(id, status.isOk(), status.isOk() ? QString() : status.toString());
            });
    m_client->start();
}

DisplaySession::~DisplaySession() = default; // members go in reverse order: receiver, dictionary, client

int DisplaySession::followObject(const QString &fullName)
{
    QString server, object;
    if (!is::Dictionary::splitName(fullName, &server, &object))
        return 0;
    return m_receiver->subscribe(server, is::Criteria::exactName(object), true);
}

int DisplaySession::followObjects(const QString &server, const is::Criteria &criteria)
{
    if (!criteria.isValid())
        return 0;
    const int id = m_receiver->subscribe(server, criteria, true);
    m_byCriteria.insert(id, Criteria{server, criteria});
    return id;
}

void DisplaySession::unfollow(int id)
{
    m_receiver->unsubscribe(id);
    m_byCriteria.remove(id);
    m_seen.remove(id);
}

void DisplaySession::read(const QString &fullName, QObject *context,
                          std::function<void(const is::Status &, const is::Entry &)> done)
{
    QPointer<QObject> guard(context);
    m_dictionary->get(fullName, [guard, done](const is::Status &s, const is::Entry &e) {
        if (guard)
            done(s, e);
    });
}

void DisplaySession::readHistory(const QString &fullName, const QString &attribute, int seconds,
                                 int maxPoints, QObject *context,
                                 std::function<void(const is::Status &, const is::HistorySeries &)> done)
{
    QPointer<QObject> guard(context);
    const is::Time now = is::Time::currentTime();
    m_dictionary->history(
        fullName, is::Time(now.microsecondsSinceEpoch() - qint64(seconds) * 1000000), now, maxPoints,
        [guard, done](const is::Status &s, const is::History &h) {
            if (guard)
                done(s, h.series.value(0));
        },
        attribute);
}

void DisplaySession::list(int id)
{
    const Criteria c = m_byCriteria.value(id);
    // Events that arrive meanwhile are newer than the listing: they win.
    auto seen = std::make_shared<QSet<QString>>();
    m_seen[id] = seen;
    QPointer<DisplaySession> guard(this);
    m_dictionary->list(c.server, c.criteria,
                       [this, guard, id, seen](const is::Status &s, const QList<is::Entry> &entries) {
                           if (!guard || m_seen.value(id) != seen)
                               return; // unfollowed, or listed again since
                           m_seen.remove(id);
                           if (!s.isOk()) {
                               Q_EMIT listFailed(id, s.toString());
                               return;
                           }
                           QList<is::Entry> fresh;
                           QSet<QString> present = *seen;
                           for (const is::Entry &e : entries) {
                               QString object;
                               is::Dictionary::splitName(e.name, nullptr, &object);
                               present.insert(object);
                               if (!seen->contains(object))
                                   fresh << e;
                           }
                           Q_EMIT listed(id, fresh, present);
                       });
}

void DisplaySession::onEvent(const is::Event &e)
{
    ++m_events;
    if (const auto seen = m_seen.value(e.subscription()))
        seen->insert(QString::fromUtf8(e.objectNameUtf8())); // a listing is on its way: this is newer
    Q_EMIT objectChanged(e.subscription(), e);
}

} // namespace dialog::omd
