// Alarm rules: the file format of dialog-isserver --alarms FILE (evaluated by the IS server) and
// of dialog-omd --alarms FILE (drawn as threshold lines).
#pragma once

#include "dialog/logrecord.h"
#include "dialog/status.h"

#include <QList>
#include <QRegularExpression>
#include <QString>

namespace dialog::is {

/// One rule of an alarm file:
///
///     PATTERN.ATTRIBUTE OP NUMBER [for DURATION] -> SEVERITY "TEXT"
///
/// PATTERN is a glob on full object names ("DAQ.RO*": '*' any characters, '?' one, "[...]" one of a
/// set; see dialog/glob.h), ATTRIBUTE a numeric attribute of the object (the part after the last
/// '.'), OP one of > >= < <= == !=, DURATION a
/// number with ms, s, m or h (default 0: at once), SEVERITY info, warning, error or fatal; "→" may
/// stand for "->". Blank lines and lines starting with '#' are ignored.
struct AlarmRule
{
    /// The line of the rules file the rule was read from.
    int line = 0;
    QString source; ///< the rule as written
    /// OBJECT_REGEX, compiled: which objects ("Server.Object") the rule is about.
    QRegularExpression pattern;
    /// The numeric attribute compared.
    QString attribute;
    /// The comparison: >, >=, <, <=, == or !=.
    QString op;
    /// The number the attribute is compared with.
    double threshold = 0;
    /// How long the condition must hold before the alarm is raised (0: at once).
    qint64 forMs = 0;
    /// The alarm's severity.
    Severity severity = Severity::Warning;
    /// The alarm's text (TEXT in the rule).
    QString text;

    /// True when "@p value OP threshold" holds.
    bool holds(double value) const;
    /// Whether the rule is about @p attribute of the object @p fullName ("Server.Object").
    bool appliesTo(const QString &fullName, const QString &attribute) const
    {
        return attribute == this->attribute && pattern.match(fullName).hasMatch();
    }
    /// "info", "warning", "error" or "fatal".
    QString severityName() const;
    /// Parses a whole file's text into @p rules; Status::Code::BadRequest with "LINE: reason: the
    /// line" for the first line that is not a rule.
    static Status parse(const QString &text, QList<AlarmRule> *rules);
};

} // namespace dialog::is
