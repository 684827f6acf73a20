#pragma once

namespace dialog {

/// Makes SIGTERM and SIGINT quit the running QCoreApplication cleanly (the handler only writes to a
/// socket pair; the quit happens in the event loop). Also ignores SIGPIPE. Call once, after
/// the application object exists.
void quitOnTerminationSignals();

} // namespace dialog
