// Shared set-up of the IS integration tests: a Control Server, an in-process client with an IS
// dictionary holding the types of resources/is-types, and IS servers started on demand.
#pragma once

#include "processfixture.h"

#include "dialog/is/dictionary.h"
#include "dialog/is/time.h"

#include <QFile>
#include <QSet>

namespace dialog::test {

inline const QString &isTypesDir()
{
    static const QString dir = QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types");
    return dir;
}

/// Resident memory of a process in KiB (-1 if unknown).
inline qint64 rssKb(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong();
    return -1;
}

/// A bound on the growth of a process's resident memory, in KiB, for this build. Under
/// AddressSanitizer a process keeps freed blocks in a quarantine (ASAN_OPTIONS quarantine_size_mb:
/// 64 MiB in `./run.sh test --sanitize address`) and pads every block with redzones, so what a
/// bound means there is the same bound over twice the memory, plus the quarantine.
inline qint64 rssGrowthBoundKb(qint64 boundKb)
{
#if defined(__SANITIZE_ADDRESS__)
    return 2 * boundKb + 64 * 1024;
#elif defined(__SANITIZE_THREAD__)
    // ThreadSanitizer keeps 4 bytes of shadow per byte of application memory, and its own history.
    return 6 * boundKb + 64 * 1024;
#else
    return boundKb;
#endif
}

/// Mixed into a test class: call setUpIs() from init() and tearDownIs() from cleanup().
class IsTestBase
{
protected:
    bool setUpIs(const QString &clientName)
    {
        m_fx = std::make_unique<ProcessFixture>();
        if (!m_fx->startControlServer())
            return false;
        m_client = std::make_unique<Client>(m_fx->clientOptions(clientName));
        if (!m_client->start())
            return false;
        m_dict = std::make_unique<is::Dictionary>(m_client.get());
        return m_dict->types().loadDirectory(isTypesDir()).isOk();
    }
    void tearDownIs()
    {
        m_dict.reset();
        m_client.reset();
        m_fx.reset();
    }
    /// dialog-isserver --name NAME --threads 2 --types resources/is-types EXTRA.
    QProcess *startServer(const QString &name, const QStringList &extra = {})
    {
        return startIsServer(
            QStringList{QStringLiteral("--name"), name, QStringLiteral("--types"), isTypesDir()} + extra);
    }
    /// dialog-isserver --name NAME --threads 2 --mirror-of MASTER EXTRA (no types: it takes the master's).
    QProcess *startMirror(const QString &name, const QString &master, const QStringList &extra = {})
    {
        return startIsServer(
            QStringList{QStringLiteral("--name"), name, QStringLiteral("--mirror-of"), master} + extra);
    }
    /// The port of the web IS that @p server (started with --http-port 0) reports; 0 if none.
    static quint16 httpPortOf(QProcess *server)
    {
        return ProcessFixture::waitForListening(server, ProcessFixture::webIsListening());
    }
    /// Until the server answers a read of its statistics object.
    /// Waits (bounded) until @p server has completed a checkpoint that began after this call, so
    /// that it holds everything the server had then: two checkpoints completed after the call (the
    /// second began once the first had ended), as its Statistics object tells.
    bool waitForCheckpoint(const QString &server, int timeoutMs = 15000)
    {
        const qint64 sinceUs = is::Time::currentTime().microsecondsSinceEpoch();
        QSet<qint64> completed;
        return waitUntil(
            [&] {
                is::Entry s;
                if (m_dict->getSync(server + QStringLiteral(".Statistics"), &s).isOk()) {
                    const qint64 at =
                        s.object.get<is::Time>(QStringLiteral("lastCheckpoint")).microsecondsSinceEpoch();
                    if (at > sinceUs)
                        completed.insert(at);
                }
                return completed.size() >= 2;
            },
            timeoutMs, 100);
    }

    bool waitForServer(const QString &name, int timeoutMs = 10000)
    {
        return waitUntil(
            [&] { return m_dict->getSync(name + QStringLiteral(".Statistics"), nullptr).isOk(); }, timeoutMs,
            50);
    }

    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<Client> m_client;
    std::unique_ptr<is::Dictionary> m_dict;

private:
    QProcess *startIsServer(const QStringList &args)
    {
        QProcess *p = m_fx->start(QStringLiteral("dialog-isserver"),
                                  args + QStringList{QStringLiteral("--threads"), QStringLiteral("2")});
        p->setProcessChannelMode(QProcess::SeparateChannels);
        return p;
    }
};

} // namespace dialog::test
