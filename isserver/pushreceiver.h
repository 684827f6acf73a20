// The mirror side of a push mirror (IS paper §5.1): this IS server listens for the connection a
// master on another network opens to it (dialog-isserver --mirror-listen [ADDR:]PORT).
#pragma once

#include "dialog/is/repository.h"
#include "dialog/is/typeinfo.h"
#include "pushprotocol.h"

#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTcpServer>
#include <memory>

class QTcpSocket;
class QTimer;

namespace dialog::is {
class TypeRegistry;
}

namespace dialog::isd {

class PushCopy;

/// Keeps @p repository an exact copy of what the master IS server named @p master pushes to it.
/// One master connection is served at a time; a new one from the master replaces it (the master
/// only reconnects when it lost the old one). Each connection starts with the master's content:
/// what the copy holds and the master did not send is removed, so the copy resynchronises fully
/// after either side restarted. The copy is kept while no master is connected.
///
/// The connection carries nothing from the mirror to the master but the handshake answer and
/// pongs: nothing on the mirror side can write to the master. Bad input (another protocol,
/// another master's name, malformed or oversized frames, more than 1 MiB before the hello is accepted,
/// a handshake — TLS included — not completed within 10 s of connecting, however it trickles, or
/// silence for 3 ping intervals) closes that connection with one line on stderr; the copy and the
/// other connections are unaffected. At most 16 connections are in their handshake: a newer one
/// takes the place of the oldest. Without a shared secret it listens on loopback only, unless
/// told it is insecure.
///
/// Lives in the IS server's main thread, the one that applies the repository's other writes.
class PushReceiver : public QObject
{
    Q_OBJECT
public:
    PushReceiver(is::Repository &repository, is::TypeRegistry &types, const QString &master,
                 const push::Security &security = {}, QObject *parent = nullptr);
    ~PushReceiver() override;

    /// Listens on @p address:@p port (0: any free port). False with @p error.
    bool listen(const QHostAddress &address, quint16 port, QString *error);
    quint16 port() const { return m_server->serverPort(); }
    QString master() const { return m_master; }

Q_SIGNALS:
    /// Types of the master that this registry did not have (to be kept with a checkpoint).
    void typesAdded(const QList<dialog::is::TypeInfo> &types);
    /// Emitted at the end of every snapshot: the copy equals the master's content at that point.
    void synchronised(qsizetype objects);

private:
    struct Peer;
    void onNewConnection(QTcpSocket *socket);
    void onReadyRead(QTcpSocket *socket);
    bool onFrame(QTcpSocket *socket, int type, const QByteArray &payload, QString *error);
    bool hello(QTcpSocket *socket, const QByteArray &payload, QString *error);
    /// With a secret: the master's Auth answering our challenge; accepts its hello if right.
    bool authenticated(QTcpSocket *socket, const QByteArray &payload, QString *error);
    bool accept(QTcpSocket *socket, const QJsonObject &hello, QString *error);
    void close(QTcpSocket *socket, const QString &why, bool graceful = false);
    void onTimer();
    void report(const QString &what);

    is::Repository &m_repository;
    is::TypeRegistry &m_types;
    const QString m_master;
    const push::Security m_security;
    std::unique_ptr<QTcpServer> m_server; // hands connections over at once, TLS ones encrypting
    QPointer<QTcpSocket> m_active;        // the master's accepted connection
    QTimer *m_timer = nullptr;
    PushCopy *m_copy = nullptr; // what the accepted connection's frames change in the copy
    qint64 m_lastTickMs = 0;
};

} // namespace dialog::isd
