#include "dialog/glob.h"

namespace dialog {

QRegularExpression globToRegex(const QString &glob)
{
    QString re = QStringLiteral("\\A");
    for (qsizetype i = 0; i < glob.size(); ++i) {
        const QChar c = glob.at(i);
        if (c == QLatin1Char('*')) {
            re += QLatin1String(".*");
        } else if (c == QLatin1Char('?')) {
            re += QLatin1Char('.');
        } else if (c == QLatin1Char('[') && glob.indexOf(QLatin1Char(']'), i + 2) > i) {
            const qsizetype end = glob.indexOf(QLatin1Char(']'), i + 2);
            QString set = glob.mid(i + 1, end - i - 1);
            // "[^…]" negates in both.
            set.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
            re += QLatin1Char('[') + set + QLatin1Char(']');
            i = end;
        } else {
            re += QRegularExpression::escape(QString(c));
        }
    }
    return QRegularExpression(re + QLatin1String("\\z"), QRegularExpression::DotMatchesEverythingOption);
}

} // namespace dialog
