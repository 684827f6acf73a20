#include "omdwindow.h"

#include <QRegularExpression>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QScrollArea>
#include <QSet>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>

namespace dialog::omd {

namespace {
bool isNumericType(is::BasicType t)
{
    return t != is::BasicType::String && t != is::BasicType::Time && t != is::BasicType::Object;
}
} // namespace

OmdWindow::OmdWindow(const ClientOptions &options, QWidget *parent)
    : QMainWindow(parent), m_session(new DisplaySession(options, this))
{
    setWindowTitle(QStringLiteral("Operational Monitoring Display — %1")
                       .arg(options.controlServers.join(QLatin1Char(','))));
    buildToolBar();
    auto *scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    m_grid = new QWidget;
    m_gridLayout = new QGridLayout(m_grid);
    m_gridLayout->setContentsMargins(4, 4, 4, 4);
    m_hint = new QLabel(QStringLiteral("No charts. Add a time series or a bar chart, or open a layout."));
    m_hint->setAlignment(Qt::AlignCenter);
    m_gridLayout->addWidget(m_hint, 0, 0);
    scroll->setWidget(m_grid);
    setCentralWidget(scroll);
    m_status = new QLabel;
    statusBar()->addWidget(m_status, 1);

    connect(m_session, &DisplaySession::objectChanged, this, &OmdWindow::onEvent);
    connect(m_session, &DisplaySession::listed, this, &OmdWindow::onListed);
    connect(m_session, &DisplaySession::listFailed, this, [this](int id, const QString &error) {
        if (BarChart *bar = m_bars.value(id))
            bar->setStatusText(error);
    });
    connect(m_session, &DisplaySession::followChanged, this,
            [this](int id, bool active, const QString &error) {
                if (BarChart *bar = m_bars.value(id))
                    bar->setStatusText(active ? QString() : error);
                if (!active)
                    statusBar()->showMessage(error, 5000);
            });
    // Values are drawn five times a second, whatever their rate; the time axis slides meanwhile.
    m_refresh = new QTimer(this);
    connect(m_refresh, &QTimer::timeout, this, &OmdWindow::refresh);
    m_refresh->start(200);
    // Staleness changes without any event (time passes, a writer is lost): asked every second.
    auto *staleTimer = new QTimer(this);
    connect(staleTimer, &QTimer::timeout, this, &OmdWindow::pollStale);
    staleTimer->start(1000);
    auto *statusTimer = new QTimer(this);
    connect(statusTimer, &QTimer::timeout, this, &OmdWindow::updateStatus);
    statusTimer->start(1000);
    resize(1200, 760);
}

OmdWindow::~OmdWindow() = default;

void OmdWindow::buildToolBar()
{
    QToolBar *bar = addToolBar(QStringLiteral("OMD"));
    bar->setMovable(false);
    bar->addWidget(new QLabel(QStringLiteral(" Time window: ")));
    m_window = new QComboBox;
    m_window->setObjectName(QStringLiteral("window"));
    m_window->addItem(QStringLiteral("last 1 min"), 60);
    m_window->addItem(QStringLiteral("last 10 min"), 600);
    m_window->addItem(QStringLiteral("last 1 h"), 3600);
    m_window->setCurrentIndex(1);
    connect(m_window, &QComboBox::activated, this,
            [this](int i) { setWindowSeconds(m_window->itemData(i).toInt()); });
    bar->addWidget(m_window);
    bar->addSeparator();
    m_pause = bar->addAction(QStringLiteral("Pause"));
    m_pause->setObjectName(QStringLiteral("pause"));
    m_pause->setCheckable(true);
    connect(m_pause, &QAction::toggled, this, &OmdWindow::setPaused);
    m_autoscale = bar->addAction(QStringLiteral("Autoscale"));
    m_autoscale->setObjectName(QStringLiteral("autoscale"));
    m_autoscale->setCheckable(true);
    m_autoscale->setChecked(true);
    connect(m_autoscale, &QAction::toggled, this, &OmdWindow::setAutoscale);
    bar->addSeparator();
    bar->addAction(QStringLiteral("Add time series…"), this, &OmdWindow::addSeriesDialog);
    bar->addAction(QStringLiteral("Add bar chart…"), this, &OmdWindow::addBarDialog);
    bar->addSeparator();
    bar->addAction(QStringLiteral("Open layout…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open OMD layout"), {},
                                                          QStringLiteral("OMD layouts (*.json)"));
        QString error;
        if (!path.isEmpty() && !loadLayout(path, &error))
            QMessageBox::warning(this, QStringLiteral("Open layout"), error);
    });
    bar->addAction(QStringLiteral("Save layout…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save OMD layout"), {},
                                                          QStringLiteral("OMD layouts (*.json)"));
        QString error;
        if (!path.isEmpty() && !saveLayout(path, &error))
            QMessageBox::warning(this, QStringLiteral("Save layout"), error);
    });
}

