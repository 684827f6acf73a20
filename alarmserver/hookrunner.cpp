#include "hookrunner.h"

#include "alarmtable.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QPointer>
#include <QProcess>
#include <QTimer>

#include <csignal>
#include <memory>
#include <unistd.h>

using namespace Qt::StringLiterals;

Q_LOGGING_CATEGORY(lcHooks, "dialog.alarm.hooks", QtInfoMsg)

namespace dialog::alarm {

namespace {

constexpr qint64 LogEveryMs = 10000;
/// What a failed command said last, kept for its failure line.
constexpr qsizetype MaxOutput = 512;

QJsonObject countersJson(const HookRunner::Counters &c)
{
    return {{u"started"_s, qint64(c.started)},
            {u"succeeded"_s, qint64(c.succeeded)},
            {u"failed"_s, qint64(c.failed)},
            {u"timed_out"_s, qint64(c.timedOut)},
            {u"dropped"_s, qint64(c.dropped)}};
}

} // namespace

HookRunner::HookRunner(AlarmTable *table, const HookOptions &options, QObject *parent)
    : QObject(parent), m_table(table), m_options(options)
{
    connect(m_table, &AlarmTable::changed, this, &HookRunner::onChanged);
}

HookRunner::~HookRunner()
{
    // A command still running is killed with what it started; ~QProcess then reaps it.
    for (QProcess *p : findChildren<QProcess *>())
        if (p->processId() > 0)
            ::kill(-pid_t(p->processId()), SIGKILL);
}

QJsonObject HookRunner::figures() const
{
    return {{u"run"_s, countersJson(m_run)}, {u"post"_s, countersJson(m_post)}, {u"running"_s, m_running},
            {u"max_running"_s, m_options.maxRunning}, {u"timeout_s"_s, m_options.timeoutMs / 1000.0}};
}

QByteArray HookRunner::metrics() const
{
    QByteArray out;
    const auto family = [&](const char *name, const char *help, quint64 Counters::*field) {
        out += QByteArray("# HELP dialog_alarm_hooks_") + name + ' ' + help + "\n# TYPE dialog_alarm_hooks_" +
               name + " counter\n";
        for (const auto &[kind, c] : {std::pair{"run", &m_run}, std::pair{"post", &m_post}})
            out += QByteArray("dialog_alarm_hooks_") + name + "_total{kind=\"" + kind + "\"} " +
                   QByteArray::number(c->*field) + '\n';
    };
    family("started", "Notification hooks started", &Counters::started);
    family("succeeded", "Notification hooks that succeeded", &Counters::succeeded);
    family("failed", "Notification hooks that failed (time-outs included)", &Counters::failed);
    family("timed_out", "Notification hooks killed or aborted after the time-out", &Counters::timedOut);
    family("dropped", "Notification hooks not started: too many were running", &Counters::dropped);
    out += "# HELP dialog_alarm_hooks_running Notification hooks running\n"
           "# TYPE dialog_alarm_hooks_running gauge\ndialog_alarm_hooks_running " +
           QByteArray::number(m_running) + '\n';
    return out;
}

void HookRunner::onChanged(const AlarmEvent &e)
{
    if (e.event != u"raised"_s)
        return;
    const Rule &r = m_table->rules().rules.at(e.alarm);
    if (!r.onRaiseRun.isEmpty())
        runCommand(e.alarm);
    if (!r.onRaisePost.isEmpty())
        post(e.alarm);
}

void HookRunner::failed(const QString &what)
{
    // A storm of raises with a broken hook must not become a storm of log lines.
    if (m_sinceLog.isValid() && m_sinceLog.elapsed() < LogEveryMs) {
        ++m_notLogged;
        return;
    }
    if (m_notLogged)
        qCWarning(lcHooks).noquote() << what << u"(and %1 more hook failures in the last %2 s, not logged)"_s
                                                    .arg(m_notLogged)
                                                    .arg((m_sinceLog.elapsed() + 500) / 1000);
    else
        qCWarning(lcHooks).noquote() << what;
    m_notLogged = 0;
    m_sinceLog.start();
}

void HookRunner::done()
{
    --m_running;
    emit countersChanged();
}

void HookRunner::runCommand(int alarm)
{
    const Rule &r = m_table->rules().rules.at(alarm);
    if (m_running >= m_options.maxRunning) {
        ++m_run.dropped;
        emit countersChanged();
        failed(u"hook of %1 not run: %2 hooks are running (--hook-max-running)"_s.arg(r.path).arg(m_running));
        return;
    }
    const AlarmState &s = m_table->state(alarm);
    auto *p = new QProcess(this);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"DIALOG_ALARM_PATH"_s, r.path);
    env.insert(u"DIALOG_ALARM_SEVERITY"_s, severityName(r.severity));
    env.insert(u"DIALOG_ALARM_STATE"_s, stateName(s.state));
    env.insert(u"DIALOG_ALARM_VALUE"_s, s.value);
    env.insert(u"DIALOG_ALARM_DESCRIPTION"_s, r.description);
    env.insert(u"DIALOG_ALARM_GUIDANCE"_s, r.guidance);
    env.insert(u"DIALOG_ALARM_RAISED_MS"_s, QString::number(s.raisedMs));
    p->setProcessEnvironment(env);
    p->setProgram(r.onRaiseRun.first());
    p->setArguments(r.onRaiseRun.mid(1));
    p->setStandardInputFile(QProcess::nullDevice());
    p->setProcessChannelMode(QProcess::MergedChannels);
    // Its own process group: the time-out kills what the command started too.
    p->setChildProcessModifier([] { ::setpgid(0, 0); });
    const QString what = u"hook of %1 (%2)"_s.arg(r.path, r.onRaiseRun.first());
    auto *timer = new QTimer(p);
    timer->setSingleShot(true);
    auto output = std::make_shared<QByteArray>();
    auto timedOut = std::make_shared<bool>(false);
    connect(p, &QProcess::readyRead, p, [p, output] {
        *output += p->readAll();
        if (output->size() > MaxOutput)
            *output = output->right(MaxOutput);
    });
    connect(timer, &QTimer::timeout, p, [p, timedOut] {
        *timedOut = true;
        if (p->processId() > 0)
            ::kill(-pid_t(p->processId()), SIGKILL);
        p->kill();
    });
    connect(p, &QProcess::finished, this,
            [this, p, timer, what, output, timedOut](int code, QProcess::ExitStatus status) {
        timer->stop();
        *output += p->readAll();
        const QString said = QString::fromUtf8(output->right(MaxOutput)).trimmed().replace(u'\n', u" | "_s);
        if (*timedOut) {
            ++m_run.failed;
            ++m_run.timedOut;
            failed(u"%1 killed after %2 s"_s.arg(what).arg(m_options.timeoutMs / 1000.0));
        } else if (status != QProcess::NormalExit || code != 0) {
            ++m_run.failed;
            failed(u"%1 failed: %2%3"_s.arg(what,
                                            status == QProcess::NormalExit ? u"exit code %1"_s.arg(code)
                                                                           : u"crashed"_s,
                                            said.isEmpty() ? QString() : u": "_s + said));
        } else {
            ++m_run.succeeded;
        }
        p->deleteLater();
        done();
    });
    connect(p, &QProcess::errorOccurred, this, [this, p, what](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart)
            return; // the others end in finished()
        ++m_run.failed;
        failed(u"%1 could not start: %2"_s.arg(what, p->errorString()));
        p->deleteLater();
        done();
    });
    ++m_running;
    ++m_run.started;
    timer->start(m_options.timeoutMs);
    p->start();
}

