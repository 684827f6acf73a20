// Which programs an agent may start: globs on the program's absolute path (--allow), by default
// the installed dialog-* programs next to the agent and those of the --bin-dir directories.
#pragma once

#include <QList>
#include <QRegularExpression>
#include <QStringList>

namespace dialog::agent {

class ProgramAllowList
{
public:
    /// @p globs: dialog/glob.h patterns on absolute paths; empty: the defaults for @p binDirs.
    ProgramAllowList(const QStringList &globs, const QStringList &binDirs);
    /// The patterns in force (for --help-like listings and refusals).
    QStringList patterns() const { return m_patterns; }
    /// The absolute path of @p program: as given when absolute, else found in the agent's own
    /// directory or the bin directories (never in PATH). Empty when not found.
    QString resolve(const QString &program) const;
    /// True when @p path (absolute, symbolic links resolved) matches a pattern.
    bool allows(const QString &path) const;

private:
    QStringList m_patterns, m_binDirs;
    QList<QRegularExpression> m_res;
};

} // namespace dialog::agent
