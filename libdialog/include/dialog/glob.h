// Glob patterns as the toolkit takes them (log searches, access lists): '*' any characters ('/'
// included), '?' one, "[...]" one of a set ("[^...]" none of it); whole string, case-sensitive.
#pragma once

#include <QRegularExpression>
#include <QString>

namespace dialog {

/// The regular expression that matches the same strings as @p glob.
QRegularExpression globToRegex(const QString &glob);

} // namespace dialog
