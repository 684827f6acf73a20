// The master side of a push mirror (IS paper §5.1): this IS server opens the connection out to a
// mirror listening on another network (dialog-isserver --push-to HOST:PORT).
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeinfo.h"
#include "pushprotocol.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QSet>
#include <QTcpSocket>

class QTimer;

namespace dialog::isd {

/// Streams the objects of @p repository that match @p criteria to one push mirror at host:port:
/// on every connection, once the mirror accepted, the matching content (a snapshot framed by
/// SnapshotBegin/End), then every change in the order applied. The connection is re-opened after
/// any failure, with back-off (250 ms doubling to 2 s), so a mirror that was away or restarted,
/// or a master that restarted, is resynchronised by the next snapshot.
///
/// The master never waits for the mirror: beyond 8 MiB queued on the socket, changes are no
/// longer queued; the names are kept and their newest values (or removals) sent once the queue
/// has drained to half. Silence is detected by pings: a mirror that answers none for 3 intervals
/// while nothing is being written is dropped and reconnected.
///
/// Lives in the thread that applies the repository's writes (the IS server's main thread): the
/// snapshot and the changes that follow it then fit exactly. change() and typesDeclared() are
/// called in that thread.
class PushSender : public QObject
{
    Q_OBJECT
public:
    PushSender(const is::Repository &repository, const QString &host, quint16 port,
               const is::Criteria &criteria, int pingMs = 2000, const push::Security &security = {},
               QObject *parent = nullptr);
    ~PushSender() override;

    void start();
    QString target() const;
    /// A change applied to the repository (its listener).
    void change(const is::Change &change);
    /// Types the master learnt at run time: sent before any change that needs them.
    void typesDeclared(const QList<is::TypeInfo> &types);
    bool isStreaming() const { return m_state == State::Streaming; }

Q_SIGNALS:
    /// Emitted after the snapshot of each connection was handed to the socket.
    void snapshotSent(qsizetype objects);

private:
    enum class State
    {
        Idle,
        Connecting,
        Handshake,
        Streaming
    };
    void connectNow();
    void onConnected();
    void onReadyRead();
    /// The mirror's Auth: checks its proof, answers with ours. False with @p error.
    bool authenticate(const QByteArray &payload, QString *error);
    void onBytesWritten();
    void onPingTimer();
    void drop(const QString &why);
    void sendSnapshot();
    void flush();
    void sendStale();
    void report(const QString &what);

    const is::Repository &m_repository;
    const QString m_host;
    const quint16 m_port;
    const is::Criteria m_criteria;
    const int m_pingMs;
    const push::Security m_security;
    QByteArray m_nonce, m_hello; // of the current connection, for the proofs
    bool m_authenticated = false;
    QTcpSocket *m_socket = nullptr;
    QTimer *m_retryTimer = nullptr;
    QTimer *m_pingTimer = nullptr;
    State m_state = State::Idle;
    QByteArray m_in;
    QByteArray m_pending; // records of the changes since the last flush
    bool m_flushScheduled = false;
    QSet<QString> m_stale; // changed while the socket's queue was over its bound
    int m_retryMs = 250;
    QString m_lastReport;
    QElapsedTimer m_clock;
    qint64 m_lastHeardMs = 0, m_lastWrittenMs = 0, m_lastTickMs = 0;
};

} // namespace dialog::isd
