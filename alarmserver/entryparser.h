// One entry of the rules file of dialog-alarmserver: its fields and its condition, checked one by one
// (against the IS types where the condition names one). RuleSet::parse() checks the file as a whole.
#pragma once

#include "alarmrules.h"

#include <QJsonObject>
#include <QSet>
#include <QString>

namespace dialog::is {
class TypeRegistry;
}

namespace dialog::alarm {

/// Parses the fields of one entry; every failure is one line of text in @p why.
class EntryParser
{
public:
    /// Checks conditions that name an IS type against @p types (none: such a condition is refused).
    explicit EntryParser(const is::TypeRegistry *types);
    /// One entry of "alarms" into @p r: false with the first problem in @p why.
    bool rule(const QJsonObject &o, Rule *r, QString *why);
    /// "on_raise": {"run": ["prog", "arg", …]} and/or {"post": "http://host:port/path"}.
    static bool onRaise(const QJsonValue &v, Rule *r, QString *why);

private:
    static bool fail(QString *why, const QString &text);
    static bool known(const QJsonObject &o, const QSet<QString> &keys, QString *why);
    static bool text(const QJsonObject &o, const QString &key, QString *out, QString *why);
    static bool flag(const QJsonObject &o, const QString &key, bool *out, QString *why);
    bool condition(const QJsonObject &o, Condition *c, QString *why);
    /// {"messages": {"process": "FE1", "severity": "error", "rate_per_min": 10, "window_s": 60}}
    static bool messages(const QJsonObject &outer, Condition *c, QString *why);
    static bool objectName(const QString &name, QString *why);
    bool isValue(const QJsonObject &o, Condition *c, QString *why);
    bool typeCheck(const QString &typeName, const Condition &c, QString *why) const;

    const is::TypeRegistry *m_types;
};

} // namespace dialog::alarm
