#include "client_p.h"
#include "control_p.h"
#include "dialog/handoff.h"
#include "requests_p.h"
#include "rwlock_p.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QHostInfo>
#include <QMetaMethod>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QTimer>
#include <QUdpSocket>

#include <algorithm>
#include <cstdio>
#include <unistd.h>

namespace dialog {

/// A reply may take its destination's queue to this many times ClientOptions::maxQueueBytes.
constexpr qint64 ReplyQueueFactor = 16;

/// The local address of the route to the Control Server @p cs: the source address the kernel picks
/// for a connection to it (found with a connected UDP socket, which sends nothing). 127.0.0.1 for a
/// local Control Server. A Control Server given by name is resolved here (a blocking look-up); the
/// host name is the last resort when nothing else is known.
QString routeAddress(const net::Endpoint &cs)
{
    if (cs.host == QLatin1String("localhost"))
        return QStringLiteral("127.0.0.1");
    QHostAddress address(cs.host);
    if (address.isNull()) {
        const QList<QHostAddress> found = QHostInfo::fromName(cs.host).addresses();
        const auto v4 = std::find_if(found.cbegin(), found.cend(), [](const QHostAddress &a) {
            return a.protocol() == QAbstractSocket::IPv4Protocol;
        });
        if (v4 != found.cend())
            address = *v4;
    }
    if (address.isLoopback())
        return QStringLiteral("127.0.0.1");
    if (!address.isNull()) {
        QUdpSocket probe;
        probe.connectToHost(address, cs.port);
        if (probe.waitForConnected(1000) &&
            probe.localAddress().protocol() == QAbstractSocket::IPv4Protocol &&
            !probe.localAddress().isNull())
            return probe.localAddress().toString();
    }
    return QHostInfo::localHostName();
}

using net::Endpoint;

ClientPrivate::ClientPrivate(Client *q, const ClientOptions &o)
    : q(q), options(o), requests(std::make_unique<RequestTracker>(this))
{
}

ClientPrivate::~ClientPrivate() = default;

void ClientPrivate::fail(Status::Code e, const QString &why)
{
    if (QThread::currentThread() != q->thread()) {
        // sendCommand() from a direct handler (a reader thread) or another thread: reported in the
        // Client's thread, like every failure.
        QMetaObject::invokeMethod(q, handoff::handOff([this, e, why] { fail(e, why); }),
                                  Qt::QueuedConnection);
        return;
    }
    error = e;
    errorString = why;
    qCWarning(lcClient).noquote() << options.name << ":" << why;
    if (e == Status::Code::ListenFailed || e == Status::Code::InvalidAddress ||
        e == Status::Code::SecurityError)
        setState(Client::State::Unconnected);
    Q_EMIT q->errorOccurred(e);
}

void ClientPrivate::setState(Client::State s)
{
    if (s == state)
        return;
    state = s;
    if (s == Client::State::Connected)
        connectRefusals = 0;
    Q_EMIT q->stateChanged(s);
    if (s == Client::State::Connected)
        Q_EMIT q->connected();
}

Subscription *ClientPrivate::addSubscription(const QString &name)
{
    auto *s = new Subscription(name, q, false);
    subscriptions[name.toUtf8()].append(s);
    ++subscriptionGeneration;
    const auto post = [this, name] { handoff::post(core, [c = core, name] { c->addRequest(name); }); };
    if (core)
        post();
    else
        QTimer::singleShot(0, q, [this, post] {
            if (core)
                post();
        });
    return s;
}

void ClientPrivate::addDirect(QHash<QByteArray, DirectRoutes::Name> &table, const QByteArray &name,
                              DirectHandlerPtr h)
{
    WriteLocker l(&direct.lock);
    // Lists are replaced, never changed in place: routeDirect() iterates a shared copy outside the
    // lock (see ServiceState::replaceSubscribers()).
    QList<DirectHandlerPtr> next = table.value(name).handlers;
    next.detach();
    next.append(std::move(h));
    table[name].handlers = std::move(next);
    direct.count.fetch_add(1, std::memory_order_release);
}

void ClientPrivate::removeDirect(QHash<QByteArray, DirectRoutes::Name> &table, const QByteArray &name,
                                 const DirectHandlerPtr &h)
{
    QList<DirectHandlerPtr> gone;
    {
        WriteLocker l(&direct.lock);
        auto it = table.find(name);
        if (it == table.end())
            return;
        QList<DirectHandlerPtr> kept; // a new list (see addDirect())
        for (const DirectHandlerPtr &x : std::as_const(it->handlers)) {
            if (h && x != h) {
                kept.append(x);
                continue;
            }
            gone.append(x);
            direct.count.fetch_sub(1, std::memory_order_release);
        }
        it->handlers = std::move(kept);
        if (it->handlers.isEmpty())
            table.erase(it);
    }
    for (const DirectHandlerPtr &g : std::as_const(gone)) {
        QMutexLocker l(&g->call); // a call in progress ends first; none starts after
        g->removed = true;
    }
}

void ClientPrivate::refreshQueued(const QByteArray &service)
{
    const QList<Subscription *> subs = subscriptions.value(service);
    const bool queued =
        std::any_of(subs.cbegin(), subs.cend(), [](const Subscription *s) { return !s->d->direct; });
    WriteLocker l(&direct.lock);
    auto it = direct.services.find(service);
    if (it != direct.services.end())
        it->alsoQueued = queued;
}

bool ClientPrivate::routeDirect(const net::Inbound &in)
{
    if (direct.count.load(std::memory_order_acquire) == 0)
        return false;
    const bool service = in.type == wire_format::Type::ServiceMessage;
    const bool request = in.type == wire_format::Type::Request;
    if (!service && !request && in.type != wire_format::Type::CommandMessage)
        return false;
    DirectRoutes::Name found;
    {
        ReadLocker l(&direct.lock);
        const auto &table = service ? direct.services : request ? direct.requests : direct.commands;
        const auto it = table.constFind(in.name);
        if (it == table.cend())
            return false;
        found = *it;
    }
    if (service) {
        bool askAgain = false;
        switch (links->check(in.name, in.connection, in.sequence, in.dataView(), &askAgain)) {
        case ProviderLinks::Verdict::Deliver:
            break;
        case ProviderLinks::Verdict::Acknowledged:
            return true;
        case ProviderLinks::Verdict::Ignore:
            ignoreNotFromProvider(in.name, askAgain);
            return true;
        }
    }
    bool taken = false;
    for (const DirectHandlerPtr &h : std::as_const(found.handlers)) {
        QMutexLocker l(&h->call);
        if (h->removed)
            continue;
        taken = true;
        if (request) {
            h->onRequest(makeRequest(in));
            break; // one handler answers a request
        }
        if (!service) {
            if (!link->isControl(in.peer)) {
                logNotFromControlServer(*link, "COMMAND_MESSAGE", in.peer);
                return true; // taken: nobody else gets it either
            }
            h->onCommand(Command(in.name, in.data, in.origin));
            continue;
        }
        if (!h->active.exchange(true))
            QMetaObject::invokeMethod(q, handoff::handOff([this, name = in.name] { directActive(name); }),
                                      Qt::QueuedConnection);
        if (in.incarnation != h->incarnation) {
            // A new provider (or a restart): its sequence numbers start afresh.
            h->incarnation = in.incarnation;
            h->received = 0;
        }
        if (h->received > 0 && in.sequence <= h->lastSequence)
            continue; // a value already seen, re-sent on re-subscription
        h->lastSequence = in.sequence;
        ++h->received;
        h->onMessage(Message(in.name, in.dataCopy(), in.sequence));
    }
    return taken && !found.alsoQueued;
}

void ClientPrivate::ignoreNotFromProvider(const QByteArray &service, bool askAgain)
{
    logNotFromProvider(*links, service);
    // The provider's connection may have been replaced (closed when idle, opened anew): asked
    // again, it acknowledges on the connection it uses now and sends its current value there.
    if (askAgain && core)
        QMetaObject::invokeMethod(
            core, [core = core, name = QString::fromUtf8(service)] { core->resubscribe(name); },
            Qt::QueuedConnection);
}

void ClientPrivate::directActive(const QByteArray &service)
{
    const QList<Subscription *> subs = subscriptions.value(service);
    for (Subscription *s : subs) {
        if (s->d->direct && s->d->state != Subscription::State::Active) {
            s->d->state = Subscription::State::Active;
            Q_EMIT s->stateChanged(s->d->state);
        }
    }
}

void ClientPrivate::deliver(net::InboundBatch &batch)
{
    // What the slots send while a batch of several messages is handled (replies, updates,
    // commands) leaves at the end of it, one system call per destination instead of one per
    // message. A lone message's answer goes at once, as it is sent.
    const bool cork = batch.size() > 1;
    if (cork)
        transport->cork(q);
    const auto uncork = qScopeGuard([this, cork] {
        if (cork)
            transport->uncork();
    });
    // Names are interned per connection by the reader: consecutive messages of one service share
    // their bytes, so the last lookup is reused (no hashing per message). The generation tells
    // when a slot subscribed or unsubscribed meanwhile.
    const char *lastName = nullptr;
    quint64 generation = 0, linkGeneration = 0, providerConnection = 0;
    bool listed = false;
    QByteArray key;
    QList<Subscription *> subs;
    for (net::Inbound &in : batch) {
        // Taken before it is handled: a slot's nested event loop hands this batch over again
        // (Transport::setDataSink, resumable) and goes on after it.
        if (std::exchange(in.taken, true)) {
            // If a slot of one of several subscriptions to its service ran that loop, the others
            // get this message now, before anything newer (else they would skip it as seen).
            for (FanOut *f : fanOuts)
                if (f->frame == &in)
                    fanOut(*f, in.incarnation);
            continue;
        }
        if (in.type == wire_format::Type::ServiceMessage) {
            if (in.name.constData() != lastName || generation != subscriptionGeneration ||
                linkGeneration != links->generation()) {
                auto it = subscriptions.constFind(in.name);
                lastName = in.name.constData();
                generation = subscriptionGeneration;
                linkGeneration = links->generation();
                key = it == subscriptions.cend() ? QByteArray() : it.key();
                subs = it == subscriptions.cend() ? QList<Subscription *>() : it.value();
                providerConnection = links->connectionOf(in.name, &listed);
            }
            if (subs.isEmpty())
                continue; // not (or no longer) subscribed
            // Data only from the connection of the provider the directory named (ProviderLinks):
            // the common case is one comparison; anything else is decided under the links' lock.
            if (listed && (in.connection != providerConnection || in.sequence == 0)) {
                bool askAgain = false;
                const auto verdict =
                    links->check(in.name, in.connection, in.sequence, in.dataView(), &askAgain);
                if (verdict == ProviderLinks::Verdict::Ignore)
                    ignoreNotFromProvider(in.name, askAgain);
                if (verdict != ProviderLinks::Verdict::Deliver)
                    continue;
            }
            if (subs.size() == 1) {
                // The common case: one subscription in this process takes the message in place.
                if (!subs.first()->d->direct)
                    subs.first()->d->deliver(key, in);
                continue;
            }
            // The batch's data is not read again; the frame stays, to be found by a nested loop.
            FanOut f{&in, key, Message(key, in.takeData(), in.sequence), subs, generation};
            fanOuts.push_back(&f);
            fanOut(f, in.incarnation);
            fanOuts.pop_back();
        } else if (in.type == wire_format::Type::CommandMessage) {
            // Commands are relayed by the Control Server, which applies the access list and audits
            // them; one written straight to our port has been through neither.
            if (link->isControl(in.peer))
                Q_EMIT q->commandReceived(Command(in.name, in.data, in.origin));
            else
                logNotFromControlServer(*link, "COMMAND_MESSAGE", in.peer);
        } else if (in.type == wire_format::Type::Request) {
            handleRequest(in);
        } else if (in.type == wire_format::Type::Reply) {
            requests->onReply(in.sequence, in.status, in.data);
        }
    }
}

void ClientPrivate::fanOut(FanOut &f, quint64 incarnation)
{
    while (f.next < f.subs.size()) {
        Subscription *s = f.subs.at(f.next++); // taken before its slots run: a nested loop goes on
        if (f.generation != subscriptionGeneration && !subscriptions.value(f.key).contains(s))
            continue; // deleted by a slot during this delivery
        if (s->d->direct)
            continue; // its handler had it in the reader thread
        s->d->deliver(f.message, incarnation);
    }
}

void ClientPrivate::onSubscriptionChanged(const QString &service, int state, const QString &provider,
                                          const QString &host, quint16 port)
{
    if (port != 0)
        providers.insert(service, net::Endpoint{host, port});
    else
        providers.remove(service);
    if (Subscription::State(state) == Subscription::State::Connecting)
        connecting.insert(service, Connecting{clock.elapsed(), 0});
    else
        connecting.remove(service);
    const QList<Subscription *> subs = subscriptions.value(service.toUtf8());
    for (Subscription *s : subs) {
        s->d->setState(Subscription::State(state), provider);
        if (s->d->direct && s->d->state != Subscription::State::Active)
            s->d->direct->active.store(false); // the next message says Active again
    }
    if (port != 0)
        requests->onProviderKnown(service);
    else if (Subscription::State(state) == Subscription::State::Lost)
        requests->onProviderLost(service, provider);
}

void ClientPrivate::checkConnecting()
{
    const qint64 now = clock.elapsed();
    for (auto it = connecting.begin(); it != connecting.end();) {
        const QList<Subscription *> subs = subscriptions.value(it.key().toUtf8());
        const bool waiting = std::any_of(subs.cbegin(), subs.cend(), [](const Subscription *s) {
            return s->state() == Subscription::State::Connecting;
        });
        if (!waiting) {
            it = connecting.erase(it);
            continue;
        }
        if (now - it->sinceMs >= (qint64(2000) << qMin(it->resent, 4)) && core) {
            it->sinceMs = now;
            ++it->resent;
            handoff::post(core, [c = core, name = it.key()] { c->resubscribe(name); });
        }
        ++it;
    }
}

Request ClientPrivate::makeRequest(const net::Inbound &in)
{
    Request r;
    r.d->service = QString::fromUtf8(in.name);
    r.d->data = in.data;
    r.d->id = in.sequence;
    r.d->origin = in.peer ? in.peer->name : QString();
    r.d->host = in.peer ? in.peer->endpoint.host : QString();
    r.d->port = in.peer ? in.peer->endpoint.port : 0;
    if (in.peer) {
        r.d->originUser = in.peer->user;
        r.d->originHost = in.peer->hostName;
        r.d->originAddress = in.peer->source.toString();
        r.d->originProven = in.peer->proven;
    }
    return r;
}

void ClientPrivate::handleRequest(const net::Inbound &in)
{
    const Request r = makeRequest(in);
    if (!services.contains(r.d->service)) {
        sendReply(r, 2, QStringLiteral("%1 does not provide '%2'").arg(options.name, r.d->service).toUtf8());
        return;
    }
    if (!q->isSignalConnected(QMetaMethod::fromSignal(&Client::requestReceived))) {
        sendReply(r, 2,
                  QStringLiteral("%1 takes no requests for '%2'").arg(options.name, r.d->service).toUtf8());
        return;
    }
    Q_EMIT q->requestReceived(r);
}

bool ClientPrivate::sendReply(const Request &r, quint8 status, const QByteArray &data)
{
    if (!transport || r.d->port == 0)
        return false;
    quint8 flags = 0;
    const QByteArray prepared = wire_format::prepareData(data, options.compressionThreshold, flags);
    // A reply answers a request its requester waits for: it may take the queue to ReplyQueueFactor
    // times its bound (the requests in flight bound the replies), so that a burst of replies is not
    // lost to a queue full of them (or of other messages) with the requester left to time out.
    return transport->send(transport->outbox(net::Endpoint{r.d->host, r.d->port}),
                           wire_format::encodeReplyFrame(r.d->id, status, flags, prepared), 0,
                           ReplyQueueFactor * options.maxQueueBytes) == net::Transport::SendResult::Queued;
}

void ClientPrivate::onRefused(const QString &what, const QString &name, const QString &reason)
{
    const QString why = QStringLiteral("%1 '%2' refused by the Control Server: %3").arg(what, name, reason);
    if (what == QLatin1String("service-later")) {
        // The directory is full for now: the core asks again, paced, and the process goes on (a
        // refusal that may pass never makes it exit).
        const QString later =
            QStringLiteral("service '%1' refused for now by the Control Server: %2").arg(name, reason);
        qCWarning(lcClient).noquote() << options.name << ":" << later;
        fail(Status::Code::ServiceRefused, later);
    } else if (what == QLatin1String("service")) {
        fail(Status::Code::ServiceRefused, why);
        if (options.exitOnRefusal) {
            // The DIALOG rule: a process registering a service that exists must not run.
            std::fprintf(stderr, "%s: %s\n", qPrintable(options.name), qPrintable(why));
            std::fflush(stderr);
            ::_exit(1);
        }
    } else if (what == QLatin1String("address") || what == QLatin1String("auth")) {
        // The Control Server cannot reach us back (or refused the address we advertise): the user
        // must know, on stderr and through errorOccurred; the core retries with back-off.
        fail(Status::Code::Broken,
             QStringLiteral("the Control Server refused the connection: %1").arg(reason));
    } else if (what == QLatin1String("connect")) {
        // Said once, not at every retry; the retries back off (ClientCore::onRefused).
        if (++connectRefusals == 1)
            qCWarning(lcClient).noquote() << options.name << ":" << why << "- asking again with back-off";
        if (connectRefusals == MaxConnectRefusals) {
            if (options.exitOnRefusal) {
                std::fprintf(stderr, "%s: %s (%d times)\n", qPrintable(options.name), qPrintable(why),
                             connectRefusals);
                std::fflush(stderr);
                ::_exit(1);
            }
            fail(Status::Code::ServiceRefused, why);
        }
    } else if (what == QLatin1String("permission")) {
        // The partition's access list refused a command this process sent.
        fail(Status::Code::PermissionDenied,
             QStringLiteral("command '%1' refused by the Control Server: %2").arg(name, reason));
    } else {
        qCWarning(lcClient).noquote() << options.name << ":" << why;
    }
}

Client::Client(const ClientOptions &options, QObject *parent)
    : QObject(parent), d(std::make_unique<ClientPrivate>(this, options))
{
    qRegisterMetaType<dialog::Message>();
    qRegisterMetaType<dialog::Command>();
    qRegisterMetaType<dialog::Request>();
    qRegisterMetaType<dialog::Reply>();
    qRegisterMetaType<dialog::Status>();
    if (d->options.name.isEmpty())
        d->options.name = QCoreApplication::applicationName() + QLatin1Char('-') +
                          QString::number(QCoreApplication::applicationPid());
    QTimer::singleShot(0, this, [this] { start(); });
}

Client::~Client()
{
    // No direct handler runs from here on (a call in progress ends first).
    for (auto *table : {&d->direct.services, &d->direct.commands, &d->direct.requests}) {
        QList<QByteArray> names;
        {
            ReadLocker l(&d->direct.lock);
            names = table->keys();
        }
        for (const QByteArray &n : std::as_const(names))
            d->removeDirect(*table, n, nullptr);
    }
    d->sendCore.store(nullptr);
    if (d->core) {
        handoff::callBlocking(d->core, [core = d->core] { core->shutdown(); });
        flush(200);
        // The core goes in its own thread, with its sink: no delivery is posted to it afterwards,
        // and its end is ordered before what follows here (QThread::wait() alone is not, to TSan).
        handoff::callBlocking(d->core, [transport = d->transport.get(), core = d->core] {
            transport->setControlSink(nullptr, {});
            delete core;
        });
        d->core = nullptr;
        d->coreThread.quit();
        d->coreThread.wait();
    }
    // Children that refer to d must go while d is alive (QObject would delete them later).
    QList<Subscription *> subs;
    for (const auto &list : std::as_const(d->subscriptions))
        subs += list;
    qDeleteAll(subs);
    qDeleteAll(std::exchange(d->services, {}));
    d->transport.reset();
}

bool Client::start()
{
    if (d->started)
        return d->error != Status::Code::ListenFailed && d->error != Status::Code::InvalidAddress &&
               d->error != Status::Code::SecurityError;
    d->started = true;

    for (const QString &s : std::as_const(d->options.controlServers)) {
        Endpoint e;
        if (!Endpoint::parse(s.trimmed(), e)) {
            d->fail(Status::Code::InvalidAddress,
                    QStringLiteral("invalid Control Server address '%1' (expected host:port)").arg(s));
            return false;
        }
        d->servers.append(e);
    }
    if (d->servers.isEmpty()) {
        d->fail(Status::Code::InvalidAddress, QStringLiteral("no Control Server address"));
        return false;
    }

    // Advertise an address others can reach: the one given, else the local address of the route
    // to the Control Server (loopback when it is local), never a host name that may not resolve.
    QString host = d->options.host;
    if (host.isEmpty())
        host = routeAddress(d->servers.first());
    // Only a process reachable on 127.0.0.1 alone listens on loopback alone: one that may fail
    // over to a Control Server on another host re-chooses its address then, and must be reachable.
    bool loopbackOnly = host == QLatin1String("127.0.0.1");
    if (d->options.host.isEmpty())
        for (qsizetype i = 1; loopbackOnly && i < d->servers.size(); ++i)
            loopbackOnly = routeAddress(d->servers.at(i)) == QLatin1String("127.0.0.1");
    const QHostAddress bindAddr =
        loopbackOnly ? QHostAddress(QHostAddress::LocalHost) : QHostAddress(QHostAddress::Any);

    net::TransportOptions to;
    to.senderThreads = d->options.senderThreads;
    to.readerThreads = d->options.readerThreads;
    to.maxQueueBytes = d->options.maxQueueBytes;
    to.maxPendingDelivery = d->options.maxPendingBytes;
    to.receiveBufferBytes = d->options.receiveBufferBytes;
    to.maxMessageSize = d->options.maxMessageSize;
    to.maxHandshakingPerAddress = d->options.maxHandshakingPerAddress;
    to.maxHandshaking = qMax(to.maxHandshaking, to.maxHandshakingPerAddress);
    to.idleTimeoutMs = d->options.idleTimeoutMs;
    to.directWrites = d->options.directWrites;
    to.receiveSpinUs = d->options.receiveSpinUs;
    // A process listens where its route to the Control Server says (all addresses when that is not
    // loopback): without a secret it is warned of, not refused; the daemons that are told an address
    // to listen on (the Control Server's --bind, the push mirror's --mirror-listen) refuse.
    to.insecure = true;
    QString securityError;
    if (!net::applySecurity(d->options.secretFile, {d->options.tlsCert, d->options.tlsKey, d->options.tlsCa},
                            to, &securityError)) {
        d->fail(Status::Code::SecurityError, securityError);
        return false;
    }
    // The key `dialogctl up` issued this process (docs/security.md, "Identities"): it proves our
    // name to the Control Server. A key of another name (inherited by a child process) is not ours.
    if (const QString keyFile = qEnvironmentVariable("DIALOG_PROCESS_KEY_FILE");
        !keyFile.isEmpty() && !to.secret.isEmpty()) {
        QString keyName;
        QByteArray key;
        if (const Status st = security::readProcessKeyFile(keyFile, &keyName, &key); !st.isOk()) {
            d->fail(Status::Code::SecurityError, st.message());
            return false;
        }
        if (keyName == d->options.name)
            to.identityKey = key;
    }
    // The partition's identity secret (a daemon that checks the proofs of names: dialog-configdb).
    if (!d->options.identityFile.isEmpty()) {
        if (to.secret.isEmpty()) {
            d->fail(Status::Code::SecurityError,
                    QStringLiteral("an identity file (%1) needs the partition's secret file")
                        .arg(d->options.identityFile));
            return false;
        }
        if (const Status st = security::readSecretFile(d->options.identityFile, &to.identitySecret);
            !st.isOk()) {
            d->fail(Status::Code::SecurityError, st.message());
            return false;
        }
    }
    d->transport = std::make_unique<net::Transport>(to);
    d->transport->setDataSink(
        this, [this](net::InboundBatch &b) { d->deliver(b); }, true);
    d->transport->setDirectRoute([this](const net::Inbound &in) { return d->routeDirect(in); }, false);
    connect(d->transport.get(), &net::Transport::protocolError, this,
            [this](const QString &peer, const QString &why, const QString &, quint64) {
                d->fail(Status::Code::ProtocolError,
                        QStringLiteral("closed connection from %1: %2").arg(peer, why));
            });

    connect(
        d->transport.get(), &net::Transport::destinationFailed, this,
        [this](const QString &host, quint16 port, const QString &why) {
            const net::Endpoint dest{host, port};
            d->onDestinationFailed(dest);
            // Requests live in the Client's thread; this runs in a sender thread.
            QMetaObject::invokeMethod(this, handoff::handOff([this, dest, why] {
                                          if (d->requests)
                                              d->requests->onDestinationFailed(dest, why);
                                      }),
                                      Qt::QueuedConnection);
        },
        Qt::DirectConnection);

    net::PeerInfo self;
    self.name = d->options.name;
    self.pid = quint32(QCoreApplication::applicationPid());
    self.incarnation = QRandomGenerator::system()->generate64() | 1;

    QString why;
    if (!d->transport->listen(bindAddr, d->options.port, &why)) {
        d->fail(Status::Code::ListenFailed, why);
        return false;
    }
    // Nobody knows our port before CONNECT, so no frame can arrive before the sink is set.
    self.endpoint = Endpoint{host, d->transport->serverPort()};
    d->transport->setIdentity(self);
    d->core = new ClientCore(d->transport.get(), d->options, self, d->servers, d->link);
    d->core->setProviderLinks(d->links);
    d->transport->setControlSink(d->core, [core = d->core](net::InboundBatch &b) { core->handleControl(b); });

    d->coreThread.setObjectName(QStringLiteral("dialog-server"));
    d->core->moveToThread(&d->coreThread);
    connect(d->core, &ClientCore::stateChanged, this, [this](int s) { d->setState(State(s)); });
    connect(d->core, &ClientCore::subscriptionChanged, this,
            [this](const QString &svc, int st, const QString &p, const QString &host, quint16 port) {
                d->onSubscriptionChanged(svc, st, p, host, port);
            });
    connect(d->core, &ClientCore::refused, this,
            [this](const QString &w, const QString &n, const QString &r) { d->onRefused(w, n, r); });
    d->clock.start();
    d->connectingCheck = new QTimer(this);
    d->connectingCheck->setInterval(1000);
    connect(d->connectingCheck, &QTimer::timeout, this, [this] { d->checkConnecting(); });
    d->connectingCheck->start();
    handoff::startThread(d->coreThread);
    d->sendTransport.store(d->transport.get());
    d->sendCore.store(d->core);

    // Everything declared before start() goes to the core now.
    for (Service *s : std::as_const(d->services)) {
        ServiceStatePtr st = s->d;
        st->transport = d->transport.get();
        handoff::post(d->core, [core = d->core, st] { core->addService(st); });
    }
    handoff::post(d->core, [core = d->core] { core->start(); });
    return true;
}

QString Client::name() const
{
    return d->options.name;
}
const ClientOptions &Client::options() const
{
    return d->options;
}
quint16 Client::port() const
{
    return d->transport ? d->transport->serverPort() : 0;
}
Client::State Client::state() const
{
    return d->state;
}
quint64 Client::controlServerTerm() const
{
    return d->link->term();
}
Client::Error Client::error() const
{
    return d->error;
}
QString Client::errorString() const
{
    return d->errorString;
}

bool Client::isValidName(const QString &name)
{
    const qsizetype n = name.toUtf8().size();
    return n > 0 && n <= wire_format::MaxNameLength;
}

Service *Client::publish(const QString &name)
{
    if (!isValidName(name)) {
        d->fail(Status::Code::InvalidName,
                QStringLiteral("invalid service name '%1' (empty or over %2 bytes)")
                    .arg(name.left(64))
                    .arg(wire_format::MaxNameLength));
        return nullptr;
    }
    if (Service *s = d->services.value(name))
        return s;
    auto st = std::make_shared<ServiceState>();
    st->name = name;
    st->key = name.toUtf8();
    st->compressionThreshold = d->options.compressionThreshold;
    st->maxMessageSize = d->options.maxMessageSize;
    auto *s = new Service(st, this);
    st->handle = s;
    d->services.insert(name, s);
    if (d->core) {
        st->transport = d->transport.get();
        handoff::post(d->core, [core = d->core, st] { core->addService(st); });
    }
    return s;
}

Service *Client::service(const QString &name) const
{
    return d->services.value(name);
}

void Client::unpublish(const QString &name)
{
    Service *s = d->services.take(name);
    if (!s)
        return;
    if (d->core)
        handoff::post(d->core, [core = d->core, name] { core->removeService(name); });
    delete s;
}

Subscription *Client::subscribe(const QString &name)
{
    if (!isValidName(name)) {
        d->fail(Status::Code::InvalidName,
                QStringLiteral("invalid service name '%1' (empty or over %2 bytes)")
                    .arg(name.left(64))
                    .arg(wire_format::MaxNameLength));
        return nullptr;
    }
    Subscription *s = d->addSubscription(name);
    d->refreshQueued(name.toUtf8());
    return s;
}

Subscription *Client::subscribeDirect(const QString &name,
                                      std::function<void(const dialog::Message &)> handler)
{
    if (!handler)
        return subscribe(name);
    Subscription *s = subscribe(name);
    if (!s)
        return nullptr;
    auto h = std::make_shared<DirectHandler>();
    h->onMessage = std::move(handler);
    s->d->direct = h;
    const QByteArray key = name.toUtf8();
    d->addDirect(d->direct.services, key, std::move(h));
    d->refreshQueued(key);
    return s;
}

void Client::unsubscribe(Subscription *subscription)
{
    delete subscription; // ~Subscription does the bookkeeping
}

void Client::registerCommand(const QString &name)
{
    if (!isValidName(name)) {
        d->fail(Status::Code::InvalidName,
                QStringLiteral("invalid command name '%1' (empty or over %2 bytes)")
                    .arg(name.left(64))
                    .arg(wire_format::MaxNameLength));
        return;
    }
    const auto post = [this, name] {
        handoff::post(d->core, [core = d->core, name] { core->addCommand(name); });
    };
    if (d->core)
        post();
    else
        QTimer::singleShot(0, this, [this, post] {
            if (d->core)
                post();
        });
}

void Client::registerCommandDirect(const QString &name, std::function<void(const dialog::Command &)> handler)
{
    if (!isValidName(name)) {
        registerCommand(name); // refused with its error
        return;
    }
    if (handler) {
        auto h = std::make_shared<DirectHandler>();
        h->onCommand = std::move(handler);
        d->addDirect(d->direct.commands, name.toUtf8(), std::move(h));
    }
    registerCommand(name);
}

void Client::setRequestHandlerDirect(const QString &service,
                                     std::function<void(const dialog::Request &)> handler)
{
    if (!isValidName(service)) {
        d->fail(Status::Code::InvalidName, QStringLiteral("invalid service name '%1'").arg(service.left(64)));
        return;
    }
    const QByteArray key = service.toUtf8();
    d->removeDirect(d->direct.requests, key, nullptr);
    if (handler) {
        auto h = std::make_shared<DirectHandler>();
        h->onRequest = std::move(handler);
        d->addDirect(d->direct.requests, key, std::move(h));
    }
}

void Client::unregisterCommand(const QString &name)
{
    d->removeDirect(d->direct.commands, name.toUtf8(), nullptr);
    if (d->core)
        handoff::post(d->core, [core = d->core, name] { core->removeCommand(name); });
}

bool Client::sendCommand(const QString &name, const QByteArray &data)
{
    if (!isValidName(name)) {
        d->fail(Status::Code::InvalidName, QStringLiteral("invalid command name '%1'").arg(name.left(64)));
        return false;
    }
    if (data.size() > d->options.maxMessageSize) {
        d->fail(Status::Code::MessageTooLarge,
                QStringLiteral("command '%1' of %2 bytes exceeds the maximum of %3")
                    .arg(name)
                    .arg(data.size())
                    .arg(d->options.maxMessageSize));
        return false;
    }
    ClientCore *core = d->sendCore.load();
    net::Transport *transport = d->sendTransport.load();
    if (!core || !transport)
        return false;
    const net::OutboxPtr cs = core->controlOutbox();
    if (!cs)
        return false;
    quint8 flags = 0;
    const QByteArray prepared = wire_format::prepareData(data, d->options.compressionThreshold, flags);
    return transport->send(cs, wire_format::encodeCommandFrame(name.toUtf8(), d->options.name.toUtf8(), flags,
                                                               prepared)) ==
           net::Transport::SendResult::Queued;
}

PendingReply Client::request(const QString &service, const QByteArray &data, int timeoutMs,
                             const QObject *context, std::function<void(const Reply &)> callback)
{
    return PendingReply(this, d->requests->start(service, data, timeoutMs, context, std::move(callback)));
}

bool Client::cancelRequest(quint64 id)
{
    return d->requests->cancel(id);
}

bool Client::isRequestPending(quint64 id) const
{
    return d->requests->isPending(id);
}

bool Client::reply(const Request &request, const QByteArray &data)
{
    if (data.size() > d->options.maxMessageSize) {
        d->fail(Status::Code::MessageTooLarge, QStringLiteral("reply of %1 bytes exceeds the maximum of %2")
                                                   .arg(data.size())
                                                   .arg(d->options.maxMessageSize));
        d->sendReply(request, 1, QByteArrayLiteral("reply too large"));
        return false;
    }
    return d->sendReply(request, 0, data);
}

bool Client::replyError(const Request &request, const QString &error)
{
    return d->sendReply(request, 1, error.toUtf8());
}

bool Client::flush(int timeoutMs)
{
    if (!d->transport)
        return true;
    return d->transport->waitUntilWritten(QDeadlineTimer(timeoutMs));
}

Client::Statistics Client::statistics() const
{
    Statistics s;
    if (!d->transport)
        return s;
    const net::Transport::Stats t = d->transport->stats();
    s.messagesOut = t.framesOut;
    s.bytesOut = t.bytesOut;
    s.dropped = t.framesDropped;
    s.reconnects = t.reconnects;
    s.messagesIn = t.framesIn;
    s.bytesIn = t.bytesIn;
    s.protocolErrors = t.protocolErrors;
    s.authFailures = t.authFailures;
    s.queuedBytes = t.queuedBytes;
    s.outgoingConnections = t.outgoingConnections;
    s.incomingConnections = t.incomingConnections;
    return s;
}

} // namespace dialog
