// The rules file of dialog-alarmserver (--rules FILE, JSON): every alarm with its tree path,
// severity, texts, operator options and the condition that raises it, checked as a whole before
// the server starts (unknown keys and attributes, type mismatches where the IS type is known,
// duplicate paths, an alarm that is also a node of the tree, cycles of alarms referring to alarms).
#pragma once

#include "dialog/logrecord.h"
#include "dialog/status.h"

#include <QHash>
#include <QList>
#include <QRegularExpression>
#include <QStringList>
#include <QUrl>
#include <QVariant>
#include <optional>

namespace dialog::is {
class TypeRegistry;
}

namespace dialog::alarm {

/// How bad an alarm is, in increasing order (a tree node shows the worst below it).
enum class Severity
{
    None = 0, ///< no alarm (a node with nothing active below it)
    Minor = 1,
    Major = 2,
    Invalid = 3, ///< the value cannot be trusted at all
};
/// "ok", "minor", "major" or "invalid".
QString severityName(Severity s);
std::optional<Severity> severityFromName(const QString &name);

/// What raises an alarm: a leaf (an IS attribute, a stale IS object, a process, the run state,
/// another alarm) or a combination of conditions.
struct Condition
{
    enum class Kind
    {
        IsValue,      ///< "is": Server.Object, "attribute", and a comparison
        IsStale,      ///< "stale": Server.Object (stale as its IS server says)
        ProcessLost,  ///< "process": name, "when": "lost" (not alive in the directory)
        ProcessError, ///< "process": name, "when": "error" (RunCtrl.<name>.State in Error)
        RunState,     ///< "run_state": process, "in" / "not_in": state names
        Messages,     ///< "messages": process (a glob), severity, rate_per_min, window_s
        Alarm,        ///< "alarm": path (active while that alarm is)
        Any,          ///< "any": [conditions]
        All,          ///< "all": [conditions]
    };
    Kind kind = Kind::IsValue;
    QString object;                     ///< IsValue, IsStale: Server.Object
    QString attribute;                  ///< IsValue
    std::optional<double> above, below; ///< IsValue: numeric thresholds
    double hysteresis = 0;              ///< IsValue: how far back the value must come to clear
    QVariant equals;                    ///< IsValue: a string, a number or a boolean
    bool notEquals = false;             ///< IsValue: "not_equals" instead of "equals"
    QRegularExpression matches;         ///< IsValue: a regular expression on a string (invalid: none)
    QString process;                    ///< ProcessLost, ProcessError, RunState; Messages: a glob
    QStringList states;                 ///< RunState
    bool notIn = false;                 ///< RunState: "not_in" instead of "in"
    dialog::Severity messageSeverity = dialog::Severity::Error; ///< Messages: at least this severity
    double ratePerMin = 0;              ///< Messages: holds at this many per minute or more
    double windowS = 60;                ///< Messages: over the last this many seconds
    QString alarm;                      ///< Alarm: the referenced path
    QList<Condition> children;          ///< Any, All

    /// What the condition says, for people: "DAQ.FE3.temperature > 40 (hysteresis 1)".
    QString text() const;
};

/// One alarm of the rules file.
struct Rule
{
    int line = 0;  ///< where its entry starts in the file (0: not known)
    int entry = 0; ///< its index in "alarms"
    QString path;  ///< Detector/ECAL/FE3/temperature
    Severity severity = Severity::Minor;
    QString description, guidance;
    QStringList links;
    bool latch = false;           ///< stays until acknowledged even when the condition cleared
    bool commentRequired = false; ///< an acknowledgement needs a comment
    double forS = 0;              ///< the condition must hold this long before the alarm is raised
    Condition condition;
    /// "on_raise": what to do each time the alarm is raised (both may be given).
    QStringList onRaiseRun; ///< a program and its arguments (empty: none)
    QUrl onRaisePost;       ///< an http:// or https:// URL to POST the alarm to (empty: none)
};

/// Every rule of a file, and the order to evaluate them in.
struct RuleSet
{
    QList<Rule> rules;
    QHash<QString, int> byPath;
    /// For each rule, the rules whose condition refers to it ("alarm": path).
    QList<QList<int>> dependents;

    /// Parses @p json (@p source names it in messages). With @p types, a condition on an IS object
    /// that names its "type" is checked against it (the attribute exists, the comparison fits its
    /// type). BadRequest "SOURCE:LINE: alarms[N] (PATH): reason" for the first problem found.
    static Status parse(const QByteArray &json, const QString &source, const is::TypeRegistry *types,
                        RuleSet *out);
    /// parse() of the file @p path; StorageError when it cannot be read.
    static Status load(const QString &path, const is::TypeRegistry *types, RuleSet *out);
};

} // namespace dialog::alarm
