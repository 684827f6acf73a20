// dialog-alarms' History tab: the changes of the alarms at or below a path within a time range
// (since/until), newest first, as the alarm server keeps them (its database, and the rows still
// waiting in memory when the database fails).
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QSpinBox;
class QStandardItemModel;
class QTableView;

namespace dialog::alarms {

class AlarmSession;

class HistoryView : public QWidget
{
    Q_OBJECT
public:
    enum Column
    {
        Time,
        Path,
        Event,
        State,
        Severity,
        Value,
        Who,
        Comment,
        ColumnCount
    };
    /// @p session must outlive the view.
    explicit HistoryView(AlarmSession *session, QWidget *parent = nullptr);

    /// The path asked for ("" for every alarm).
    void setPath(const QString &path);
    QString path() const;
    QLineEdit *sinceEdit() const { return m_since; }
    QLineEdit *untilEdit() const { return m_until; }
    QStandardItemModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    QString statusText() const;

    /// Asks the alarm server with the fields as they are; loaded() follows.
    void query();

Q_SIGNALS:
    /// Emitted once per query(), after the rows (or the reason of a failure) are shown.
    void loaded();

private:
    AlarmSession *m_session;
    QLineEdit *m_path, *m_since, *m_until;
    QSpinBox *m_limit;
    QStandardItemModel *m_model;
    QTableView *m_view;
    QLabel *m_status;
    quint64 m_generation = 0;
};

} // namespace dialog::alarms
