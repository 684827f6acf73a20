#include "client_p.h"
#include "control_p.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QHostInfo>
#include <QRandomGenerator>
#include <QTimer>

#include <cstdio>
#include <unistd.h>

namespace dialog {

using net::Endpoint;

ClientPrivate::ClientPrivate(Client *q, const ClientOptions &o) : q(q), options(o) {}

void ClientPrivate::fail(Client::Error e, const QString &why)
{
    error = e;
    errorString = why;
    qCWarning(lcClient).noquote() << options.name << ":" << why;
    Q_EMIT q->errorOccurred(e);
}

void ClientPrivate::deliver(net::InboundBatch &batch)
{
    for (net::Inbound &in : batch) {
        if (in.type == wire_format::Type::ServiceMessage) {
            auto it = subscriptions.constFind(in.name);
            if (it == subscriptions.cend())
                continue; // unsubscribed meanwhile
            const Message m(it.key(), in.data, in.sequence);
            const quint64 incarnation = in.incarnation;
            // Copy: a slot may unsubscribe while we iterate.
            const QList<Subscription *> subs = it.value();
            for (Subscription *s : subs)
                s->deliver(m, incarnation);
        } else if (in.type == wire_format::Type::CommandMessage) {
            Q_EMIT q->commandReceived(Command(in.name, in.data, in.origin));
        }
    }
}

void ClientPrivate::onSubscriptionChanged(const QString &service, int state, const QString &provider)
{
    const QList<Subscription *> subs = subscriptions.value(service.toUtf8());
    for (Subscription *s : subs)
        s->setState(Subscription::State(state), provider);
}

void ClientPrivate::onRefused(const QString &what, const QString &name, const QString &reason)
{
    const QString why = QStringLiteral("%1 '%2' refused by the Control Server: %3").arg(what, name, reason);
    if (what == QLatin1String("service")) {
        fail(Client::Error::ServiceRefused, why);
        if (options.exitOnRefusal) {
            // The DIALOG rule: a process registering a service that exists must not run.
            std::fprintf(stderr, "%s: %s\n", qPrintable(options.name), qPrintable(why));
            std::fflush(stderr);
            ::_exit(1);
        }
    } else {
        qCWarning(lcClient).noquote() << options.name << ":" << why;
    }
}

Client::Client(const QString &name, QObject *parent)
    : Client(ClientOptions::fromArguments(QCoreApplication::arguments(), name), parent)
{
}

Client::Client(const ClientOptions &options, QObject *parent)
    : QObject(parent), d(std::make_unique<ClientPrivate>(this, options))
{
    qRegisterMetaType<dialog::Message>();
    qRegisterMetaType<dialog::Command>();
    if (d->options.name.isEmpty())
        d->options.name = QCoreApplication::applicationName() + QLatin1Char('-') +
                          QString::number(QCoreApplication::applicationPid());
    QTimer::singleShot(0, this, [this] { start(); });
}

Client::~Client()
{
    if (d->core) {
        QMetaObject::invokeMethod(d->core, &ClientCore::shutdown, Qt::BlockingQueuedConnection);
        flush(200);
        d->coreThread.quit();
        d->coreThread.wait(); // the core is deleted with its thread
        d->core = nullptr;
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
        return d->error != Error::ListenFailed && d->error != Error::InvalidAddress;
    d->started = true;

    for (const QString &s : std::as_const(d->options.controlServers)) {
        Endpoint e;
        if (!Endpoint::parse(s.trimmed(), e)) {
            d->fail(Error::InvalidAddress,
                    QStringLiteral("invalid Control Server address '%1' (expected host:port)").arg(s));
            return false;
        }
        d->servers.append(e);
    }
    if (d->servers.isEmpty()) {
        d->fail(Error::InvalidAddress, QStringLiteral("no Control Server address"));
        return false;
    }

    // Advertise an address others can reach: loopback when the Control Server is local.
    QString host = d->options.host;
    const QHostAddress csAddr(d->servers.first().host);
    if (host.isEmpty())
        host = (csAddr.isLoopback() || d->servers.first().host == QLatin1String("localhost"))
                   ? QStringLiteral("127.0.0.1")
                   : QHostInfo::localHostName();
    const QHostAddress bindAddr = QHostAddress(host).isLoopback() ? QHostAddress(QHostAddress::LocalHost)
                                                                  : QHostAddress(QHostAddress::Any);

    net::TransportOptions to;
    to.senderThreads = d->options.senderThreads;
    to.readerThreads = d->options.readerThreads;
    to.maxQueueBytes = d->options.maxQueueBytes;
    to.maxMessageSize = d->options.maxMessageSize;
    to.idleTimeoutMs = d->options.idleTimeoutMs;
    d->transport = std::make_unique<net::Transport>(to);
    d->transport->setDataSink(this, [this](net::InboundBatch &b) { d->deliver(b); });
    connect(d->transport.get(), &net::Transport::protocolError, this,
            [this](const QString &peer, const QString &why, const QString &, quint64) {
                d->fail(Error::ProtocolError, QStringLiteral("closed connection from %1: %2").arg(peer, why));
            });

    net::PeerInfo self;
    self.name = d->options.name;
    self.pid = quint32(QCoreApplication::applicationPid());
    self.incarnation = QRandomGenerator::system()->generate64() | 1;

    QString why;
    if (!d->transport->listen(bindAddr, d->options.port, &why)) {
        d->fail(Error::ListenFailed, why);
        return false;
    }
    // Nobody knows our port before CONNECT, so no frame can arrive before the sink is set.
    self.endpoint = Endpoint{host, d->transport->serverPort()};
    d->transport->setIdentity(self);
    d->core = new ClientCore(d->transport.get(), d->options, self, d->servers);
    d->transport->setControlSink(d->core, [core = d->core](net::InboundBatch &b) { core->handleControl(b); });

    d->coreThread.setObjectName(QStringLiteral("dialog-server"));
    d->core->moveToThread(&d->coreThread);
    connect(&d->coreThread, &QThread::finished, d->core, &QObject::deleteLater);
    connect(d->core, &ClientCore::stateChanged, this, [this](int s) {
        const State st = State(s);
        if (st == d->state)
            return;
        d->state = st;
        Q_EMIT stateChanged(st);
        if (st == State::Connected)
            Q_EMIT connected();
    });
    connect(d->core, &ClientCore::subscriptionChanged, this,
            [this](const QString &svc, int st, const QString &p) { d->onSubscriptionChanged(svc, st, p); });
    connect(d->core, &ClientCore::refused, this,
            [this](const QString &w, const QString &n, const QString &r) { d->onRefused(w, n, r); });
    d->coreThread.start();

    // Everything declared before start() goes to the core now.
    for (Service *s : std::as_const(d->services)) {
        ServiceStatePtr st = s->d;
        st->transport = d->transport.get();
        QMetaObject::invokeMethod(d->core, [core = d->core, st] { core->addService(st); });
    }
    QMetaObject::invokeMethod(d->core, &ClientCore::start);
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
        d->fail(Error::InvalidName, QStringLiteral("invalid service name '%1' (empty or over %2 bytes)")
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
        QMetaObject::invokeMethod(d->core, [core = d->core, st] { core->addService(st); });
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
        QMetaObject::invokeMethod(d->core, [core = d->core, name] { core->removeService(name); });
    delete s;
}

Subscription *Client::subscribe(const QString &name)
{
    if (!isValidName(name)) {
        d->fail(Error::InvalidName, QStringLiteral("invalid service name '%1' (empty or over %2 bytes)")
                                        .arg(name.left(64))
                                        .arg(wire_format::MaxNameLength));
        return nullptr;
    }
    auto *s = new Subscription(name, this);
    d->subscriptions[name.toUtf8()].append(s);
    const auto post = [this, name] {
        QMetaObject::invokeMethod(d->core, [core = d->core, name] { core->addRequest(name); });
    };
    if (d->core)
        post();
    else
        QTimer::singleShot(0, this, [this, post] {
            if (d->core)
                post();
        });
    return s;
}

void Client::unsubscribe(Subscription *subscription)
{
    delete subscription; // ~Subscription does the bookkeeping
}

void Client::registerCommand(const QString &name)
{
    if (!isValidName(name)) {
        d->fail(Error::InvalidName, QStringLiteral("invalid command name '%1' (empty or over %2 bytes)")
                                        .arg(name.left(64))
                                        .arg(wire_format::MaxNameLength));
        return;
    }
    const auto post = [this, name] {
        QMetaObject::invokeMethod(d->core, [core = d->core, name] { core->addCommand(name); });
    };
    if (d->core)
        post();
    else
        QTimer::singleShot(0, this, [this, post] {
            if (d->core)
                post();
        });
}

void Client::unregisterCommand(const QString &name)
{
    if (d->core)
        QMetaObject::invokeMethod(d->core, [core = d->core, name] { core->removeCommand(name); });
}

bool Client::sendCommand(const QString &name, const QByteArray &data)
{
    if (!isValidName(name)) {
        d->fail(Error::InvalidName, QStringLiteral("invalid command name '%1'").arg(name.left(64)));
        return false;
    }
    if (data.size() > d->options.maxMessageSize) {
        d->fail(Error::MessageTooLarge, QStringLiteral("command '%1' of %2 bytes exceeds the maximum of %3")
                                            .arg(name)
                                            .arg(data.size())
                                            .arg(d->options.maxMessageSize));
        return false;
    }
    if (!d->core)
        return false;
    const net::OutboxPtr cs = d->core->controlOutbox();
    if (!cs)
        return false;
    quint8 flags = 0;
    const QByteArray prepared = wire_format::prepareData(data, d->options.compressionThreshold, flags);
    return d->transport->send(cs, wire_format::encodeCommandFrame(name.toUtf8(), d->options.name.toUtf8(),
                                                                  flags, prepared)) ==
           net::Transport::SendResult::Queued;
}

bool Client::flush(int timeoutMs)
{
    if (!d->transport)
        return true;
    QDeadlineTimer deadline(timeoutMs);
    while (d->transport->stats().queuedBytes > 0) {
        if (deadline.hasExpired())
            return false;
        QThread::msleep(1);
    }
    return true;
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
    s.queuedBytes = t.queuedBytes;
    s.outgoingConnections = t.outgoingConnections;
    s.incomingConnections = t.incomingConnections;
    return s;
}

} // namespace dialog
