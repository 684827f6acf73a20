// The hosts of the multihost tests: network namespaces joined by a bridge (in a namespace of its
// own, so nothing touches the machine's network), addresses 10.213.0.0/24 that no host name resolves
// to. Cables are pulled with `ip link set down`; latency and loss come from a slow cable
// (tests/multihost/wire.py). Shared by tst_multihost and tst_splitbrain.
#pragma once

#include "processfixture.h"

#include "dialog/clientoptions.h"

#include <QCoreApplication>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QString>
#include <QStringList>
#include <QTcpSocket>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sched.h>
#include <unistd.h>

namespace dialog::test {

/// Whether something accepts connections at @p address:@p port, seen from this process's host.
inline bool listening(const QString &address, quint16 port)
{
    QTcpSocket s;
    s.connectToHost(address, port);
    return s.waitForConnected(500);
}

constexpr int Hosts = 5; // 1-4 run daemons, 5 is the operator (this process)
constexpr int HeartbeatMs = 200;
const QStringList kHeartbeat{QStringLiteral("--heartbeat-ms"), QString::number(HeartbeatMs)};

/// The namespaces, veth pairs and bridge of one test run (unique names: the PID).
class Network
{
public:
    Network() : m_prefix(QStringLiteral("dmh%1").arg(QCoreApplication::applicationPid())) {}
    ~Network() { tearDown(); }

    QString host(int i) const { return m_prefix + QStringLiteral("h%1").arg(i); }
    QString address(int i) const { return QStringLiteral("10.213.0.%1").arg(i); }
    QString switchNs() const { return m_prefix + QStringLiteral("sw"); }
    QString switchPort(int i) const { return m_prefix + QStringLiteral("s%1").arg(i); }
    QString nic(int i) const { return m_prefix + QStringLiteral("v%1").arg(i); }

