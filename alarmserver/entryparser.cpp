#include "entryparser.h"

#include "dialog/is/typeregistry.h"

#include <QJsonArray>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace dialog::alarm {

namespace {

bool isNumeric(is::BasicType t)
{
    return t != is::BasicType::Bool && t != is::BasicType::String && t != is::BasicType::Time &&
           t != is::BasicType::Object;
}

} // namespace

EntryParser::EntryParser(const is::TypeRegistry *types) : m_types(types) {}

bool EntryParser::rule(const QJsonObject &o, Rule *r, QString *why)
{
    static const QSet<QString> keys{u"path"_s,      u"severity"_s, u"description"_s,          u"guidance"_s,
                                    u"links"_s,     u"latch"_s,    u"ack_comment_required"_s, u"for_s"_s,
                                    u"condition"_s, u"on_raise"_s};
    if (!known(o, keys, why))
        return false;
    r->path = o.value(u"path"_s).toString();
    if (r->path.isEmpty())
        return fail(why, u"\"path\" is missing (e.g. \"Detector/ECAL/FE3/temperature\")"_s);
    const QStringList parts = r->path.split(u'/');
    for (const QString &p : parts)
        if (p.trimmed().isEmpty() || p != p.trimmed())
            return fail(why, u"path '%1': empty or padded node names are not allowed"_s.arg(r->path));
    const auto sev = severityFromName(o.value(u"severity"_s).toString(u"minor"_s));
    if (!sev)
        return fail(why, u"severity '%1': expected minor, major or invalid"_s.arg(
                             o.value(u"severity"_s).toVariant().toString()));
    r->severity = *sev;
    if (!text(o, u"description"_s, &r->description, why) || !text(o, u"guidance"_s, &r->guidance, why))
        return false;
    for (const QJsonValue &l : o.value(u"links"_s).toArray()) {
        if (!l.isString())
            return fail(why, u"links: expected strings"_s);
        r->links << l.toString();
    }
    if (!flag(o, u"latch"_s, &r->latch, why) || !flag(o, u"ack_comment_required"_s, &r->commentRequired, why))
        return false;
    const QJsonValue f = o.value(u"for_s"_s);
    if (!f.isUndefined() && (!f.isDouble() || f.toDouble() < 0 || f.toDouble() > 86400))
        return fail(why, u"for_s: expected seconds between 0 and 86400"_s);
    r->forS = f.toDouble(0);
    if (!o.value(u"condition"_s).isObject())
        return fail(why, u"\"condition\" is missing or not an object"_s);
    if (o.contains(u"on_raise"_s) && !onRaise(o.value(u"on_raise"_s), r, why))
        return false;
    return condition(o.value(u"condition"_s).toObject(), &r->condition, why);
}

bool EntryParser::onRaise(const QJsonValue &v, Rule *r, QString *why)
{
    if (!v.isObject())
        return fail(why, u"on_raise: expected an object with \"run\" and/or \"post\""_s);
    const QJsonObject o = v.toObject();
    if (!known(o, {u"run"_s, u"post"_s}, why))
        return false;
    if (o.isEmpty())
        return fail(why, u"on_raise: expected \"run\" and/or \"post\""_s);
    if (o.contains(u"run"_s)) {
        const QJsonArray run = o.value(u"run"_s).toArray();
        for (const QJsonValue &a : run) {
            if (!a.isString())
                return fail(why,
                            u"on_raise.run: expected a list of strings (the program, then its arguments)"_s);
            r->onRaiseRun << a.toString();
        }
        if (r->onRaiseRun.isEmpty() || r->onRaiseRun.first().isEmpty())
            return fail(
                why,
                u"on_raise.run: expected the program then its arguments, e.g. [\"/usr/bin/logger\", \"alarm\"]"_s);
    }
    if (o.contains(u"post"_s)) {
        const QString text = o.value(u"post"_s).toString();
        const QUrl url(text, QUrl::StrictMode);
        if (!url.isValid() || (url.scheme() != u"http"_s && url.scheme() != u"https"_s) ||
            url.host().isEmpty())
            return fail(why, u"on_raise.post: '%1' is not an http:// or https:// URL with a host%2"_s.arg(
                                 text, url.isValid() ? QString() : u" ("_s + url.errorString() + u')'));
        r->onRaisePost = url;
    }
    return true;
}

bool EntryParser::fail(QString *why, const QString &text)
{
    *why = text;
    return false;
}

bool EntryParser::known(const QJsonObject &o, const QSet<QString> &keys, QString *why)
{
    for (auto it = o.begin(); it != o.end(); ++it)
        if (!keys.contains(it.key()))
            return fail(why, u"unknown key \"%1\""_s.arg(it.key()));
    return true;
}

bool EntryParser::text(const QJsonObject &o, const QString &key, QString *out, QString *why)
{
    const QJsonValue v = o.value(key);
    if (!v.isUndefined() && !v.isString())
        return fail(why, u"%1: expected a string"_s.arg(key));
    *out = v.toString();
    return true;
}

