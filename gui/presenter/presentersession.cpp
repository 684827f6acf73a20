#include "presentersession.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QTimer>

namespace dialog::presenter {

PresenterSession::PresenterSession(const ClientOptions &options, const PageSet &pages, QObject *parent)
    : QObject(parent), m_client(std::make_unique<Client>(options)),
      m_dictionary(std::make_unique<is::Dictionary>(m_client.get())),
      m_receiver(std::make_unique<is::Receiver>(m_dictionary.get())), m_pages(pages)
{
    m_receiver->setCallback([this](const is::Event &e) { onEvent(e); });
    const auto follow = [this](const QString &name) {
        if (m_seenInSnapshot.contains(name))
            return;
        m_seenInSnapshot.insert(name, false);
        QString server, object;
        is::Dictionary::splitName(name, &server, &object);
        // With a snapshot: the current value (or its absence) each time the subscription is made.
        m_subscriptions.insert(
            m_receiver->subscribeWithSnapshot(server, is::Criteria::exactName(object), true), name);
    };
    for (const Page &p : std::as_const(m_pages.pages))
        for (const PageEntry &e : p.entries) {
            m_histograms.insert(e.histogram, {{}, QStringLiteral("waiting for %1").arg(e.histogram)});
            follow(e.histogram);
            if (!e.check.isEmpty()) {
                m_checks.insert(e.check, {});
                follow(e.check);
            }
            if (!e.referenceFile.isEmpty())
                m_references.insert(e.referenceFile, {});
        }
    m_referenceTimer = new QTimer(this);
    m_referenceTimer->setInterval(2000);
    connect(m_referenceTimer, &QTimer::timeout, this, &PresenterSession::reloadReferences);
    m_referenceTimer->start();
    reloadReferences();
    m_client->start();
}

PresenterSession::~PresenterSession() = default; // receiver, dictionary, then client

CheckResult PresenterSession::check(const QString &name) const
{
    const HeldCheck c = m_checks.value(name);
    if (!c.known)
        return {Quality::Undefined, 0, QStringLiteral("no result %1 in the IS").arg(name)};
    return c.result;
}

void PresenterSession::reloadReferences()
{
    for (auto it = m_references.begin(); it != m_references.end(); ++it) {
        const QFileInfo info(it.key());
        HeldReference &r = it.value();
        if (!info.exists()) {
            if (r.exists) {
                r = {};
                Q_EMIT changed(it.key());
            }
            continue;
        }
        if (r.exists && info.lastModified() == r.modified)
            continue;
        r.exists = true;
        r.modified = info.lastModified();
        QFile f(it.key());
        r.data = {};
        if (f.open(QIODevice::ReadOnly))
            Histogram::fromJson(QJsonDocument::fromJson(f.readAll()).object(), &r.data);
        Q_EMIT changed(it.key());
    }
}

void PresenterSession::onEvent(const is::Event &e)
{
    const QString name = m_subscriptions.value(e.subscription());
    if (name.isEmpty())
        return;
    switch (e.kind()) {
    case is::Event::Kind::SnapshotBegin:
        m_seenInSnapshot[name] = false;
        return;
    case is::Event::Kind::SnapshotEnd:
        if (!m_seenInSnapshot.value(name))
            setAbsent(name, QStringLiteral("%1 is not in the IS").arg(name));
        return;
    case is::Event::Kind::Created:
    case is::Event::Kind::Updated: {
        m_seenInSnapshot[name] = true;
        is::Object o;
        if (const Status s = e.object(&o); !s.isOk())
            return setAbsent(name, QStringLiteral("%1: %2").arg(name, s.toString()));
        ++m_updates;
        return setObject(name, o);
    }
    case is::Event::Kind::Removed:
        return setAbsent(name, QStringLiteral("%1 was removed from the IS").arg(name));
    case is::Event::Kind::History:
        return;
    }
}

void PresenterSession::setObject(const QString &name, const is::Object &object)
{
    if (auto it = m_histograms.find(name); it != m_histograms.end()) {
        it->data = {};
        const Status s = Histogram::fromObject(object, &it->data);
        it->message = s.isOk() ? QString() : QStringLiteral("%1: %2").arg(name, s.message());
    }
    if (auto it = m_checks.find(name); it != m_checks.end())
        *it = {CheckResult::fromObject(object), true};
    Q_EMIT changed(name);
}

void PresenterSession::setAbsent(const QString &name, const QString &why)
{
    if (auto it = m_histograms.find(name); it != m_histograms.end())
        *it = {{}, why};
    if (auto it = m_checks.find(name); it != m_checks.end())
        *it = {{Quality::Undefined, 0, why}, true};
    Q_EMIT changed(name);
}

} // namespace dialog::presenter
