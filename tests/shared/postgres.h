// A throw-away PostgreSQL server for the tests of the daemons that keep tables in it (Debian's
// postgresql, initdb'ed in a temporary directory of the build tree (as root: of /tmp), run as an unprivileged
// user on a free port; every process it starts is reaped).
#pragma once

#include "processfixture.h"

#include <QDir>
#include <QTemporaryDir>
#include <csignal>
#include <memory>
#include <pwd.h>
#include <unistd.h>

namespace dialog::test {

/// The newest installed PostgreSQL's bin directory ("" if none).
QString postgresBinDir()
{
    const QDir root(QStringLiteral("/usr/lib/postgresql"));
    QStringList versions = root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    std::sort(versions.begin(), versions.end(),
              [](const QString &a, const QString &b) { return a.toInt() < b.toInt(); });
    for (auto it = versions.crbegin(); it != versions.crend(); ++it)
        if (QFileInfo(root.filePath(*it + QStringLiteral("/bin/initdb"))).isExecutable())
            return root.filePath(*it + QStringLiteral("/bin"));
    return {};
}

/// A throw-away PostgreSQL cluster. As root, it runs as the user "postgres" (the server refuses root).
class PostgresServer
{
public:
    ~PostgresServer() { stop(); }

    /// initdb, then start(), then createdb @p database. False with @p error on failure.
    bool create(const QString &binDir, QString *error, const QString &database = QStringLiteral("messages"))
    {
        m_binDir = binDir;
        // As root the server runs as "postgres", which must reach its directory: a build tree under
        // /root (mode 0700, a clone in root's home) is out of its reach, the system's temporary
        // directory is not.
        const bool root = geteuid() == 0;
        m_dir = std::make_unique<QTemporaryDir>(
            root ? QDir(QDir::tempPath()).filePath(QStringLiteral("dialog-postgres-XXXXXX"))
                 : QStringLiteral(DIALOG_BIN_DIR "/../postgres-XXXXXX"));
        if (!m_dir->isValid()) {
            *error = QStringLiteral("no temporary directory");
            return false;
        }
        if (root) {
            const passwd *pw = getpwnam("postgres");
            if (!pw) {
                *error = QStringLiteral("running as root, and there is no user 'postgres' to run the server");
                return false;
            }
            m_runAs = QStringLiteral("postgres");
            if (::chown(QFile::encodeName(m_dir->path()).constData(), pw->pw_uid, pw->pw_gid) != 0) {
                *error = QStringLiteral("cannot chown %1").arg(m_dir->path());
                return false;
            }
        }
        QByteArray out;
        if (run(QStringLiteral("initdb"),
                {QStringLiteral("-D"), dataDir(), QStringLiteral("-U"), QStringLiteral("dialog"),
                 QStringLiteral("--auth=trust"), QStringLiteral("-E"), QStringLiteral("UTF8"),
                 QStringLiteral("--no-sync")},
                &out) != 0) {
            *error = QStringLiteral("initdb failed: ") + QString::fromLocal8Bit(out);
            return false;
        }
        m_port = freePort();
        if (!start(error))
            return false;
        return createDatabase(database, error);
    }

    /// createdb @p database on the running server; url() names it from then on.
    bool createDatabase(const QString &database, QString *error)
    {
        m_database = database;
        QByteArray out;
        if (run(QStringLiteral("createdb"),
                {QStringLiteral("-h"), QStringLiteral("127.0.0.1"), QStringLiteral("-p"),
                 QString::number(m_port), QStringLiteral("-U"), QStringLiteral("dialog"), m_database},
                &out) != 0) {
            *error = QStringLiteral("createdb failed: ") + QString::fromLocal8Bit(out);
            return false;
        }
        return true;
    }

    /// Starts the server (again, on the same port) and waits until it accepts connections.
    bool start(QString *error)
    {
        m_server = std::make_unique<QProcess>();
        m_server->setProcessChannelMode(QProcess::MergedChannels);
        // No fsync: the test's data need not survive a crash of the machine.
        const QStringList args{QStringLiteral("-D"), dataDir(),
                               QStringLiteral("-p"), QString::number(m_port),
                               QStringLiteral("-k"), m_dir->path(),
                               QStringLiteral("-c"), QStringLiteral("listen_addresses=127.0.0.1"),
                               QStringLiteral("-F")};
        startAs(m_server.get(), QStringLiteral("postgres"), args);
        QByteArray log;
        const bool ready = waitUntil(
            [&] {
                log += m_server->readAll();
                return log.contains("ready to accept connections") ||
                       m_server->state() == QProcess::NotRunning;
            },
            30000, 20);
        if (!ready || m_server->state() == QProcess::NotRunning) {
            *error = QStringLiteral("postgres did not start: ") + QString::fromLocal8Bit(log);
            return false;
        }
        return true;
    }

    /// A fast shutdown (SIGINT: sessions are ended), waited for.
    void stop()
    {
        if (!m_server || m_server->state() == QProcess::NotRunning)
            return;
        ::kill(pid_t(m_server->processId()), SIGINT);
        if (!m_server->waitForFinished(15000)) {
            m_server->kill();
            m_server->waitForFinished(5000);
        }
    }

    /// The database createdb made, as --db takes it.
    QString url() const
    {
        return QStringLiteral("postgresql://dialog@127.0.0.1:%1/%2").arg(m_port).arg(m_database);
    }

private:
    QString dataDir() const { return m_dir->filePath(QStringLiteral("data")); }

    void startAs(QProcess *p, const QString &program, const QStringList &args) const
    {
        const QString path = QDir(m_binDir).filePath(program);
        p->setWorkingDirectory(m_dir->path()); // the test's own may be out of the server user's reach
        if (m_runAs.isEmpty())
            p->start(path, args);
        else
            // setpriv executes the program itself: the process' PID is the server's, which stop() signals.
            p->start(QStringLiteral("setpriv"),
                     QStringList{QStringLiteral("--reuid=") + m_runAs, QStringLiteral("--regid=") + m_runAs,
                                 QStringLiteral("--clear-groups"), path} +
                         args);
    }

    int run(const QString &program, const QStringList &args, QByteArray *out) const
    {
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        startAs(&p, program, args);
        if (!p.waitForFinished(60000)) {
            p.kill();
            p.waitForFinished(5000);
            return -1;
        }
        *out = p.readAll();
        return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    }

    QString m_binDir, m_runAs, m_database;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QProcess> m_server;
    quint16 m_port = 0;
};

} // namespace dialog::test
