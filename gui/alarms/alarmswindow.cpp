#include "alarmswindow.h"

#include "actiondialog.h"
#include "alarmtablemodel.h"
#include "alarmtreemodel.h"
#include "historyview.h"

#include <QAction>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QMessageBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QToolBar>
#include <QTreeView>
#include <QUrl>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace dialog::alarms {

namespace {
QString escaped(const QString &s)
{
    return s.toHtmlEscaped();
}
} // namespace

AlarmsWindow::AlarmsWindow(const ClientOptions &options, QWidget *parent)
    : QMainWindow(parent), m_model(new AlarmTableModel(this)), m_filter(new AlarmFilterModel(this)),
      m_tree(new AlarmTreeModel(this))
{
    setWindowTitle(u"DIALOG alarms"_s);
    m_client = std::make_unique<Client>(options);
    m_session = new AlarmSession(m_client.get(), this);
    m_filter->setSourceModel(m_model);

    auto *central = new QWidget;
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 6, 6, 6);
    m_counts = new QLabel(u"waiting for the alarm server (ALARM.Table)…"_s);
    m_counts->setObjectName(u"counts"_s);
    QFont f = m_counts->font();
    f.setBold(true);
    f.setPointSize(f.pointSize() + 2);
    m_counts->setFont(f);
    m_counts->setMargin(4);
    layout->addWidget(m_counts);
    m_historyProblem = new QLabel;
    m_historyProblem->setObjectName(u"historyProblem"_s);
    m_historyProblem->setWordWrap(true);
    m_historyProblem->setMargin(4);
    m_historyProblem->setStyleSheet(u"background: #b00020; color: white; font-weight: bold;"_s);
    m_historyProblem->hide();
    layout->addWidget(m_historyProblem);
    m_refusal = new QLabel;
    m_refusal->setObjectName(u"refusal"_s);
    m_refusal->setWordWrap(true);
    m_refusal->setMargin(4);
    m_refusal->setStyleSheet(u"background: #fff3cd; color: #7a2000; border: 1px solid #e0a000;"_s);
    m_refusal->hide();
    layout->addWidget(m_refusal);

    m_treeView = new QTreeView;
    m_treeView->setModel(m_tree);
    m_treeView->setUniformRowHeights(true);
    m_treeView->header()->setStretchLastSection(false);
    m_treeView->header()->setSectionResizeMode(AlarmTreeModel::Name, QHeaderView::Stretch);
    // Fixed widths: ResizeToContents would measure every item of a large tree at each change.
    for (int c = AlarmTreeModel::Worst; c < AlarmTreeModel::ColumnCount; ++c) {
        m_treeView->header()->setSectionResizeMode(c, QHeaderView::Fixed);
        m_treeView->header()->resizeSection(c, c == AlarmTreeModel::Worst ? 58 : 48);
    }
    m_treeView->expandToDepth(0);

    m_view = new QTableView;
    m_view->setModel(m_filter);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(AlarmTableModel::Time, Qt::DescendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setColumnWidth(AlarmTableModel::Time, 140);
    m_view->setColumnWidth(AlarmTableModel::Severity, 76);
    m_view->setColumnWidth(AlarmTableModel::State, 120);
    m_view->setColumnWidth(AlarmTableModel::Path, 240);
    m_view->setColumnWidth(AlarmTableModel::Value, 160);

    m_details = new QTextBrowser;
    m_details->setObjectName(u"details"_s);
    m_details->setOpenExternalLinks(true);
    m_details->setPlaceholderText(u"Select an alarm to see its guidance and links."_s);

    auto *right = new QSplitter(Qt::Vertical);
    right->addWidget(m_view);
    right->addWidget(m_details);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 2);
    auto *split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_treeView);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    split->setSizes({400, 880});

    m_history = new HistoryView(m_session);
    m_tabs = new QTabWidget;
    m_tabs->addTab(split, u"Alarms"_s);
    m_tabs->addTab(m_history, u"History"_s);
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);
    m_server = new QLabel;
    statusBar()->addWidget(m_server, 1);
    buildActions();

    connect(m_session, &AlarmSession::tableChanged, this, &AlarmsWindow::onTable);
    connect(m_session, &AlarmSession::treeReceived, this, [this](const QJsonObject &tree) {
        m_tree->setStructure(tree);
        m_tree->setTable(m_session->table().value(u"alarms"_s).toArray());
        m_treeView->expandToDepth(1);
    });
    connect(m_session, &AlarmSession::requestFailed, this,
            [this](const QString &why) { statusBar()->showMessage(why, 10000); });
    connect(m_session, &AlarmSession::serverStateChanged, this, [this] { updateCounts(); });
    connect(m_treeView->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex &current) {
                const QString path = current.data(AlarmTreeModel::PathRole).toString();
                m_filter->setPathFilter(path);
                m_history->setPath(path);
                updateCounts();
            });
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        showDetails();
        updateActions();
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] { showDetails(); });
    // The details and the buttons follow the selected alarm as the table changes.
    // (Not on a blink step, which changes the colour roles only.)
    connect(m_model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex &, const QModelIndex &, const QList<int> &roles) {
                if (!roles.isEmpty())
                    return;
                showDetails();
                updateActions();
            });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        showDetails();
        updateActions();
    });
    connect(m_client.get(), &Client::stateChanged, this, [this] { updateCounts(); });
    m_client->start();
    updateCounts();
    updateActions();
    resize(1280, 760);
}

