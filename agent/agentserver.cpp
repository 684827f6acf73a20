#include "agentserver.h"

#include "crashreporter.h"
#include "processtable.h"

#include "dialog/security.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcServer, "dialog.agent.server", QtInfoMsg)

namespace dialog::agent {

namespace {

Status stringList(const QJsonValue &v, const char *field, QStringList *out)
{
    if (v.isUndefined() || v.isNull())
        return {};
    if (!v.isArray())
        return Status(Status::Code::BadRequest, QStringLiteral("%1: expected an array of strings").arg(QLatin1String(field)));
    for (const QJsonValue &e : v.toArray()) {
        if (!e.isString())
            return Status(Status::Code::BadRequest, QStringLiteral("%1: expected an array of strings").arg(QLatin1String(field)));
        out->append(e.toString());
    }
    return {};
}

Status environment(const QJsonValue &v, QStringList *out)
{
    if (v.isUndefined() || v.isNull())
        return {};
    if (!v.isObject())
        return Status(Status::Code::BadRequest, QStringLiteral("env: expected an object of strings"));
    const QJsonObject o = v.toObject();
    for (auto it = o.constBegin(); it != o.constEnd(); ++it) {
        if (!it.value().isString() || it.key().isEmpty() || it.key().contains(QLatin1Char('=')))
            return Status(Status::Code::BadRequest, QStringLiteral("env: '%1' is not NAME: \"value\"").arg(it.key()));
        out->append(it.key() + QLatin1Char('=') + it.value().toString());
    }
    return {};
}

} // namespace

QString AgentServer::serviceName(const QString &host)
{
    return QStringLiteral("DIALOG.Agent.") + host;
}

AgentServer::AgentServer(Client *client, const QString &host, ProcessTable *table, CrashReporter *reporter,
                         const ProgramAllowList &allow, const AccessOptions &access, QObject *parent)
    : QObject(parent), m_client(client), m_host(host), m_service(serviceName(host)), m_table(table),
      m_reporter(reporter), m_allow(allow), m_access(access)
{
}

AgentServer::~AgentServer() = default;

bool AgentServer::start(QString *error)
{
    AuditTrail::Options trail = m_access.trail;
    if (!m_client->options().secretFile.isEmpty()) {
        const Status st = security::readSecretFile(m_client->options().secretFile, &trail.secret);
        if (!st.isOk())
            return *error = st.message(), false;
    }
    m_audit = std::make_unique<AuditTrail>(trail);
    if (const Status st = m_audit->open(); !st.isOk()) {
        *error = st.message();
        return false;
    }
    if (!m_client->publish(m_service))
        return *error = m_client->errorString(), false;
    connect(m_client, &Client::requestReceived, this, &AgentServer::onRequest);
    return true;
}

void AgentServer::onRequest(const Request &request)
{
    if (request.service() != m_service)
        return;
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(request.data(), &pe);
    if (!doc.isObject()) {
        m_client->replyError(request, QStringLiteral("malformed request: expected a JSON object"));
        return;
    }
    const QJsonObject r = doc.object();
    QPointer<Client> client = m_client;
    dispatch(r.value(QStringLiteral("op")).toString(), r, request, [client, request](const Status &st, const QJsonObject &a) {
        if (!client)
            return;
        if (!st.isOk())
            client->replyError(request, st.message());
        else
            client->reply(request, QJsonDocument(a).toJson(QJsonDocument::Compact));
    });
}

void AgentServer::dispatch(const QString &op, const QJsonObject &r, const Request &origin, const Answer &answer)
{
    const QString name = r.value(QStringLiteral("name")).toString();
    if (op == QLatin1String("start")) {
        startProcess(r, origin, answer);
    } else if (op == QLatin1String("stop")) {
        if (!permit(op, name, origin, {}, answer))
            return;
        const qint64 grace = r.contains(QStringLiteral("grace_ms")) ? r.value(QStringLiteral("grace_ms")).toInteger(-1) : -1;
        m_table->stop(name, grace, answer);
    } else if (op == QLatin1String("signal")) {
        const QJsonValue sv = r.value(QStringLiteral("signal"));
        const int sig = sv.isDouble() ? signalFromName(QString::number(sv.toInt())) : signalFromName(sv.toString());
        if (sig == 0)
            return answer(Status(Status::Code::BadRequest, QStringLiteral("signal: expected a signal name or number")), {});
        if (!permit(op, name, origin, {}, answer))
            return;
        const Status st = m_table->signal(name, sig);
        answer(st, {{QStringLiteral("name"), name}, {QStringLiteral("signal"), signalName(sig)}});
    } else if (op == QLatin1String("forget")) {
        if (!permit(op, name, origin, {}, answer))
            return;
        answer(m_table->remove(name), {{QStringLiteral("name"), name}});
    } else if (op == QLatin1String("ls")) {
        QJsonObject a = m_status ? m_status() : QJsonObject();
        a.insert(QStringLiteral("processes"), name.isEmpty() ? m_table->list() : QJsonArray{m_table->describe(name)});
        answer({}, a);
    } else if (op == QLatin1String("crashes")) {
        answer({}, {{QStringLiteral("host"), m_host},
                    {QStringLiteral("crashes"), m_reporter->crashes(r.value(QStringLiteral("since")).toInteger())}});
    } else {
        answer(Status(Status::Code::BadRequest,
                      QStringLiteral("unknown op '%1' (start, stop, signal, forget, ls, crashes)").arg(op.left(40))),
               {});
    }
}

void AgentServer::startProcess(const QJsonObject &r, const Request &origin, const Answer &answer)
{
    ProcessSpec spec;
    spec.name = r.value(QStringLiteral("name")).toString();
    const QString given = r.value(QStringLiteral("program")).toString();
    RestartPolicy policy;
    for (Status st : {stringList(r.value(QStringLiteral("args")), "args", &spec.arguments),
                      environment(r.value(QStringLiteral("env")), &spec.environment),
                      RestartPolicy::fromJson(r, &policy)})
        if (!st.isOk())
            return answer(st, {});
    if (r.contains(QStringLiteral("grace_ms"))) {
        spec.graceMs = r.value(QStringLiteral("grace_ms")).toInteger(-1);
        if (spec.graceMs < 0 || spec.graceMs > 3600000)
            return answer(Status(Status::Code::BadRequest, QStringLiteral("grace_ms: expected 0 to 3600000")), {});
    }
    if (const Status st = stringList(r.value(QStringLiteral("hosts")), "hosts", &spec.hosts); !st.isOk())
        return answer(st, {});
    if (r.contains(QStringLiteral("loss_ms"))) {
        spec.lossMs = r.value(QStringLiteral("loss_ms")).toInteger(-1);
        if (spec.lossMs < 200 || spec.lossMs > 600000)
            return answer(Status(Status::Code::BadRequest, QStringLiteral("loss_ms: expected 200 to 600000")), {});
    }
    const bool standby = r.value(QStringLiteral("standby")).toBool();
    if (standby && !spec.hosts.contains(m_host))
        return answer(Status(Status::Code::BadRequest, QStringLiteral("standby: %1 is not in \"hosts\"").arg(m_host)), {});
    spec.program = m_allow.resolve(given);
    QString refusal;
    if (given.isEmpty())
        return answer(Status(Status::Code::BadRequest, QStringLiteral("program: required")), {});
    if (spec.program.isEmpty())
        refusal = QStringLiteral("program '%1' not found (an absolute path, or a name in the agent's directories)").arg(given);
    else if (!m_allow.allows(spec.program))
        refusal = QStringLiteral("program '%1' is not allowed on %2 (--allow: %3)")
                      .arg(spec.program, m_host, m_allow.patterns().join(QStringLiteral(", ")));
    if (!permit(QStringLiteral("start"), spec.name, origin, refusal, answer))
        return;
    QJsonObject out;
    const Status st = m_table->start(spec, policy, &out, standby);
    answer(st, out);
}

bool AgentServer::permit(const QString &op, const QString &process, const Request &origin, const QString &refusal,
                         const Answer &answer)
{
    const Origin who{origin.origin(), origin.originUser(), origin.originHost(), origin.originAddress()};
    // What the access list's "command" rules name: DIALOG.Agent.<host>.<op>.<process>.
    const QString name = m_service + QLatin1Char('.') + op + QLatin1Char('.') + process;
    AccessList::Decision d = m_access.access.check(AccessList::Kind::Command, name, who);
    QString why;
    if (!refusal.isEmpty()) {
        d.allowed = false;
        d.because = QStringLiteral("allowed programs");
        why = refusal;
    } else if (!d.allowed) {
        why = QStringLiteral("permission denied: the access list (%1) does not let %2 (user '%3', host '%4') %5 %6 on %7")
                  .arg(d.because, who.process, who.user, who.host, op, process, m_host);
    }
    AuditRecord rec;
    rec.timeMs = QDateTime::currentMSecsSinceEpoch();
    rec.daemon = m_service;
    rec.kind = AccessList::Kind::Command;
    rec.name = name;
    rec.operation = op;
    rec.origin = who;
    rec.allowed = d.allowed;
    rec.because = refusal.isEmpty() && m_access.access.isEmpty() ? QString() : d.because;
    m_audit->record(rec);
    if (d.allowed)
        return true;
    qCWarning(lcServer).noquote() << op << process << "from" << who.process << who.user << who.host << "refused:" << why;
    answer(Status(Status::Code::PermissionDenied, why), {});
    return false;
}

} // namespace dialog::agent
