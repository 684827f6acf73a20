// The Control Server's own services: DIALOG.Directory (the directory, in pages when large),
// DIALOG.Statistics (every process's communication figures), DIALOG.Command (takes
// requests only: the command relay answers them) and its message log. It keeps their subscribers
// and publishes a change soon after it happens, coalescing bursts.
#pragma once

#include "servercontext.h"

#include <QObject>

class QTimer;

namespace dialog::cs {

class CommandRelay;
class MessageLog;

class DirectoryPublisher : public QObject
{
    Q_OBJECT
public:
    /// Keeps its message log from now on with options.reportMessages (published once it serves).
    DirectoryPublisher(ServerContext &context, const CommandRelay &relay, QObject *parent = nullptr);

    /// Makes the services on the context's transport and publishes their first values.
    void start();
    /// The service of ours named @p name, or null (before start() too).
    ServiceStatePtr ownService(const QString &name) const;
    /// SUBSCRIBE_SERVICE / UNSUBSCRIBE_SERVICE for one of our services (others are ignored).
    void onSubscribe(const net::Inbound &in);
    /// The directory changed: published within the publishing interval.
    void directoryChanged();
    /// Figures arrived: the statistics are published within statisticsIntervalMs.
    void statisticsChanged();
    /// @p p is gone: it no longer subscribes to anything of ours, its figures leave the statistics.
    void forget(const ProcessRecord &p);

    static constexpr int statisticsIntervalMs = 1000;

private:
    ServiceStatePtr makeService(const QString &name) const;
    void publishDirectory();
    void publishStatistics();

    ServerContext &m_ctx;
    const CommandRelay &m_relay;
    ServiceStatePtr m_directoryService;
    ServiceStatePtr m_statisticsService;
    ServiceStatePtr m_commandService;   // takes requests only, publishes nothing
    ServiceStatePtr m_logService;       // with reportMessages only
    MessageLog *m_messageLog = nullptr; // with reportMessages only
    QTimer *m_statisticsTimer = nullptr;
    QTimer *m_publishTimer = nullptr;
    quint64 m_directoryGeneration = 0;
};

} // namespace dialog::cs
