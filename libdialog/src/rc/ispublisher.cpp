#include "ispublisher_p.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/typeregistry.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <sys/resource.h>
#include <unistd.h>

namespace dialog::rc {

IsPublisher::IsPublisher(Client *client, const QString &typesDir, Warn warn, QObject *parent)
    : QObject(parent), m_client(client), m_dictionary(std::make_unique<is::Dictionary>(client, this)),
      m_warn(std::move(warn))
{
    connect(client, &Client::stateChanged, this, [this](Client::State state) {
        if (state != Client::State::Connected)
            return;
        m_declared.clear(); // the servers may have restarted without our types
        sendWaiting();
    });
    m_dictionary->setTimeout(3000);
    QString error;
    if (!typesDir.isEmpty() && QDir(typesDir).exists()) {
        const Status loaded = m_dictionary->types().loadDirectory(typesDir);
        m_typesLoaded = loaded.isOk();
        error = loaded.message();
    }
    if (!m_typesLoaded && m_warn)
        m_warn(QStringLiteral("IS types not loaded from '%1'%2; fetching them from the IS servers")
                   .arg(typesDir,
                        error.isEmpty() ? QString() : QStringLiteral(" (") + error + QLatin1Char(')')));
}

IsPublisher::~IsPublisher() = default;

Status IsPublisher::addTypes(const QString &xmlFile)
{
    is::TypeRegistry &types = m_dictionary->types();
    const QStringList before = types.typeNames();
    if (const Status s = types.loadFile(xmlFile); !s.isOk())
        return s;
    for (const QString &name : types.typeNames())
        if (!before.contains(name) && !m_ownTypeNames.contains(name)) {
            m_ownTypeNames.insert(name);
            m_ownTypes << types.type(name);
        }
    return {};
}

void IsPublisher::declareThenSend(const QString &server, const QString &name, const QString &type,
                                  const Fill &fill)
{
    m_dictionary->declareTypes(server, m_ownTypes, [this, server, name, type, fill](const is::Status &s) {
        if (s.isOk())
            m_declared.insert(server);
        sendBuilt(name, type, fill); // a refusal shows in the update's failure
    });
}

void IsPublisher::publish(const QString &name, const QString &type, Fill fill)
{
    Slot &slot = m_slots[name];
    if (slot.inFlight || m_client->state() != Client::State::Connected) {
        slot.next = std::make_shared<std::pair<QString, Fill>>(type, std::move(fill));
        return;
    }
    send(name, type, fill);
}

void IsPublisher::sendWaiting()
{
    QStringList waiting;
    for (auto it = m_slots.cbegin(); it != m_slots.cend(); ++it)
        if (!it->inFlight && it->next)
            waiting.append(it.key());
    for (const QString &name : std::as_const(waiting)) {
        Slot &slot = m_slots[name];
        const auto next = std::move(slot.next);
        slot.next.reset();
        send(name, next->first, next->second);
    }
}

void IsPublisher::send(const QString &name, const QString &type, const Fill &fill)
{
    m_slots[name].inFlight = true;
    QString server, object;
    is::Dictionary::splitName(name, &server, &object);
    if (m_ownTypeNames.contains(type) && !m_declared.contains(server)) {
        declareThenSend(server, name, type, fill);
        return;
    }
    if (!m_dictionary->types().contains(type) && !m_fetchedServers.value(server)) {
        // Types unknown locally: ask the server once, then build the object.
        m_dictionary->fetchTypes(server, [this, name, type, fill, server](const is::Status &s) {
            if (s.isOk())
                m_fetchedServers.insert(server, true);
            sendBuilt(name, type, fill);
        });
        return;
    }
    sendBuilt(name, type, fill);
}

void IsPublisher::sendBuilt(const QString &name, const QString &type, const Fill &fill)
{
    auto done = [this, name](const is::Status &s) {
        Slot &slot = m_slots[name];
        slot.inFlight = false;
        if (s.isOk()) {
            ++m_ok;
            slot.failed = false;
        } else if (s.code() == Status::Code::UnknownType) {
            QString server, object;
            is::Dictionary::splitName(name, &server, &object);
            m_declared.remove(server); // declared again with the next update
        }
        if (!s.isOk() && !slot.failed) {
            slot.failed = true;
            if (m_warn)
                m_warn(QStringLiteral("IS: cannot publish %1: %2").arg(name, s.toString()));
        }
        if (slot.next) {
            const auto next = std::move(slot.next);
            slot.next.reset();
            send(name, next->first, next->second);
        }
    };
    is::Object obj;
    if (const is::Status created = is::Object::create(m_dictionary->types(), type, &obj); !created.isOk()) {
        done(created);
        return;
    }
    fill(obj);
    fillProcessUsage(obj);
    m_dictionary->update(name, obj, is::Dictionary::UpdateMode::CreateIfMissing, done);
}

void IsPublisher::fillProcessUsage(is::Object &obj)
{
    // Every ProcessStats (and derived) object carries the publishing process's CPU load and
    // resident memory, unless the fill function set them itself.
    if (obj.indexOf(QStringLiteral("cpuLoad")) < 0 || obj.get<float>(QStringLiteral("cpuLoad")) != 0)
        return;
    const qint64 wallMs = QDateTime::currentMSecsSinceEpoch();
    struct rusage ru
    {
    };
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        const qint64 cpuUs = qint64(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
                             ru.ru_stime.tv_usec;
        if (m_lastCpuUs < 0) {
            m_lastCpuUs = cpuUs;
            m_lastWallMs = wallMs;
        } else if (wallMs - m_lastWallMs >= 500) {
            m_cpuLoad = float(double(cpuUs - m_lastCpuUs) / 10.0 / double(wallMs - m_lastWallMs));
            m_lastCpuUs = cpuUs;
            m_lastWallMs = wallMs;
        }
    }
    obj.set<float>(QStringLiteral("cpuLoad"), m_cpuLoad);
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (obj.indexOf(QStringLiteral("memoryBytes")) >= 0 && statm.open(QIODevice::ReadOnly)) {
        const QList<QByteArray> f = statm.readAll().split(' ');
        if (f.size() > 1)
            obj.set<quint64>(QStringLiteral("memoryBytes"),
                             f.at(1).toULongLong() * quint64(sysconf(_SC_PAGESIZE)));
    }
}

} // namespace dialog::rc
