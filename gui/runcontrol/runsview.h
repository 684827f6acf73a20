// The run-control GUI's Runs tab: the run registry of the configuration database (dialog-configdb),
// newest run first, refreshed while it is shown.
#pragma once

#include <QJsonObject>
#include <QTimer>
#include <QWidget>

class QLabel;
class QTableWidget;

namespace dialog {
class Client;
namespace config {
class ConfigClient;
}
} // namespace dialog

namespace dialog::runcontrol {

/// One row per run (number, partition, type, configuration version and tag, operator, start, end,
/// events, how it ended); the line above says how many runs and when they were read, or why they
/// could not be ("no answer from CONFIG.configdb …").
class RunsView : public QWidget
{
    Q_OBJECT
public:
    /// Reads the run registry of the database served as CONFIG.<@p database>; @p client must outlive
    /// the view.
    RunsView(Client *client, const QString &database, QWidget *parent = nullptr);
    ~RunsView() override;

    QTableWidget *table() const { return m_table; }
    QLabel *status() const { return m_status; }
    /// Reads the newest runs again now (also every 5 s while the view is visible).
    void refresh();

Q_SIGNALS:
    /// Emitted in the GUI thread after every answer of the database, or its failure.
    void refreshed();

private:
    void show(const QList<QJsonObject> &runs);

    std::unique_ptr<config::ConfigClient> m_config;
    QTableWidget *m_table;
    QLabel *m_status;
    QTimer m_timer;
    bool m_pending = false;
};

} // namespace dialog::runcontrol
