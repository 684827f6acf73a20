// Glob patterns as the toolkit takes them (log searches, access lists, the message browser): '*' any
// characters ('/' included), '?' one, "[...]" one of a set ("[^...]" none of it; a ']' right after
// the '[' or "[^" belongs to the set); whole string, case-sensitive. A '[' without a closing ']' is
// a literal '[' ("run[3" matches the string "run[3"). There is no escape character.
#pragma once

#include <QRegularExpression>
#include <QString>

namespace dialog {

/// The regular expression that matches the same strings as @p glob (anchored at both ends).
QRegularExpression globToRegex(const QString &glob);
/// The pattern of globToRegex() without its anchors, written in the syntax that PCRE
/// (QRegularExpression) and PostgreSQL's regular expressions share, for a database to match
/// ("column ~ '^' || pattern || '$'").
QString globToRegexPattern(const QString &glob);
/// @p glob in the syntax of SQLite's GLOB operator, which matches the same strings (SQLite takes an
/// unclosed '[' as a set that matches nothing: it becomes "[[]", a literal '[').
QString globForSqlite(const QString &glob);

} // namespace dialog