AlarmsWindow::~AlarmsWindow() = default;

void AlarmsWindow::buildActions()
{
    QToolBar *bar = addToolBar(u"Actions"_s);
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_ack = bar->addAction(u"Acknowledge…"_s, this, [this] { startAction(u"ack"_s); });
    m_ack->setObjectName(u"ackAction"_s);
    m_ack->setShortcut(QKeySequence(u"Ctrl+K"_s));
    m_shelve = bar->addAction(u"Shelve…"_s, this, [this] { startAction(u"shelve"_s); });
    m_shelve->setObjectName(u"shelveAction"_s);
    m_unshelve = bar->addAction(u"Unshelve…"_s, this, [this] { startAction(u"unshelve"_s); });
    m_unshelve->setObjectName(u"unshelveAction"_s);
    bar->addSeparator();
    QAction *history = bar->addAction(u"History of the selection"_s, this, [this] {
        const QStringList paths = selectedPaths();
        if (paths.size() == 1)
            m_history->setPath(paths.first());
        m_tabs->setCurrentWidget(m_history);
        m_history->query();
    });
    history->setObjectName(u"historyAction"_s);
}

void AlarmsWindow::onTable()
{
    const QJsonObject &t = m_session->table();
    const QJsonArray alarms = t.value(u"alarms"_s).toArray();
    m_model->setAlarms(alarms);
    m_tree->setTable(alarms);
    updateCounts();
    updateActions();
}

QString AlarmsWindow::countsText() const
{
    return m_counts->text();
}

QString AlarmsWindow::historyProblemText() const
{
    return m_historyProblem->isHidden() ? QString() : m_historyProblem->text();
}