    /// Runs `ip ARGS`; empty on success, else the reason.
    static QString ip(const QStringList &args)
    {
        QProcess p;
        p.start(QStringLiteral("ip"), args);
        if (!p.waitForFinished(10000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
            return QStringLiteral("ip %1: %2")
                .arg(args.join(QLatin1Char(' ')), QString::fromLocal8Bit(p.readAllStandardError()).trimmed());
        return {};
    }
    /// Runs `ip netns exec NS ethtool ARGS`; empty on success, else the reason.
    static QString ethtool(const QString &ns, const QStringList &args)
    {
        QProcess p;
        p.start(QStringLiteral("ip"),
                QStringList{QStringLiteral("netns"), QStringLiteral("exec"), ns, QStringLiteral("ethtool")} +
                    args);
        if (!p.waitForFinished(10000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
            return QStringLiteral("ethtool %1: %2")
                .arg(args.join(QLatin1Char(' ')), QString::fromLocal8Bit(p.readAllStandardError()).trimmed());
        return {};
    }

    /// Builds the hosts and the switch; empty on success, else why not.
    QString setUp()
    {
        if (::geteuid() != 0)
            return QStringLiteral("not root: network namespaces need CAP_SYS_ADMIN");
        if (QStandardPaths::findExecutable(QStringLiteral("ip")).isEmpty())
            return QStringLiteral("the ip command (iproute2) is not installed");
        removeLeftovers();
        m_made = true;
        QString why = ip({QStringLiteral("netns"), QStringLiteral("add"), switchNs()});
        if (!why.isEmpty())
            return QStringLiteral("cannot create network namespaces (%1)").arg(why);
        const QString sw = switchNs();
        why += ip({QStringLiteral("-n"), sw, QStringLiteral("link"), QStringLiteral("add"),
                   QStringLiteral("br0"), QStringLiteral("type"), QStringLiteral("bridge")});
        why += ip({QStringLiteral("-n"), sw, QStringLiteral("link"), QStringLiteral("set"),
                   QStringLiteral("br0"), QStringLiteral("up")});
        for (int i = 1; i <= Hosts && why.isEmpty(); ++i) {
            const QString h = host(i);
            why += ip({QStringLiteral("netns"), QStringLiteral("add"), h});
            why += ip({QStringLiteral("link"), QStringLiteral("add"), nic(i), QStringLiteral("netns"), h,
                       QStringLiteral("type"), QStringLiteral("veth"), QStringLiteral("peer"),
                       QStringLiteral("name"), switchPort(i), QStringLiteral("netns"), sw});
            why += ip({QStringLiteral("-n"), sw, QStringLiteral("link"), QStringLiteral("set"), switchPort(i),
                       QStringLiteral("master"), QStringLiteral("br0"), QStringLiteral("up")});
            why += ip({QStringLiteral("-n"), h, QStringLiteral("addr"), QStringLiteral("add"),
                       address(i) + QStringLiteral("/24"), QStringLiteral("dev"), nic(i)});
            why += ip({QStringLiteral("-n"), h, QStringLiteral("link"), QStringLiteral("set"), nic(i),
                       QStringLiteral("up")});
            why += ip({QStringLiteral("-n"), h, QStringLiteral("link"), QStringLiteral("set"),
                       QStringLiteral("lo"), QStringLiteral("up")});
        }
        return why.isEmpty() ? QString() : QStringLiteral("cannot build the hosts (%1)").arg(why);
    }

    /// setUp(), then enter(Hosts): this process is the operator's host. Empty on success, else why
    /// not (the hosts are then gone). The daemons listen on the hosts' network without a shared
    /// secret, as these tests are about addresses and routes: open on purpose (DIALOG_INSECURE).
    QString setUpAsOperator()
    {
        qputenv("DIALOG_INSECURE", "1");
        QString why = setUp();
        if (why.isEmpty())
            why = enter(Hosts);
        if (!why.isEmpty())
            tearDown();
        return why;
    }

    /// Starts @p program of the build on host @p i with $DIALOG_CONTROL_SERVER @p controlServers
    /// (default: port 3425 of host 1); its PID is the program's (`ip netns exec` execs it).
    std::unique_ptr<QProcess> start(int i, const QString &program, const QStringList &args,
                                    const QString &controlServers = {}) const
    {
        auto p = std::make_unique<QProcess>();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"),
                   controlServers.isEmpty() ? address(1) + QStringLiteral(":3425") : controlServers);
        p->setProcessEnvironment(env);
        p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        p->start(QStringLiteral("ip"),
                 QStringList{QStringLiteral("netns"), QStringLiteral("exec"), host(i), bin(program)} + args);
        p->waitForStarted(5000);
        return p;
    }

    /// A partition @p name of these hosts, without slaves: its Control Server on port 3425 of host 1
    /// (started by the test), the hosts' heartbeat, the master "Master" (transition time-out 8 s,
    /// run numbers in @p runNumberFile).
    QJsonObject partition(const QString &name, const QString &runNumberFile) const
    {
        return {{QStringLiteral("name"), name},
                {QStringLiteral("control_server"), QJsonObject{{QStringLiteral("host"), address(1)},
                                                               {QStringLiteral("port"), 3425},
                                                               {QStringLiteral("start"), false}}},
                {QStringLiteral("heartbeat_ms"), HeartbeatMs},
                {QStringLiteral("master"), QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                                                       {QStringLiteral("transition_timeout_ms"), 8000},
                                                       {QStringLiteral("run_number_file"), runNumberFile}}}};
    }

    /// Options of a client on the operator's host (this process) of the Control Server on host 1.
    ClientOptions operatorOptions() const
    {
        ClientOptions o;
        o.name = QStringLiteral("operator");
        o.controlServers = {address(1) + QStringLiteral(":3425")};
        o.heartbeatMs = HeartbeatMs;
        return o;
    }

    /// SIGTERM to each of @p children, SIGKILL to one still there after @p graceMs; reaped, cleared.
    static void stopAll(std::vector<std::unique_ptr<QProcess>> &children, int graceMs)
    {
        for (auto &p : children) {
            p->terminate();
            if (!p->waitForFinished(graceMs)) {
                p->kill();
                p->waitForFinished(3000);
            }
        }
        children.clear();
    }

    /// Moves the calling thread (the test's main thread, before it makes any socket or thread) into
    /// host @p i: every Client made afterwards lives there.
    QString enter(int i)
    {
        const QByteArray path = QStringLiteral("/var/run/netns/%1").arg(host(i)).toLocal8Bit();
        const int fd = ::open(path.constData(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return QStringLiteral("cannot open %1").arg(QString::fromLocal8Bit(path));
        const bool ok = ::setns(fd, CLONE_NEWNET) == 0;
        ::close(fd);
        return ok ? QString()
                  : QStringLiteral("setns failed: %1").arg(QString::fromLocal8Bit(strerror(errno)));
    }

    /// Pulls (false) or plugs back (true) host @p i's cable: its port on the switch.
    QString cable(int i, bool up)
    {
        return ip({QStringLiteral("-n"), switchNs(), QStringLiteral("link"), QStringLiteral("set"),
                   switchPort(i), up ? QStringLiteral("up") : QStringLiteral("down")});
    }

    /// A second network (10.214.0.0/24, "the data network") of hosts @p a and @p b alone: a cable
    /// straight between them. Idempotent.
    QString dataNetwork(int a, int b)
    {
        if (m_dataNetwork)
            return {};
        const QString na = m_prefix + QStringLiteral("d%1").arg(a), nb = m_prefix + QStringLiteral("d%1").arg(b);
        QString why = ip({QStringLiteral("link"), QStringLiteral("add"), na, QStringLiteral("netns"), host(a),
                          QStringLiteral("type"), QStringLiteral("veth"), QStringLiteral("peer"),
                          QStringLiteral("name"), nb, QStringLiteral("netns"), host(b)});
        for (const auto &[i, n] : {std::pair{a, na}, std::pair{b, nb}}) {
            why += ip({QStringLiteral("-n"), host(i), QStringLiteral("addr"), QStringLiteral("add"),
                       dataAddress(i) + QStringLiteral("/24"), QStringLiteral("dev"), n});
            why += ip({QStringLiteral("-n"), host(i), QStringLiteral("link"), QStringLiteral("set"), n,
                       QStringLiteral("up")});
        }
        m_dataNetwork = why.isEmpty();
        return why;
    }
    QString dataAddress(int i) const { return QStringLiteral("10.214.0.%1").arg(i); }

    /// Puts a slow cable between host @p i and the switch: every frame, each way, is delayed by
    /// @p delayMs and dropped with probability @p loss. Host i's switch port leaves the bridge; a
    /// veth pair in the switch joins the bridge instead, and wire.py forwards between the two. The
    /// interfaces that send into the wire hand it whole, checksummed frames (no offloads).
    QString slowCable(int i, int delayMs, double loss)
    {
        const QString sw = switchNs(), a = wireBridgePort(i), b = wireEnd(i);
        QString why = ip({QStringLiteral("-n"), sw, QStringLiteral("link"), QStringLiteral("set"), switchPort(i),
                          QStringLiteral("nomaster")});
        why += ip({QStringLiteral("-n"), sw, QStringLiteral("link"), QStringLiteral("add"), a,
                   QStringLiteral("type"), QStringLiteral("veth"), QStringLiteral("peer"), QStringLiteral("name"), b});
        why += ip({QStringLiteral("-n"), sw, QStringLiteral("link"), QStringLiteral("set"), a,
                   QStringLiteral("master"), QStringLiteral("br0"), QStringLiteral("up")});
        why += ip({QStringLiteral("-n"), sw, QStringLiteral("link"), QStringLiteral("set"), b, QStringLiteral("up")});
        const QStringList noOffloads{QStringLiteral("tso"), QStringLiteral("off"), QStringLiteral("gso"),
                                     QStringLiteral("off"), QStringLiteral("tx"), QStringLiteral("off")};
        why += ethtool(host(i), QStringList{QStringLiteral("-K"), nic(i)} + noOffloads);
        why += ethtool(sw, QStringList{QStringLiteral("-K"), a} + noOffloads);
        if (!why.isEmpty())
            return why;
        m_wire = std::make_unique<QProcess>();
        m_wire->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_wire->start(QStringLiteral("ip"),
                      {QStringLiteral("netns"), QStringLiteral("exec"), sw, QStringLiteral("python3"),
                       QStringLiteral(DIALOG_SOURCE_DIR "/tests/multihost/wire.py"), switchPort(i), b,
                       QStringLiteral("--delay-ms"), QString::number(delayMs), QStringLiteral("--loss"),
                       QString::number(loss)});
        if (!m_wire->waitForReadyRead(10000) || !m_wire->readLine().startsWith("ready"))
            return QStringLiteral("the slow cable (wire.py) did not start");
        m_slow = i;
        return {};
    }
    /// Host @p i back on the switch directly; the wire's counts ("forwarded=… dropped=…"), if any.
    QString fastCable()
    {
        if (m_slow == 0)
            return {};
        QString counts;
        if (m_wire) {
            m_wire->terminate();
            if (!m_wire->waitForFinished(5000)) {
                m_wire->kill();
                m_wire->waitForFinished(3000);
            }
            counts = QString::fromLocal8Bit(m_wire->readAll()).trimmed();
            m_wire.reset();
        }
        const QString sw = switchNs();
        ip({QStringLiteral("-n"), sw, QStringLiteral("link"), QStringLiteral("del"), wireBridgePort(m_slow)});
        ip({QStringLiteral("-n"), sw, QStringLiteral("link"), QStringLiteral("set"), switchPort(m_slow),
            QStringLiteral("master"), QStringLiteral("br0"), QStringLiteral("up")});
        m_slow = 0;
        return counts;
    }

    void tearDown()
    {
        fastCable();
        if (!m_made)
            return;
        m_made = false;
        ip({QStringLiteral("netns"), QStringLiteral("del"), switchNs()}); // takes the veth pairs with it
        for (int i = 1; i <= Hosts; ++i)
            ip({QStringLiteral("netns"), QStringLiteral("del"), host(i)});
    }

private:
    /// Namespaces of earlier runs whose process is gone (killed before its clean-up).
    static void removeLeftovers()
    {
        QProcess p;
        p.start(QStringLiteral("ip"), {QStringLiteral("netns"), QStringLiteral("list")});
        p.waitForFinished(5000);
        static const QRegularExpression re(QStringLiteral("^dmh(\\d+)(h\\d|sw)\\b"));
        for (const QByteArray &line : p.readAllStandardOutput().split('\n')) {
            const QRegularExpressionMatch m = re.match(QString::fromLocal8Bit(line));
            if (m.hasMatch() && ::kill(pid_t(m.captured(1).toLongLong()), 0) != 0)
                ip({QStringLiteral("netns"), QStringLiteral("del"), m.captured(0)});
        }
    }

    QString wireBridgePort(int i) const { return m_prefix + QStringLiteral("w%1a").arg(i); }
    QString wireEnd(int i) const { return m_prefix + QStringLiteral("w%1b").arg(i); }

    QString m_prefix;
    bool m_made = false;
    int m_slow = 0; // the host behind the slow cable, 0: none
    bool m_dataNetwork = false;
    std::unique_ptr<QProcess> m_wire;
};


} // namespace dialog::test
