// dialog-omd: the operational monitoring display (IS paper, Fig. 4). Time-series charts of numeric
// IS attributes and bar charts of one attribute across objects, fed by IS subscriptions; layouts
// saved to and loaded from JSON.
#pragma once

#include "displaysession.h"
#include "layout.h"
#include "omdchart.h"

#include "dialog/is/alarmrule.h"

#include <QMainWindow>
#include <QPointer>
#include <QSet>
#include <memory>

class QAction;
class QComboBox;
class QGridLayout;
class QLabel;

namespace dialog::omd {

class OmdWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit OmdWindow(const ClientOptions &options, QWidget *parent = nullptr);
    ~OmdWindow() override;

    DisplaySession *session() const { return m_session; }
    Client *client() const { return m_session->client(); }
    is::Dictionary *dictionary() const { return m_session->dictionary(); }

    bool loadLayout(const QString &path, QString *error);
    bool saveLayout(const QString &path, QString *error) const;
    /// Replaces every chart with those of @p layout.
    void applyLayout(const Layout &layout);
    /// The charts shown now, as a layout.
    Layout currentLayout() const;

    int chartCount() const { return int(m_charts.size()); }
    OmdChart *chart(int i) const { return m_charts.at(i); }
    TimeSeriesChart *timeSeries(int i) const { return qobject_cast<TimeSeriesChart *>(m_charts.at(i)); }
    BarChart *barChart(int i) const { return qobject_cast<BarChart *>(m_charts.at(i)); }
    /// Adds a chart; returns its index.
    int addChart(const ChartSpec &spec);
    /// Adds a series to the time-series chart @p chart.
    void addSeries(int chart, const SeriesSpec &series);
    void removeChart(int chart);
    /// A new chart plotting @p attribute of @p object ("Server.Object"), or every numeric attribute
    /// of it when @p attribute is empty (read from the object's type; asynchronous).
    void addObject(const QString &object, const QString &attribute = {});

    void setWindowSeconds(int seconds);
    int windowSeconds() const { return m_windowS; }
    void setPaused(bool paused);
    bool isPaused() const { return m_paused; }
    void setAutoscale(bool on);
    /// Repaints every chart now (normally five times a second).
    void refresh();
    /// Alarm rules (the file of dialog-isserver --alarms): every chart plotting an attribute a rule
    /// is about draws the rule's threshold as a line, named by the rule's text, in its severity's
    /// colour. They are not part of the layout.
    void setAlarmRules(const QList<is::AlarmRule> &rules);
    /// The threshold lines @p spec gets from the alarm rules.
    QList<Threshold> ruleThresholds(const ChartSpec &spec) const;
    /// Asks the servers which of the plotted objects are stale (done every second): their series
    /// and bars are greyed and their ages shown.
    void pollStale();

    /// The value of the numeric attribute at @p path ("a" or "nested.a") of @p object.
    static bool numericValue(const is::Object &object, const QString &path, double *out);
    /// The numeric scalar attributes of @p object, in order.
    static QStringList numericAttributes(const is::Object &object);

private:
    struct Target
    {
        QPointer<TimeSeriesChart> chart;
        int series = 0;
        QString attribute;
    };
    struct Feed
    {
        QString object; ///< full name
        QList<Target> targets;
        is::Time lastEvent; ///< of the newest update received
        bool stale = false;
    };
    void setFeedStale(Feed &feed, const std::optional<is::Staleness> &staleness);
    void buildToolBar();
    void relayout();
    void feedSeries(TimeSeriesChart *chart, int series, const SeriesSpec &spec);
    /// Fills a new series with the last hour of its IS history (the chart opens full).
    void backfill(TimeSeriesChart *chart, int series, const SeriesSpec &spec);
    void startBar(BarChart *chart);
    void onListed(int id, const QList<is::Entry> &entries, const QSet<QString> &present);
    void onEvent(int id, const is::Event &e);
    void exportChart(OmdChart *chart, bool csv);
    void addSeriesDialog();
    void addBarDialog();
    void updateStatus();

    DisplaySession *m_session;
    QList<OmdChart *> m_charts;
    QHash<QString, int> m_feedOf; ///< object → subscription
    QHash<int, Feed> m_feeds;
    QHash<int, QPointer<BarChart>> m_bars; ///< subscription → bar chart
    QWidget *m_grid = nullptr;
    QGridLayout *m_gridLayout = nullptr;
    QLabel *m_hint = nullptr;
    QLabel *m_status = nullptr;
    QComboBox *m_window = nullptr;
    QAction *m_pause = nullptr;
    QAction *m_autoscale = nullptr;
    QTimer *m_refresh = nullptr;
    QString m_title;
    int m_windowS = 600;
    int m_columns = 2;
    bool m_paused = false;
    quint64 m_eventsAtLastStatus = 0;
    int m_stalePending = 0; ///< pollStale() answers on their way
    QList<is::AlarmRule> m_alarmRules;
};

} // namespace dialog::omd
