// A real dialog-controlserver for the Client and Stream unit tests: started on a free loopback
// port, waited for (bounded), stopped and reaped when the object goes.
#pragma once

#include "dialog/clientoptions.h"
#include "waits.h"

#include <QDeadlineTimer>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

namespace dialog::test {

class ControlServerProcess
{
public:
    ~ControlServerProcess() { stop(); }

    /// Starts the Control Server and waits (up to 10 s) until it accepts connections.
    bool start()
    {
        for (int attempt = 0; attempt < 3; ++attempt) {
            QTcpServer probe;
            if (!probe.listen(QHostAddress::LocalHost, 0))
                return false;
            m_port = probe.serverPort();
            probe.close();
            m_process.start(QStringLiteral(DIALOG_BIN_DIR "/dialog-controlserver"),
                            {QStringLiteral("--port"), QString::number(m_port)});
            if (!m_process.waitForStarted(5000))
                return false;
            bool up = false;
            dialog::test::waitUntil(
                [&] {
                    if (m_process.state() != QProcess::Running)
                        return true; // exited: the port was taken
                    QTcpSocket s;
                    s.connectToHost(QHostAddress::LocalHost, m_port);
                    up = s.waitForConnected(200);
                    return up;
                },
                10000, 20);
            if (up)
                return true;
            stop(); // the port was taken meanwhile, or the server did not come up: try another one
        }
        return false;
    }

    void stop()
    {
        if (m_process.state() == QProcess::NotRunning)
            return;
        m_process.terminate();
        if (!m_process.waitForFinished(5000)) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

    /// Options of a test process named @p name talking to this Control Server (fast heartbeats).
    ClientOptions options(const QString &name) const
    {
        ClientOptions o;
        o.name = name;
        o.controlServers = {QStringLiteral("127.0.0.1:%1").arg(m_port)};
        o.heartbeatMs = 200;
        return o;
    }

private:
    QProcess m_process;
    quint16 m_port = 0;
};

} // namespace dialog::test
