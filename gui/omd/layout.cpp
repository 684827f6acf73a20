#include "layout.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

namespace dialog::omd {

QString SeriesSpec::displayLabel() const
{
    if (!label.isEmpty())
        return label;
    const qsizetype dot = object.indexOf(QLatin1Char('.'));
    return (dot < 0 ? object : object.mid(dot + 1)) + QLatin1Char('.') + attribute;
}

QString Threshold::displayLabel() const
{
    return label.isEmpty() ? QStringLiteral("%1 %2").arg(severity, QString::number(value, 'g', 8)) : label;
}

namespace {
bool readThresholds(const QJsonObject &chart, const QString &where, QList<Threshold> *out, QString *error)
{
    const QJsonValue list = chart.value(QStringLiteral("thresholds"));
    if (list.isUndefined())
        return true;
    if (!list.isArray()) {
        *error = where + QStringLiteral("\"thresholds\" must be an array");
        return false;
    }
    static const QStringList severities{QStringLiteral("info"), QStringLiteral("warning"),
                                        QStringLiteral("error"), QStringLiteral("fatal")};
    for (const QJsonValue &v : list.toArray()) {
        const QJsonObject t = v.toObject();
        Threshold th;
        if (!t.value(QStringLiteral("value")).isDouble()) {
            *error = where + QStringLiteral("a threshold needs a numeric \"value\"");
            return false;
        }
        th.value = t.value(QStringLiteral("value")).toDouble();
        th.label = t.value(QStringLiteral("label")).toString();
        th.severity = t.value(QStringLiteral("severity")).toString(QStringLiteral("warning"));
        if (!severities.contains(th.severity)) {
            *error = where + QStringLiteral("unknown threshold severity '%1' (info, warning, error or fatal)")
                                 .arg(th.severity);
            return false;
        }
        *out << th;
    }
    return true;
}
} // namespace

QJsonObject Layout::toJson() const
{
    QJsonArray charts;
    for (const ChartSpec &c : this->charts) {
        QJsonObject j{{QStringLiteral("title"), c.title}};
        if (c.kind == ChartSpec::Kind::TimeSeries) {
            j.insert(QStringLiteral("kind"), QStringLiteral("timeseries"));
            QJsonArray series;
            for (const SeriesSpec &s : c.series) {
                QJsonObject sj{{QStringLiteral("object"), s.object},
                               {QStringLiteral("attribute"), s.attribute}};
                if (!s.label.isEmpty())
                    sj.insert(QStringLiteral("label"), s.label);
                series.append(sj);
            }
            j.insert(QStringLiteral("series"), series);
        } else {
            j.insert(QStringLiteral("kind"), QStringLiteral("bar"));
            j.insert(QStringLiteral("server"), c.server);
            j.insert(QStringLiteral("regex"), c.regex);
            j.insert(QStringLiteral("type"), c.type);
            j.insert(QStringLiteral("subtypes"), c.subtypes);
            j.insert(QStringLiteral("attribute"), c.attribute);
        }
        if (!c.thresholds.isEmpty()) {
            QJsonArray thresholds;
            for (const Threshold &t : c.thresholds) {
                QJsonObject tj{{QStringLiteral("value"), t.value}, {QStringLiteral("severity"), t.severity}};
                if (!t.label.isEmpty())
                    tj.insert(QStringLiteral("label"), t.label);
                thresholds.append(tj);
            }
            j.insert(QStringLiteral("thresholds"), thresholds);
        }
        charts.append(j);
    }
    return QJsonObject{{QStringLiteral("title"), title},
                       {QStringLiteral("window_s"), windowSeconds},
                       {QStringLiteral("columns"), columns},
                       {QStringLiteral("autoscale"), autoscale},
                       {QStringLiteral("charts"), charts}};
}

bool Layout::fromJson(const QJsonObject &json, Layout *out, QString *error)
{
    Layout l;
    l.title = json.value(QStringLiteral("title")).toString();
    l.windowSeconds = json.value(QStringLiteral("window_s")).toInt(600);
    if (l.windowSeconds != 60 && l.windowSeconds != 600 && l.windowSeconds != 3600) {
        *error = QStringLiteral("window_s must be 60, 600 or 3600");
        return false;
    }
    l.columns = std::clamp(json.value(QStringLiteral("columns")).toInt(2), 1, 6);
    l.autoscale = json.value(QStringLiteral("autoscale")).toBool(true);
    const QJsonArray charts = json.value(QStringLiteral("charts")).toArray();
    for (int i = 0; i < charts.size(); ++i) {
        const QJsonObject j = charts.at(i).toObject();
        const QString where = QStringLiteral("chart %1: ").arg(i + 1);
        ChartSpec c;
        c.title = j.value(QStringLiteral("title")).toString();
        const QString kind = j.value(QStringLiteral("kind")).toString(QStringLiteral("timeseries"));
        if (kind == QLatin1String("timeseries")) {
            for (const QJsonValue &v : j.value(QStringLiteral("series")).toArray()) {
                const QJsonObject sj = v.toObject();
                SeriesSpec s{sj.value(QStringLiteral("object")).toString(),
                             sj.value(QStringLiteral("attribute")).toString(),
                             sj.value(QStringLiteral("label")).toString()};
                if (!s.object.contains(QLatin1Char('.')) || s.attribute.isEmpty()) {
                    *error =
                        where + QStringLiteral("a series needs \"object\" (Server.Object) and \"attribute\"");
                    return false;
                }
                c.series << s;
            }
        } else if (kind == QLatin1String("bar")) {
            c.kind = ChartSpec::Kind::Bar;
            c.server = j.value(QStringLiteral("server")).toString();
            c.regex = j.value(QStringLiteral("regex")).toString();
            c.type = j.value(QStringLiteral("type")).toString();
            c.subtypes = j.value(QStringLiteral("subtypes")).toBool(true);
            c.attribute = j.value(QStringLiteral("attribute")).toString();
            if (c.server.isEmpty() || c.attribute.isEmpty()) {
                *error = where + QStringLiteral("a bar chart needs \"server\" and \"attribute\"");
                return false;
            }
        } else {
            *error = where + QStringLiteral("unknown kind '%1' (timeseries or bar)").arg(kind);
            return false;
        }
        if (!readThresholds(j, where, &c.thresholds, error))
            return false;
        l.charts << c;
    }
    *out = l;
    return true;
}

bool Layout::save(const QString &path, QString *error) const
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        *error = f.errorString();
        return false;
    }
    f.write(QJsonDocument(toJson()).toJson(QJsonDocument::Indented));
    if (!f.commit()) {
        *error = f.errorString();
        return false;
    }
    return true;
}

bool Layout::load(const QString &path, Layout *out, QString *error)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: %2").arg(path, f.errorString());
        return false;
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
    if (!doc.isObject()) {
        *error = QStringLiteral("%1: not a JSON object (%2)").arg(path, pe.errorString());
        return false;
    }
    if (!fromJson(doc.object(), out, error)) {
        *error = path + QStringLiteral(": ") + *error;
        return false;
    }
    return true;
}

} // namespace dialog::omd
