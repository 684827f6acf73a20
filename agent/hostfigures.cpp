#include "hostfigures.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QThread>

#include <sys/statvfs.h>

Q_LOGGING_CATEGORY(lcHost, "dialog.agent.host", QtInfoMsg)

namespace dialog::agent {

namespace {

QByteArray readAll(const char *path)
{
    QFile f{QLatin1String(path)};
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

/// The "cpu" line of /proc/stat: busy and total jiffies.
bool cpuTimes(quint64 *busy, quint64 *total)
{
    const QByteArray stat = readAll("/proc/stat");
    const QList<QByteArray> f = stat.left(stat.indexOf('\n')).simplified().split(' ');
    if (f.size() < 5 || f.at(0) != "cpu")
        return false;
    quint64 sum = 0;
    for (int i = 1; i < f.size(); ++i)
        sum += f.at(i).toULongLong();
    const quint64 idle = f.at(4).toULongLong() + (f.size() > 5 ? f.at(5).toULongLong() : 0); // idle + iowait
    *total = sum;
    *busy = sum - idle;
    return true;
}

quint64 meminfo(const QByteArray &text, const char *key)
{
    const qsizetype at = text.indexOf(key);
    if (at < 0)
        return 0;
    const QByteArray line = text.mid(at + qsizetype(qstrlen(key)), text.indexOf('\n', at) - at - qsizetype(qstrlen(key)));
    return line.simplified().split(' ').value(0).toULongLong() * 1024; // kB
}

} // namespace

QJsonObject HostSample::toJson() const
{
    return {{QStringLiteral("cpu_load"), cpuLoad},
            {QStringLiteral("cores"), cores},
            {QStringLiteral("load"), QJsonArray{load[0], load[1], load[2]}},
            {QStringLiteral("memory_total"), qint64(memoryTotal)},
            {QStringLiteral("memory_available"), qint64(memoryAvailable)},
            {QStringLiteral("disk_total"), qint64(diskTotal)},
            {QStringLiteral("disk_free"), qint64(diskFree)}};
}

HostFigures::HostFigures(Client *client, const QString &host, const QString &dataDir, const QString &isServer,
                         int intervalMs, Counts counts, QObject *parent)
    : QObject(parent), m_client(client), m_host(host), m_dataDir(dataDir), m_isServer(isServer),
      m_counts(std::move(counts))
{
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &HostFigures::tick);
    if (!m_isServer.isEmpty()) {
        m_dictionary = std::make_unique<is::Dictionary>(client, this);
        m_dictionary->setTimeout(qMax(1000, intervalMs));
        if (const Status st = m_dictionary->types().loadFile(QStringLiteral(":/agent/is-types/host.xml")); !st.isOk())
            qCWarning(lcHost).noquote() << "the HostFigures type cannot be read:" << st.message();
    }
}

HostFigures::~HostFigures() = default;

QString HostFigures::objectName() const
{
    return m_isServer + QStringLiteral(".Hosts.") + m_host;
}

void HostFigures::start()
{
    cpuTimes(&m_lastBusy, &m_lastTotal);
    m_timer.start();
    QTimer::singleShot(0, this, &HostFigures::tick);
}

HostSample HostFigures::sample()
{
    if (!m_haveSample)
        tick();
    return m_last;
}

void HostFigures::tick()
{
    HostSample s;
    quint64 busy = 0, total = 0;
    if (cpuTimes(&busy, &total) && total > m_lastTotal) {
        s.cpuLoad = 100.0 * double(busy - m_lastBusy) / double(total - m_lastTotal);
        m_lastBusy = busy;
        m_lastTotal = total;
    } else {
        s.cpuLoad = m_last.cpuLoad;
    }
    s.cores = QThread::idealThreadCount();
    const QList<QByteArray> load = readAll("/proc/loadavg").split(' ');
    for (int i = 0; i < 3 && i < load.size(); ++i)
        s.load[i] = load.at(i).toDouble();
    const QByteArray mem = readAll("/proc/meminfo");
    s.memoryTotal = meminfo(mem, "MemTotal:");
    s.memoryAvailable = meminfo(mem, "MemAvailable:");
    // statvfs, not QStorageInfo: that one looks the path up in the mount table, which in a chroot or
    // a container does not show the file system the data directory is on.
    struct statvfs fs
    {
    };
    if (::statvfs(QFile::encodeName(m_dataDir).constData(), &fs) == 0) {
        s.diskTotal = quint64(fs.f_blocks) * fs.f_frsize;
        s.diskFree = quint64(fs.f_bavail) * fs.f_frsize;
    }
    m_last = s;
    m_haveSample = true;
    if (m_dictionary)
        publish(s);
}

void HostFigures::publish(const HostSample &s)
{
    if (m_inFlight)
        return; // the server is slow: this sample is skipped, the next one goes
    if (!m_declared) {
        m_inFlight = true;
        m_dictionary->declareTypes(m_isServer, {m_dictionary->types().type(QStringLiteral("HostFigures"))},
                                   [this](const is::Status &st) {
                                       m_inFlight = false;
                                       m_declared = st.isOk();
                                       if (!st.isOk() && !m_failed) {
                                           m_failed = true;
                                           qCWarning(lcHost).noquote() << "IS server" << m_isServer
                                                                       << "does not take the HostFigures type:" << st.toString();
                                       }
                                   });
        return;
    }
    is::Object o;
    if (!is::Object::create(m_dictionary->types(), QStringLiteral("HostFigures"), &o).isOk())
        return;
    int managed = 0, running = 0, crashes = 0;
    if (m_counts)
        m_counts(&managed, &running, &crashes);
    o.set<QString>(QStringLiteral("host"), m_host);
    o.set<is::Time>(QStringLiteral("updateTime"), is::Time::currentTime());
    o.set<float>(QStringLiteral("cpuLoad"), float(s.cpuLoad));
    o.set<quint32>(QStringLiteral("cores"), quint32(s.cores));
    o.set<double>(QStringLiteral("load1"), s.load[0]);
    o.set<double>(QStringLiteral("load5"), s.load[1]);
    o.set<double>(QStringLiteral("load15"), s.load[2]);
    o.set<quint64>(QStringLiteral("memoryTotalBytes"), s.memoryTotal);
    o.set<quint64>(QStringLiteral("memoryAvailableBytes"), s.memoryAvailable);
    o.set<QString>(QStringLiteral("dataDir"), m_dataDir);
    o.set<quint64>(QStringLiteral("diskTotalBytes"), s.diskTotal);
    o.set<quint64>(QStringLiteral("diskFreeBytes"), s.diskFree);
    o.set<quint32>(QStringLiteral("managedProcesses"), quint32(managed));
    o.set<quint32>(QStringLiteral("runningProcesses"), quint32(running));
    o.set<quint32>(QStringLiteral("crashes"), quint32(crashes));
    o.set<QString>(QStringLiteral("agentVersion"), QCoreApplication::applicationVersion());
    m_inFlight = true;
    m_dictionary->update(objectName(), o, is::Dictionary::UpdateMode::CreateIfMissing, [this](const is::Status &st) {
        m_inFlight = false;
        if (st.isOk()) {
            m_failed = false;
        } else if (!m_failed) {
            m_failed = true;
            qCWarning(lcHost).noquote() << "cannot publish" << objectName() << ":" << st.toString();
        }
    });
}

} // namespace dialog::agent
