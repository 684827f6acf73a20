// The words of the rules: severity names, and a condition as the operator reads it.
#include "alarmrules.h"

#include <QStringList>

using namespace Qt::StringLiterals;

namespace dialog::alarm {

QString severityName(Severity s)
{
    switch (s) {
    case Severity::None:
        return u"ok"_s;
    case Severity::Minor:
        return u"minor"_s;
    case Severity::Major:
        return u"major"_s;
    case Severity::Invalid:
        return u"invalid"_s;
    }
    return {};
}

std::optional<Severity> severityFromName(const QString &name)
{
    for (Severity s : {Severity::Minor, Severity::Major, Severity::Invalid})
        if (name == severityName(s))
            return s;
    return std::nullopt;
}

QString Condition::text() const
{
    switch (kind) {
    case Kind::IsValue: {
        QStringList parts;
        const QString what = object + u'.' + attribute;
        if (above)
            parts << u"%1 > %2"_s.arg(what).arg(*above);
        if (below)
            parts << u"%1 < %2"_s.arg(what).arg(*below);
        if (equals.isValid())
            parts << u"%1 %2 %3"_s.arg(what, notEquals ? u"!="_s : u"=="_s, equals.toString());
        if (matches.isValid() && !matches.pattern().isEmpty())
            parts << u"%1 ~ /%2/"_s.arg(what, matches.pattern());
        QString t = parts.join(u" or "_s);
        if (hysteresis > 0)
            t += u" (hysteresis %1)"_s.arg(hysteresis);
        return t;
    }
    case Kind::IsStale:
        return u"%1 stale"_s.arg(object);
    case Kind::ProcessLost:
        return u"process %1 lost"_s.arg(process);
    case Kind::ProcessError:
        return u"process %1 in Error"_s.arg(process);
    case Kind::RunState:
        return u"run state of %1 %2 %3"_s.arg(process, notIn ? u"not in"_s : u"in"_s, states.join(u','));
    case Kind::Messages:
        return u"messages of %1 at %2 or worse: %3 per minute or more over %4 s"_s.arg(
            process, dialog::severityName(messageSeverity)).arg(ratePerMin).arg(windowS);
    case Kind::Alarm:
        return u"alarm %1"_s.arg(alarm);
    case Kind::Any:
    case Kind::All: {
        QStringList t;
        for (const Condition &c : children)
            t << u'(' + c.text() + u')';
        return t.join(kind == Kind::Any ? u" or "_s : u" and "_s);
    }
    }
    return {};
}

} // namespace dialog::alarm
