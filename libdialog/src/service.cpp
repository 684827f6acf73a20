#include "client_p.h"
#include "payload_p.h"

#include <QDateTime>

namespace dialog {

Service::Service(std::shared_ptr<ServiceState> state, Client *client) : QObject(client), d(std::move(state))
{
}

Service::~Service() = default;

QString Service::name() const
{
    return d->name;
}

bool Service::update(const QByteArray &data)
{
    if (data.size() > d->maxMessageSize) {
        // Receivers would reject the frame and close the connection: refuse it here, loudly.
        qCWarning(lcClient).noquote() << "service" << d->name << ": update of" << data.size()
                                      << "bytes refused, over the maximum message size of" << d->maxMessageSize;
        return false;
    }
    const bool all = d->publish(data);
    if (!all) {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        if (now - d->lastDropSignalMs.load() >= 100) {
            d->lastDropSignalMs.store(now);
            Q_EMIT messagesDropped(d->dropped.load());
        }
    }
    return all;
}

quint64 Service::sequence() const
{
    QMutexLocker l(&d->lock);
    return d->sequence;
}

int Service::subscriberCount() const
{
    QMutexLocker l(&d->lock);
    return int(d->subscribers.size());
}

quint64 Service::droppedCount() const
{
    return d->dropped.load();
}

Service::FlowControl Service::flowControl() const
{
    return FlowControl(d->flowControl.load());
}

void Service::setFlowControl(FlowControl mode, int blockTimeoutMs)
{
    d->flowControl.store(int(mode));
    d->blockTimeoutMs.store(qMax(1, blockTimeoutMs));
}

} // namespace dialog
