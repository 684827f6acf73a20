#include "dialog/is/alarmrule.h"

#include "dialog/glob.h"
#include "dialog/logrecord.h"

namespace dialog::is {

bool AlarmRule::holds(double v) const
{
    if (op == QLatin1String(">"))
        return v > threshold;
    if (op == QLatin1String(">="))
        return v >= threshold;
    if (op == QLatin1String("<"))
        return v < threshold;
    if (op == QLatin1String("<="))
        return v <= threshold;
    if (op == QLatin1String("=="))
        return v == threshold;
    return v != threshold;
}

Status AlarmRule::parse(const QString &text, QList<AlarmRule> *rules)
{
    static const QRegularExpression re(QStringLiteral(
        R"re(^\s*(\S+)\.([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|==|!=|>|<)\s*([-+0-9.eE]+|[-+]?inf)\s*)re"
        R"re((?:for\s+([0-9.]+)\s*(ms|s|m|h)\s*)?(?:->|→)\s*(info|warning|error|fatal)\s+"((?:[^"\\]|\\.)*)"\s*$)re"));
    const QStringList lines = text.split(QLatin1Char('\n'));
    rules->clear();
    for (int i = 0; i < lines.size(); ++i) {
        const QString line = lines.at(i).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        const QRegularExpressionMatch m = re.match(line);
        auto bad = [&](const QString &why) {
            return Status(Status::Code::BadRequest,
                          QStringLiteral("%1: %2: %3").arg(i + 1).arg(why, line.left(200)));
        };
        if (!m.hasMatch())
            return bad(QStringLiteral(
                "not a rule (PATTERN.ATTRIBUTE OP NUMBER [for DURATION] -> SEVERITY \"TEXT\")"));
        AlarmRule r;
        r.line = i + 1;
        r.source = line;
        r.pattern = globToRegex(m.captured(1));
        if (!r.pattern.isValid())
            return bad(QStringLiteral("bad pattern"));
        r.attribute = m.captured(2);
        r.op = m.captured(3);
        bool ok = false;
        r.threshold = m.captured(4).toDouble(&ok);
        if (!ok)
            return bad(QStringLiteral("'%1' is not a number").arg(m.captured(4)));
        if (!m.captured(5).isEmpty()) {
            const double n = m.captured(5).toDouble(&ok);
            if (!ok || n < 0 || n > 1e7)
                return bad(QStringLiteral("bad duration"));
            const QString unit = m.captured(6);
            const double scale = unit == QLatin1String("ms")  ? 1
                                 : unit == QLatin1String("s") ? 1000
                                 : unit == QLatin1String("m") ? 60000
                                                              : 3600000;
            r.forMs = qint64(n * scale);
        }
        const QString sev = m.captured(7);
        r.severity = sev == QLatin1String("info")      ? Severity::Info
                     : sev == QLatin1String("warning") ? Severity::Warning
                     : sev == QLatin1String("error")   ? Severity::Error
                                                       : Severity::Fatal;
        r.text = m.captured(8).replace(QLatin1String("\\\""), QLatin1String("\""));
        rules->append(r);
    }
    return {};
}

QString AlarmRule::severityName() const
{
    return dialog::severityName(severity);
}

} // namespace dialog::is
