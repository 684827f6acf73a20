// A line diff in the unified format, for `dialogctl config diff` and `dialogctl runs diff`.
#include "dialog/config.h"

#include <QList>

namespace dialog::config {

namespace {

enum class Op : char
{
    Same = ' ',
    Removed = '-',
    Added = '+',
};

struct Line
{
    Op op;
    QString text;
    int oldNo, newNo; ///< 1-based line numbers in before / after
};

/// The edit script from @p a to @p b: a longest common subsequence of whole lines. Configuration
/// documents are small; beyond a bound (quadratic table) the documents are shown replaced whole.
QList<Line> script(const QStringList &a, const QStringList &b)
{
    const qsizetype n = a.size(), m = b.size();
    QList<Line> out;
    if (n * m > 4'000'000) {
        for (qsizetype i = 0; i < n; ++i)
            out.append({Op::Removed, a.at(i), int(i + 1), 0});
        for (qsizetype j = 0; j < m; ++j)
            out.append({Op::Added, b.at(j), 0, int(j + 1)});
        return out;
    }
    // lcs[i][j]: length of the LCS of a[i..] and b[j..].
    QList<int> lcs((n + 1) * (m + 1), 0);
    auto at = [&](qsizetype i, qsizetype j) -> int & { return lcs[i * (m + 1) + j]; };
    for (qsizetype i = n - 1; i >= 0; --i)
        for (qsizetype j = m - 1; j >= 0; --j)
            at(i, j) = a.at(i) == b.at(j) ? at(i + 1, j + 1) + 1 : qMax(at(i + 1, j), at(i, j + 1));
    qsizetype i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a.at(i) == b.at(j)) {
            out.append({Op::Same, a.at(i), int(i + 1), int(j + 1)});
            ++i, ++j;
        } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
            // Removals before additions, as diff(1) shows a replaced line.
            out.append({Op::Removed, a.at(i), int(i + 1), int(j)});
            ++i;
        } else {
            out.append({Op::Added, b.at(j), int(i), int(j + 1)});
            ++j;
        }
    }
    return out;
}

QStringList lines(const QByteArray &text)
{
    QStringList l = QString::fromUtf8(text).split(QLatin1Char('\n'));
    if (!l.isEmpty() && l.last().isEmpty())
        l.removeLast();
    return l;
}

} // namespace

QString unifiedDiff(const QString &path, const QByteArray &before, const QByteArray &after)
{
    if (before == after)
        return {};
    const QList<Line> s = script(lines(before), lines(after));
    constexpr int context = 3;
    QString out = QStringLiteral("--- a/%1\n+++ b/%1\n").arg(path);
    qsizetype k = 0;
    while (k < s.size()) {
        while (k < s.size() && s.at(k).op == Op::Same)
            ++k;
        if (k == s.size())
            break;
        // A hunk: from `context` lines before this change to `context` lines after the last change
        // that follows the one before it within 2 * context lines.
        const qsizetype start = qMax<qsizetype>(0, k - context);
        qsizetype last = k, x = k;
        while (x < s.size()) {
            if (s.at(x).op != Op::Same) {
                last = x++;
                continue;
            }
            qsizetype y = x;
            while (y < s.size() && s.at(y).op == Op::Same)
                ++y;
            if (y == s.size() || y - x > 2 * context)
                break;
            x = y;
        }
        const qsizetype end = qMin<qsizetype>(s.size(), last + 1 + context);
        int oldCount = 0, newCount = 0, oldStart = 0, newStart = 0;
        QString body;
        for (qsizetype x = start; x < end; ++x) {
            const Line &l = s.at(x);
            if (l.op != Op::Added) {
                oldStart = oldStart ? oldStart : l.oldNo;
                ++oldCount;
            }
            if (l.op != Op::Removed) {
                newStart = newStart ? newStart : l.newNo;
                ++newCount;
            }
            body += QLatin1Char(char(l.op)) + l.text + QLatin1Char('\n');
        }
        if (!oldStart)
            oldStart = s.at(start).oldNo;
        if (!newStart)
            newStart = s.at(start).newNo;
        out +=
            QStringLiteral("@@ -%1,%2 +%3,%4 @@\n").arg(oldStart).arg(oldCount).arg(newStart).arg(newCount) +
            body;
        k = end;
    }
    return out;
}

} // namespace dialog::config