void AlarmsWindow::updateCounts()
{
    const QJsonObject &t = m_session->table();
    if (t.isEmpty()) {
        m_counts->setText(m_client->state() == Client::State::Connected
                              ? u"waiting for the alarm server (ALARM.Table)…"_s
                              : u"connecting to the Control Server…"_s);
        m_counts->setStyleSheet(QString());
        m_server->setText(QString());
        return;
    }
    const QJsonObject c = t.value(u"counts"_s).toObject();
    const QString worst = t.value(u"worst"_s).toString();
    QString text = u"worst %1 · %2 active, %3 unacknowledged, %4 latched, %5 shelved, %6 disabled · %7 rules"_s
                       .arg(worst == u"ok"_s ? u"ok"_s : worst.toUpper())
                       .arg(c.value(u"active"_s).toInt())
                       .arg(c.value(u"unacknowledged"_s).toInt())
                       .arg(c.value(u"latched"_s).toInt())
                       .arg(c.value(u"shelved"_s).toInt())
                       .arg(c.value(u"disabled"_s).toInt())
                       .arg(t.value(u"rules"_s).toInt());
    if (!m_filter->pathFilter().isEmpty())
        text += u" · showing %1 of %2 below %3"_s.arg(m_filter->rowCount()).arg(m_model->rowCount()).arg(
            m_filter->pathFilter());
    if (m_session->serverState() == AlarmSession::ServerState::Lost)
        text = u"⚠ the alarm server was lost — the last table it sent: "_s + text;
    m_counts->setText(text);
    const QColor bg = severityColor(worst);
    m_counts->setStyleSheet(bg.isValid() ? u"background: %1;"_s.arg(bg.name()) : u"background: #c8e6c9;"_s);
    // The history's figures: writes that wait because the database fails are the operator's business.
    const QJsonObject h = t.value(u"history"_s).toObject();
    const int pending = h.value(u"pending"_s).toInt();
    const qint64 failures = h.value(u"failures"_s).toInteger();
    if (h.contains(u"error"_s) || h.value(u"dropped"_s).toInteger() > 0) {
        m_historyProblem->setText(
            u"⚠ The alarm history database fails (%1: %2): %3 changes wait in memory and are retried, %4 "
            "failures, %5 dropped. The alarms themselves keep working."_s.arg(h.value(u"database"_s).toString(),
                                                                    h.value(u"error"_s).toString())
                .arg(pending)
                .arg(failures)
                .arg(h.value(u"dropped"_s).toInteger()));
        m_historyProblem->show();
    } else {
        m_historyProblem->hide();
    }
    m_server->setText(u"alarm server %1 · history in %2 (%3 written)"_s.arg(
        m_session->serverProcess(), h.value(u"database"_s).toString())
                          .arg(h.value(u"written"_s).toInteger()));
}

void AlarmsWindow::selectNode(const QString &path)
{
    const QModelIndex i = m_tree->indexOf(path);
    if (i.isValid())
        m_treeView->setCurrentIndex(i);
}

bool AlarmsWindow::selectAlarm(const QString &path)
{
    const int row = m_model->rowOf(path);
    const QModelIndex shown = row < 0 ? QModelIndex() : m_filter->mapFromSource(m_model->index(row, 0));
    if (!shown.isValid())
        return false;
    m_view->selectionModel()->setCurrentIndex(
        shown, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    return true;
}

QStringList AlarmsWindow::selectedPaths() const
{
    QStringList paths;
    for (const QModelIndex &i : m_view->selectionModel()->selectedRows())
        paths << i.data(AlarmTableModel::PathRole).toString();
    paths.sort();
    return paths;
}

void AlarmsWindow::updateActions()
{
    bool ack = false, shelve = false, unshelve = false;
    for (const QString &p : selectedPaths()) {
        const QJsonObject a = m_model->alarm(p);
        const QString state = a.value(u"state"_s).toString();
        ack |= state == u"active"_s || state == u"latched"_s;
        shelve |= !a.value(u"disabled"_s).toBool();
        unshelve |= a.value(u"shelved"_s).toBool();
    }
    m_ack->setEnabled(ack);
    m_shelve->setEnabled(shelve);
    m_unshelve->setEnabled(unshelve);
}

void AlarmsWindow::showDetails()
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    const QJsonObject a = current.isValid()
                              ? m_model->alarm(current.data(AlarmTableModel::PathRole).toString())
                              : QJsonObject();
    if (a == m_detailsOf)
        return; // unchanged: the pane keeps its scroll position and text selection
    m_detailsOf = a;
    if (a.isEmpty()) {
        m_details->clear();
        return;
    }
    QString html = u"<h3 style='margin:0'>%1</h3><p><b>%2</b> · %3 · %4</p>"_s.arg(
        escaped(a.value(u"path"_s).toString()), escaped(a.value(u"severity"_s).toString().toUpper()),
        escaped(a.value(u"state"_s).toString()), escaped(a.value(u"description"_s).toString()));
    const QString guidance = a.value(u"guidance"_s).toString();
    html += u"<p><b>Guidance:</b> %1</p>"_s.arg(
        guidance.isEmpty() ? u"<i>none given</i>"_s : escaped(guidance).replace(u'\n', u"<br>"_s));
    const QJsonArray links = a.value(u"links"_s).toArray();
    if (!links.isEmpty()) {
        html += u"<b>Links:</b><ul style='margin-top:0'>"_s;
        for (const QJsonValue &l : links) {
            const QString text = l.toString();
            const QUrl url = QUrl::fromUserInput(text);
            html += u"<li><a href='%1'>%2</a></li>"_s.arg(escaped(url.toString()), escaped(text));
        }
        html += u"</ul>"_s;
    }
    auto line = [&](const QString &label, const QString &text) {
        if (!text.isEmpty())
            html += u"<b>%1:</b> %2<br>"_s.arg(label, escaped(text));
    };
    line(u"Value"_s, a.value(u"value"_s).toString());
    line(u"Rule"_s, a.value(u"rule"_s).toString());
    line(u"Raised"_s, timeText(a.value(u"raised_ms"_s).toInteger()));
    line(u"Cleared"_s, timeText(a.value(u"cleared_ms"_s).toInteger()));
    if (a.contains(u"ack_by"_s))
        line(u"Acknowledged"_s, u"%1 by %2%3"_s.arg(timeText(a.value(u"ack_ms"_s).toInteger()),
                                                   a.value(u"ack_by"_s).toString(),
                                                   a.value(u"ack_comment"_s).toString().isEmpty()
                                                       ? QString()
                                                       : u": "_s + a.value(u"ack_comment"_s).toString()));
    if (a.value(u"shelved"_s).toBool())
        line(u"Shelved"_s, u"until %1 by %2: %3"_s.arg(timeText(a.value(u"shelved_until_ms"_s).toInteger()),
                                                       a.value(u"shelved_by"_s).toString(),
                                                       a.value(u"shelve_reason"_s).toString()));
    if (a.value(u"disabled"_s).toBool())
        line(u"Disabled by"_s, a.value(u"disabled_by"_s).toString());
    if (a.value(u"ack_comment_required"_s).toBool())
        line(u"Note"_s, u"an acknowledgement needs a comment"_s);
    m_details->setHtml(html);
}

