// Starts real DIALOG binaries on loopback for integration tests: daemons bind port 0 and the fixture
// reads the port they got from their "listening on" line, bounded waits, every child reaped
// (SIGTERM, then SIGKILL) when the fixture goes.
#pragma once

#include "dialog/client.h"
#include "waits.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <memory>
#include <vector>

namespace dialog::test {

/// How many times longer than in a normal build a wait for other processes may take: instrumented
/// binaries are slower (ThreadSanitizer 5-15 times, AddressSanitizer about 2). For the waits of
/// multi-process scenarios (fail-overs, stores), not for bounds a test asserts.
constexpr int SanitizerTimeScale =
#if defined(__SANITIZE_THREAD__)
    4;
#elif defined(__SANITIZE_ADDRESS__)
    2;
#else
    1;
#endif

inline QString bin(const QString &name)
{
    return QStringLiteral(DIALOG_BIN_DIR "/") + name;
}

/// The objects of JSON-lines output (`--json` of dialogctl), one per non-empty line.
inline QList<QJsonObject> jsonLines(const QByteArray &out)
{
    QList<QJsonObject> lines;
    for (const QByteArray &l : out.split('\n'))
        if (!l.trimmed().isEmpty())
            lines.append(QJsonDocument::fromJson(l).object());
    return lines;
}

/// A port that was free a moment ago. Only for what must be known before the daemon that binds it
/// starts (a standby's port, which its clients list from the start); another process may take it
/// in between, so daemons otherwise bind port 0 and report it (ProcessFixture::waitForListening).
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

    /// Starts a Control Server on port 0 and waits for the port it reports ("listening on").
    bool startControlServer(const QStringList &extra = {})
    {
        m_cs = start(QStringLiteral("dialog-controlserver"),
                     QStringList{QStringLiteral("--port"), QStringLiteral("0")} + extra);
        m_port = waitForListening(m_cs, controlServerListening());
        m_controlServer = QStringLiteral("127.0.0.1:%1").arg(m_port);
        return m_port != 0;
    }

    /// The line a Control Server logs once bound: "Control Server listening on ADDRESS:PORT".
    static QRegularExpression controlServerListening()
    {
        return QRegularExpression(QStringLiteral("Control Server listening on \\S+:(\\d+)"));
    }
    /// The line an IS server logs once its web IS is bound: web IS on "http://ADDRESS:PORT/".
    static QRegularExpression webIsListening()
    {
        return QRegularExpression(QStringLiteral("web IS on \"?https?://[^/\\s]+:(\\d+)/"));
    }

    /// Waits until @p p logs a line that @p line matches (its first group: a port number) and
    /// returns the port; 0 if the process exits or @p timeoutMs passes first. The output is only
    /// looked at, not consumed: the test can still read all of it.
    static quint16 waitForListening(QProcess *p, const QRegularExpression &line, int timeoutMs = 10000)
    {
        const QProcess::ProcessChannel channel = p->readChannel();
        quint16 port = 0;
        waitUntil(
            [&] {
                p->setReadChannel(QProcess::StandardError);
                const QRegularExpressionMatch m = line.match(QString::fromUtf8(p->peek(p->bytesAvailable())));
                p->setReadChannel(channel);
                if (m.hasMatch())
                    port = quint16(m.captured(1).toUInt());
                return port != 0 || p->state() == QProcess::NotRunning;
            },
            timeoutMs);
        if (port == 0)
            qWarning() << p->program() << "did not report its port";
        return port;
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

    /// Mounts a tmpfs of @p size ("256k", "1m") on @p dir (root only): a small file system to fill;
    /// with @p resize, gives the one mounted there that size. False if it cannot be done here (not
    /// root, or a container without the capability).
    static bool mountTmpfs(const QString &dir, const QString &size, bool resize = false)
    {
        QProcess p;
        p.start(QStringLiteral("mount"),
                resize ? QStringList{QStringLiteral("-o"), QStringLiteral("remount,size=") + size, dir}
                       : QStringList{QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"),
                                     QStringLiteral("size=") + size, QStringLiteral("tmpfs"), dir});
        return p.waitForFinished(10000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    }

    /// Until something accepts connections on 127.0.0.1:@p port (a daemon restarted on a known port).
    static bool waitForPort(quint16 port, int timeoutMs)
    {
        return waitUntil(
            [port] {
                QTcpSocket s;
                s.connectToHost(QHostAddress::LocalHost, port);
                return s.waitForConnected(200);
            },
            timeoutMs);
    }

    QString controlServer() const { return m_controlServer; }
    quint16 port() const { return m_port; }
    QProcess *controlServerProcess() const { return m_cs; }

    /// Runs a short-lived command to completion (bounded); returns its exit code, -1 on time-out.
    int run(const QString &program, const QStringList &args, QByteArray *out = nullptr,
            QByteArray *err = nullptr, int timeoutMs = 15000 * SanitizerTimeScale)
    {
        QProcess *p = start(program, args);
        // Keep the event loop turning: in-process clients of the test must stay responsive.
        if (!waitUntil([p] { return p->state() == QProcess::NotRunning; }, timeoutMs)) {
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

    /// The directory as `dialogctl ls --json` prints it.
    QJsonObject directory()
    {
        QByteArray out;
        if (run(QStringLiteral("dialogctl"), {QStringLiteral("ls"), QStringLiteral("--json")}, &out) != 0)
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
