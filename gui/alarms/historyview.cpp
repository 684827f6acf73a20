#include "historyview.h"

#include "alarmsession.h"
#include "alarmtablemodel.h"

#include "dialog/logrecord.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace dialog::alarms {

HistoryView::HistoryView(AlarmSession *session, QWidget *parent)
    : QWidget(parent), m_session(session), m_model(new QStandardItemModel(0, ColumnCount, this))
{
    auto *layout = new QVBoxLayout(this);
    auto *row = new QHBoxLayout;
    auto edit = [&](const QString &name, const QString &placeholder, int width) {
        auto *e = new QLineEdit;
        e->setObjectName(name);
        e->setPlaceholderText(placeholder);
        e->setMinimumWidth(width);
        connect(e, &QLineEdit::returnPressed, this, &HistoryView::query);
        return e;
    };
    m_path = edit(u"historyPath"_s, u"every alarm"_s, 260);
    m_since = edit(u"since"_s, u"8h, ISO, ms"_s, 90);
    m_since->setText(u"8h"_s);
    m_until = edit(u"until"_s, u"now"_s, 90);
    m_limit = new QSpinBox;
    m_limit->setRange(1, 100000);
    m_limit->setValue(500);
    row->addWidget(new QLabel(u"Path"_s));
    row->addWidget(m_path, 2);
    row->addWidget(new QLabel(u"Since"_s));
    row->addWidget(m_since);
    row->addWidget(new QLabel(u"Until"_s));
    row->addWidget(m_until);
    row->addWidget(new QLabel(u"At most"_s));
    row->addWidget(m_limit);
    auto *show = new QPushButton(u"Show"_s);
    connect(show, &QPushButton::clicked, this, &HistoryView::query);
    row->addWidget(show);
    layout->addLayout(row);
    m_model->setHorizontalHeaderLabels(
        {u"Time"_s, u"Path"_s, u"Event"_s, u"State"_s, u"Severity"_s, u"Value"_s, u"Who"_s, u"Comment"_s});
    m_view = new QTableView;
    m_view->setModel(m_model);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setColumnWidth(Time, 150);
    m_view->setColumnWidth(Path, 250);
    m_view->setColumnWidth(Event, 95);
    m_view->setColumnWidth(State, 95);
    m_view->setColumnWidth(Severity, 65);
    m_view->setColumnWidth(Value, 170);
    m_view->setColumnWidth(Who, 190);
    layout->addWidget(m_view, 1);
    m_status = new QLabel;
    m_status->setObjectName(u"historyStatus"_s);
    layout->addWidget(m_status);
}

void HistoryView::setPath(const QString &path)
{
    m_path->setText(path);
}

QString HistoryView::path() const
{
    return m_path->text().trimmed();
}

QString HistoryView::statusText() const
{
    return m_status->text();
}

void HistoryView::query()
{
    const quint64 generation = ++m_generation;
    qint64 range[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
        QLineEdit *e = k == 0 ? m_since : m_until;
        const QString t = e->text().trimmed();
        if (t.isEmpty())
            continue;
        const std::optional<qint64> ms = parseLogTime(t);
        if (!ms) {
            m_model->removeRows(0, m_model->rowCount());
            m_status->setText(u"⚠ invalid %1 '%2' (e.g. 8h, 30m, 2026-12-01T18:00:00 or ms)"_s.arg(e->objectName(), t));
            Q_EMIT loaded();
            return;
        }
        range[k] = *ms;
    }
    m_status->setText(u"loading…"_s);
    const QString path = this->path();
    m_session->history(path, range[0], range[1], m_limit->value(),
                       [this, generation, path](const QJsonArray &rows, const QString &error,
                                                const QString &warning) {
                           if (generation != m_generation)
                               return; // a newer query was asked meanwhile
                           m_model->removeRows(0, m_model->rowCount());
                           if (!error.isEmpty()) {
                               m_status->setText(u"⚠ "_s + error);
                               Q_EMIT loaded();
                               return;
                           }
                           for (const QJsonValue &v : rows) {
                               const QJsonObject r = v.toObject();
                               QList<QStandardItem *> items;
                               const QString texts[ColumnCount] = {
                                   timeText(r.value(u"time_ms"_s).toInteger()), r.value(u"path"_s).toString(),
                                   r.value(u"event"_s).toString(),   r.value(u"state"_s).toString(),
                                   r.value(u"severity"_s).toString(), r.value(u"value"_s).toString(),
                                   r.value(u"who"_s).toString(),     r.value(u"comment"_s).toString()};
                               for (const QString &t : texts)
                                   items.append(new QStandardItem(t));
                               const QColor c = r.value(u"event"_s).toString() == u"raised"_s
                                                    ? severityColor(r.value(u"severity"_s).toString())
                                                    : QColor();
                               if (c.isValid())
                                   for (QStandardItem *i : items)
                                       i->setBackground(c);
                               m_model->appendRow(items);
                           }
                           QString s = u"%1 changes of %2, newest first"_s.arg(rows.size()).arg(
                               path.isEmpty() ? u"every alarm"_s : path);
                           if (!warning.isEmpty())
                               s += u" · ⚠ "_s + warning;
                           m_status->setText(s);
                           Q_EMIT loaded();
                       });
}

} // namespace dialog::alarms
