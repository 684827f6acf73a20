#include "actiondialog.h"

#include <QDateTime>
#include <QDateTimeEdit>
#include <QDialogButtonBox>
#include <QPushButton>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRadioButton>
#include <QRegularExpression>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace dialog::alarms {

qint64 parseDurationMs(const QString &text)
{
    static const QRegularExpression duration(u"^\\s*(\\d+(?:\\.\\d+)?)\\s*(s|m|h|d)\\s*$"_s);
    const QRegularExpressionMatch m = duration.match(text);
    if (!m.hasMatch())
        return 0;
    static const QHash<QString, double> unit{{u"s"_s, 1e3}, {u"m"_s, 6e4}, {u"h"_s, 3.6e6}, {u"d"_s, 8.64e7}};
    return qint64(m.captured(1).toDouble() * unit.value(m.captured(2)));
}

ActionDialog::ActionDialog(const QString &op, const QStringList &paths, bool commentRequired, QWidget *parent)
    : QDialog(parent), m_op(op), m_paths(paths)
{
    setObjectName(u"actionDialog"_s);
    const QString verb = op == u"ack"_s ? u"Acknowledge"_s : op == u"shelve"_s ? u"Shelve"_s : u"Unshelve"_s;
    setWindowTitle(paths.size() == 1 ? u"%1 %2"_s.arg(verb, paths.first())
                                     : u"%1 %2 alarms"_s.arg(verb).arg(paths.size()));
    auto *layout = new QVBoxLayout(this);
    auto *which = new QLabel(paths.size() <= 5 ? paths.join(u'\n')
                                               : QStringList(paths.mid(0, 5)).join(u'\n') +
                                                     u"\n… and %1 more"_s.arg(paths.size() - 5));
    which->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(which);
    auto *form = new QFormLayout;
    m_comment = new QLineEdit;
    m_comment->setObjectName(u"comment"_s);
    m_comment->setMinimumWidth(320);
    if (op == u"shelve"_s) {
        m_comment->setPlaceholderText(u"why it is shelved (required)"_s);
        form->addRow(u"Reason"_s, m_comment);
        auto *forChoice = new QRadioButton(u"For"_s);
        forChoice->setChecked(true);
        m_for = new QLineEdit(u"8h"_s);
        m_for->setObjectName(u"for"_s);
        m_for->setPlaceholderText(u"30m, 8h, 2d"_s);
        m_untilChoice = new QRadioButton(u"Until"_s);
        m_until = new QDateTimeEdit(QDateTime::currentDateTime().addSecs(8 * 3600));
        m_until->setObjectName(u"until"_s);
        m_until->setDisplayFormat(u"yyyy-MM-dd HH:mm"_s);
        m_until->setCalendarPopup(true);
        form->addRow(forChoice, m_for);
        form->addRow(m_untilChoice, m_until);
        connect(m_for, &QLineEdit::textEdited, forChoice, [forChoice] { forChoice->setChecked(true); });
        connect(m_until, &QDateTimeEdit::dateTimeChanged, m_untilChoice, [this] { m_untilChoice->setChecked(true); });
    } else if (op == u"ack"_s) {
        m_comment->setPlaceholderText(commentRequired ? u"required for this alarm"_s : u"optional"_s);
        form->addRow(commentRequired ? u"Comment (required)"_s : u"Comment"_s, m_comment);
    } else {
        // The alarm server keeps no comment with an unshelve (its history says who did it).
        m_comment->hide();
        form->addRow(new QLabel(u"The alarms are annunciated again at once."_s));
    }
    layout->addLayout(form);
    m_problem = new QLabel;
    m_problem->setObjectName(u"problem"_s);
    m_problem->setStyleSheet(u"color: #b00020;"_s);
    m_problem->hide();
    layout->addWidget(m_problem);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(verb);
    connect(buttons, &QDialogButtonBox::accepted, this, &ActionDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ActionDialog::reject);
    layout->addWidget(buttons);
}

bool ActionDialog::params(QJsonObject *out, QString *error) const
{
    *out = QJsonObject();
    const QString text = m_comment->text().trimmed();
    if (m_op == u"shelve"_s) {
        // An empty reason is the alarm server's to refuse: it says why.
        out->insert(u"reason"_s, text);
        qint64 until = 0;
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        if (m_untilChoice->isChecked()) {
            until = m_until->dateTime().toMSecsSinceEpoch();
            if (until <= now) {
                *error = u"the time is not in the future"_s;
                return false;
            }
        } else {
            const qint64 ms = parseDurationMs(m_for->text());
            if (ms <= 0) {
                *error = u"invalid duration '%1' (e.g. 30m, 8h, 2d)"_s.arg(m_for->text());
                return false;
            }
            until = now + ms;
        }
        out->insert(u"until_ms"_s, until);
    } else if (m_op == u"ack"_s && !text.isEmpty()) {
        out->insert(u"comment"_s, text);
    }
    return true;
}

QString ActionDialog::problem() const
{
    return m_problem->isVisible() || !m_problem->isHidden() ? m_problem->text() : QString();
}

void ActionDialog::accept()
{
    QJsonObject p;
    QString error;
    if (!params(&p, &error)) {
        m_problem->setText(error);
        m_problem->show();
        return;
    }
    QDialog::accept();
}

} // namespace dialog::alarms
