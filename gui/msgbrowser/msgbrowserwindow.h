// dialog-msgbrowser's window: the stored messages (pages from dialog-logger, older ones fetched as
// the view scrolls down) and the live ones (DIALOG.Logger.Live) in one table, newest first, under
// one set of filters; a detail pane and CSV export of the selection.
#pragma once

#include "logmodel.h"

#include "dialog/client.h"

#include <QMainWindow>
#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTableView;

namespace dialog::msgbrowser {

class MsgBrowserWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MsgBrowserWindow(const ClientOptions &options, QWidget *parent = nullptr);
    ~MsgBrowserWindow() override;

    Client *client() const { return m_client.get(); }
    LogModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    QPlainTextEdit *detailPane() const { return m_detail; }

    /// The filter fields as the user typed them; false (and the reason in @p error) for a bad one.
    bool readFilter(LogQuery *query, QString *error) const;
    /// Applies the filter fields: the table is emptied and filled again from the logger.
    void applyFilter();
    /// Asks for the page older than the oldest row shown (no-op while one is pending or none is left).
    void fetchOlder();
    bool hasOlder() const { return m_more; }
    bool isFetching() const { return m_pending; }
    /// Writes the selected rows (all rows if none is selected) as CSV; false with @p error.
    bool exportCsv(const QString &path, QString *error) const;
    /// The filter widgets, by field name (since, until, severity, process, host, run, text).
    QWidget *filterField(const QString &name) const;
    QString statusText() const;

Q_SIGNALS:
    /// Emitted once per answered page request (after its rows are in the model), or a failed one.
    void pageLoaded();

private:
    void fetch(qint64 beforeId);
    void onLive(const Message &message);
    void showDetails();
    void exportSelection();
    void updateStatus();

    LogModel *m_model;
    QTableView *m_view;
    QPlainTextEdit *m_detail;
    QLineEdit *m_since, *m_until, *m_process, *m_host, *m_run, *m_text;
    QComboBox *m_severity;
    QLabel *m_status;
    LogFilter m_filter;
    bool m_more = false, m_pending = false;
    quint64 m_generation = 0; ///< pages of an earlier filter are ignored
    qint64 m_liveCount = 0;
    QString m_error;
    std::unique_ptr<Client> m_client; ///< last: destroyed first, before the widgets its callbacks touch
};

} // namespace dialog::msgbrowser