bool EntryParser::flag(const QJsonObject &o, const QString &key, bool *out, QString *why)
{
    const QJsonValue v = o.value(key);
    if (!v.isUndefined() && !v.isBool())
        return fail(why, u"%1: expected true or false"_s.arg(key));
    *out = v.toBool(false);
    return true;
}

bool EntryParser::condition(const QJsonObject &o, Condition *c, QString *why)
{
    if (o.contains(u"any"_s) || o.contains(u"all"_s)) {
        const bool any = o.contains(u"any"_s);
        if (!known(o, {any ? u"any"_s : u"all"_s}, why))
            return false;
        c->kind = any ? Condition::Kind::Any : Condition::Kind::All;
        const QJsonArray list = o.value(any ? u"any"_s : u"all"_s).toArray();
        if (list.isEmpty())
            return fail(why, u"%1: expected a non-empty list of conditions"_s.arg(any ? u"any" : u"all"));
        for (const QJsonValue &v : list) {
            Condition child;
            if (!condition(v.toObject(), &child, why))
                return false;
            c->children << child;
        }
        return true;
    }
    if (o.contains(u"alarm"_s)) {
        c->kind = Condition::Kind::Alarm;
        c->alarm = o.value(u"alarm"_s).toString();
        return known(o, {u"alarm"_s}, why) &&
               (!c->alarm.isEmpty() || fail(why, u"alarm: expected the path of another alarm"_s));
    }
    if (o.contains(u"stale"_s)) {
        c->kind = Condition::Kind::IsStale;
        c->object = o.value(u"stale"_s).toString();
        return known(o, {u"stale"_s}, why) && objectName(c->object, why);
    }
    if (o.contains(u"run_state"_s)) {
        c->kind = Condition::Kind::RunState;
        c->process = o.value(u"run_state"_s).toString();
        if (!known(o, {u"run_state"_s, u"in"_s, u"not_in"_s}, why))
            return false;
        c->notIn = o.contains(u"not_in"_s);
        for (const QJsonValue &v : o.value(c->notIn ? u"not_in"_s : u"in"_s).toArray())
            c->states << v.toString();
        static const QStringList names{u"Initial"_s, u"Configured"_s, u"Running"_s, u"Paused"_s, u"Error"_s};
        if (c->process.isEmpty() || c->states.isEmpty())
            return fail(why, u"run_state: expected the process and \"in\" or \"not_in\" state names"_s);
        for (const QString &s : std::as_const(c->states))
            if (!names.contains(s))
                return fail(why,
                            u"run_state: unknown state '%1' (expected %2)"_s.arg(s, names.join(u", "_s)));
        return true;
    }
    if (o.contains(u"process"_s)) {
        if (!known(o, {u"process"_s, u"when"_s}, why))
            return false;
        c->process = o.value(u"process"_s).toString();
        const QString when = o.value(u"when"_s).toString(u"lost"_s);
        if (when == u"lost"_s)
            c->kind = Condition::Kind::ProcessLost;
        else if (when == u"error"_s)
            c->kind = Condition::Kind::ProcessError;
        else
            return fail(why, u"when '%1': expected lost or error"_s.arg(when));
        return !c->process.isEmpty() || fail(why, u"process: expected a process name"_s);
    }
    if (o.contains(u"messages"_s))
        return messages(o, c, why);
    if (o.contains(u"is"_s))
        return isValue(o, c, why);
    return fail(why,
                u"condition: expected one of is, stale, process, run_state, messages, alarm, any, all"_s);
}

bool EntryParser::messages(const QJsonObject &outer, Condition *c, QString *why)
{
    if (!known(outer, {u"messages"_s}, why))
        return false;
    if (!outer.value(u"messages"_s).isObject())
        return fail(why, u"messages: expected {\"process\": …, \"severity\": …, \"rate_per_min\": …}"_s);
    const QJsonObject o = outer.value(u"messages"_s).toObject();
    if (!known(o, {u"process"_s, u"severity"_s, u"rate_per_min"_s, u"window_s"_s}, why))
        return false;
    c->kind = Condition::Kind::Messages;
    c->process = o.value(u"process"_s).toString();
    if (c->process.isEmpty())
        return fail(why, u"messages.process: expected a process name or glob (\"FE*\")"_s);
    const auto sev = dialog::severityFromName(o.value(u"severity"_s).toString(u"error"_s));
    if (!sev)
        return fail(why, u"messages.severity '%1': expected debug, info, warning, error or fatal"_s.arg(
                             o.value(u"severity"_s).toVariant().toString()));
    c->messageSeverity = *sev;
    const QJsonValue rate = o.value(u"rate_per_min"_s);
    if (!rate.isDouble() || rate.toDouble() <= 0 || rate.toDouble() > 1e6)
        return fail(why, u"messages.rate_per_min: expected a number above 0 (up to 1000000)"_s);
    c->ratePerMin = rate.toDouble();
    const QJsonValue w = o.value(u"window_s"_s);
    if (!w.isUndefined() && (!w.isDouble() || w.toDouble() < 1 || w.toDouble() > 3600))
        return fail(why, u"messages.window_s: expected seconds between 1 and 3600"_s);
    c->windowS = w.toDouble(60);
    return true;
}

