#include "dialog/glob.h"

namespace dialog {

namespace {

// Where the set opened at @p open ends (its ']'), or -1 if it is never closed.
qsizetype setEnd(const QString &glob, qsizetype open)
{
    qsizetype i = open + 1;
    if (i < glob.size() && glob.at(i) == QLatin1Char('^'))
        ++i;
    if (i < glob.size() && glob.at(i) == QLatin1Char(']')) // a leading ']' is a member
        ++i;
    return glob.indexOf(QLatin1Char(']'), i);
}

} // namespace

QString globToRegexPattern(const QString &glob)
{
    static const QString special = QStringLiteral("\\.^$+(){}|[]*?");
    QString re;
    for (qsizetype i = 0; i < glob.size(); ++i) {
        const QChar c = glob.at(i);
        const qsizetype end = c == QLatin1Char('[') ? setEnd(glob, i) : -1;
        if (c == QLatin1Char('*')) {
            re += QLatin1String(".*");
        } else if (c == QLatin1Char('?')) {
            re += QLatin1Char('.');
        } else if (end > 0) {
            QString set = glob.mid(i + 1, end - i - 1);
            // A backslash is a member like any other; in a regex set it would escape.
            set.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
            if (set.startsWith(QLatin1Char(']')) || set.startsWith(QLatin1String("^]")))
                set.insert(set.indexOf(QLatin1Char(']')), QLatin1Char('\\'));
            re += QLatin1Char('[') + set + QLatin1Char(']');
            i = end;
        } else if (special.contains(c)) {
            re += QLatin1Char('\\') + c;
        } else {
            re += c;
        }
    }
    return re;
}

QString globForSqlite(const QString &glob)
{
    QString out;
    for (qsizetype i = 0; i < glob.size(); ++i) {
        const qsizetype end = glob.at(i) == QLatin1Char('[') ? setEnd(glob, i) : i;
        if (end < 0) {
            out += QLatin1String("[[]");
        } else {
            out += glob.mid(i, end - i + 1);
            i = end;
        }
    }
    return out;
}

QRegularExpression globToRegex(const QString &glob)
{
    return QRegularExpression(QRegularExpression::anchoredPattern(globToRegexPattern(glob)),
                              QRegularExpression::DotMatchesEverythingOption);
}

} // namespace dialog
