#include "programallowlist.h"

#include "dialog/glob.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace dialog::agent {

ProgramAllowList::ProgramAllowList(const QStringList &globs, const QStringList &binDirs)
    : m_patterns(globs)
{
    for (const QString &d : binDirs)
        m_binDirs.append(QFileInfo(d).absoluteFilePath());
    if (m_patterns.isEmpty()) {
        m_patterns.append(QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("dialog-*")));
        for (const QString &d : std::as_const(m_binDirs))
            m_patterns.append(QDir(d).filePath(QStringLiteral("*")));
    }
    for (const QString &p : std::as_const(m_patterns))
        m_res.append(globToRegex(p));
}

QString ProgramAllowList::resolve(const QString &program) const
{
    if (program.isEmpty())
        return {};
    if (QFileInfo(program).isAbsolute())
        return QFileInfo(program).isFile() ? QDir::cleanPath(program) : QString();
    if (program.contains(QLatin1Char('/')))
        return {}; // relative paths depend on the agent's working directory: refused
    for (const QString &dir : QStringList{QCoreApplication::applicationDirPath()} + m_binDirs) {
        const QFileInfo f(QDir(dir).filePath(program));
        if (f.isFile() && f.isExecutable())
            return QDir::cleanPath(f.absoluteFilePath());
    }
    return {};
}

bool ProgramAllowList::allows(const QString &path) const
{
    if (path.isEmpty())
        return false;
    // A pattern may name the link (/usr/bin/sh) or what it points at.
    const QStringList candidates{path, QFileInfo(path).canonicalFilePath()};
    for (const QRegularExpression &re : m_res)
        for (const QString &c : candidates)
            if (re.match(c).hasMatch())
                return true;
    return false;
}

} // namespace dialog::agent