void HookRunner::post(int alarm)
{
    const Rule &r = m_table->rules().rules.at(alarm);
    if (m_running >= m_options.maxRunning) {
        ++m_post.dropped;
        emit countersChanged();
        failed(u"POST of %1 not sent: %2 hooks are running (--hook-max-running)"_s.arg(r.path).arg(m_running));
        return;
    }
    if (!m_network) {
        m_network = new QNetworkAccessManager(this);
        m_network->setProxy(QNetworkProxy(QNetworkProxy::NoProxy)); // the hook's URL is reached as written
    }
    QNetworkRequest request(r.onRaisePost);
    request.setHeader(QNetworkRequest::ContentTypeHeader, u"application/json"_s);
    request.setHeader(QNetworkRequest::UserAgentHeader, u"dialog-alarmserver"_s);
    request.setTransferTimeout(m_options.timeoutMs);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    const QJsonObject body{{u"event"_s, u"raised"_s},
                           {u"time_ms"_s, QDateTime::currentMSecsSinceEpoch()},
                           {u"alarm"_s, m_table->toJson(alarm)}};
    QNetworkReply *reply = m_network->post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));
    const QString what = u"POST of %1 to %2"_s.arg(r.path, r.onRaisePost.toDisplayString());
    ++m_running;
    ++m_post.started;
    connect(reply, &QNetworkReply::finished, this, [this, reply, what] {
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (reply->error() == QNetworkReply::OperationCanceledError) {
            ++m_post.failed;
            ++m_post.timedOut;
            failed(u"%1 aborted after %2 s"_s.arg(what).arg(m_options.timeoutMs / 1000.0));
        } else if (reply->error() != QNetworkReply::NoError || status < 200 || status > 299) {
            ++m_post.failed;
            failed(u"%1 failed: %2"_s.arg(what, status ? u"HTTP %1"_s.arg(status) : reply->errorString()));
        } else {
            ++m_post.succeeded;
        }
        reply->deleteLater();
        done();
    });
}

} // namespace dialog::alarm
