// The Control Server's settings (dialog-controlserver's options).
#pragma once

#include "directory.h"

#include "dialog/audit.h"
#include "dialog/security.h"

#include "controlprotocol_p.h"

#include <QHostAddress>
#include <QSet>
#include <QString>

namespace dialog::cs {

struct ServerOptions
{
    QHostAddress bind{QHostAddress::LocalHost};
    quint16 port = 3425;
    QString advertisedHost;  ///< how processes reach us (default: the bind address, or the host name)
    int heartbeatMs = 1000;  ///< expected heartbeat interval (processes may announce their own)
    int heartbeatMisses = 3; ///< missed intervals before a process is declared lost
    int maxServicesPerProcess = 10000; ///< services one process may provide; more are refused
    int maxServices = 100000;          ///< services in the directory; more are refused
    /// Of maxServices, the room only the partition's own names may take (RunCtrl.P.* registered by P,
    /// IS.S by IS.Server.S): a flood of other names leaves it free. At most half of maxServices.
    int reservedServices = 1000;
    int maxNamesPerProcess = 10000;    ///< commands one process registers, services it requests (each)
    int maxNames = 200000;             ///< command registrations + requests in the directory
    /// Processes from one source address that may wait for their connect-back (accepted, not yet heard
    /// from since) at once; more are refused with "try again later" and come back paced.
    int maxConnectingPerAddress = 256; // a host starting its whole farm at once fits
    /// Largest DIALOG.Directory message (JSON bytes): a larger directory goes out in pages. Below
    /// the message limit (64 MiB) so that every subscriber can take it.
    qint64 directoryPageBytes = 8 * 1024 * 1024;
    LostLimits lost;   ///< bounds of the "lost" history
    QString standbyOf; ///< "host:port" of the primary: wait as a spare until it is gone
    /// The fencing term this server starts with as a primary (--term). A standby that takes over
    /// serves with one more than the highest it saw; a server that learns of a higher term serving
    /// elsewhere steps down (docs/controlserver.md).
    quint64 term = 1;
    /// Accept any address a process advertises. By default it must be the address its connection
    /// comes from (or, from this host, one of this host's addresses).
    bool trustAdvertised = false;
    net::TransportOptions transport;
    /// The partition's secret and TLS files (loaded into transport by start(); also those of the
    /// standby's connection to its primary).
    QString secretFile;
    security::TlsFiles tls;
    /// The partition's identity secret (--identity-file; loaded into transport.identitySecret by
    /// start()): processes prove their names with keys derived from it (security::processKey).
    QString identityFile;
    /// The names that must be proven (--proven-names: the partition's processes): a CONNECT naming
    /// one is refused unless its connection proved that name.
    QSet<QString> provenNames;
    /// Publish this process' reported messages (dialog::installMessageHandler()) on
    /// logservice::controlServer() for dialog-logger (the daemon does; in-process servers do not).
    bool reportMessages = false;
    /// Who may send which command, and the audit trail of commands (dialog/audit.h).
    AccessOptions access;
};

} // namespace dialog::cs