bool OmdWindow::loadLayout(const QString &path, QString *error)
{
    Layout l;
    if (!Layout::load(path, &l, error))
        return false;
    applyLayout(l);
    return true;
}

bool OmdWindow::saveLayout(const QString &path, QString *error) const
{
    return currentLayout().save(path, error);
}

void OmdWindow::applyLayout(const Layout &layout)
{
    while (!m_charts.isEmpty())
        removeChart(int(m_charts.size()) - 1);
    m_title = layout.title;
    m_columns = layout.columns;
    setWindowSeconds(layout.windowSeconds);
    m_autoscale->setChecked(layout.autoscale);
    for (const ChartSpec &c : layout.charts)
        addChart(c);
    if (!m_title.isEmpty())
        setWindowTitle(QStringLiteral("%1 — Operational Monitoring Display").arg(m_title));
}

Layout OmdWindow::currentLayout() const
{
    Layout l;
    l.title = m_title;
    l.windowSeconds = m_windowS;
    l.columns = m_columns;
    l.autoscale = m_autoscale->isChecked();
    for (const OmdChart *c : m_charts)
        l.charts << c->spec();
    return l;
}

int OmdWindow::addChart(const ChartSpec &spec)
{
    OmdChart *chart;
    if (spec.kind == ChartSpec::Kind::TimeSeries) {
        ChartSpec empty = spec;
        empty.series.clear();
        auto *ts = new TimeSeriesChart(empty);
        ts->setWindowSeconds(m_windowS);
        chart = ts;
    } else {
        chart = new BarChart(spec);
    }
    chart->setAutoscale(m_autoscale->isChecked());
    chart->setPaused(m_paused);
    m_charts << chart;
    connect(chart, &OmdChart::exportPngRequested, this, [this, chart] { exportChart(chart, false); });
    connect(chart, &OmdChart::exportCsvRequested, this, [this, chart] { exportChart(chart, true); });
    connect(chart, &OmdChart::removeRequested, this, [this, chart] {
        const int i = int(m_charts.indexOf(chart));
        if (i >= 0)
            removeChart(i);
    });
    const int index = int(m_charts.size()) - 1;
    if (spec.kind == ChartSpec::Kind::TimeSeries) {
        for (const SeriesSpec &s : spec.series)
            addSeries(index, s);
    } else {
        startBar(static_cast<BarChart *>(chart));
    }
    chart->setRuleThresholds(ruleThresholds(chart->spec()));
    relayout();
    return index;
}

void OmdWindow::setAlarmRules(const QList<is::AlarmRule> &rules)
{
    m_alarmRules = rules;
    for (OmdChart *c : std::as_const(m_charts))
        c->setRuleThresholds(ruleThresholds(c->spec()));
}

QList<Threshold> OmdWindow::ruleThresholds(const ChartSpec &spec) const
{
    QList<Threshold> out;
    for (const is::AlarmRule &r : m_alarmRules) {
        bool applies = false;
        if (spec.kind == ChartSpec::Kind::TimeSeries) {
            for (const SeriesSpec &s : spec.series)
                applies = applies || r.appliesTo(s.object, s.attribute);
        } else {
            // A bar per object of the server: a rule on that attribute of objects of that server.
            applies = r.attribute == spec.attribute && r.source.startsWith(spec.server + QLatin1Char('.'));
        }
        if (applies) // one line per rule, however many series it is about
            out << Threshold{r.threshold,
                             QStringLiteral("%1 (%2 %3)").arg(r.text, r.op, QString::number(r.threshold)),
                             r.severityName()};
    }
    return out;
}

