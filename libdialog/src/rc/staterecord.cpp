#include "dialog/rc/staterecord.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace dialog::rc {

namespace {

// The JSON keys of the run-control records, in one place.
namespace key {
constexpr QLatin1String process("process"), kind("kind"), state("state"), busy("busy"),
    transition("transition"), lastTransition("last_transition"), transitionMs("transition_ms"),
    error("error"), timeMs("time_ms"), pid("pid"), runNumber("run_number"), partition("partition"),
    runType("run_type"), slaves("slaves"), culprits("culprits"), recoveringTo("recovering_to"),
    runStartMs("run_start_ms"), runStopMs("run_stop_ms"), runActiveMs("run_active_ms"), name("name"),
    present("present"), lost("lost"), severity("severity"), text("text"), enabled("enabled"),
    removable("removable"), removed("removed"), reason("reason"), node("node"), segment("segment"),
    tree("tree");
} // namespace key

QString optionalName(const std::optional<Transition> &t)
{
    return t ? transitionName(*t) : QString();
}

QString optionalName(const std::optional<State> &s)
{
    return s ? stateName(*s) : QString();
}

Status parseObject(const QByteArray &json, QJsonObject *out)
{
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError)
        return Status(Status::Code::BadRequest, QStringLiteral("malformed JSON: %1").arg(pe.errorString()));
    if (!doc.isObject())
        return Status(Status::Code::BadRequest, QStringLiteral("expected a JSON object"));
    *out = doc.object();
    return {};
}

QJsonObject slaveJson(const SlaveRecord &s)
{
    return QJsonObject{{key::name, s.name},
                       {key::kind, s.kind},
                       {key::present, s.present},
                       {key::lost, s.lost},
                       {key::state, s.present ? stateName(s.state) : QString()},
                       {key::busy, s.busy},
                       {key::transition, optionalName(s.transition)},
                       {key::error, s.error},
                       {key::pid, s.pid},
                       {key::enabled, s.enabled},
                       {key::removable, s.removable},
                       {key::removed, s.removed},
                       {key::reason, s.removedReason}};
}

SlaveRecord slaveFrom(const QJsonObject &o)
{
    SlaveRecord s;
    s.name = o.value(key::name).toString();
    s.kind = o.value(key::kind).toString();
    s.present = o.value(key::present).toBool();
    s.lost = o.value(key::lost).toBool();
    s.state = stateFromName(o.value(key::state).toString()).value_or(State::Initial);
    s.busy = o.value(key::busy).toBool();
    s.transition = transitionFromName(o.value(key::transition).toString());
    s.error = o.value(key::error).toString();
    s.pid = o.value(key::pid).toInteger();
    s.enabled = o.value(key::enabled).toBool(true);
    s.removable = o.value(key::removable).toBool();
    s.removed = o.value(key::removed).toBool();
    s.removedReason = o.value(key::reason).toString();
    return s;
}

} // namespace

bool SlaveRecord::operator==(const SlaveRecord &o) const
{
    return name == o.name && kind == o.kind && present == o.present && lost == o.lost && state == o.state &&
           busy == o.busy && transition == o.transition && error == o.error && pid == o.pid &&
           enabled == o.enabled && removable == o.removable && removed == o.removed &&
           removedReason == o.removedReason;
}

bool RemovedNode::operator==(const RemovedNode &o) const
{
    return node == o.node && segment == o.segment && reason == o.reason && timeMs == o.timeMs;
}

const SlaveRecord *StateRecord::slave(const QString &name) const
{
    for (const SlaveRecord &s : slaves)
        if (s.name == name)
            return &s;
    return nullptr;
}

