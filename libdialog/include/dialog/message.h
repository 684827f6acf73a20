#pragma once

#include <QByteArray>
#include <QMetaType>
#include <QString>

namespace dialog {

/// One update of a service as a subscriber receives it. Cheap to copy (the data is implicitly shared).
class Message
{
public:
    Message() = default;
    Message(const QByteArray &service, const QByteArray &data, quint64 sequence)
        : m_service(service), m_data(data), m_sequence(sequence)
    {
    }

    QString service() const { return QString::fromUtf8(m_service); }
    QByteArray serviceName() const { return m_service; }
    QByteArray data() const { return m_data; }
    /// Per-service counter set by the provider (1 = first update of this provider incarnation).
    quint64 sequence() const { return m_sequence; }

private:
    QByteArray m_service;
    QByteArray m_data;
    quint64 m_sequence = 0;
};

/// A command as its registrant receives it.
class Command
{
public:
    Command() = default;
    Command(const QByteArray &name, const QByteArray &data, const QByteArray &origin)
        : m_name(name), m_data(data), m_origin(origin)
    {
    }
    QString name() const { return QString::fromUtf8(m_name); }
    QByteArray data() const { return m_data; }
    /// Name of the process that sent the command.
    QString origin() const { return QString::fromUtf8(m_origin); }

private:
    QByteArray m_name;
    QByteArray m_data;
    QByteArray m_origin;
};

} // namespace dialog

Q_DECLARE_METATYPE(dialog::Message)
Q_DECLARE_METATYPE(dialog::Command)