void OmdWindow::addSeries(int chart, const SeriesSpec &series)
{
    TimeSeriesChart *ts = timeSeries(chart);
    if (!ts)
        return;
    feedSeries(ts, ts->addSeries(series), series);
    ts->setRuleThresholds(ruleThresholds(ts->spec()));
}

void OmdWindow::feedSeries(TimeSeriesChart *chart, int series, const SeriesSpec &spec)
{
    // One subscription per object, whatever the number of series plotting its attributes.
    int id = m_feedOf.value(spec.object);
    if (!id) {
        id = m_session->followObject(spec.object);
        if (!id)
            return; // not Server.Object
        m_feedOf.insert(spec.object, id);
        Feed feed;
        feed.object = spec.object;
        m_feeds.insert(id, feed);
    }
    m_feeds[id].targets << Target{chart, series, spec.attribute};
    // The current value, so a rarely updated object shows at once; then its history, which
    // includes it when the server keeps one.
    m_session->read(spec.object, chart, [this, chart, series, spec](const is::Status &s, const is::Entry &e) {
        double v;
        if (s.isOk() && numericValue(e.object, spec.attribute, &v))
            chart->addPoint(series, e.time.microsecondsSinceEpoch() / 1000, v);
        backfill(chart, series, spec);
    });
}

void OmdWindow::backfill(TimeSeriesChart *chart, int series, const SeriesSpec &spec)
{
    // An hour (what a chart keeps), in at most 2,000 points (min/max/mean buckets). A server
    // without history, or an attribute of a nested object, leaves the chart to fill as it runs.
    m_session->readHistory(spec.object, spec.attribute, 3600, 2000, chart,
                           [chart, series](const is::Status &s, const is::HistorySeries &h) {
                               if (!s.isOk())
                                   return;
                               QList<QPointF> points;
                               points.reserve(h.points.size());
                               for (const is::HistoryPoint &p : h.points)
                                   points.append(
                                       QPointF(double(p.time.microsecondsSinceEpoch() / 1000), p.value));
                               chart->addHistory(series, points);
                           });
}

void OmdWindow::startBar(BarChart *chart)
{
    const ChartSpec spec = chart->spec();
    const is::Criteria c(spec.regex, spec.type,
                         spec.type.isEmpty() ? is::Criteria::TypeSelector::Any
                                             : (spec.subtypes ? is::Criteria::TypeSelector::WithSubtypes
                                                              : is::Criteria::TypeSelector::Exactly));
    if (!c.isValid()) {
        chart->setStatusText(c.errorString());
        return;
    }
    m_bars.insert(m_session->followObjects(spec.server, c), chart);
}

void OmdWindow::onListed(int id, const QList<is::Entry> &entries, const QSet<QString> &present)
{
    BarChart *chart = m_bars.value(id);
    if (!chart)
        return;
    const QString attribute = chart->spec().attribute;
    for (const is::Entry &e : entries) {
        double v;
        QString object;
        is::Dictionary::splitName(e.name, nullptr, &object);
        if (numericValue(e.object, attribute, &v))
            chart->setValue(object, v);
    }
    // Objects removed while the subscription was down (a server restart).
    for (const QString &object : chart->values().keys())
        if (!present.contains(object))
            chart->removeObject(object);
}

void OmdWindow::removeChart(int index)
{
    OmdChart *chart = m_charts.takeAt(index);
    for (auto it = m_bars.begin(); it != m_bars.end();) {
        if (it.value() == chart) {
            m_session->unfollow(it.key());
            it = m_bars.erase(it);
        } else {
            ++it;
        }
    }
    for (auto it = m_feeds.begin(); it != m_feeds.end();) {
        it->targets.removeIf([chart](const Target &t) { return !t.chart || t.chart == chart; });
        if (it->targets.isEmpty()) {
            m_session->unfollow(it.key());
            m_feedOf.remove(it->object);
            it = m_feeds.erase(it);
        } else {
            ++it;
        }
    }
    delete chart;
    relayout();
}

