#include "registry.h"

#include "directorypublisher.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcRegistry, "dialog.controlserver.registry", QtInfoMsg)

namespace dialog::cs {

using namespace wire_format;

namespace {
// The first wait before a process asks again for a service refused because the directory is full.
constexpr quint32 RetryRegistrationMs = 1000;
} // namespace

Registry::Registry(ServerContext &context, const DirectoryPublisher &publisher, QObject *parent)
    : QObject(parent), m_ctx(context), m_publisher(publisher)
{
}

QStringList Registry::namesIn(const net::Inbound &in)
{
    wire::Names names;
    parseControl(in.data, names);
    return namesOf(names);
}

bool Registry::handle(const net::Inbound &in)
{
    const QString &process = in.peer->name;
    bool routes = false; // services only: the command routes stay
    switch (in.type) {
    case Type::RegisterService:
        for (const QString &s : namesIn(in))
            registerService(process, s);
        break;
    case Type::UnregisterService:
        for (const QString &s : namesIn(in))
            unregisterService(process, s);
        break;
    case Type::RegisterCommand:
        for (const QString &c : namesIn(in))
            registerCommand(process, c);
        routes = true;
        break;
    case Type::UnregisterCommand:
        for (const QString &c : namesIn(in))
            m_ctx.directory.unregisterCommand(process, c);
        routes = true;
        break;
    case Type::RequestService:
        for (const QString &s : namesIn(in))
            request(process, s);
        break;
    case Type::CancelRequest:
        for (const QString &s : namesIn(in))
            m_ctx.directory.cancelRequest(process, s);
        break;
    default:
        return false;
    }
    Q_EMIT directoryChanged(routes);
    return true;
}

QString Registry::serviceLimit(const QString &process, const QString &service, bool *transient) const
{
    // Registrations are bounded: one process cannot make the directory grow without limit, nor
    // fill it for the others; and the partition's own names always find room.
    const ServerOptions &o = m_ctx.options;
    const ProcessRecord *rec = m_ctx.directory.process(process);
    const bool has = rec && rec->services.contains(service);
    *transient = false;
    if (has)
        return {};
    const int mine = rec ? int(rec->services.size()) : 0;
    if (mine >= o.maxServicesPerProcess)
        return QStringLiteral("%1 provides %2 services, the most one process may")
            .arg(process)
            .arg(o.maxServicesPerProcess);
    *transient = true;
    const int count = int(m_ctx.directory.serviceCount());
    if (count >= o.maxServices)
        return QStringLiteral("the directory holds %1 services, its limit").arg(o.maxServices);
    if (reservedOwner(service) == process)
        return {}; // the reserved room is for these
    const int reserve = qMin(o.reservedServices, o.maxServices / 2);
    const int room = o.maxServices - reserve - count; // what anyone may still take
    if (room <= 0)
        return QStringLiteral("the directory holds %1 services: the last %2 of its %3 are kept for the "
                              "partition's own names (RunCtrl.<process>.*, IS.<server>)")
            .arg(count)
            .arg(reserve)
            .arg(o.maxServices);
    if (mine >= room)
        return QStringLiteral("%1 provides %2 services, as many as the directory has room left for all "
                              "other processes: no process may fill it")
            .arg(process)
            .arg(mine);
    *transient = false;
    return {};
}

void Registry::registerService(const QString &process, const QString &service)
{
    QString owner;
    const qsizetype length = service.toUtf8().size();
    const bool validName = length > 0 && length <= MaxNameLength;
    const bool own = m_publisher.ownService(service) != nullptr;
    QString limit = own ? QString() : reservedNameError(process, service); // own: "already provided"
    bool transient = false;
    if (limit.isEmpty())
        limit = serviceLimit(process, service, &transient);
    if (!limit.isEmpty() || !validName || own || !m_ctx.directory.registerService(process, service, &owner)) {
        if (own)
            owner = m_ctx.self.name;
        const QString why =
            !limit.isEmpty() ? limit
            : validName      ? QStringLiteral("service '%1' is already provided by %2").arg(service, owner)
                        : QStringLiteral("invalid service name (empty or over %1 bytes)").arg(MaxNameLength);
        // One line for the first refusal of a process and then at 2, 4, 8 …: one frame of 90,000
        // names over the limit is not 90,000 lines in the message log.
        const int times = ++m_refusedServices[process];
        if ((times & (times - 1)) == 0)
            qCWarning(lcRegistry).noquote()
                << "refused service" << service.left(64) << "of" << process << "-" << why
                << (times > 1 ? QStringLiteral("(%1 refusals)").arg(times) : QString());
        // A full directory may have room later: the process asks again (ClientCore), paced.
        m_ctx.sendTo(process, ServerContext::refusal(QStringLiteral("service"), service, why,
                                                     transient ? RetryRegistrationMs : 0));
        return;
    }
    qCDebug(lcRegistry) << "service" << service << "provided by" << process;
    // Requests queued for this service are answered now: start order never matters.
    for (const QString &r : m_ctx.directory.requesters(service))
        sendInfo(r, service);
}

void Registry::unregisterService(const QString &process, const QString &service)
{
    if (!m_ctx.directory.unregisterService(process, service))
        return;
    wire::InfoService info;
    info.set_name(ss(service));
    info.set_available(false);
    const QByteArray frame = controlFrame(Type::InfoService, info);
    for (const QString &r : m_ctx.directory.requesters(service))
        m_ctx.sendTo(r, frame);
}

bool Registry::admitName(const QString &process, const QString &what, const QString &name,
                         const QSet<QString> &have)
{
    if (have.contains(name))
        return true;
    const ServerOptions &o = m_ctx.options;
    const qsizetype length = name.toUtf8().size();
    const auto bound = [&]() -> QString {
        if (length == 0 || length > MaxNameLength)
            return QStringLiteral("invalid name (empty or over %1 bytes)").arg(MaxNameLength);
        if (have.size() >= o.maxNamesPerProcess)
            return QStringLiteral("%1 has %2 %3s, the most one process may")
                .arg(process)
                .arg(o.maxNamesPerProcess)
                .arg(what);
        if (m_ctx.directory.nameCount() >= o.maxNames)
            return QStringLiteral("the directory holds %1 commands and subscriptions, its limit")
                .arg(o.maxNames);
        return {};
    };
    // A subscription to a reserved name is anyone's; taking a reserved command is not.
    QString why = what == QLatin1String("command") ? reservedNameError(process, name) : QString();
    if (why.isEmpty())
        why = bound();
    if (why.isEmpty())
        return true;
    // One line for the first refusal and then at 2, 4, 8 … (a flood of names is not a flood of lines).
    const int times = ++m_refusedNames[process];
    if ((times & (times - 1)) == 0)
        qCWarning(lcRegistry).noquote()
            << "refused" << what << name.left(64) << "of" << process << "-" << why
            << (times > 1 ? QStringLiteral("(%1 refusals)").arg(times) : QString());
    m_ctx.sendTo(process, ServerContext::refusal(what, name.left(MaxNameLength), why));
    return false;
}

QString Registry::reservedOwner(const QString &name)
{
    if (name.startsWith(QLatin1String("RunCtrl.")) && name.lastIndexOf(QLatin1Char('.')) > 8)
        return name.mid(8, name.lastIndexOf(QLatin1Char('.')) - 8); // RunCtrl.<process>.<what>
    if (name.startsWith(QLatin1String("IS.")) && !name.contains(QLatin1Char('/')) && name.size() > 3)
        return QStringLiteral("IS.Server.") + name.mid(3); // the service of the IS server <name>
    return {};
}

QString Registry::reservedNameError(const QString &process, const QString &name)
{
    const QString owner = reservedOwner(name);
    if (owner.isEmpty() || owner == process)
        return {};
    return QStringLiteral("'%1' is reserved to %2").arg(name, owner);
}

void Registry::registerCommand(const QString &process, const QString &command)
{
    const ProcessRecord *p = m_ctx.directory.process(process);
    if (p && admitName(process, QStringLiteral("command"), command, p->commands))
        m_ctx.directory.registerCommand(process, command);
}

void Registry::request(const QString &process, const QString &service)
{
    const ProcessRecord *p = m_ctx.directory.process(process);
    if (!p || !admitName(process, QStringLiteral("subscription"), service, p->requests))
        return;
    m_ctx.directory.request(process, service);
    sendInfo(process, service);
}

void Registry::sendInfo(const QString &to, const QString &service)
{
    wire::InfoService info;
    info.set_name(ss(service));
    if (m_publisher.ownService(service)) {
        const net::PeerInfo &self = m_ctx.self;
        info.set_available(true);
        info.set_provider(ss(self.name));
        info.set_host(ss(self.endpoint.host));
        info.set_port(self.endpoint.port);
        info.set_incarnation(self.incarnation);
    } else if (const ProcessRecord *p = m_ctx.directory.provider(service)) {
        info.set_available(true);
        info.set_provider(ss(p->name));
        info.set_host(ss(p->host));
        info.set_port(p->port);
        info.set_incarnation(p->incarnation);
    } else {
        info.set_available(false);
    }
    m_ctx.sendTo(to, controlFrame(Type::InfoService, info));
}

} // namespace dialog::cs
