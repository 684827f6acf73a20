#include "metrics.h"

#include "dialog/client.h"
#include "dialog/is/repository.h"
#include "dialog/subscription.h"

#include <QLoggingCategory>
#include <cmath>

Q_LOGGING_CATEGORY(lcMetrics, "dialog.is.metrics")

namespace dialog::isd {

namespace {

/// "changesPerSecond" -> "changes_per_second".
QByteArray snakeCase(const QString &camel)
{
    QByteArray out;
    for (const QChar c : camel) {
        if (c.isUpper() && !out.isEmpty())
            out += '_';
        out += c.isLetterOrNumber() ? char(c.toLower().toLatin1()) : '_';
    }
    return out;
}

/// The sample text of a numeric scalar; empty for anything else (strings, vectors, nested objects).
QByteArray scalarText(const is::Value &value)
{
    return std::visit(
        [](const auto &v) -> QByteArray {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>)
                return v ? "1" : "0";
            else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
                return metricsNumber(double(v));
            else if constexpr (std::is_integral_v<T>)
                return QByteArray::number(v);
            else if constexpr (std::is_same_v<T, is::Time>)
                return metricsNumber(double(v.microsecondsSinceEpoch()) / 1e6);
            else
                return {};
        },
        value.storage());
}

/// Appends one dialog_is_value sample per numeric scalar of @p object (nested objects flattened).
void appendValues(QByteArray &out, const QByteArray &labels, const is::Object &object, const QString &prefix,
                  int depth)
{
    const QList<is::AttributeInfo> attributes = object.attributes();
    for (int i = 0; i < attributes.size(); ++i) {
        const is::Value *v = object.valueAt(i);
        if (!v)
            continue;
        const QString name = prefix + attributes.at(i).name();
        if (const is::Object *nested = v->getIf<is::Object>()) {
            if (depth < 8)
                appendValues(out, labels, *nested, name + QLatin1Char('.'), depth + 1);
            continue;
        }
        const QByteArray text = scalarText(*v);
        if (text.isEmpty())
            continue;
        out += "dialog_is_value{" + labels + ",attribute=\"" + metricsLabel(name) + "\"} " + text + '\n';
    }
}

void family(QByteArray &out, const QByteArray &name, const char *type, const char *help)
{
    out += "# TYPE " + name + ' ' + type + "\n# HELP " + name + ' ' + help + '\n';
}

} // namespace

QByteArray metricsLabel(const QString &value)
{
    QByteArray out = value.toUtf8();
    out.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
    return out;
}

QByteArray metricsNumber(double value)
{
    if (std::isnan(value))
        return "NaN";
    if (std::isinf(value))
        return value > 0 ? "+Inf" : "-Inf";
    return QByteArray::number(value, 'g', 17);
}

MetricsExporter::MetricsExporter(is::Repository &repository, Client &client, const is::Criteria &criteria,
                                 std::function<bool(const is::StoredObject &)> stale, QObject *parent)
    : QObject(parent), m_repository(repository), m_client(client), m_criteria(criteria),
      m_stale(std::move(stale)), m_exportObjects(!criteria.regex().isEmpty() || !criteria.type().isEmpty())
{
}

MetricsExporter::~MetricsExporter()
{
    if (m_statistics)
        m_client.unsubscribe(m_statistics);
}

QByteArray MetricsExporter::contentType()
{
    return "application/openmetrics-text; version=1.0.0; charset=utf-8";
}

