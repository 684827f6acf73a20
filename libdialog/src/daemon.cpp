#include "dialog/daemon.h"

#include "dialog/application.h"
#include "dialog/report.h"

namespace dialog {

// The dispatcher must be chosen before QCoreApplication's constructor creates the main thread's.
DaemonApplication::DaemonApplication(int &argc, char **argv, const QString &name)
    : QCoreApplication((preferLowLatencyEventDispatcher(), argc), argv)
{
    setApplicationName(name);
}

DaemonApplication::~DaemonApplication() = default;

void DaemonApplication::beginService(Messages messages)
{
    quitOnTerminationSignals();
    if (messages == Messages::ToMessageLog)
        installMessageHandler();
}

void DaemonApplication::serviceReady(Client *client)
{
    if (client)
        startReporting(client);
    notifyReady();
}

} // namespace dialog
