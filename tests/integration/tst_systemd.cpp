// The daemons under systemd: readiness (Type=notify over $NOTIFY_SOCKET) once their ports are open,
// and the unit files in resources/systemd checked by systemd-analyze when it is installed.
#include "processfixture.h"

#include <QtTest>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace dialog::test;

namespace {

/// A datagram socket standing in for systemd's notification socket.
class NotifySocket
{
public:
    explicit NotifySocket(const QString &path) : m_path(path)
    {
        m_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        sockaddr_un a = {};
        a.sun_family = AF_UNIX;
        const QByteArray p = path.toLocal8Bit();
        std::memcpy(a.sun_path, p.constData(), size_t(qMin<qsizetype>(p.size(), sizeof(a.sun_path) - 1)));
        m_bound = m_fd >= 0 && ::bind(m_fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0;
    }
    ~NotifySocket()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    bool isBound() const { return m_bound; }
    /// The next datagram, or empty when none arrived within @p ms.
    QByteArray receive(int ms)
    {
        QByteArray out;
        waitUntil(
            [&] {
                char buf[512];
                const ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
                if (n > 0)
                    out = QByteArray(buf, int(n));
                return n > 0;
            },
            ms, 10);
        return out;
    }

private:
    QString m_path;
    int m_fd = -1;
    bool m_bound = false;
};

} // namespace

class tst_Systemd : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void readyIsSentOnceThePortIsOpen_data();
    void readyIsSentOnceThePortIsOpen();
    void unitFilesVerify();
};

void tst_Systemd::readyIsSentOnceThePortIsOpen_data()
{
    QTest::addColumn<QString>("program");
    QTest::newRow("controlserver") << QStringLiteral("dialog-controlserver");
    QTest::newRow("isserver") << QStringLiteral("dialog-isserver");
}

void tst_Systemd::readyIsSentOnceThePortIsOpen()
{
    QFETCH(QString, program);
    QTemporaryDir dir;
    const QString socketPath = dir.filePath(QStringLiteral("notify"));
    NotifySocket notify(socketPath);
    QVERIFY(notify.isBound());
    ProcessFixture fx;
    QVERIFY(fx.startControlServer());
    const quint16 port = freePort();
    qputenv("NOTIFY_SOCKET", socketPath.toLocal8Bit());
    QProcess *p = program == QLatin1String("dialog-controlserver")
                      ? fx.start(program, {QStringLiteral("--port"), QString::number(port)})
                      : fx.start(program, {QStringLiteral("--name"), QStringLiteral("Notified"),
                                           QStringLiteral("--types"),
                                           QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types"),
                                           QStringLiteral("--http-port"), QString::number(port)});
    qunsetenv("NOTIFY_SOCKET");
    const QByteArray message = notify.receive(10000);
    QVERIFY2(message.contains("READY=1\n"), message.constData());
    QVERIFY2(message.contains("MAINPID=" + QByteArray::number(p->processId()) + '\n'), message.constData());
    // Ready means reachable: the port accepts a connection now, without waiting.
    QTcpSocket s;
    s.connectToHost(QHostAddress::LocalHost, port);
    QVERIFY2(s.waitForConnected(2000), qPrintable(s.errorString()));
    QCOMPARE(p->state(), QProcess::Running);
}

void tst_Systemd::unitFilesVerify()
{
    const QString analyze = QStandardPaths::findExecutable(QStringLiteral("systemd-analyze"));
    if (analyze.isEmpty())
        QSKIP("systemd-analyze is not installed (Debian package systemd)");
    // The units name /usr/bin: point them at the built programs for the check.
    QTemporaryDir dir;
    const QStringList units{QStringLiteral("dialog-controlserver.service"),
                            QStringLiteral("dialog-isserver@.service"), QStringLiteral("dialog-configdb.service")};
    for (const QString &u : units) {
        QFile in(QStringLiteral(DIALOG_SOURCE_DIR "/resources/systemd/") + u);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray text = in.readAll();
        QVERIFY2(text.contains("Restart=on-failure"), qPrintable(u));
        QVERIFY2(text.contains("Type=notify"), qPrintable(u));
        text.replace("/usr/bin/", DIALOG_BIN_DIR "/");
        // A template is verified as an instance of it.
        const QString name = QString(u).replace(QStringLiteral("@."), QStringLiteral("@RunParams."));
        QFile out(dir.filePath(name));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text);
        out.close();
        QProcess v;
        v.start(analyze, {QStringLiteral("verify"), out.fileName()});
        QVERIFY(v.waitForFinished(30000));
        const QByteArray err = v.readAllStandardError();
        QVERIFY2(v.exitCode() == 0 && !err.contains(name.toUtf8()), qPrintable(name + ": " + err));
    }
}

QTEST_GUILESS_MAIN(tst_Systemd)
#include "tst_systemd.moc"
