#include "logmodel.h"

#include "dialog/glob.h"

#include <QColor>
#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

namespace dialog::msgbrowser {

namespace {
QString timeText(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

QByteArray csvField(const QString &s)
{
    QByteArray f = s.toUtf8();
    if (f.contains(',') || f.contains('"') || f.contains('\n') || f.contains('\r'))
        f = '"' + f.replace("\"", "\"\"") + '"';
    return f;
}
} // namespace

LogFilter::LogFilter(const LogQuery &query)
    : m_query(query), m_process(globToRegex(query.process)), m_host(globToRegex(query.host)),
      m_category(globToRegex(query.category))
{
}

bool LogFilter::matches(const LogRecord &r) const
{
    const LogQuery &q = m_query;
    auto glob = [](const QString &pattern, const QRegularExpression &re, const QString &s) {
        return pattern.isEmpty() || re.match(s).hasMatch();
    };
    return (!q.sinceMs || r.timeMs >= q.sinceMs) && (!q.untilMs || r.timeMs <= q.untilMs) &&
           r.severity >= q.minSeverity && glob(q.process, m_process, r.process) &&
           glob(q.host, m_host, r.host) && glob(q.category, m_category, r.category) &&
           (!q.run || r.run == q.run) && (q.text.isEmpty() || r.text.contains(q.text, Qt::CaseInsensitive));
}

LogModel::LogModel(QObject *parent) : QAbstractTableModel(parent) {}

int LogModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int LogModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QColor LogModel::severityColor(dialog::Severity severity)
{
    switch (severity) {
    case dialog::Severity::Debug:
        return QColor(0xee, 0xf0, 0xf3);
    case dialog::Severity::Info:
        return {};
    case dialog::Severity::Warning:
        return QColor(0xff, 0xf1, 0xc2);
    case dialog::Severity::Error:
        return QColor(0xfb, 0xd0, 0xcc);
    case dialog::Severity::Fatal:
        return QColor(0xc6, 0x28, 0x28);
    }
    return {};
}

QVariant LogModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const LogRecord &r = m_rows.at(index.row());
    if (role == Qt::BackgroundRole) {
        const QColor c = severityColor(r.severity);
        return c.isValid() ? QVariant(c) : QVariant();
    }
    if (role == Qt::ForegroundRole) {
        if (r.severity == dialog::Severity::Fatal)
            return QColor(Qt::white);
        if (r.severity == dialog::Severity::Debug)
            return QColor(0x70, 0x76, 0x80);
        return {};
    }
    if (role == Qt::ToolTipRole && index.column() == Text)
        return r.text;
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Time:
        return timeText(r.timeMs);
    case Severity:
        return severityName(r.severity);
    case Process:
        return r.process;
    case Host:
        return r.host;
    case Category:
        return r.category;
    case Run:
        return r.run ? QVariant(r.run) : QVariant();
    case Text: {
        // One line in the table; the detail pane has all of it.
        const qsizetype nl = r.text.indexOf(QLatin1Char('\n'));
        return nl < 0 ? r.text : r.text.left(nl) + QStringLiteral(" …");
    }
    }
    return {};
}

QVariant LogModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char *const names[] = {"Time", "Severity", "Process", "Host", "Category", "Run", "Text"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

void LogModel::add(const QList<LogRecord> &records)
{
    QList<LogRecord> fresh;
    fresh.reserve(records.size());
    for (const LogRecord &r : records)
        if (!m_ids.contains(r.id)) {
            m_ids.insert(r.id);
            fresh.append(r);
        }
    if (fresh.isEmpty())
        return;
    std::sort(fresh.begin(), fresh.end(), [](const LogRecord &a, const LogRecord &b) { return a.id > b.id; });
    // The usual cases in one step: a live batch above everything, an older page below everything.
    if (m_rows.isEmpty() || fresh.last().id > m_rows.first().id) {
        beginInsertRows({}, 0, int(fresh.size()) - 1);
        m_rows = fresh + m_rows;
        endInsertRows();
        return;
    }
    if (fresh.first().id < m_rows.last().id) {
        beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + fresh.size()) - 1);
        m_rows += fresh;
        endInsertRows();
        return;
    }
    for (const LogRecord &r : std::as_const(fresh)) {
        const auto at = std::lower_bound(m_rows.begin(), m_rows.end(), r.id,
                                         [](const LogRecord &x, qint64 id) { return x.id > id; });
        const int row = int(at - m_rows.begin());
        beginInsertRows({}, row, row);
        m_rows.insert(row, r);
        endInsertRows();
    }
}

void LogModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_ids.clear();
    endResetModel();
}

QByteArray LogModel::toCsv(const QList<int> &rows) const
{
    QByteArray out = "time,severity,process,host,pid,category,run,text,file,line,values,id\r\n";
    for (int row : rows) {
        if (row < 0 || row >= m_rows.size())
            continue;
        const LogRecord &r = m_rows.at(row);
        const QString values =
            r.values.isEmpty()
                ? QString()
                : QString::fromUtf8(
                      QJsonDocument(QJsonObject::fromVariantMap(r.values)).toJson(QJsonDocument::Compact));
        const QList<QString> fields{timeText(r.timeMs),
                                    severityName(r.severity),
                                    r.process,
                                    r.host,
                                    QString::number(r.pid),
                                    r.category,
                                    r.run ? QString::number(r.run) : QString(),
                                    r.text,
                                    r.file,
                                    r.file.isEmpty() ? QString() : QString::number(r.line),
                                    values,
                                    QString::number(r.id)};
        for (int i = 0; i < fields.size(); ++i) {
            if (i)
                out += ',';
            out += csvField(fields.at(i));
        }
        out += "\r\n";
    }
    return out;
}

QString LogModel::details(int row) const
{
    if (row < 0 || row >= m_rows.size())
        return {};
    const LogRecord &r = m_rows.at(row);
    QString s;
    auto line = [&s](const char *name, const QString &value) {
        s += QLatin1String(name) + QStringLiteral(": ") + value + QLatin1Char('\n');
    };
    line("Time", timeText(r.timeMs));
    line("Severity", severityName(r.severity));
    line("Process", r.process);
    line("Host", r.host);
    line("PID", QString::number(r.pid));
    line("Category", r.category);
    if (!r.file.isEmpty())
        line("Source", QStringLiteral("%1:%2").arg(r.file).arg(r.line));
    line("Run", r.run ? QString::number(r.run) : QStringLiteral("none"));
    for (auto it = r.values.cbegin(); it != r.values.cend(); ++it)
        line("Value", it.key() + QStringLiteral(" = ") + it.value().toString());
    line("Sequence", QString::number(r.sequence));
    line("Id", QString::number(r.id));
    s += QStringLiteral("\n") + r.text;
    return s;
}

} // namespace dialog::msgbrowser