void OmdWindow::addObject(const QString &object, const QString &attribute)
{
    QString server, name;
    if (!is::Dictionary::splitName(object, &server, &name)) {
        statusBar()->showMessage(QStringLiteral("'%1' is not Server.Object").arg(object), 5000);
        return;
    }
    ChartSpec spec;
    spec.title = attribute.isEmpty() ? object : QStringLiteral("%1 %2").arg(object, attribute);
    const int index = addChart(spec);
    if (!attribute.isEmpty()) {
        addSeries(index, SeriesSpec{object, attribute, {}});
        return;
    }
    OmdChart *chart = m_charts.at(index);
    m_session->read(object, chart, [this, chart, object](const is::Status &s, const is::Entry &e) {
        if (!s.isOk()) {
            chart->setStatusText(s.toString());
            return;
        }
        const int i = int(m_charts.indexOf(chart));
        for (const QString &a : numericAttributes(e.object))
            addSeries(i, SeriesSpec{object, a, a});
    });
}

void OmdWindow::onEvent(int id, const is::Event &e)
{
    if (BarChart *bar = m_bars.value(id)) {
        const QString object = QString::fromUtf8(e.objectNameUtf8());
        double v;
        bar->markFresh(object); // written, or gone
        if (e.kind() == is::Event::Kind::Removed)
            bar->removeObject(object);
        else if (numericValue(e.object(), bar->spec().attribute, &v))
            bar->setValue(object, v);
        return;
    }
    const auto feed = m_feeds.find(id);
    if (feed == m_feeds.end())
        return;
    if (feed->lastEvent < e.time())
        feed->lastEvent = e.time();
    setFeedStale(*feed, std::nullopt); // written (or removed: nothing more will come, but not stale)
    const auto it = feed;
    if (e.kind() == is::Event::Kind::Removed)
        return;
    const is::Object o = e.object();
    const qint64 ms = e.time().microsecondsSinceEpoch() / 1000;
    for (const Target &t : it->targets) {
        double v;
        if (t.chart && numericValue(o, t.attribute, &v))
            t.chart->addPoint(t.series, ms, v);
    }
}

void OmdWindow::setFeedStale(Feed &feed, const std::optional<is::Staleness> &staleness)
{
    if (!staleness && !feed.stale)
        return;
    feed.stale = staleness.has_value();
    for (const Target &t : std::as_const(feed.targets))
        if (t.chart)
            t.chart->setStale(t.series, staleness);
}

void OmdWindow::pollStale()
{
    if (m_stalePending > 0)
        return; // the last answers are not all in: the servers are slow or away
    // The time series: one question per server, naming its plotted objects.
    QHash<QString, QStringList> byServer;
    for (const Feed &f : std::as_const(m_feeds)) {
        QString server, object;
        if (is::Dictionary::splitName(f.object, &server, &object))
            byServer[server] << QRegularExpression::escape(object);
    }
    for (auto it = byServer.cbegin(); it != byServer.cend(); ++it) {
        const QString server = it.key();
        ++m_stalePending;
        dictionary()->listStale(server,
                                is::Criteria(QStringLiteral("(?:%1)").arg(it.value().join(QLatin1Char('|')))),
                                [this, server, guard = QPointer<OmdWindow>(this)](
                                    const is::Status &s, const QList<is::Entry> &stale) {
                                    if (!guard)
                                        return;
                                    --m_stalePending;
                                    if (!s.isOk())
                                        return;
                                    QHash<QString, is::Entry> byName;
                                    for (const is::Entry &e : stale)
                                        byName.insert(e.name, e);
                                    for (Feed &f : m_feeds) {
                                        if (!f.object.startsWith(server + QLatin1Char('.')))
                                            continue;
                                        const auto e = byName.constFind(f.object);
                                        // Updated since the server answered: fresh.
                                        if (e == byName.cend() || e->time < f.lastEvent)
                                            setFeedStale(f, std::nullopt);
                                        else
                                            setFeedStale(f, e->staleness);
                                    }
                                });
    }
    // The bar charts: their own criteria.
    for (auto it = m_bars.cbegin(); it != m_bars.cend(); ++it) {
        BarChart *bar = it.value();
        if (!bar)
            continue;
        const ChartSpec spec = bar->spec();
        const is::Criteria c(spec.regex, spec.type,
                             spec.type.isEmpty() ? is::Criteria::TypeSelector::Any
                                                 : (spec.subtypes ? is::Criteria::TypeSelector::WithSubtypes
                                                                  : is::Criteria::TypeSelector::Exactly));
        if (!c.isValid())
            continue;
        ++m_stalePending;
        dictionary()->listStale(spec.server, c,
                                [this, bar = QPointer<BarChart>(bar), guard = QPointer<OmdWindow>(this)](
                                    const is::Status &s, const QList<is::Entry> &stale) {
                                    if (!guard)
                                        return;
                                    --m_stalePending;
                                    if (!s.isOk() || !bar)
                                        return;
                                    QHash<QString, is::Staleness> byObject;
                                    for (const is::Entry &e : stale) {
                                        QString object;
                                        is::Dictionary::splitName(e.name, nullptr, &object);
                                        byObject.insert(object, e.staleness);
                                    }
                                    bar->setStale(byObject);
                                });
    }
}

