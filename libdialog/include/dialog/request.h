#pragma once

#include "dialog/status.h"

#include <QByteArray>
#include <QMetaType>
#include <QPointer>
#include <QSharedDataPointer>
#include <QString>

namespace dialog {

class Client;
class ClientPrivate;
class RequestPrivate;
class ReplyPrivate;

/// A request received by the provider of a service; answer it with Client::reply() or
/// Client::replyError() (once). Implicitly shared: cheap to copy, may be kept and answered later.
class Request
{
public:
    Request();
    ///@{
    /// Copies and moves share the data (implicit sharing).
    Request(const Request &other);
    Request(Request &&other) noexcept;
    Request &operator=(const Request &other);
    Request &operator=(Request &&other) noexcept;
    ///@}
    ~Request();

    /// The service the request was addressed to.
    QString service() const;
    /// The bytes the requester sent.
    QByteArray data() const;
    /// Name of the requesting process.
    QString origin() const;
    /// The OS user and host name the requesting process claims in its HELLO (empty when it did not
    /// say); trustworthy when the partition has a shared secret.
    QString originUser() const;
    ///@copydoc originUser()
    QString originHost() const;
    /// The address the request's connection came from.
    QString originAddress() const;
    /// True when the requesting process proved its name (origin()) with its process key on the
    /// request's connection; only in a process given the partition's identity secret
    /// (ClientOptions::identityFile; docs/security.md, "Identities"). False: the name is a claim.
    bool originProven() const;
    /// The request's number, unique per requesting process; Reply::id() of its answer.
    quint64 id() const;

private:
    friend class Client;
    friend class ClientPrivate;
    QSharedDataPointer<RequestPrivate> d;
};

/// The answer to Client::request(), delivered exactly once per request that is not cancelled.
/// Implicitly shared.
class Reply
{
public:
    Reply();
    /// A reply to request @p id: data() is @p data when @p status is Ok.
    Reply(quint64 id, const Status &status, const QByteArray &data = {});
    ///@{
    /// Copies and moves share the data (implicit sharing).
    Reply(const Reply &other);
    Reply(Reply &&other) noexcept;
    Reply &operator=(const Reply &other);
    Reply &operator=(Reply &&other) noexcept;
    ///@}
    ~Reply();

    /// The number of the request this reply answers (PendingReply and Request::id()).
    quint64 id() const;
    /// Ok (the provider answered with data()), Failed (the provider answered with an error:
    /// status().message()), NotAccepted (the provider takes no requests for this service),
    /// Timeout, ProviderLost (lost while the request was pending), InvalidName,
    /// MessageTooLarge or NotConnected (the request was not sent).
    Status status() const;
    /// status().code()
    Status::Code error() const;
    /// True when the provider answered with data(): status().isOk().
    bool isOk() const;
    /// The provider's answer when isOk(); empty otherwise.
    QByteArray data() const;
    /// status().message(): the provider's error, or why the request failed.
    QString errorString() const;

private:
    QSharedDataPointer<ReplyPrivate> d;
};

/// The handle Client::request() returns: lets the caller cancel the request. Cheap to copy; copies
/// refer to the same request. Dropping the handle does not cancel the request. Use it in the
/// thread of its Client.
class PendingReply
{
public:
    PendingReply() = default;
    /// The request id (as in Reply::id()); 0 for a default-constructed handle.
    quint64 id() const { return m_id; }
    /// True while the request waits for its reply (false once answered, timed out or cancelled,
    /// or once its Client is gone).
    bool isPending() const;
    /// Cancels the request: its callback will not be called, and the provider's answer, if one
    /// comes, is ignored. Returns false if it was no longer pending.
    bool cancel();

private:
    friend class Client;
    PendingReply(Client *client, quint64 id) : m_client(client), m_id(id) {}
    QPointer<Client> m_client;
    quint64 m_id = 0;
};

} // namespace dialog

Q_DECLARE_METATYPE(dialog::Request)
Q_DECLARE_METATYPE(dialog::Reply)
