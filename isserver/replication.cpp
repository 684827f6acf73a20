#include "replication.h"
#include "statistics.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/history.h"
#include "dialog/is/protocol.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"
#include "dialog/security.h"

namespace dialog::isd {

Replication::Replication(const ServerOptions &options, is::Repository &repository, is::TypeRegistry &types,
                         Client &client, is::HistoryStore *history, QObject *parent)
    : QObject(parent), m_options(options), m_repository(repository), m_types(types), m_client(client),
      m_history(history)
{
}

Replication::~Replication()
{
    m_pushers.clear();
    m_pushReceiver.reset();
    m_mirror.reset(); // it unsubscribes through the client
    m_historyDictionary.reset();
}

bool Replication::checkOptions(const ServerOptions &options, QString *error)
{
    if (!options.mirrorCriteria.isEmpty() && !is::Criteria(options.mirrorCriteria).isValid()) {
        *error = QStringLiteral("invalid --mirror-criteria '%1': %2")
                     .arg(options.mirrorCriteria, is::Criteria(options.mirrorCriteria).errorString());
        return false;
    }
    if (!options.mirrorOf.isEmpty() && !Client::isValidName(is::protocol::serviceName(options.mirrorOf))) {
        *error = QStringLiteral("invalid --mirror-of server name '%1'").arg(options.mirrorOf);
        return false;
    }
    return true;
}

bool Replication::start(QString *error)
{
    if (!m_options.mirrorOf.isEmpty()) {
        const is::Criteria criteria =
            m_options.mirrorCriteria.isEmpty() ? is::Criteria() : is::Criteria(m_options.mirrorCriteria);
        m_mirror = std::make_unique<Mirror>(m_repository, m_types, m_client, m_options.mirrorOf, criteria);
        connect(m_mirror.get(), &Mirror::typesAdded, this, &Replication::typesAdded);
        connect(m_mirror.get(), &Mirror::synchronised, this, &Replication::copyMasterHistory);
        m_mirror->start();
    }
    const ClientOptions &c = m_options.client;
    const security::TlsFiles tls{c.tlsCert, c.tlsKey, c.tlsCa};
    push::Security security;
    QSslConfiguration config;
    Status loaded =
        c.secretFile.isEmpty() ? Status() : security::readSecretFile(c.secretFile, &security.secret);
    if (loaded.isOk() && !tls.isEmpty())
        loaded = security::tlsConfiguration(tls, &config);
    if (!loaded.isOk()) {
        *error = loaded.message();
        return false;
    }
    if (!tls.isEmpty())
        security.tls = std::make_shared<const QSslConfiguration>(config);
    security.insecure = c.insecure;
    return startReceiver(security, error) && startPush(security, error);
}

bool Replication::startReceiver(const push::Security &security, QString *error)
{
    if (m_options.mirrorListenPort < 0)
        return true;
    m_pushReceiver = std::make_unique<PushReceiver>(m_repository, m_types, m_options.mirrorMaster, security);
    connect(m_pushReceiver.get(), &PushReceiver::typesAdded, this, &Replication::typesAdded);
    return m_pushReceiver->listen(m_options.mirrorListenAddress, quint16(m_options.mirrorListenPort), error);
}

bool Replication::startPush(const push::Security &security, QString *error)
{
    if (m_options.pushTo.isEmpty())
        return true;
    is::Criteria criteria;
    if (!m_options.pushCriteria.isEmpty()) {
        criteria = is::Criteria(m_options.pushCriteria);
        if (!criteria.isValid()) {
            *error = QStringLiteral("invalid --push-criteria '%1': %2")
                         .arg(m_options.pushCriteria, criteria.errorString());
            return false;
        }
    }
    for (const QString &target : std::as_const(m_options.pushTo)) {
        const qsizetype colon = target.lastIndexOf(QLatin1Char(':'));
        bool ok = false;
        const uint port = colon > 0 ? target.mid(colon + 1).toUInt(&ok) : 0;
        if (!ok || port < 1 || port > 65535) {
            *error = QStringLiteral("invalid --push-to '%1' (HOST:PORT)").arg(target);
            return false;
        }
        QString host = target.left(colon);
        if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
            host = host.mid(1, host.size() - 2);
        m_pushers.push_back(std::make_unique<PushSender>(m_repository, host, quint16(port), criteria,
                                                         m_options.pushPingMs, security));
    }
    // Writes are applied in this thread, so the listener runs here too (see PushSender).
    m_repository.addListener([this](const is::Change &c) {
        for (const auto &p : m_pushers)
            p->change(c);
    });
    for (const auto &p : m_pushers)
        p->start();
    return true;
}

QString Replication::readOnlyReason() const
{
    if (m_pushReceiver)
        return QStringLiteral("IS server %1 is a read-only push mirror of %2 (pushed from another network); "
                              "write to %2 there")
            .arg(m_options.name, m_options.mirrorMaster);
    if (m_mirror)
        return QStringLiteral("IS server %1 is a read-only mirror of %2; write to %2")
            .arg(m_options.name, m_options.mirrorOf);
    return {};
}

void Replication::typesDeclared(const QList<is::TypeInfo> &types)
{
    for (const auto &p : m_pushers)
        p->typesDeclared(types);
}

void Replication::copyMasterHistory()
{
    if (!m_history)
        return;
    if (!m_historyDictionary) {
        m_historyDictionary = std::make_unique<is::Dictionary>(&m_client);
        m_historyDictionary->setTimeout(30000);
    }
    const bool idle = m_historyToCopy.isEmpty();
    m_historyToCopy.clear();
    for (const is::ObjectInfo &o : m_repository.list())
        if (o.name != ServerStatistics::objectName())
            m_historyToCopy << o.name;
    if (idle)
        copyNextHistory();
}

void Replication::copyNextHistory()
{
    // One request at a time: the copy goes in the background, the master serves it from its pool.
    if (m_historyToCopy.isEmpty())
        return;
    const QString name = m_historyToCopy.takeFirst();
    const is::Time until(is::Time::currentTime().microsecondsSinceEpoch() + 60LL * 1000000);
    m_historyDictionary->history(m_options.mirrorOf + QLatin1Char('.') + name, is::Time(0), until, 0,
                                 [this, name](const is::Status &s, const is::History &h) {
                                     is::Object prototype;
                                     if (s.isOk() &&
                                         m_repository.get(name, &prototype).isOk() &&
                                         prototype.typeName() == h.typeName)
                                         m_history->restore(name, prototype, h);
                                     copyNextHistory();
                                 });
}

} // namespace dialog::isd