QByteArray MetricsExporter::render()
{
    if (!m_statistics) {
        m_statistics = m_client.subscribe(statisticsServiceName(), this, [this](const Message &m) {
            StatisticsSnapshot s;
            if (const Status read = StatisticsSnapshot::fromJson(m.data(), &s); read.isOk())
                m_snapshot = std::move(s);
            else
                qCWarning(lcMetrics) << "unreadable" << statisticsServiceName() << read.message();
        });
    }
    const QByteArray server = metricsLabel(m_repository.serverName());
    QByteArray out;
    out.reserve(64 * 1024);

    // The objects chosen by --metrics-criteria.
    family(out, "dialog_is_value", "gauge", "Numeric attribute of an IS object");
    QList<is::StoredObject> objects;
    if (m_exportObjects)
        objects = m_repository.objects(m_criteria);
    const qsizetype omitted = qMax<qsizetype>(0, objects.size() - m_maxObjects);
    if (omitted > 0)
        objects.resize(m_maxObjects);
    QList<QByteArray> labels;
    labels.reserve(objects.size());
    for (const is::StoredObject &o : std::as_const(objects)) {
        labels << "server=\"" + server + "\",object=\"" + metricsLabel(o.name) + "\",type=\"" +
                      metricsLabel(o.object.typeName()) + '"';
        appendValues(out, labels.last(), o.object, {}, 0);
    }
    family(out, "dialog_is_updates", "counter", "Updates of an IS object since its creation");
    for (int i = 0; i < objects.size(); ++i)
        out += "dialog_is_updates_total{" + labels.at(i) + "} " +
               QByteArray::number(objects.at(i).updateCount) + '\n';

    family(out, "dialog_is_stale", "gauge",
           "1 when the IS object is stale: the process that wrote it last was lost, or it was not written "
           "within its type's expected interval");
    for (int i = 0; i < objects.size(); ++i)
        out +=
            "dialog_is_stale{" + labels.at(i) + "} " + (m_stale && m_stale(objects.at(i)) ? "1" : "0") + '\n';

    family(out, "dialog_is_objects_omitted", "gauge",
           "Objects matching --metrics-criteria left out of this exposition (over --metrics-max-objects)");
    out += "dialog_is_objects_omitted{server=\"" + server + "\"} " + QByteArray::number(omitted) + '\n';

    // The server's own statistics, as it publishes them in <Server>.Statistics.
    is::Object stats;
    if (m_repository.get(QStringLiteral("Statistics"), &stats).isOk()) {
        static const QStringList counters{QStringLiteral("changes"), QStringLiteral("deliveries"),
                                          QStringLiteral("dropped"), QStringLiteral("requests"),
                                          QStringLiteral("checkpointErrors")};
        const QList<is::AttributeInfo> attributes = stats.attributes();
        for (int i = 0; i < attributes.size(); ++i) {
            const is::AttributeInfo &a = attributes.at(i);
            const QByteArray text = stats.valueAt(i) ? scalarText(*stats.valueAt(i)) : QByteArray();
            if (text.isEmpty())
                continue;
            const bool counter = counters.contains(a.name());
            QByteArray name = "dialog_isserver_" + snakeCase(a.name());
            if (a.type() == is::BasicType::Time)
                name += "_seconds";
            family(out, name, counter ? "counter" : "gauge", a.description().toUtf8().replace('\n', ' '));
            out += name + (counter ? "_total" : "") + "{server=\"" + server + "\"} " + text + '\n';
        }
    }

    // Every process's communication figures (DIALOG.Statistics).
    struct Figure
    {
        const char *name;
        const char *type;
        const char *help;
        qint64 (*get)(const ProcessStatistics &);
    };
    static const Figure figures[] = {
        {"dialog_process_messages_out", "counter", "Messages sent",
         [](const ProcessStatistics &p) { return qint64(p.messagesOut); }},
        {"dialog_process_sent_bytes", "counter", "Bytes sent",
         [](const ProcessStatistics &p) { return qint64(p.bytesOut); }},
        {"dialog_process_messages_in", "counter", "Messages received",
         [](const ProcessStatistics &p) { return qint64(p.messagesIn); }},
        {"dialog_process_received_bytes", "counter", "Bytes received",
         [](const ProcessStatistics &p) { return qint64(p.bytesIn); }},
        {"dialog_process_dropped", "counter", "Messages dropped (full queues)",
         [](const ProcessStatistics &p) { return qint64(p.dropped); }},
        {"dialog_process_reconnects", "counter", "Reconnections to the Control Server",
         [](const ProcessStatistics &p) { return qint64(p.reconnects); }},
        {"dialog_process_protocol_errors", "counter", "Connections closed for protocol errors",
         [](const ProcessStatistics &p) { return qint64(p.protocolErrors); }},
        {"dialog_process_queued_bytes", "gauge", "Bytes waiting in outgoing queues",
         [](const ProcessStatistics &p) { return p.queuedBytes; }},
        {"dialog_process_outgoing_connections", "gauge", "Open outgoing connections",
         [](const ProcessStatistics &p) { return qint64(p.outgoingConnections); }},
        {"dialog_process_incoming_connections", "gauge", "Open incoming connections",
         [](const ProcessStatistics &p) { return qint64(p.incomingConnections); }},
    };
    for (const Figure &f : figures) {
        const bool counter = qstrcmp(f.type, "counter") == 0;
        family(out, f.name, f.type, f.help);
        for (const ProcessStatistics &p : std::as_const(m_snapshot.processes))
            out += QByteArray(f.name) + (counter ? "_total" : "") + "{process=\"" + metricsLabel(p.name) +
                   "\"} " + QByteArray::number(f.get(p)) + '\n';
    }
    out += "# EOF\n";
    return out;
}

} // namespace dialog::isd
