#pragma once

#include "dialog/status.h"

#include <QByteArray>
#include <QString>
#include <functional>
#include <memory>

class QObject;

namespace dialog {

class ClientPrivate;
struct StreamState;

/// A one-way channel of messages from this process to one other process, which receives them
/// through a Subscription it attached with Client::attach(channel). Servers use it to push to
/// their clients (IS subscriptions, mirrors) without a Control Server registration per channel.
/// Opened with Client::openStream() from a Request of the receiving process.
///
/// Thread-safe: send() may be called from any thread. It never blocks: when the destination's
/// queue is at its bound (ClientOptions::maxQueueBytes, shared by everything sent to that
/// process) it returns Status::Code::QueueFull and the caller decides (retry after whenRoom(),
/// queue, drop).
class Stream
{
public:
    ~Stream();
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;

    /// The channel the receiver attached with Client::attach().
    QString channel() const;
    /// Name of the receiving process.
    QString peer() const;
    /// Ok (handed to the sender thread of the destination), QueueFull (the destination's queue is
    /// at its bound; nothing was queued) or Broken (the destination could not be reached or its
    /// connection broke; nothing was queued).
    Status::Code send(const QByteArray &data);
    /// Calls @p fn once, in @p context's thread (queued), when the destination's queue has drained
    /// to half its bound (soon, if it already has). Not called if @p context is destroyed first, nor
    /// if the stream is broken when whenRoom() is called.
    void whenRoom(const QObject *context, std::function<void()> fn);
    /// True once the destination failed (connection refused or broken): the receiver is gone or
    /// must re-open the channel.
    bool isBroken() const;
    /// Bytes queued for the destination (all channels to that process).
    qint64 queuedBytes() const;
    /// Messages handed to the sender thread (send() returned Ok).
    quint64 sentCount() const;

private:
    friend class Client;
    friend class ClientPrivate;
    explicit Stream(std::shared_ptr<StreamState> state);
    std::shared_ptr<StreamState> const d;
};
using StreamPtr = std::shared_ptr<Stream>;

} // namespace dialog
