// Shared by the benchmarks: event-loop helpers and the child processes of a test.
#pragma once

#include "childprocesses.h"
#include "clientsetup.h"

#include "dialog/is/dictionary.h"
#include "dialog/is/typeinfo.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <sys/resource.h>
#include <unistd.h>

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

/// Lets this process and its children open as many descriptors as the system allows them.
inline void raiseDescriptorLimit()
{
    rlimit r{};
    if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &r);
    }
}

/// Milliseconds since @p timer started, with its nanosecond resolution.
inline double elapsedMs(const QElapsedTimer &timer)
{
    return double(timer.nsecsElapsed()) / 1e6;
}

/// Seconds since @p timer started.
inline double elapsedS(const QElapsedTimer &timer)
{
    return double(timer.nsecsElapsed()) / 1e9;
}

/// The median, 99th percentile and maximum of a set of timings; zeros for none.
struct Spread
{
    double p50 = 0, p99 = 0, max = 0;
};

/// The Spread of @p values: the q-quantile is the value at index floor(q * n) of the sorted
/// values, the last one at most.
inline Spread spreadOf(QList<double> values)
{
    if (values.isEmpty())
        return {};
    std::sort(values.begin(), values.end());
    auto at = [&](double q) {
        return values.at(qMin(values.size() - 1, qsizetype(q * double(values.size()))));
    };
    return {at(0.5), at(0.99), values.last()};
}

inline void runFor(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

/// A field of /proc/PID/status in kB ("VmRSS", "VmHWM"); -1 if unknown.
inline qint64 processStatusKb(qint64 pid, const char *field)
{
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray key = QByteArray(field) + ':';
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith(key))
            return line.mid(key.size()).trimmed().split(' ').first().toLongLong();
    return -1;
}

/// CPU time (user + system) a process has used so far, in seconds; 0 if unknown.
inline double processCpuSeconds(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray stat = f.readAll();
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 13)
        return 0;
    return double(fields.at(11).toLongLong() + fields.at(12).toLongLong()) / double(::sysconf(_SC_CLK_TCK));
}

/// The objects of the IS load, write and cs-scale benches: ten attributes of the usual kinds.
inline is::TypeInfo bench10Type()
{
    is::TypeInfo t(QStringLiteral("Bench10"), QStringLiteral("Ten attributes"));
    using is::AttributeInfo;
    using is::BasicType;
    t.setAttributes({AttributeInfo(QStringLiteral("a"), BasicType::U32),
                     AttributeInfo(QStringLiteral("b"), BasicType::U64),
                     AttributeInfo(QStringLiteral("c"), BasicType::Double),
                     AttributeInfo(QStringLiteral("d"), BasicType::Float),
                     AttributeInfo(QStringLiteral("e"), BasicType::String),
                     AttributeInfo(QStringLiteral("f"), BasicType::Time),
                     AttributeInfo(QStringLiteral("g"), BasicType::Bool),
                     AttributeInfo(QStringLiteral("h"), BasicType::S32),
                     AttributeInfo(QStringLiteral("i"), BasicType::S64),
                     AttributeInfo(QStringLiteral("j"), BasicType::U16)});
    return t;
}

/// Waits until the IS server @p server answers (its statistics object can be read): it has
/// registered with the Control Server and takes requests.
inline bool waitForIsServer(is::Dictionary &dict, const QString &server, int timeoutMs = 30000)
{
    return runUntil([&] { return dict.getSync(server + QStringLiteral(".Statistics"), nullptr).isOk(); },
                    timeoutMs);
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

    /// Starts dialog-controlserver on a free port with @p extra options; again on the same port if one
    /// was started before (a restart). Every process of a bench connects from 127.0.0.1, hundreds at
    /// once: the per-address admission limits, meant for one host among many, are raised to 1024
    /// (@p extra may set them again; the last one counts).
    bool startControlServer(QString *error, const QStringList &extra = {})
    {
        if (port == 0) {
            port = ChildProcesses::freePort();
            address = QStringLiteral("127.0.0.1:%1").arg(port);
        }
        const QStringList options{QStringLiteral("--port"),
                                  QString::number(port),
                                  QStringLiteral("--max-handshaking-per-address"),
                                  QStringLiteral("1024"),
                                  QStringLiteral("--max-connecting-per-address"),
                                  QStringLiteral("1024")};
        controlServer =
            children.start(ChildProcesses::binary(QStringLiteral("dialog-controlserver")), options + extra);
        if (!ChildProcesses::waitForPort(port, 5000)) {
            *error = QStringLiteral("the Control Server did not start on port %1").arg(port);
            return false;
        }
        return true;
    }

    /// The settings of a bench's own process @p name: the environment's, with this Control Server.
    ClientOptions clientOptions(const QString &name) const
    {
        ClientOptions o = ClientOptions::fromEnvironment(name);
        o.controlServers = {address};
        return o;
    }
};

/// The start of a bench that keeps its files in a scratch directory: @p dir is usable and the
/// Control Server of @p env runs; false with the reason in @p error.
inline bool startWithScratch(const QTemporaryDir &dir, Environment &env, QString *error)
{
    if (!dir.isValid())
        return *error = QStringLiteral("cannot create a temporary directory"), false;
    return env.startControlServer(error);
}

} // namespace dialog::tool
