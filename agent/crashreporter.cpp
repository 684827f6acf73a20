#include "crashreporter.h"

#include "dialog/report.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTimer>

#include <csignal>
#include <cstdio>
#include <sys/resource.h>

Q_LOGGING_CATEGORY(lcCrash, "dialog.agent.crashreporter", QtInfoMsg)

namespace dialog::agent {

namespace {

const struct
{
    int number;
    const char *name;
} Signals[] = {{SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
               {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
               {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
               {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGCONT, "SIGCONT"},
               {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"}, {SIGSYS, "SIGSYS"},   {SIGXCPU, "SIGXCPU"},
               {SIGXFSZ, "SIGXFSZ"}};

QString readProcFile(const char *path)
{
    QFile f{QLatin1String(path)};
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()).trimmed() : QString();
}

} // namespace

QString signalName(int signal)
{
    for (const auto &s : Signals)
        if (s.number == signal)
            return QLatin1String(s.name);
    return QStringLiteral("signal %1").arg(signal);
}

int signalFromName(const QString &name)
{
    bool ok = false;
    const int n = name.toInt(&ok);
    if (ok)
        return n > 0 && n < 65 ? n : 0;
    const QString up = name.toUpper();
    for (const auto &s : Signals)
        if (up == QLatin1String(s.name) || QStringLiteral("SIG") + up == QLatin1String(s.name))
            return s.number;
    return 0;
}

CorePattern CorePattern::read()
{
    CorePattern p;
    p.pattern = readProcFile("/proc/sys/kernel/core_pattern");
    p.usesPid = readProcFile("/proc/sys/kernel/core_uses_pid") == QLatin1String("1");
    return p;
}

QString CorePattern::findCore(qint64 pid, const QString &program, const QString &cwd, qint64 sinceMs) const
{
    if (pattern.isEmpty() || piped())
        return {};
    // The specifiers we know are filled in; the others (%t, %h, %s, …) match anything.
    QString glob;
    bool hasPid = false;
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const QChar c = pattern.at(i);
        if (c != QLatin1Char('%') || i + 1 == pattern.size()) {
            glob += (c == QLatin1Char('*') || c == QLatin1Char('?') || c == QLatin1Char('[')) ? QStringLiteral("?") : QString(c);
            continue;
        }
        const QChar s = pattern.at(++i);
        if (s == QLatin1Char('p') || s == QLatin1Char('P')) {
            glob += QString::number(pid);
            hasPid = true;
        } else if (s == QLatin1Char('e')) {
            glob += QFileInfo(program).fileName().left(15);
        } else if (s == QLatin1Char('%')) {
            glob += QLatin1Char('%');
        } else {
            glob += QLatin1Char('*');
        }
    }
    if (usesPid && !hasPid)
        glob += QLatin1Char('.') + QString::number(pid);
    const QFileInfo where(QDir(cwd).filePath(glob)); // an absolute pattern stays absolute
    const QDir dir = where.dir();
    QString best;
    qint64 bestMs = 0;
    const QFileInfoList found = dir.entryInfoList({where.fileName()}, QDir::Files, QDir::Time);
    for (const QFileInfo &f : found) {
        const qint64 ms = f.lastModified().toMSecsSinceEpoch();
        if (ms + 2000 >= sinceMs && ms > bestMs) { // file times may be coarse
            best = f.absoluteFilePath();
            bestMs = ms;
        }
    }
    return best;
}

CrashReporter::CrashReporter(const Options &options, QObject *parent)
    : QObject(parent), m_options(options), m_pattern(CorePattern::read())
{
    m_gdbPath = QFileInfo(m_options.gdb).isAbsolute()
                    ? (QFileInfo(m_options.gdb).isExecutable() ? m_options.gdb : QString())
                    : QStandardPaths::findExecutable(m_options.gdb);
    struct rlimit rl {};
    if (m_options.coreLimitBytes <= 0)
        m_coreProblem = QStringLiteral("cores are disabled (--core-limit 0)");
    else if (::getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_max == 0)
        m_coreProblem = QStringLiteral("the hard RLIMIT_CORE of the agent is 0 (ulimit -Hc; LimitCORE= of its unit)");
    else if (m_pattern.pattern.isEmpty())
        m_coreProblem = QStringLiteral("/proc/sys/kernel/core_pattern cannot be read");
    else if (m_pattern.piped() && !m_pattern.systemdCoredump())
        m_coreProblem = QStringLiteral("the kernel hands cores to a program (core_pattern '%1'), not to a file")
                            .arg(m_pattern.pattern);
    else if (m_pattern.systemdCoredump() && QStandardPaths::findExecutable(QStringLiteral("coredumpctl")).isEmpty())
        m_coreProblem = QStringLiteral("cores go to systemd-coredump, and coredumpctl is not installed");
    if (!m_coreProblem.isEmpty())
        qCWarning(lcCrash).noquote() << "crash reports without backtraces:" << m_coreProblem;
    if (m_gdbPath.isEmpty())
        qCWarning(lcCrash).noquote() << "crash reports without backtraces:" << m_options.gdb << "not found";
}

qint64 CrashReporter::childCoreLimit() const
{
    return m_coreProblem.isEmpty() ? m_options.coreLimitBytes : 0;
}

void CrashReporter::report(const CrashInput &c)
{
    QJsonObject crash{{QStringLiteral("time"), QDateTime::currentMSecsSinceEpoch()},
                      {QStringLiteral("process"), c.process},
                      {QStringLiteral("program"), c.program},
                      {QStringLiteral("host"), c.host},
                      {QStringLiteral("pid"), c.pid},
                      {QStringLiteral("signal"), c.signal},
                      {QStringLiteral("signal_name"), signalName(c.signal)},
                      {QStringLiteral("run_ms"), c.runMs},
                      {QStringLiteral("last_output"), c.lastLines.join(QLatin1Char('\n'))}};
    QString why = m_coreProblem;
    QString core;
    if (why.isEmpty() && m_pattern.systemdCoredump()) {
        core = QDir(c.directory).filePath(QStringLiteral("core.%1").arg(c.pid));
        QProcess dump;
        dump.start(QStringLiteral("coredumpctl"), {QStringLiteral("--no-pager"), QStringLiteral("dump"),
                                                   QString::number(c.pid), QStringLiteral("-o"), core});
        if (!dump.waitForFinished(m_options.gdbTimeoutMs) || dump.exitCode() != 0 || !QFile::exists(core)) {
            dump.kill();
            dump.waitForFinished(1000);
            why = QStringLiteral("coredumpctl has no core of PID %1").arg(c.pid);
            core.clear();
        }
    } else if (why.isEmpty()) {
        const QString found = m_pattern.findCore(c.pid, c.program, c.directory, c.startedMs);
        if (found.isEmpty()) {
            why = c.signal == SIGKILL || c.signal == SIGTERM || c.signal == SIGINT || c.signal == SIGHUP
                      ? QStringLiteral("%1 makes no core").arg(signalName(c.signal))
                      : QStringLiteral("no core file found (core_pattern '%1', in %2)").arg(m_pattern.pattern, c.directory);
        } else {
            // Away from the name a restarted copy's core would take.
            core = QDir(c.directory).filePath(QStringLiteral("core.%1.crash").arg(c.pid));
            QFile::remove(core);
            if (!QFile::rename(found, core))
                core = found;
        }
    }
    // An adopted process's end is of unknown status: only a core of its PID says it crashed.
    if (c.signal == 0 && core.isEmpty())
        return;
    if (core.isEmpty() || m_gdbPath.isEmpty()) {
        if (why.isEmpty())
            why = QStringLiteral("%1 not found: no backtrace").arg(m_options.gdb);
        finish(crash, core, QString(), why);
        return;
    }
    auto *gdb = new QProcess(this);
    gdb->setProcessChannelMode(QProcess::MergedChannels);
    auto *timer = new QTimer(gdb);
    timer->setSingleShot(true);
    connect(timer, &QTimer::timeout, gdb, [gdb] { gdb->kill(); });
    connect(gdb, &QProcess::finished, this, [this, gdb, crash, core](int code, QProcess::ExitStatus st) mutable {
        QString bt = QString::fromUtf8(gdb->readAll());
        if (crash.value(QStringLiteral("signal")).toInt() == 0) { // adopted: the core tells
            static const QRegularExpression term(QStringLiteral("Program terminated with signal (SIG[A-Z0-9]+)"));
            const QString name = term.match(bt).captured(1);
            crash.insert(QStringLiteral("signal"), signalFromName(name));
            crash.insert(QStringLiteral("signal_name"), name.isEmpty() ? QStringLiteral("an unknown signal") : name);
        }
        // gdb's chatter before the first frame says nothing about the crash.
        const qsizetype first = bt.indexOf(QRegularExpression(QStringLiteral("^#0 "), QRegularExpression::MultilineOption));
        if (first > 0)
            bt = bt.mid(first);
        // Its warnings about the core's sections and missing sources neither.
        static const QRegularExpression noise(
            QStringLiteral("^(warning: .*|\\d+\\t.*: No such file or directory\\.)\n"), QRegularExpression::MultilineOption);
        bt.remove(noise);
        QString why;
        if (st == QProcess::CrashExit)
            why = QStringLiteral("gdb did not finish within %1 ms (or crashed)").arg(m_options.gdbTimeoutMs);
        else if (code != 0 && bt.isEmpty())
            why = QStringLiteral("gdb failed (exit code %1)").arg(code);
        gdb->deleteLater();
        finish(crash, core, bt, why);
    });
    connect(gdb, &QProcess::errorOccurred, this, [this, gdb, crash, core](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart)
            return; // the others end in finished()
        gdb->deleteLater();
        finish(crash, core, QString(), QStringLiteral("%1 cannot be started: %2").arg(m_gdbPath, gdb->errorString()));
    });
    // The crashing thread first (bt), then every thread.
    gdb->start(m_gdbPath, {QStringLiteral("-batch"), QStringLiteral("-nx"), QStringLiteral("-ex"),
                           QStringLiteral("set pagination off"), QStringLiteral("-ex"), QStringLiteral("bt"),
                           QStringLiteral("-ex"), QStringLiteral("thread apply all bt"), c.program, core});
    timer->start(m_options.gdbTimeoutMs);
}

void CrashReporter::finish(QJsonObject crash, const QString &core, const QString &backtrace, const QString &why)
{
    QString bt = backtrace;
    if (bt.size() > m_options.maxBacktraceChars)
        bt = bt.left(m_options.maxBacktraceChars) + QStringLiteral("\n… (backtrace truncated)");
    crash.insert(QStringLiteral("backtrace"), bt);
    if (!why.isEmpty())
        crash.insert(QStringLiteral("no_backtrace"), why);
    if (!core.isEmpty() && !m_options.keepCores)
        QFile::remove(core);
    else if (!core.isEmpty())
        crash.insert(QStringLiteral("core"), core);
    const QString head = QStringLiteral("%1 on %2 (PID %3) died of %4 after %5 s")
                             .arg(crash.value(QStringLiteral("process")).toString(),
                                  crash.value(QStringLiteral("host")).toString())
                             .arg(crash.value(QStringLiteral("pid")).toInteger())
                             .arg(crash.value(QStringLiteral("signal_name")).toString())
                             .arg(double(crash.value(QStringLiteral("run_ms")).toInteger()) / 1000.0, 0, 'f', 1);
    QString text = head;
    text += QStringLiteral("\nlast output:\n") + crash.value(QStringLiteral("last_output")).toString();
    text += bt.isEmpty() ? QStringLiteral("\nno backtrace: ") + why : QStringLiteral("\nbacktrace:\n") + bt;
    // Once into the message log, with everything; stderr gets the one line.
    std::fprintf(stderr, "dialog-agent: crash: %s%s\n", qPrintable(head),
                 bt.isEmpty() ? qPrintable(QStringLiteral(" (no backtrace: %1)").arg(why)) : "");
    QVariantMap values = crash.toVariantMap();
    values.remove(QStringLiteral("time"));
    dialog::report(Severity::Error, QStringLiteral("dialog.agent.crash"), text, values);
    m_crashes.append(crash);
    while (m_crashes.size() > m_options.keep)
        m_crashes.removeFirst();
    Q_EMIT reported(crash);
}

QJsonArray CrashReporter::crashes(qint64 sinceMs) const
{
    QJsonArray a;
    for (const QJsonObject &c : m_crashes)
        if (c.value(QStringLiteral("time")).toInteger() >= sinceMs)
            a.append(c);
    return a;
}

} // namespace dialog::agent