ActionDialog *AlarmsWindow::startAction(const QString &op)
{
    const QStringList paths = selectedPaths();
    if (paths.isEmpty())
        return nullptr;
    if (m_dialog)
        m_dialog->reject();
    bool commentRequired = false;
    for (const QString &p : paths)
        commentRequired |= m_model->alarm(p).value(u"ack_comment_required"_s).toBool();
    auto *d = new ActionDialog(op, paths, op == u"ack"_s && commentRequired, this);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &QDialog::accepted, this, [this, d] { send(d); });
    m_dialog = d;
    d->open();
    return d;
}

void AlarmsWindow::send(ActionDialog *dialog)
{
    QJsonObject params;
    QString error;
    if (!dialog->params(&params, &error))
        return; // accept() does not let it close so
    const QString op = dialog->op();
    const QStringList paths = dialog->paths();
    auto state = std::make_shared<std::pair<int, QStringList>>(int(paths.size()), QStringList());
    statusBar()->showMessage(u"%1: %2 alarm(s) sent…"_s.arg(op).arg(paths.size()));
    for (const QString &path : paths)
        m_session->act(op, path, params, [this, op, path, state](const QString &refusal, const QJsonObject &) {
            if (!refusal.isEmpty())
                state->second << u"%1: %2"_s.arg(path, refusal);
            if (--state->first > 0)
                return;
            showRefusals(op, state->second);
            Q_EMIT actionFinished(op, state->second);
        });
}

void AlarmsWindow::showRefusals(const QString &op, const QStringList &refusals)
{
    const QString verb = op == u"ack"_s ? u"acknowledge"_s : op;
    if (refusals.isEmpty()) {
        m_lastRefusal.clear();
        m_refusal->hide();
        statusBar()->showMessage(u"%1: done"_s.arg(verb), 5000);
        return;
    }
    m_lastRefusal = refusals.join(u'\n');
    m_refusal->setText(u"⚠ The alarm server refused to %1:\n%2"_s.arg(verb, m_lastRefusal));
    m_refusal->show();
    // Also a box the operator has to close: a refusal must not go unseen.
    auto *box = new QMessageBox(QMessageBox::Warning, u"Alarms: %1 refused"_s.arg(verb),
                                u"The alarm server refused to %1:\n\n%2"_s.arg(verb, m_lastRefusal),
                                QMessageBox::Ok, this);
    box->setObjectName(u"refusalBox"_s);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace dialog::alarms
