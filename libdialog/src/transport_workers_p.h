// Thread-confined workers of the transport. Each lives in its own QThread and owns its sockets.
#pragma once

#include <poll.h>
#include <vector>

#include "inbounddecoder_p.h"
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
        std::unique_ptr<wire_format::InboundDecoder> answers; // frames the destination writes back (refusals)
        // With a shared secret: nothing is written after the HELLO until the destination proved the
        // secret (its AUTH); frames wait in held meanwhile.
        bool authenticated = true;
        QByteArray nonce, hello; // our nonce and HELLO payload, for the proofs
        QList<Outbox::Chunk> held;
        qint64 openedAt = 0;
    };
    /// Reads what a destination wrote back on our connection: its AUTH while authenticating, then
    /// REFUSED frames only.
    void readAnswers(Outbox *key);
    /// Checks the destination's AUTH; on success proves the secret in turn and writes the frames
    /// held meanwhile. False with @p error otherwise.
    bool authenticate(Connection *c, const QByteArray &auth, QString *error);
    QTcpSocket *newSocket(Outbox *key);
    /// We refuse the destination (its proof or its certificate): counted, logged, and reported
    /// with answered() as a REFUSED "auth".
    void refused(Connection *c, const QString &reason);
    /// Null when the connection failed as it was opened (fail() has run and deleted it).
    Connection *open(const OutboxPtr &box);
    /// Once the connection is up and authenticated (never with TLS): lets the calling threads write
    /// to it while its queue is empty (TransportOptions::directWrites).
    void enableDirect(Connection *c);
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
    /// Writes @p frame on the inbound connection @p connection (PeerInfo::connection), if still open.
    void answer(const void *connection, const QByteArray &frame);
    /// Continues reading after the sinks caught up.
    void resume();
    /// Closes the connection @p id if it is still in its handshake: a newer connection took its
    /// place (ConnectionLimits::admitHandshake).
    void giveUp(quint64 id);

private:
    struct Connection;
    /// What one readFrom() decoded, delivered to the sinks at its end.
    struct Received
    {
        InboundBatch control, data;
        qint64 controlBytes = 0, dataBytes = 0;
        quint64 frames = 0;
        const char *lastChunk = nullptr; // the receive buffer last shared (Inbound::chunk), counted
        QString error;
        bool authFailed = false; ///< the error is a failed authentication: refuse, telling why
    };
    void readFrom(Connection *c);
    /// Decodes one frame the connection's decoder handed over into @p r (see
    /// InboundDecoder::decode for @p payload and @p owned). False with r.error on a bad frame.
    bool takeFrame(Connection *c, wire_format::Type type, quint8 flags, QByteArrayView payload,
                   QByteArray *owned, Received &r);
    /// The first frame of a connection: who is sending. False with @p error if it is not a HELLO.
    bool acceptHello(Connection *c, wire_format::Type type, QByteArrayView payload, Received &r);
    /// True when the sinks are too far behind: stop reading, TCP pushes back on the senders.
    bool shouldPause();
    void closeWithError(Connection *c, const QString &reason);
    /// Ends a failed authentication: counts and logs it, tells the peer why with a REFUSED frame
    /// (when it can still be written), then closes the connection.
    void refuse(Connection *c, const QString &reason, bool tell = true);
    /// With a secret: the AUTH answering our challenge. False with @p error if it is not.
    bool acceptProof(Connection *c, wire_format::Type type, QByteArrayView payload, QString &error);
    void drop(Connection *c);
    /// The peer of @p c is accepted (HELLO, and AUTH with a secret): counted past its handshake,
    /// its frames no longer bounded by MaxPreAuthPayload. False with @p error at a connection cap.
    bool admitted(Connection *c, QString &error);
    /// Takes @p c out of the transport's connection counts (before it is closed).
    void uncount(Connection *c);
    /// Qt's read buffer for each inbound socket (see readBufferBytesFor()), applied to this
    /// reader's sockets when the number of inbound connections moved it.
    void resizeReadBuffers();
    /// TransportOptions::receiveSpinUs: called by the event dispatcher just before this thread
    /// sleeps; polls the connections until one is readable or the spin time after the last frame
    /// has passed.
    void spinBeforeSleep();

    Transport *m_transport;
    qint64 m_lastFrameNs = 0; // steady clock, when readFrom() last decoded a frame
    bool m_spinHooked = false;
    std::vector<pollfd> m_pollFds; // rebuilt when connections come and go
    bool m_pollFdsStale = true;
    QHash<QTcpSocket *, Connection *> m_conns;
    qint64 m_readBufferBytes = 0;
    bool m_paused = false;
    quint64 m_resumeCount = 0;
};

class Listener : public QTcpServer
{
    Q_OBJECT
public:
    explicit Listener(Transport *t);

protected:
    void incomingConnection(qintptr fd) override;

private:
    Transport *m_transport;
};

} // namespace dialog::net
