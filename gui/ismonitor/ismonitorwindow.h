// dialog-ismonitor: the IS browser. IS servers → objects of the selected server (live, filtered by
// regex and type) → the selected object's attributes with their meta-information, histograms drawn.
#pragma once

#include "attributemodel.h"
#include "histogramview.h"
#include "historyplot.h"
#include "monitorsession.h"
#include "objectmodel.h"

#include <QMainWindow>
#include <QPointer>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSortFilterProxyModel;
class QTableView;
class QTreeView;

namespace dialog::ismonitor {

class IsMonitorWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit IsMonitorWindow(const ClientOptions &options, QWidget *parent = nullptr);
    ~IsMonitorWindow() override;

    MonitorSession *session() const { return m_session; }
    Client *client() const { return m_session->client(); }
    is::Dictionary *dictionary() const { return m_session->dictionary(); }
    QStringList servers() const { return m_session->servers(); }
    QString server() const { return m_server; }
    ObjectModel *objectModel() const { return m_objects; }
    QSortFilterProxyModel *objectProxy() const { return m_proxy; }
    QTableView *objectView() const { return m_objectView; }
    AttributeModel *attributeModel() const { return m_attributes; }
    QTreeView *attributeView() const { return m_attributeView; }
    HistogramView *histogramView() const { return m_histogram; }
    /// The plot of the selected numeric attribute's history (hidden when none is selected).
    HistoryPlot *historyPlot() const { return m_historyPlot; }
    /// The line under the selected object's title saying it is stale (hidden while it is fresh).
    QLabel *staleLabel() const { return m_staleLabel; }
    /// The status bar's counts, refreshed every second: "N objects (S stale) · E events/s · connected".
    QLabel *countsLabel() const { return m_counts; }
    /// Full name of the selected object, empty if none.
    QString selectedObject() const { return m_selected; }
    /// True once the objects of the selected server were listed (after each (re)subscription).
    bool isLoaded() const { return m_session->isLoaded(); }

    /// Shows the objects of @p server (subscribes to it; the previous subscription goes).
    void selectServer(const QString &server);
    /// Sets the filter fields and applies them (a new subscription with these criteria).
    void setFilter(const QString &regex, const QString &type = {}, bool withSubtypes = true);
    void applyFilter();
    /// Selects @p object (name without server prefix) in the table and shows its value.
    void selectObject(const QString &object);
    /// Removes the selected object from its server after asking (unless @p confirm is false).
    void removeSelected(bool confirm = true);
    void copyName();
    void copyValue();
    /// Starts dialog-omd showing the selected object (or the selected numeric attribute).
    void openInOmd();
    /// The dialog-omd command line for @p object (and @p attribute, may be empty).
    QStringList omdArguments(const QString &object, const QString &attribute) const;
    /// Applies queued changes now (normally at most ten times a second).
    void refresh();

Q_SIGNALS:
    /// Emitted after a removal requested here was answered.
    void removeFinished(const QString &name, bool ok, const QString &message);

private:
    QWidget *buildServers();
    QWidget *buildObjects();
    QWidget *buildValue();
    void showServers(const QStringList &servers);
    void subscribeObjects();
    void onListed(const QList<is::Entry> &entries);
    void onValueRemoved();
    void showObject(const QString &name);
    void showValue(const is::Object &o, is::Time time);
    void showHistogramFor(const QModelIndex &attribute);
    /// The history plot follows @p attribute if it is a top-level numeric attribute, else hides.
    void showHistoryFor(const QModelIndex &attribute);
    void plotValue(const is::Object &o, is::Time time);
    /// Greys the selected object's values and says why and since when, if it is stale.
    void showSelectedStaleness();
    void updateTypes();
    void scheduleRefresh();
    void updateStatus();
    void setStatus(const QString &message);

    MonitorSession *m_session;
    ObjectModel *m_objects;
    QSortFilterProxyModel *m_proxy;
    AttributeModel *m_attributes;
    QListWidget *m_serverList = nullptr;
    QTableView *m_objectView = nullptr;
    QTreeView *m_attributeView = nullptr;
    HistogramView *m_histogram = nullptr;
    HistoryPlot *m_historyPlot = nullptr;
    QLineEdit *m_regex = nullptr;
    QComboBox *m_type = nullptr;
    QCheckBox *m_subtypes = nullptr;
    QLabel *m_objectTitle = nullptr;
    QLabel *m_staleLabel = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_counts = nullptr;
    QTimer *m_refresh = nullptr;

    QString m_server;
    QString m_selected;      ///< full name
    QString m_histogramPath; ///< attribute path of the histogram shown ("" = the first one)
    is::Object m_pendingValue;
    is::Time m_valueTime;
    bool m_valuePending = false;
    quint64 m_eventsAtLastStatus = 0;
};

} // namespace dialog::ismonitor
