#pragma once

namespace dialog {

/// Makes SIGTERM and SIGINT quit the running QCoreApplication cleanly (the handler only writes to a
/// socket pair; the quit happens in the event loop). Also ignores SIGPIPE. Call once, after
/// the application object exists.
void quitOnTerminationSignals();

/// Selects Qt's own UNIX event dispatcher instead of the glib one for every thread created from now
/// on (lower wake-up latency between DIALOG's threads). Call first in main(), before the application
/// object; GUI applications that need glib integration simply do not call it.
void preferLowLatencyEventDispatcher();

/// Tells the service manager this daemon is ready (systemd's Type=notify protocol): sends
/// "READY=1" and "MAINPID=<pid>" as one datagram to the Unix socket named by $NOTIFY_SOCKET
/// (a path, or an abstract name starting with '@'). Call once, after the daemon's ports are open.
/// Returns false, doing nothing, when $NOTIFY_SOCKET is unset (not started by systemd), and false
/// when the datagram cannot be sent. The variable is left set: children are not ours to report.
bool notifyReady();

} // namespace dialog