bool OmdWindow::numericValue(const is::Object &object, const QString &path, double *out)
{
    is::Object cur = object;
    const QStringList parts = path.split(QLatin1Char('.'));
    for (int i = 0; i < parts.size() - 1; ++i) {
        const is::Object *next =
            cur.isValid() && cur.value(parts.at(i)) ? cur.value(parts.at(i))->getIf<is::Object>() : nullptr;
        if (!next)
            return false;
        cur = *next;
    }
    const int index = cur.indexOf(parts.last());
    if (index < 0 || cur.attributes().at(index).isVector() ||
        !isNumericType(cur.attributes().at(index).type()))
        return false;
    const QVariant v = cur.variant(index);
    bool ok = false;
    *out = v.metaType() == QMetaType::fromType<bool>() ? (v.toBool() ? 1 : 0) : v.toDouble(&ok);
    return ok || v.metaType() == QMetaType::fromType<bool>();
}

QStringList OmdWindow::numericAttributes(const is::Object &object)
{
    QStringList out;
    for (const is::AttributeInfo &a : object.attributes())
        if (!a.isVector() && isNumericType(a.type()) && a.type() != is::BasicType::Bool)
            out << a.name();
    return out;
}

void OmdWindow::relayout()
{
    for (OmdChart *c : std::as_const(m_charts))
        m_gridLayout->removeWidget(c);
    m_hint->setVisible(m_charts.isEmpty());
    for (int i = 0; i < m_charts.size(); ++i)
        m_gridLayout->addWidget(m_charts.at(i), i / m_columns + 1, i % m_columns);
}

void OmdWindow::setWindowSeconds(int seconds)
{
    m_windowS = seconds;
    m_window->setCurrentIndex(std::max(0, m_window->findData(seconds)));
    for (OmdChart *c : std::as_const(m_charts))
        if (auto *ts = qobject_cast<TimeSeriesChart *>(c))
            ts->setWindowSeconds(seconds);
    refresh();
}

void OmdWindow::setPaused(bool paused)
{
    m_paused = paused;
    m_pause->setChecked(paused);
    m_pause->setText(paused ? QStringLiteral("Resume") : QStringLiteral("Pause"));
    for (OmdChart *c : std::as_const(m_charts))
        c->setPaused(paused);
}

void OmdWindow::setAutoscale(bool on)
{
    m_autoscale->setChecked(on);
    for (OmdChart *c : std::as_const(m_charts))
        c->setAutoscale(on);
    refresh();
}

void OmdWindow::refresh()
{
    for (OmdChart *c : std::as_const(m_charts))
        c->refresh();
}

void OmdWindow::exportChart(OmdChart *chart, bool csv)
{
    const QString path = QFileDialog::getSaveFileName(
        this, csv ? QStringLiteral("Export data as CSV") : QStringLiteral("Export chart as PNG"), {},
        csv ? QStringLiteral("CSV (*.csv)") : QStringLiteral("PNG images (*.png)"));
    if (path.isEmpty())
        return;
    QString error;
    const bool ok = csv ? chart->exportCsv(path, &error) : chart->exportPng(path);
    statusBar()->showMessage(ok ? QStringLiteral("saved %1").arg(path)
                                : QStringLiteral("could not save %1 %2").arg(path, error),
                             5000);
}

