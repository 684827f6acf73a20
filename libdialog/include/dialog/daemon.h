// The frame of a DIALOG daemon's main(): its application object, and the steps of its start that
// every daemon takes alike (signals, the message handler, reporting to dialog-logger, readiness).
#pragma once

#include <QCoreApplication>
#include <QString>

namespace dialog {

class Client;

/// The application object of a DIALOG daemon. It selects the low-latency event dispatcher before
/// Qt's application object exists (preferLowLatencyEventDispatcher()) and names the application;
/// beginService() and serviceReady() are the two steps around the start of the daemon's parts.
///
///     int main(int argc, char *argv[])
///     {
///         dialog::DaemonApplication app(argc, argv, QStringLiteral("dialog-example"));
///         dialog::OptionTable options(QStringLiteral("dialog-example"), QStringLiteral("An example."));
///         auto settings = dialog::ClientOptions::fromEnvironment(QStringLiteral("Example"));
///         settings.addTo(options);
///         if (!options.process(app.arguments()))
///             return 1;
///         app.beginService();
///         dialog::Client client(settings);
///         if (!client.start())
///             return options.fail(client.errorString());
///         app.serviceReady(&client);
///         return app.exec();
///     }
///
/// (docs/libdialog.md has it as a compiled example.)
///
/// Not copyable; one per process, in the main thread.
class DaemonApplication : public QCoreApplication
{
public:
    /// Where the daemon's own messages (qDebug() … qFatal() and its logging categories) go.
    enum class Messages
    {
        /// To stderr and, through report(), to the message log (dialog-logger) once serviceReady()
        /// has a client; what the start reports before that waits in the reporting queue.
        ToMessageLog,
        /// To stderr only (dialog-controlserver --no-message-log).
        StderrOnly,
    };

    /// Calls preferLowLatencyEventDispatcher(), then constructs the QCoreApplication on @p argc
    /// and @p argv and sets its application name to @p name ("dialog-isserver").
    DaemonApplication(int &argc, char **argv, const QString &name);
    ~DaemonApplication() override;

    /// Call once the options are read, before the daemon's parts start: SIGTERM and SIGINT quit
    /// the event loop (quitOnTerminationSignals()), and with Messages::ToMessageLog the message
    /// handler is installed (installMessageHandler()).
    void beginService(Messages messages = Messages::ToMessageLog);
    /// Call once the daemon serves: the queued messages and every later one go to dialog-logger
    /// through @p client (startReporting(); pass null for a daemon that delivers them itself, as
    /// the Control Server does), and the service manager is told the daemon is ready
    /// (notifyReady(), a no-op outside systemd).
    void serviceReady(Client *client);
};

} // namespace dialog
