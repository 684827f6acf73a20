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

} // namespace dialog
