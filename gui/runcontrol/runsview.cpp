#include "runsview.h"

#include "dialog/client.h"
#include "dialog/config.h"

#include <QDateTime>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace dialog::runcontrol {

namespace {

enum Column
{
    ColRun,
    ColPartition,
    ColType,
    ColConfig,
    ColOperator,
    ColStart,
    ColEnd,
    ColEvents,
    ColEnded,
    Columns,
};

QString timeText(const QJsonValue &ms)
{
    return ms.isDouble() ? QDateTime::fromMSecsSinceEpoch(ms.toInteger())
                               .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                         : QString();
}

} // namespace

RunsView::RunsView(Client *client, const QString &database, QWidget *parent)
    : QWidget(parent), m_config(std::make_unique<config::ConfigClient>(client, database))
{
    m_config->setTimeoutMs(5000);
    auto *layout = new QVBoxLayout(this);
    m_status = new QLabel(
        QStringLiteral("reading the runs of %1 …").arg(config::ConfigClient::serviceName(database)));
    layout->addWidget(m_status);
    m_table = new QTableWidget(0, Columns);
    m_table->setHorizontalHeaderLabels(
        {QStringLiteral("Run"), QStringLiteral("Partition"), QStringLiteral("Type"),
         QStringLiteral("Configuration"), QStringLiteral("Operator"), QStringLiteral("Started"),
         QStringLiteral("Ended"), QStringLiteral("Events"), QStringLiteral("How it ended")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    layout->addWidget(m_table, 1);
    m_timer.setInterval(5000);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (isVisible())
            refresh();
    });
    m_timer.start();
    refresh();
}

RunsView::~RunsView() = default;

void RunsView::refresh()
{
    if (m_pending)
        return; // one request at a time: a slow database is not asked again before it answers
    m_pending = true;
    m_config->call({{QStringLiteral("op"), QStringLiteral("runs")}, {QStringLiteral("limit"), 200}},
                   [this](const Status &st, const QJsonObject &a) {
                       m_pending = false;
                       if (!st.isOk()) {
                           m_status->setText(QStringLiteral("runs not read: %1").arg(st.message()));
                       } else {
                           QList<QJsonObject> runs;
                           for (const QJsonValue &v : a.value(QStringLiteral("runs")).toArray())
                               runs << v.toObject();
                           show(runs);
                       }
                       Q_EMIT refreshed();
                   });
}

void RunsView::show(const QList<QJsonObject> &runs)
{
    m_table->setRowCount(int(runs.size()));
    for (int row = 0; row < runs.size(); ++row) {
        const QJsonObject &r = runs.at(row);
        QString config =
            QStringLiteral("version %1").arg(r.value(QStringLiteral("config_version")).toInteger());
        if (!r.value(QStringLiteral("config_tag")).toString().isEmpty())
            config += QStringLiteral(" (%1)").arg(r.value(QStringLiteral("config_tag")).toString());
        QString ended = r.value(QStringLiteral("end_reason")).toString(QStringLiteral("running"));
        if (r.contains(QStringLiteral("end_message")))
            ended += QStringLiteral(": ") + r.value(QStringLiteral("end_message")).toString();
        const QStringList cells{QString::number(r.value(QStringLiteral("number")).toInteger()),
                                r.value(QStringLiteral("partition")).toString(),
                                r.value(QStringLiteral("run_type")).toString(),
                                config,
                                r.value(QStringLiteral("operator")).toString(),
                                timeText(r.value(QStringLiteral("start_time"))),
                                timeText(r.value(QStringLiteral("end_time"))),
                                QString::number(r.value(QStringLiteral("events")).toInteger()),
                                ended};
        for (int c = 0; c < Columns; ++c) {
            auto *item = new QTableWidgetItem(cells.at(c));
            if (c == ColRun || c == ColEvents)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (c == ColEnded && ended != QLatin1String("running") && ended != QLatin1String("normal"))
                item->setForeground(QColor(QStringLiteral("#b00020")));
            m_table->setItem(row, c, item);
        }
    }
    m_table->resizeColumnsToContents();
    m_status->setText(QStringLiteral("%1 runs, newest first (read %2)")
                          .arg(runs.size())
                          .arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss"))));
}

} // namespace dialog::runcontrol
