// Shared by the benchmarks: event-loop helpers and the child processes of a test.
#pragma once

#include "childprocesses.h"
#include "clientsetup.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

namespace dialog::tool {

/// Runs the event loop until @p done returns true or @p timeoutMs passes.
template <typename Pred> inline bool runUntil(Pred done, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (!done()) {
        if (t.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        if (!done())
            QThread::usleep(500);
    }
    return true;
}

inline void runFor(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

struct Environment
{
    ChildProcesses children;
    quint16 port = 0;
    QString address;
    QProcess *controlServer = nullptr;

    /// The processes started from now on (the Control Server included) join the partition of
    /// @p o: its secret file and TLS files, handed on through DIALOG_SECRET_FILE / DIALOG_TLS_*.
    static void shareSecurity(const ClientOptions &o)
    {
        for (auto [name, value] :
             {std::pair{"DIALOG_SECRET_FILE", &o.secretFile}, std::pair{"DIALOG_TLS_CERT", &o.tlsCert},
              std::pair{"DIALOG_TLS_KEY", &o.tlsKey}, std::pair{"DIALOG_TLS_CA", &o.tlsCa}})
            if (!value->isEmpty())
                qputenv(name, value->toLocal8Bit());
    }

    bool startControlServer(QString *error)
    {
        port = ChildProcesses::freePort();
        address = QStringLiteral("127.0.0.1:%1").arg(port);
        controlServer = children.start(ChildProcesses::binary(QStringLiteral("dialog-controlserver")),
                                       {QStringLiteral("--port"), QString::number(port)});
        if (!ChildProcesses::waitForPort(port, 5000)) {
            *error = QStringLiteral("the Control Server did not start on port %1").arg(port);
            return false;
        }
        return true;
    }
};

} // namespace dialog::tool
