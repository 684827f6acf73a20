// dialog-inspector: the DIALOG communication GUI (DIALOG paper, Fig. 8). Shows every process known
// to the Control Server, live; filters; listens to services and commands; sends commands.
#pragma once

#include "listenmodel.h"
#include "processfilter.h"
#include "processmodel.h"
#include "snapshotreader.h"

#include "dialog/client.h"

#include <QMainWindow>
#include <QPointer>

class QCheckBox;
class QLabel;
class QLineEdit;
class QTableView;
class QTreeWidget;
class QTreeWidgetItem;

namespace dialog::inspector {

class InspectorWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit InspectorWindow(const ClientOptions &options, QWidget *parent = nullptr);
    ~InspectorWindow() override;

    Client *client() const { return m_client.get(); }
    ProcessModel *processModel() const { return m_model; }
    ProcessFilter *processFilter() const { return m_filter; }
    ListenModel *listenModel() const { return m_listen; }
    QTableView *processView() const { return m_view; }
    QTreeWidget *detailsView() const { return m_details; }

    /// Starts listening to a service (subscription) or a command (registration).
    void listenToService(const QString &service);
    void listenToCommand(const QString &command);
    void stopListening();
    /// Sends a command; @p payload is text, or hexadecimal if @p hex. False with a status message on error.
    bool sendCommand(const QString &command, const QString &payload, bool hex);
    /// Applies the filter fields (the Search button) / clears them (Reset).
    void search();
    void reset();
    /// Applies the last directory and statistics snapshots now (normally at most ten times a second).
    void refresh();
    void selectProcess(const QString &name);

private:
    QWidget *buildFilterBar();
    QWidget *buildDetails();
    QWidget *buildListen();
    void scheduleRefresh();
    void showDetails();
    void showFigures();
    void fetchMessages(const QString &process);
    void updateStatus();

    std::unique_ptr<Client> m_client;
    ProcessModel *m_model;
    ProcessFilter *m_filter;
    ListenModel *m_listen;
    QTableView *m_view = nullptr;
    QTreeWidget *m_details = nullptr;
    QLabel *m_listenLabel = nullptr;
    QLabel *m_rateLabel = nullptr;
    QLabel *m_status = nullptr;
    QLineEdit *m_commandName = nullptr;
    QLineEdit *m_commandPayload = nullptr;
    QCheckBox *m_hex = nullptr;
    QList<QLineEdit *> m_fields;
    QLineEdit *m_freeText = nullptr;
    QTreeWidgetItem *m_figuresItem = nullptr; ///< "Communication" group of the details, updated in place
    quint64 m_detailsGeneration = 0;          ///< a logger answer for details since cleared is dropped
    ProcessRow m_shown;                       ///< what the details show (rebuilt only when it changes)
    bool m_shownValid = false;
    QTimer *m_refresh = nullptr;
    QPointer<Subscription> m_listening;
    QString m_listeningCommand;
    QString m_selected;
    /// Last: destroyed (its thread stopped) first.
    std::unique_ptr<SnapshotReader> m_reader;
};

} // namespace dialog::inspector