bool EntryParser::objectName(const QString &name, QString *why)
{
    const int dot = name.indexOf(u'.');
    if (dot <= 0 || dot == name.size() - 1)
        return fail(why, u"'%1': expected an IS object name Server.Object"_s.arg(name));
    return true;
}

bool EntryParser::isValue(const QJsonObject &o, Condition *c, QString *why)
{
    if (!known(o,
               {u"is"_s, u"type"_s, u"attribute"_s, u"above"_s, u"below"_s, u"hysteresis"_s, u"equals"_s,
                u"not_equals"_s, u"matches"_s},
               why))
        return false;
    c->kind = Condition::Kind::IsValue;
    c->object = o.value(u"is"_s).toString();
    c->attribute = o.value(u"attribute"_s).toString();
    if (!objectName(c->object, why))
        return false;
    if (c->attribute.isEmpty())
        return fail(why, u"attribute: expected the attribute of %1 to test"_s.arg(c->object));
    for (const QString &k : {u"above"_s, u"below"_s, u"hysteresis"_s})
        if (o.contains(k) && !o.value(k).isDouble())
            return fail(why, u"%1: expected a number"_s.arg(k));
    if (o.contains(u"above"_s))
        c->above = o.value(u"above"_s).toDouble();
    if (o.contains(u"below"_s))
        c->below = o.value(u"below"_s).toDouble();
    c->hysteresis = o.value(u"hysteresis"_s).toDouble(0);
    if (c->hysteresis < 0)
        return fail(why, u"hysteresis: expected a number >= 0"_s);
    c->notEquals = o.contains(u"not_equals"_s);
    const QJsonValue eq = o.value(c->notEquals ? u"not_equals"_s : u"equals"_s);
    if (!eq.isUndefined()) {
        if (!eq.isString() && !eq.isBool() && !eq.isDouble())
            return fail(why, u"equals: expected a string, a number or true/false"_s);
        c->equals = eq.toVariant();
    }
    if (o.contains(u"matches"_s)) {
        c->matches = QRegularExpression(o.value(u"matches"_s).toString());
        if (!c->matches.isValid() || c->matches.pattern().isEmpty())
            return fail(why, u"matches: not a valid regular expression: %1"_s.arg(c->matches.errorString()));
    }
    const int tests = (c->above || c->below ? 1 : 0) + (c->equals.isValid() ? 1 : 0) +
                      (c->matches.pattern().isEmpty() ? 0 : 1);
    if (tests != 1)
        return fail(why, u"%1.%2: expected one test: above/below, equals/not_equals or matches"_s.arg(
                             c->object, c->attribute));
    if (o.contains(u"type"_s))
        return typeCheck(o.value(u"type"_s).toString(), *c, why);
    return true;
}

bool EntryParser::typeCheck(const QString &typeName, const Condition &c, QString *why) const
{
    if (!m_types || !m_types->contains(typeName))
        return fail(why, u"unknown IS type '%1' (give its XML with --types)"_s.arg(typeName));
    const is::TypeInfo t = m_types->type(typeName);
    for (const is::AttributeInfo &a : t.allAttributes()) {
        if (a.name() != c.attribute)
            continue;
        const QString have = a.typeName().isEmpty() ? is::basicTypeName(a.type()) : a.typeName();
        if (a.isVector() || a.type() == is::BasicType::Object)
            return fail(why, u"%1 of type %2 is a %3, not a scalar"_s.arg(c.attribute, typeName, have));
        const auto mismatch = [&](const QString &test) {
            return fail(why, u"type mismatch: %1 of type %2 is %3, %4 needs %5"_s.arg(
                                 c.attribute, typeName, have, test,
                                 test == u"matches"_s ? u"a string"_s : u"a number"_s));
        };
        if ((c.above || c.below) && !isNumeric(a.type()))
            return mismatch(c.above ? u"above"_s : u"below"_s);
        if (!c.matches.pattern().isEmpty() && a.type() != is::BasicType::String)
            return mismatch(u"matches"_s);
        if (c.equals.isValid()) {
            const bool fits = c.equals.typeId() == QMetaType::QString ? a.type() == is::BasicType::String
                              : c.equals.typeId() == QMetaType::Bool  ? a.type() == is::BasicType::Bool
                                                                      : isNumeric(a.type());
            if (!fits)
                return fail(why,
                            u"type mismatch: %1 of type %2 is %3, not comparable with %4"_s.arg(
                                c.attribute, typeName, have,
                                QString::fromUtf8(QJsonDocument(QJsonArray{QJsonValue::fromVariant(c.equals)})
                                                      .toJson(QJsonDocument::Compact))
                                    .mid(1)
                                    .chopped(1)));
        }
        return true;
    }
    return fail(why, u"unknown attribute '%1' of IS type %2"_s.arg(c.attribute, typeName));
}

} // namespace dialog::alarm