void OmdWindow::addSeriesDialog()
{
    QDialog d(this);
    d.setWindowTitle(QStringLiteral("Add time series"));
    auto *form = new QFormLayout(&d);
    auto *object = new QLineEdit;
    object->setPlaceholderText(QStringLiteral("Server.Object, e.g. DAQ.RO1"));
    auto *attribute = new QLineEdit;
    attribute->setPlaceholderText(QStringLiteral("numeric attribute, e.g. rate (empty: all of them)"));
    auto *label = new QLineEdit;
    auto *target = new QComboBox;
    target->addItem(QStringLiteral("a new chart"), -1);
    for (int i = 0; i < m_charts.size(); ++i)
        if (timeSeries(i))
            target->addItem(m_charts.at(i)->spec().title, i);
    form->addRow(QStringLiteral("Object:"), object);
    form->addRow(QStringLiteral("Attribute:"), attribute);
    form->addRow(QStringLiteral("Label:"), label);
    form->addRow(QStringLiteral("Into:"), target);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, &d, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    form->addRow(buttons);
    if (d.exec() != QDialog::Accepted || object->text().isEmpty())
        return;
    const int chart = target->currentData().toInt();
    if (chart < 0 || attribute->text().isEmpty())
        addObject(object->text().trimmed(), attribute->text().trimmed());
    else
        addSeries(chart,
                  SeriesSpec{object->text().trimmed(), attribute->text().trimmed(), label->text().trimmed()});
}

void OmdWindow::addBarDialog()
{
    QDialog d(this);
    d.setWindowTitle(QStringLiteral("Add bar chart"));
    auto *form = new QFormLayout(&d);
    auto *title = new QLineEdit;
    auto *server = new QLineEdit;
    server->setPlaceholderText(QStringLiteral("IS server, e.g. DAQ"));
    auto *regex = new QLineEdit;
    regex->setPlaceholderText(QStringLiteral("objects: regular expression on the whole name, e.g. RO.*"));
    auto *type = new QLineEdit;
    type->setPlaceholderText(QStringLiteral("IS type, e.g. ReadoutStats (empty: any)"));
    auto *subtypes = new QCheckBox(QStringLiteral("and its subtypes"));
    subtypes->setChecked(true);
    auto *attribute = new QLineEdit;
    attribute->setPlaceholderText(QStringLiteral("numeric attribute, e.g. rate"));
    form->addRow(QStringLiteral("Title:"), title);
    form->addRow(QStringLiteral("Server:"), server);
    form->addRow(QStringLiteral("Objects:"), regex);
    form->addRow(QStringLiteral("Type:"), type);
    form->addRow(QString(), subtypes);
    form->addRow(QStringLiteral("Attribute:"), attribute);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, &d, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    form->addRow(buttons);
    if (d.exec() != QDialog::Accepted || server->text().isEmpty() || attribute->text().isEmpty())
        return;
    ChartSpec c;
    c.kind = ChartSpec::Kind::Bar;
    c.server = server->text().trimmed();
    c.regex = regex->text().trimmed();
    c.type = type->text().trimmed();
    c.subtypes = subtypes->isChecked();
    c.attribute = attribute->text().trimmed();
    c.title = title->text().isEmpty() ? QStringLiteral("%1 of %2.%3").arg(c.attribute, c.server, c.regex)
                                      : title->text();
    addChart(c);
}

void OmdWindow::updateStatus()
{
    m_status->setText(QStringLiteral("%1 charts · %2 updates/s · %3%4")
                          .arg(m_charts.size())
                          .arg(m_session->events() - m_eventsAtLastStatus)
                          .arg(client()->state() == Client::State::Connected
                                   ? QStringLiteral("connected")
                                   : QStringLiteral("not connected"),
                               m_paused ? QStringLiteral(" · PAUSED") : QString()));
    m_eventsAtLastStatus = m_session->events();
}

} // namespace dialog::omd
