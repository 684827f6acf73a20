#include "agentstate.h"

#include <QFile>
#include <QJsonDocument>
#include <QSaveFile>

namespace dialog::agent {

namespace {
constexpr int StateVersion = 1;

QStringList strings(const QJsonValue &v)
{
    QStringList out;
    for (const QJsonValue &e : v.toArray())
        out.append(e.toString());
    return out;
}
} // namespace

QJsonObject ProcessRecord::toJson() const
{
    QJsonObject o = policy.toJson();
    o.insert(QStringLiteral("name"), spec.name);
    o.insert(QStringLiteral("program"), spec.program);
    o.insert(QStringLiteral("args"), QJsonArray::fromStringList(spec.arguments));
    o.insert(QStringLiteral("env"), QJsonArray::fromStringList(spec.environment));
    o.insert(QStringLiteral("grace_ms"), spec.graceMs);
    o.insert(QStringLiteral("restarts"), restarts);
    if (!spec.hosts.isEmpty()) {
        o.insert(QStringLiteral("hosts"), QJsonArray::fromStringList(spec.hosts));
        o.insert(QStringLiteral("loss_ms"), spec.lossMs);
    }
    o.insert(QStringLiteral("state"), state);
    if (pid > 0) {
        o.insert(QStringLiteral("pid"), pid);
        o.insert(QStringLiteral("start_time"), QString::number(startTime)); // ticks: beyond a double's exact range
        o.insert(QStringLiteral("started"), startedMs);
    }
    if (!lastExit.isEmpty())
        o.insert(QStringLiteral("last_exit"), lastExit);
    return o;
}

Status ProcessRecord::fromJson(const QJsonObject &o, ProcessRecord *out)
{
    ProcessRecord r;
    r.spec.name = o.value(QStringLiteral("name")).toString();
    r.spec.program = o.value(QStringLiteral("program")).toString();
    if (r.spec.name.isEmpty() || r.spec.program.isEmpty())
        return Status(Status::Code::BadRequest, QStringLiteral("a record without name or program"));
    r.spec.arguments = strings(o.value(QStringLiteral("args")));
    r.spec.environment = strings(o.value(QStringLiteral("env")));
    r.spec.graceMs = o.value(QStringLiteral("grace_ms")).toInteger(r.spec.graceMs);
    r.spec.hosts = strings(o.value(QStringLiteral("hosts")));
    r.spec.lossMs = o.value(QStringLiteral("loss_ms")).toInteger(r.spec.lossMs);
    if (const Status st = RestartPolicy::fromJson(o, &r.policy); !st.isOk())
        return Status(st.code(), QStringLiteral("%1: %2").arg(r.spec.name, st.message()));
    r.restarts = o.value(QStringLiteral("restarts")).toInt();
    r.state = o.value(QStringLiteral("state")).toString();
    r.pid = o.value(QStringLiteral("pid")).toInteger();
    r.startTime = o.value(QStringLiteral("start_time")).toString().toULongLong();
    r.startedMs = o.value(QStringLiteral("started")).toInteger();
    r.lastExit = o.value(QStringLiteral("last_exit")).toObject();
    *out = r;
    return {};
}

Status writeAgentState(const QString &path, const QList<ProcessRecord> &records)
{
    QJsonArray a;
    for (const ProcessRecord &r : records)
        a.append(r.toJson());
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return Status(Status::Code::Failed, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    f.write(QJsonDocument(QJsonObject{{QStringLiteral("version"), StateVersion}, {QStringLiteral("processes"), a}})
                .toJson(QJsonDocument::Indented));
    if (!f.commit())
        return Status(Status::Code::Failed, QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    return {};
}

Status readAgentState(const QString &path, QList<ProcessRecord> *records, QStringList *problems)
{
    QFile f(path);
    if (!f.exists())
        return {};
    if (!f.open(QIODevice::ReadOnly))
        return Status(Status::Code::Failed, QStringLiteral("cannot read %1: %2").arg(path, f.errorString()));
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
    if (!doc.isObject())
        return Status(Status::Code::BadRequest, QStringLiteral("%1: not a JSON object (%2)").arg(path, pe.errorString()));
    const int version = doc.object().value(QStringLiteral("version")).toInt();
    if (version != StateVersion)
        return Status(Status::Code::BadRequest, QStringLiteral("%1: version %2, expected %3").arg(path).arg(version).arg(StateVersion));
    for (const QJsonValue &v : doc.object().value(QStringLiteral("processes")).toArray()) {
        ProcessRecord r;
        if (const Status st = ProcessRecord::fromJson(v.toObject(), &r); st.isOk())
            records->append(r);
        else
            problems->append(st.message());
    }
    return {};
}

} // namespace dialog::agent
