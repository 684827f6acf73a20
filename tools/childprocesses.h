// Child processes started by the bench: every one is terminated and reaped.
#pragma once

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <memory>
#include <vector>

namespace dialog::tool {

class ChildProcesses
{
public:
    ~ChildProcesses() { stopAll(); }

    /// What becomes of a child's standard output: discarded, or kept for the caller to read.
    enum class Output
    {
        Discard,
        Read
    };

    QProcess *start(const QString &program, const QStringList &args, Output output = Output::Discard)
    {
        auto p = std::make_unique<QProcess>();
        p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        if (output == Output::Discard)
            p->setStandardOutputFile(QProcess::nullDevice());
        p->start(program, args);
        m_children.push_back(std::move(p));
        return m_children.back().get();
    }

    void stopAll()
    {
        for (auto &p : m_children)
            if (p->state() != QProcess::NotRunning)
                p->terminate();
        for (auto &p : m_children)
            if (p->state() != QProcess::NotRunning && !p->waitForFinished(3000)) {
                p->kill();
                p->waitForFinished(3000);
            }
        m_children.clear();
    }

    static QString binary(const QString &name)
    {
        return QCoreApplication::applicationDirPath() + QLatin1Char('/') + name;
    }

    static quint16 freePort()
    {
        QTcpServer s;
        s.listen(QHostAddress::LocalHost, 0);
        return s.serverPort();
    }

    /// Waits until something accepts connections on 127.0.0.1:@p port.
    static bool waitForPort(quint16 port, int timeoutMs)
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            QTcpSocket s;
            s.connectToHost(QHostAddress::LocalHost, port);
            if (s.waitForConnected(200))
                return true;
            QThread::msleep(20);
        }
        return false;
    }

private:
    std::vector<std::unique_ptr<QProcess>> m_children;
};

} // namespace dialog::tool