QByteArray StateRecord::toJson() const
{
    QJsonObject o{{key::process, process},
                  {key::kind, kind},
                  {key::state, stateName(state)},
                  {key::busy, busy},
                  {key::transition, optionalName(transition)},
                  {key::lastTransition, optionalName(lastTransition)},
                  {key::transitionMs, transitionMs},
                  {key::error, error},
                  {key::timeMs, timeMs},
                  {key::pid, pid},
                  {key::runNumber, qint64(runNumber)}};
    if (isMaster()) {
        QJsonArray sl;
        for (const SlaveRecord &s : slaves)
            sl.append(slaveJson(s));
        o.insert(key::partition, partition);
        o.insert(key::runType, runType);
        o.insert(key::slaves, sl);
        o.insert(key::culprits, QJsonArray::fromStringList(culprits));
        o.insert(key::recoveringTo, optionalName(recoveringTo));
        o.insert(key::runStartMs, runStartMs);
        o.insert(key::runStopMs, runStopMs);
        o.insert(key::runActiveMs, runActiveMs);
        QJsonArray rm;
        for (const RemovedNode &n : removed)
            rm.append(QJsonObject{{key::node, n.node},
                                  {key::segment, n.segment},
                                  {key::reason, n.reason},
                                  {key::timeMs, n.timeMs}});
        o.insert(key::removed, rm);
        o.insert(key::tree, tree);
    }
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

Status StateRecord::fromJson(const QByteArray &json, StateRecord *out)
{
    QJsonObject o;
    if (Status s = parseObject(json, &o); !s.isOk())
        return s;
    StateRecord r;
    const QString stateText = o.value(key::state).toString();
    const auto st = stateFromName(stateText);
    if (!st)
        return Status(Status::Code::BadRequest, QStringLiteral("unknown state '%1'").arg(stateText));
    r.state = *st;
    r.process = o.value(key::process).toString();
    r.kind = o.value(key::kind).toString();
    r.busy = o.value(key::busy).toBool();
    r.transition = transitionFromName(o.value(key::transition).toString());
    r.lastTransition = transitionFromName(o.value(key::lastTransition).toString());
    r.transitionMs = o.value(key::transitionMs).toInteger();
    r.error = o.value(key::error).toString();
    r.timeMs = o.value(key::timeMs).toInteger();
    r.pid = o.value(key::pid).toInteger();
    r.runNumber = quint32(qBound<qint64>(0, o.value(key::runNumber).toInteger(), 0xffffffffLL));
    r.partition = o.value(key::partition).toString();
    r.runType = o.value(key::runType).toString();
    for (const QJsonValue &v : o.value(key::slaves).toArray())
        r.slaves.append(slaveFrom(v.toObject()));
    for (const QJsonValue &v : o.value(key::culprits).toArray())
        r.culprits.append(v.toString());
    r.recoveringTo = stateFromName(o.value(key::recoveringTo).toString());
    r.runStartMs = o.value(key::runStartMs).toInteger();
    r.runStopMs = o.value(key::runStopMs).toInteger();
    r.runActiveMs = o.value(key::runActiveMs).toInteger();
    for (const QJsonValue &v : o.value(key::removed).toArray()) {
        const QJsonObject n = v.toObject();
        r.removed.append(RemovedNode{n.value(key::node).toString(), n.value(key::segment).toString(),
                                     n.value(key::reason).toString(), n.value(key::timeMs).toInteger()});
    }
    r.tree = o.value(key::tree).toArray();
    *out = std::move(r);
    return {};
}

bool StateRecord::operator==(const StateRecord &o) const
{
    return process == o.process && kind == o.kind && state == o.state && busy == o.busy &&
           transition == o.transition && lastTransition == o.lastTransition &&
           transitionMs == o.transitionMs && error == o.error && timeMs == o.timeMs && pid == o.pid &&
           runNumber == o.runNumber && partition == o.partition && runType == o.runType &&
           slaves == o.slaves && culprits == o.culprits && recoveringTo == o.recoveringTo &&
           runStartMs == o.runStartMs && runStopMs == o.runStopMs && runActiveMs == o.runActiveMs &&
           removed == o.removed && tree == o.tree;
}

QByteArray LogMessage::toJson() const
{
    const QJsonObject o{{key::timeMs, timeMs},
                        {key::process, process},
                        {key::severity, severityName(severity)},
                        {key::text, text}};
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

Status LogMessage::fromJson(const QByteArray &json, LogMessage *out)
{
    QJsonObject o;
    if (Status s = parseObject(json, &o); !s.isOk())
        return s;
    const QString sev = o.value(key::severity).toString();
    const auto severity = severityFromName(sev);
    if (!severity)
        return Status(Status::Code::BadRequest, QStringLiteral("unknown severity '%1'").arg(sev));
    out->timeMs = o.value(key::timeMs).toInteger();
    out->process = o.value(key::process).toString();
    out->severity = *severity;
    out->text = o.value(key::text).toString();
    return {};
}

QByteArray TransitionRequest::toJson() const
{
    QJsonObject o{{key::transition, transitionName(transition)}};
    if (runNumber > 0)
        o.insert(key::runNumber, qint64(runNumber));
    if (!runType.isEmpty())
        o.insert(key::runType, runType);
    if (!parameters.isEmpty())
        o.insert(QLatin1String("parameters"), parameters);
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

Status TransitionRequest::fromJson(const QByteArray &data, TransitionRequest *out)
{
    TransitionRequest r;
    QString name = QString::fromUtf8(data).trimmed();
    if (name.startsWith(QLatin1Char('{'))) {
        QJsonObject o;
        if (Status s = parseObject(data, &o); !s.isOk())
            return Status(s.code(), QStringLiteral("malformed request: %1").arg(s.message()));
        name = o.value(key::transition).toString();
        const qint64 run = o.value(key::runNumber).toInteger();
        if (run < 0 || run > 0xffffffffLL)
            return Status(Status::Code::BadRequest, QStringLiteral("run_number %1 out of range").arg(run));
        r.runNumber = quint32(run);
        r.runType = o.value(key::runType).toString();
        r.parameters = o.value(QLatin1String("parameters")).toObject();
    }
    const auto parsed = transitionFromName(name);
    if (!parsed)
        return Status(Status::Code::BadRequest, QStringLiteral("unknown transition '%1' (known: %2)")
                                                    .arg(name, allTransitionNames().join(QStringLiteral(", "))));
    r.transition = *parsed;
    *out = std::move(r);
    return {};
}

} // namespace dialog::rc
