// The dialog of an operator's action on alarms (acknowledge, shelve, unshelve): the alarms it
// applies to, a comment (acknowledge), a reason and how long or until when (shelve); an unshelve
// is confirmed only.
// The window opens it with open() (no nested event loop) and acts on accepted().
#pragma once

#include <QDialog>
#include <QJsonObject>

class QDateTimeEdit;
class QLabel;
class QLineEdit;
class QRadioButton;

namespace dialog::alarms {

class ActionDialog : public QDialog
{
    Q_OBJECT
public:
    /// @p op "ack", "shelve" or "unshelve"; @p commentRequired says that one of the alarms requires
    /// a comment (shown; the alarm server decides).
    ActionDialog(const QString &op, const QStringList &paths, bool commentRequired, QWidget *parent = nullptr);

    QString op() const { return m_op; }
    QStringList paths() const { return m_paths; }
    QLineEdit *commentEdit() const { return m_comment; }
    /// Shelve only (nullptr otherwise): the duration ("30m", "8h", "2d") or the time.
    QLineEdit *durationEdit() const { return m_for; }
    QDateTimeEdit *untilEdit() const { return m_until; }
    QRadioButton *untilChoice() const { return m_untilChoice; }

    /// The keys of the request ("comment" or "reason", "until_ms"); false and @p error for a bad
    /// duration or a time not in the future.
    bool params(QJsonObject *out, QString *error) const;
    /// The text under the fields when accept() found them wrong.
    QString problem() const;

    void accept() override;

private:
    QString m_op;
    QStringList m_paths;
    QLineEdit *m_comment = nullptr, *m_for = nullptr;
    QDateTimeEdit *m_until = nullptr;
    QRadioButton *m_untilChoice = nullptr;
    QLabel *m_problem = nullptr;
};

/// "30m", "8h", "2d", "90s" as milliseconds; 0 for anything else.
qint64 parseDurationMs(const QString &text);

} // namespace dialog::alarms
