// The settings of one IS server, as its command line gives them (main.cpp).
#pragma once

#include "quota.h"

#include "dialog/audit.h"
#include "dialog/clientoptions.h"
#include "dialog/is/journal.h"

#include <QHostAddress>
#include <QList>
#include <QPair>
#include <QSslConfiguration>
#include <QString>
#include <QStringList>

namespace dialog::isd {

struct ServerOptions
{
    QString name;
    int threads = 2;
    QString dataDir;  ///< empty: no persistence
    QString typesDir; ///< empty: only the built-in types (and those declared at run time)
    int checkpointS = 10;
    /// Write-ahead journal next to the checkpoint (dialog/is/journal.h): an acknowledged write survives
    /// a crash. Only with a data directory, never on a mirror (its content comes from the master).
    bool journal = true;
    is::Journal::Sync journalSync = is::Journal::Sync::Batch;
    int queueRecords = 10000;
    int slowGraceMs = 500; ///< DispatcherOptions::slowGraceMs
    // Web IS (webserver.h): off while httpPort < 0; 0 listens on any free port.
    int httpPort = -1;
    QString httpBind = QStringLiteral("127.0.0.1");
    int httpMaxRequests = 16;   ///< concurrent HTTP requests; more get 503
    int httpMaxWebSockets = 64; ///< concurrent WebSocket clients; more are closed with a reason
    int httpIdleS = 30;         ///< an HTTP connection without a request in progress is closed after this
    int httpMaxPerAddress = 32; ///< open HTTP/WebSocket connections from one client address
    int httpHeadS = 5;          ///< a connection's first request head must be complete within this
    QByteArray httpToken;       ///< bearer token of /is and /metrics (HTTP and WebSocket); empty: none
    bool httpTls = false;       ///< HTTPS/WSS with httpTlsConfiguration
    QSslConfiguration httpTlsConfiguration;
    AccessOptions access;          ///< who may write which object, and the audit trail of writes
    Quota::Limits quota;           ///< what one client may store, and the server in total
    int scanBudgetMs = 2000;       ///< matching time of one list or subscription (scanbudget.h); 0: none
    QString httpRenderer; ///< dialog-render, which draws GET /is/<S>/<S.O>.png; empty: beside dialog-isserver
    QString webRoot;               ///< directory of the web page (resources/web); empty: the built-in default
    QString metricsCriteria;       ///< object-name regex of the objects GET /metrics exports; empty: none
    int metricsMaxObjects = 10000; ///< objects GET /metrics exports at most (the rest are counted)
    // Mirror (mirror.h): a read-only copy of the server mirrorOf, restricted to mirrorCriteria.
    QString mirrorOf;
    QString mirrorCriteria; ///< object-name regex; empty: every object
    // Push mirror (pushsender.h, pushreceiver.h): this master pushes to mirrors at pushTo
    // ("host:port"), or this mirror listens at mirrorListen for the master mirrorMaster.
    QStringList pushTo;
    QString pushCriteria;  ///< object-name regex; empty: every object
    int pushPingMs = 2000; ///< silence for 3 intervals drops the connection (both sides)
    QHostAddress mirrorListenAddress;
    int mirrorListenPort = -1; ///< < 0: not a push mirror
    QString mirrorMaster;      ///< empty: a master of this server's own name
    // History ring (dialog/is/history.h): the newest historyCount values, historySeconds at most.
    int historyCount = 600;
    int historySeconds = 3600;
    QString historyConfig; ///< per-name / per-type bounds (HistoryStore::parseRules); empty: none
    /// Farm sums (summer.h): each object-name regex with the object that holds the sum of its matches.
    QList<QPair<QString, QString>> sums;
    QString alarmsFile; ///< alarm rules (alarms.h); empty: none
    ClientOptions client;
};

} // namespace dialog::isd
