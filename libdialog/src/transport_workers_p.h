// Thread-confined workers of the transport. Each lives in its own QThread and owns its sockets.
#pragma once

#include "transport_p.h"

#include <QElapsedTimer>
#include <QHash>
#include <QTcpServer>
#include <deque>

class QTcpSocket;
class QTimer;

namespace dialog::net {

/// Owns the outgoing sockets of the destinations assigned to it.
class SenderWorker : public QObject
{
    Q_OBJECT
public:
    explicit SenderWorker(Transport *transport);
    ~SenderWorker() override;
    /// Writes everything queued in @p box. Runs in the worker's thread.
    void flush(const OutboxPtr &box);

private:
    struct Connection
    {
        QTcpSocket *socket = nullptr;
        OutboxPtr box;
        quint64 generation = 0;
        qint64 lastActivity = 0;
        bool connected = false;
        // Frames handed to the socket and not yet written: (end in bytes handed, frames ending there).
        std::deque<std::pair<qint64, qint64>> unwritten;
        qint64 handed = 0;  // bytes handed to the socket
        qint64 written = 0; // bytes the socket reported written
        void hand(qint64 bytes, qint64 frames);
        void wrote(qint64 bytes);
    };
    Connection *open(const OutboxPtr &box);
    void fail(Outbox *key, const QString &reason);
    void close(Outbox *key);
    void checkTimeouts();

    Transport *m_transport;
    QHash<Outbox *, Connection *> m_conns;
    QTimer *m_timer;
    QElapsedTimer m_clock;
};

/// Reads the inbound sockets handed to it, decodes frames and passes them to the sinks.
class ReaderWorker : public QObject
{
    Q_OBJECT
public:
    explicit ReaderWorker(Transport *transport);
    ~ReaderWorker() override;
    void addDescriptor(qintptr fd);
    /// Continues reading after the sinks caught up.
    void resume();

private:
    struct Connection;
    /// What one readFrom() decoded, delivered to the sinks at its end.
    struct Received
    {
        InboundBatch control, data;
        qint64 controlBytes = 0, dataBytes = 0;
        quint64 frames = 0;
        QString error;
    };
    void readFrom(Connection *c);
    /// Decodes one frame the connection's decoder handed over into @p r (see
    /// InboundDecoder::decode for @p payload and @p owned). False with r.error on a bad frame.
    bool takeFrame(Connection *c, wire_format::Type type, quint8 flags, QByteArrayView payload,
                   QByteArray *owned, Received &r);
    /// The first frame of a connection: who is sending. False with @p error if it is not a HELLO.
    bool acceptHello(Connection *c, wire_format::Type type, QByteArrayView payload, QString &error);
    /// True when the sinks are too far behind: stop reading, TCP pushes back on the senders.
    bool shouldPause();
    void closeWithError(Connection *c, const QString &reason);
    void drop(Connection *c);

    Transport *m_transport;
    QHash<QTcpSocket *, Connection *> m_conns;
    bool m_paused = false;
    quint64 m_resumeCount = 0;
};

class Listener : public QTcpServer
{
    Q_OBJECT
public:
    explicit Listener(Transport *t) : m_transport(t) {}

protected:
    void incomingConnection(qintptr fd) override;

private:
    Transport *m_transport;
};

} // namespace dialog::net
