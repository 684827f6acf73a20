// Starts real DIALOG binaries on loopback for integration tests: free ports, bounded waits,
// every child reaped (SIGTERM, then SIGKILL) when the fixture goes.
#pragma once

#include "dialog/client.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <memory>
#include <vector>

namespace dialog::test {

inline QString bin(const QString &name)
{
    return QStringLiteral(DIALOG_BIN_DIR "/") + name;
}

inline quint16 freePort()
{
    QTcpServer s;
    s.listen(QHostAddress::LocalHost, 0);
    return s.serverPort();
}

class ProcessFixture
{
public:
    ~ProcessFixture() { stopAll(); }

    QProcess *start(const QString &program, const QStringList &args)
    {
        auto p = std::make_unique<QProcess>();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        if (!m_controlServer.isEmpty())
            env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_controlServer);
        p->setProcessEnvironment(env);
        p->start(bin(program), args);
        if (!p->waitForStarted(5000))
            qWarning() << "could not start" << program << p->errorString();
        m_children.push_back(std::move(p));
        return m_children.back().get();
    }

    /// Starts a Control Server on a free port and waits until it accepts connections.
    bool startControlServer(const QStringList &extra = {})
    {
        m_port = freePort();
        m_controlServer = QStringLiteral("127.0.0.1:%1").arg(m_port);
        m_cs = start(QStringLiteral("dialog-controlserver"),
                     QStringList{QStringLiteral("--port"), QString::number(m_port)} + extra);
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 5000) {
            QTcpSocket s;
            s.connectToHost(QHostAddress::LocalHost, m_port);
            if (s.waitForConnected(200))
                return true;
            QTest::qWait(20);
        }
        return false;
    }

    /// Starts a Control Server on @p port (e.g. the same port again after a crash) and waits for it.
    QProcess *startControlServerOn(quint16 port, const QStringList &extra = {}, bool wait = true)
    {
        QProcess *p = start(QStringLiteral("dialog-controlserver"),
                            QStringList{QStringLiteral("--port"), QString::number(port)} + extra);
        if (wait && !waitForPort(port, 5000))
            return nullptr;
        return p;
    }

    static bool waitForPort(quint16 port, int timeoutMs)
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            QTcpSocket s;
            s.connectToHost(QHostAddress::LocalHost, port);
            if (s.waitForConnected(200))
                return true;
            QTest::qWait(10);
        }
        return false;
    }

    QString controlServer() const { return m_controlServer; }
    quint16 port() const { return m_port; }
    QProcess *controlServerProcess() const { return m_cs; }

    /// Runs a short-lived command to completion (bounded); returns its exit code, -1 on time-out.
    int run(const QString &program, const QStringList &args, QByteArray *out = nullptr,
            QByteArray *err = nullptr, int timeoutMs = 15000)
    {
        QProcess *p = start(program, args);
        // Keep the event loop turning: in-process clients of the test must stay responsive.
        QElapsedTimer t;
        t.start();
        while (p->state() != QProcess::NotRunning && t.elapsed() < timeoutMs)
            QTest::qWait(10);
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished(3000);
            return -1;
        }
        if (out)
            *out = p->readAllStandardOutput();
        if (err)
            *err = p->readAllStandardError();
        return p->exitStatus() == QProcess::NormalExit ? p->exitCode() : -2;
    }

    /// The directory as `dialog ls --json` prints it.
    QJsonObject directory()
    {
        QByteArray out;
        if (run(QStringLiteral("dialog"), {QStringLiteral("ls"), QStringLiteral("--json")}, &out) != 0)
            return {};
        return QJsonDocument::fromJson(out).object();
    }

    /// The process entry of @p name in the directory (empty if absent).
    QJsonObject processEntry(const QString &name)
    {
        const QJsonArray procs = directory().value(QStringLiteral("processes")).toArray();
        for (const QJsonValue &v : procs)
            if (v.toObject().value(QStringLiteral("name")).toString() == name)
                return v.toObject();
        return {};
    }

    /// Options for an in-process client of this fixture's Control Server.
    ClientOptions clientOptions(const QString &name) const
    {
        ClientOptions o;
        o.name = name;
        o.controlServers = {m_controlServer};
        o.exitOnRefusal = false;
        return o;
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
        m_cs = nullptr;
    }

private:
    std::vector<std::unique_ptr<QProcess>> m_children;
    QString m_controlServer;
    quint16 m_port = 0;
    QProcess *m_cs = nullptr;
};

} // namespace dialog::test
