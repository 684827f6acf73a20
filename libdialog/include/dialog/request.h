#pragma once

#include <QByteArray>
#include <QMetaType>
#include <QString>

namespace dialog {

class Client;
class ClientPrivate;

/// A request received by the provider of a service; answer it with Client::reply() or
/// Client::replyError() (once). Cheap to copy.
class Request
{
public:
    Request() = default;
    /// The service the request was addressed to.
    QString service() const { return m_service; }
    QByteArray data() const { return m_data; }
    /// Name of the requesting process.
    QString origin() const { return m_origin; }
    quint64 id() const { return m_id; }

private:
    friend class Client;
    friend class ClientPrivate;
    QString m_service, m_origin, m_host;
    QByteArray m_data;
    quint64 m_id = 0;
    quint16 m_port = 0;
};

/// The answer to Client::request(), delivered exactly once per request.
class Reply
{
public:
    enum class Status
    {
        Ok,             ///< the provider answered with data()
        Failed,         ///< the provider answered with an error (errorString())
        NotAccepted,    ///< the provider does not take requests for this service
        Timeout,        ///< no answer within the time-out
        ProviderLost,   ///< the provider was lost while the request was pending
        InvalidRequest, ///< bad service name, data too large, or the client is not started
    };
    Reply() = default;
    Reply(quint64 id, Status status, const QByteArray &data, const QString &error)
        : m_id(id), m_status(status), m_data(data), m_error(error)
    {
    }
    quint64 id() const { return m_id; }
    Status status() const { return m_status; }
    bool isOk() const { return m_status == Status::Ok; }
    QByteArray data() const { return m_data; }
    QString errorString() const { return m_error; }

private:
    quint64 m_id = 0;
    Status m_status = Status::InvalidRequest;
    QByteArray m_data;
    QString m_error;
};

} // namespace dialog

Q_DECLARE_METATYPE(dialog::Request)
Q_DECLARE_METATYPE(dialog::Reply)
