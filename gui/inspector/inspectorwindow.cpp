#include "inspectorwindow.h"

#include "dialog/logrecord.h"

#include <QCheckBox>
#include <QDateTime>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace dialog::inspector {

namespace {
enum ItemKind
{
    ServiceItem = 1,
    SubscriptionItem,
    CommandItem
};
}

InspectorWindow::InspectorWindow(const ClientOptions &options, QWidget *parent)
    : QMainWindow(parent), m_client(std::make_unique<Client>(options)), m_model(new ProcessModel(this)),
      m_filter(new ProcessFilter(this)), m_listen(new ListenModel(this))
{
    setWindowTitle(
        QStringLiteral("DIALOG Communication GUI — %1").arg(options.controlServers.join(QLatin1Char(','))));
    m_filter->setSourceModel(m_model);

    auto *central = new QWidget;
    auto *layout = new QVBoxLayout(central);
    layout->addWidget(buildFilterBar());
    auto *vertical = new QSplitter(Qt::Vertical);
    m_view = new QTableView;
    m_view->setObjectName(QStringLiteral("processes"));
    m_view->setModel(m_filter);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_filter->setSortRole(ProcessModel::SortRole); // figures sort as numbers
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(ProcessModel::Name, Qt::AscendingOrder);
    m_view->horizontalHeader()->setStretchLastSection(true);
    // Columns are sized to the rows in view, not to every row: with thousands of processes, sizing
    // to all of them (Qt measures up to 1,000 rows a column) took 0.3-0.5 s of every refresh.
    m_view->horizontalHeader()->setResizeContentsPrecision(0);
    m_view->verticalHeader()->setResizeContentsPrecision(0);
    m_view->verticalHeader()->setDefaultSectionSize(22);
    m_view->setAlternatingRowColors(true);
    vertical->addWidget(m_view);
    auto *bottom = new QSplitter(Qt::Horizontal);
    bottom->addWidget(buildDetails());
    bottom->addWidget(buildListen());
    bottom->setStretchFactor(1, 2);
    bottom->setSizes({330, 770});
    vertical->addWidget(bottom);
    vertical->setStretchFactor(0, 3);
    vertical->setStretchFactor(1, 2);
    vertical->setSizes({340, 420});
    layout->addWidget(vertical);
    setCentralWidget(central);
    m_status = new QLabel;
    statusBar()->addWidget(m_status, 1);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &cur) {
                m_selected = cur.isValid() ? m_filter->index(cur.row(), ProcessModel::Name).data().toString()
                                           : QString();
                showDetails();
            });

    // The directory arrives as a service; bursts are applied at most ten times a second.
    m_refresh = new QTimer(this);
    m_refresh->setInterval(100);
    m_refresh->setSingleShot(true);
    connect(m_refresh, &QTimer::timeout, this, &InspectorWindow::refresh);
    // Both are read in a thread of their own (megabytes with thousands of processes); an unreadable
    // message (never sent by a Control Server) leaves the table as it was.
    m_reader = std::make_unique<SnapshotReader>(this, [this] { scheduleRefresh(); });
    m_client->subscribe(directoryServiceName(), this,
                        [this](const Message &m) { m_reader->addDirectory(m.data()); });
    // Every process's communication figures, sent with its heartbeats and republished by the
    // Control Server at most once a second.
    m_client->subscribe(statisticsServiceName(), this,
                        [this](const Message &m) { m_reader->addStatistics(m.data()); });
    connect(m_client.get(), &Client::stateChanged, this, &InspectorWindow::updateStatus);
    connect(m_client.get(), &Client::commandReceived, this, [this](const Command &c) {
        if (c.name() == m_listeningCommand)
            m_listen->add(Heard{QDateTime::currentDateTime(), c.name(), QStringLiteral("from ") + c.origin(),
                                c.data()});
    });
    connect(m_listen, &ListenModel::flushed, this, [this] {
        m_rateLabel->setText(
            QStringLiteral("%1 msg/s, %2 in all").arg(m_listen->rate(), 0, 'f', 1).arg(m_listen->total()));
    });
    auto *statusTimer = new QTimer(this);
    connect(statusTimer, &QTimer::timeout, this, &InspectorWindow::updateStatus);
    statusTimer->start(1000);
    m_client->start();
    updateStatus();
    resize(1500, 860);
}

InspectorWindow::~InspectorWindow() = default;

QWidget *InspectorWindow::buildFilterBar()
{
    auto *box = new QGroupBox(QStringLiteral("Filter"));
    auto *grid = new QGridLayout(box);
    const QList<QPair<QString, QString>> fields{
        {QStringLiteral("Name of process:"), QStringLiteral("filterName")},
        {QStringLiteral("Address:"), QStringLiteral("filterAddress")},
        {QStringLiteral("Provided service:"), QStringLiteral("filterProvided")},
        {QStringLiteral("Command:"), QStringLiteral("filterCommand")},
        {QStringLiteral("PID:"), QStringLiteral("filterPid")},
        {QStringLiteral("Port:"), QStringLiteral("filterPort")},
        {QStringLiteral("Subscribed service:"), QStringLiteral("filterSubscribed")},
        {QStringLiteral("Any text:"), QStringLiteral("filterText")},
    };
    for (int i = 0; i < fields.size(); ++i) {
        auto *edit = new QLineEdit;
        edit->setObjectName(fields.at(i).second);
        edit->setClearButtonEnabled(true);
        connect(edit, &QLineEdit::returnPressed, this, &InspectorWindow::search);
        grid->addWidget(new QLabel(fields.at(i).first), i / 4, (i % 4) * 2);
        grid->addWidget(edit, i / 4, (i % 4) * 2 + 1);
        m_fields << edit;
    }
    m_freeText = m_fields.last();
    auto *searchButton = new QPushButton(QStringLiteral("Search"));
    searchButton->setObjectName(QStringLiteral("search"));
    auto *resetButton = new QPushButton(QStringLiteral("Reset"));
    resetButton->setObjectName(QStringLiteral("reset"));
    connect(searchButton, &QPushButton::clicked, this, &InspectorWindow::search);
    connect(resetButton, &QPushButton::clicked, this, &InspectorWindow::reset);
    grid->addWidget(searchButton, 0, 8);
    grid->addWidget(resetButton, 1, 8);
    return box;
}

QWidget *InspectorWindow::buildDetails()
{
    auto *box = new QGroupBox(QStringLiteral("Selected process"));
    auto *l = new QVBoxLayout(box);
    m_details = new QTreeWidget;
    m_details->setObjectName(QStringLiteral("details"));
    m_details->setHeaderHidden(true);
    l->addWidget(m_details);
    auto *listen = new QPushButton(QStringLiteral("Listen to selected"));
    listen->setObjectName(QStringLiteral("listen"));
    l->addWidget(listen);
    connect(listen, &QPushButton::clicked, this, [this] {
        const QTreeWidgetItem *item = m_details->currentItem();
        if (!item || !item->parent())
            return;
        if (item->type() == CommandItem)
            listenToCommand(item->text(0));
        else
            listenToService(item->text(0));
    });
    connect(m_details, &QTreeWidget::itemDoubleClicked, listen, &QPushButton::click);
    connect(m_details, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *item) {
        if (item && item->type() == CommandItem)
            m_commandName->setText(item->text(0));
    });
    return box;
}

QWidget *InspectorWindow::buildListen()
{
    auto *box = new QGroupBox(QStringLiteral("Listen and send"));
    auto *l = new QVBoxLayout(box);
    auto *top = new QHBoxLayout;
    m_listenLabel =
        new QLabel(QStringLiteral("Not listening. Select a service or command and press Listen."));
    m_rateLabel = new QLabel;
    auto *stop = new QPushButton(QStringLiteral("Stop"));
    connect(stop, &QPushButton::clicked, this, &InspectorWindow::stopListening);
    top->addWidget(m_listenLabel, 1);
    top->addWidget(m_rateLabel);
    top->addWidget(stop);
    l->addLayout(top);
    auto *table = new QTableView;
    table->setObjectName(QStringLiteral("messages"));
    table->setModel(m_listen);
    table->horizontalHeader()->setStretchLastSection(true);
    // Fixed initial widths: resizing to contents at every flush would cost too much at high rates.
    const int widths[] = {95, 190, 140, 60};
    for (int c = 0; c < 4; ++c)
        table->setColumnWidth(c, widths[c]);
    table->verticalHeader()->hide();
    table->verticalHeader()->setDefaultSectionSize(20);
    l->addWidget(table);
    connect(m_listen, &QAbstractItemModel::rowsInserted, table, &QTableView::scrollToBottom);
    auto *send = new QHBoxLayout;
    m_commandName = new QLineEdit;
    m_commandName->setObjectName(QStringLiteral("commandName"));
    m_commandName->setPlaceholderText(QStringLiteral("command"));
    m_commandPayload = new QLineEdit;
    m_commandPayload->setObjectName(QStringLiteral("commandPayload"));
    m_commandPayload->setPlaceholderText(QStringLiteral("data (text, or hex bytes like 'de ad be ef')"));
    m_hex = new QCheckBox(QStringLiteral("hex"));
    auto *sendButton = new QPushButton(QStringLiteral("Send command"));
    sendButton->setObjectName(QStringLiteral("send"));
    connect(sendButton, &QPushButton::clicked, this,
            [this] { sendCommand(m_commandName->text(), m_commandPayload->text(), m_hex->isChecked()); });
    send->addWidget(m_commandName, 1);
    send->addWidget(m_commandPayload, 2);
    send->addWidget(m_hex);
    send->addWidget(sendButton);
    l->addLayout(send);
    return box;
}

void InspectorWindow::scheduleRefresh()
{
    if (!m_refresh->isActive())
        m_refresh->start();
}

void InspectorWindow::refresh()
{
    // Only the latest snapshots count: a burst of updates costs one model change.
    auto directory = m_reader->takeDirectory();
    if (directory) {
        // The user's place is kept: the process at the top of the view stays at the top while
        // others come and go above it (unless the view is at the very top: then new ones show),
        // and the selected one stays selected without the view scrolling to it.
        const QString keep = m_selected;
        const bool atTop = m_view->verticalScrollBar()->value() == 0;
        const QString top =
            atTop ? QString()
                  : m_view->indexAt(QPoint(1, 1)).siblingAtColumn(ProcessModel::Name).data().toString();
        m_model->setDirectory(*directory);
        if (!keep.isEmpty()) {
            const bool autoScroll = m_view->hasAutoScroll();
            m_view->setAutoScroll(false);
            selectProcess(keep);
            m_view->setAutoScroll(autoScroll);
        }
        if (const int row = top.isEmpty() ? -1 : m_model->rowOf(top); row >= 0) {
            const QModelIndex idx = m_filter->mapFromSource(m_model->index(row, ProcessModel::Name));
            if (idx.isValid())
                m_view->scrollTo(idx, QAbstractItemView::PositionAtTop);
        }
        m_view->resizeColumnsToContents();
        // Lists are summarized in the cells (full lists in tooltips and the side panel): keep them
        // from pushing the communication figures out of sight.
        for (int c :
             {int(ProcessModel::Provided), int(ProcessModel::Subscribed), int(ProcessModel::Commands)})
            m_view->setColumnWidth(c, qMin(m_view->columnWidth(c), 190));
        updateStatus();
        m_reader->discard(std::move(*directory));
    }
    if (const auto statistics = m_reader->takeStatistics()) {
        m_model->setStatistics(*statistics);
        // Figures grow: widen their columns when needed, never narrow them (no jitter every second).
        for (int c = ProcessModel::FirstFigureColumn; c <= ProcessModel::LastFigureColumn; ++c) {
            const int before = m_view->columnWidth(c);
            m_view->resizeColumnToContents(c);
            if (m_view->columnWidth(c) < before)
                m_view->setColumnWidth(c, before);
        }
        showFigures();
    }
}

void InspectorWindow::selectProcess(const QString &name)
{
    const int row = m_model->rowOf(name);
    if (row < 0)
        return;
    const QModelIndex idx = m_filter->mapFromSource(m_model->index(row, 0));
    if (idx.isValid())
        m_view->selectionModel()->setCurrentIndex(idx, QItemSelectionModel::ClearAndSelect |
                                                           QItemSelectionModel::Rows);
    m_selected = name;
    showDetails();
}

void InspectorWindow::showDetails()
{
    const int row = m_model->rowOf(m_selected);
    if (row >= 0 && m_shownValid) {
        // Directory snapshots arrive whenever anything changes anywhere: keep the tree (and the
        // user's place in it) unless this process changed.
        const ProcessRow &r = m_model->row(row);
        if (r.name == m_shown.name && r.pid == m_shown.pid && r.lost == m_shown.lost &&
            r.services == m_shown.services && r.subscriptions == m_shown.subscriptions &&
            r.commands == m_shown.commands) {
            showFigures();
            return;
        }
    }
    m_details->clear();
    m_figuresItem = nullptr;
    m_shownValid = false;
    ++m_detailsGeneration;
    if (row < 0)
        return;
    const ProcessRow &r = m_model->row(row);
    m_shown = r;
    m_shownValid = true;
    const auto group = [&](const QString &title, const QStringList &items, int kind) {
        auto *g = new QTreeWidgetItem(m_details,
                                      QStringList{QStringLiteral("%1 (%2)").arg(title).arg(items.size())});
        for (const QString &s : items)
            new QTreeWidgetItem(g, QStringList{s}, kind);
        g->setExpanded(true);
    };
    group(QStringLiteral("Provided services"), r.services, ServiceItem);
    group(QStringLiteral("Subscribed services"), r.subscriptions, SubscriptionItem);
    group(QStringLiteral("Commands"), r.commands, CommandItem);
    if (r.lost)
        new QTreeWidgetItem(m_details, QStringList{QStringLiteral("LOST: %1").arg(r.lostReason)});
    if (r.lost && r.omittedNames > 0) // the Control Server keeps the first names of a lost process
        new QTreeWidgetItem(m_details,
                            QStringList{QStringLiteral("%1 more names not kept").arg(r.omittedNames)});
    m_figuresItem = new QTreeWidgetItem(m_details, QStringList{QStringLiteral("Communication")});
    m_figuresItem->setExpanded(true);
    showFigures();
    fetchMessages(r.name);
}

void InspectorWindow::fetchMessages(const QString &process)
{
    // The process' newest messages, when a logger runs (no logger: no group, and no request waiting
    // for one to appear).
    bool loggerRuns = false;
    for (int i = 0; i < m_model->rowCount() && !loggerRuns; ++i)
        loggerRuns = !m_model->row(i).lost && m_model->row(i).services.contains(logservice::service());
    if (!loggerRuns)
        return;
    LogQuery q;
    q.process = process;
    q.limit = 10;
    const quint64 generation = m_detailsGeneration;
    m_client->request(
        logservice::service(), QByteArray(1, logservice::QueryKind) + q.encode(), 5000, this,
        [this, generation](const Reply &reply) {
            LogPage decoded;
            if (!reply.isOk() || !LogPage::decode(reply.data(), &decoded).isOk() ||
                generation != m_detailsGeneration)
                return;
            const LogPage *page = &decoded;
            auto *g = new QTreeWidgetItem(
                m_details,
                QStringList{
                    QStringLiteral("Messages (newest %1, from the logger)").arg(page->records.size())});
            for (const LogRecord &r : page->records)
                new QTreeWidgetItem(g, QStringList{QStringLiteral("%1 %2 %3")
                                                       .arg(QDateTime::fromMSecsSinceEpoch(r.timeMs).toString(
                                                                QStringLiteral("HH:mm:ss.zzz")),
                                                            severityName(r.severity), r.text)});
            g->setExpanded(true);
        });
}

void InspectorWindow::showFigures()
{
    if (!m_figuresItem || !m_shownValid)
        return;
    const ProcessFigures *f = m_shown.lost ? nullptr : m_model->figures(m_shown.name);
    QStringList lines;
    if (!f) {
        lines << (m_shown.lost
                      ? QStringLiteral("(process lost)")
                      : QStringLiteral("(no figures reported yet, or a process of an older release)"));
    } else {
        const auto rate = [](double v, bool bytes) {
            return v < 0   ? QStringLiteral("…")
                   : bytes ? ProcessModel::formatBytes(v) + QStringLiteral("/s")
                           : ProcessModel::formatRate(v) + QStringLiteral(" msg/s");
        };
        lines << QStringLiteral("messages out: %1 (%2)")
                     .arg(qint64(f->messagesOut))
                     .arg(rate(f->messagesOutPerSecond, false))
              << QStringLiteral("bytes out: %1 (%2)")
                     .arg(ProcessModel::formatBytes(f->bytesOut), rate(f->bytesOutPerSecond, true))
              << QStringLiteral("messages in: %1 (%2)")
                     .arg(qint64(f->messagesIn))
                     .arg(rate(f->messagesInPerSecond, false))
              << QStringLiteral("bytes in: %1 (%2)")
                     .arg(ProcessModel::formatBytes(f->bytesIn), rate(f->bytesInPerSecond, true))
              << QStringLiteral("queued to destinations: %1").arg(ProcessModel::formatBytes(f->queuedBytes))
              << QStringLiteral("dropped: %1").arg(qint64(f->dropped))
              << QStringLiteral("reconnects: %1").arg(qint64(f->reconnects))
              << QStringLiteral("protocol errors: %1").arg(qint64(f->protocolErrors))
              << QStringLiteral("connections: %1 out, %2 in")
                     .arg(f->outgoingConnections)
                     .arg(f->incomingConnections)
              << QStringLiteral("reported at %1")
                     .arg(QDateTime::fromMSecsSinceEpoch(f->atMs).toString(QStringLiteral("HH:mm:ss")));
    }
    while (m_figuresItem->childCount() > lines.size())
        delete m_figuresItem->takeChild(m_figuresItem->childCount() - 1);
    for (int i = 0; i < lines.size(); ++i) {
        if (i < m_figuresItem->childCount())
            m_figuresItem->child(i)->setText(0, lines.at(i));
        else
            new QTreeWidgetItem(m_figuresItem, QStringList{lines.at(i)});
    }
}

void InspectorWindow::listenToService(const QString &service)
{
    stopListening();
    m_listening = m_client->subscribe(service, this, [this, service](const Message &m) {
        m_listen->add(
            Heard{QDateTime::currentDateTime(), service, QStringLiteral("#%1").arg(m.sequence()), m.data()});
    });
    m_listenLabel->setText(QStringLiteral("Listening to service <b>%1</b>").arg(service.toHtmlEscaped()));
}

void InspectorWindow::listenToCommand(const QString &command)
{
    stopListening();
    // To hear a command the inspector registers it too: the Control Server forwards it to every registrant.
    m_listeningCommand = command;
    m_client->registerCommand(command);
    m_listenLabel->setText(QStringLiteral("Listening to command <b>%1</b> (registered by this inspector)")
                               .arg(command.toHtmlEscaped()));
}

void InspectorWindow::stopListening()
{
    if (m_listening)
        m_client->unsubscribe(m_listening);
    if (!m_listeningCommand.isEmpty())
        m_client->unregisterCommand(m_listeningCommand);
    m_listeningCommand.clear();
    m_listen->clear();
    m_listenLabel->setText(QStringLiteral("Not listening."));
}

bool InspectorWindow::sendCommand(const QString &command, const QString &payload, bool hex)
{
    QByteArray data = payload.toUtf8();
    if (hex) {
        const QByteArray clean = payload.toLatin1().replace(' ', "");
        if (clean.size() % 2 || QByteArray::fromHex(clean).toHex() != clean.toLower()) {
            statusBar()->showMessage(QStringLiteral("The data is not hexadecimal."), 5000);
            return false;
        }
        data = QByteArray::fromHex(clean);
    }
    if (!m_client->sendCommand(command, data)) {
        statusBar()->showMessage(QStringLiteral("Command not sent: %1")
                                     .arg(m_client->errorString().isEmpty() ? QStringLiteral("not connected")
                                                                            : m_client->errorString()),
                                 5000);
        return false;
    }
    statusBar()->showMessage(QStringLiteral("Sent %1 (%2 bytes)").arg(command).arg(data.size()), 3000);
    return true;
}

void InspectorWindow::search()
{
    ProcessCriteria c;
    QString *targets[] = {&c.name, &c.address, &c.provided,   &c.command,
                          &c.pid,  &c.port,    &c.subscribed, &c.text};
    for (int i = 0; i < m_fields.size(); ++i)
        *targets[i] = m_fields.at(i)->text();
    m_filter->setCriteria(c);
    updateStatus();
}

void InspectorWindow::reset()
{
    for (QLineEdit *e : std::as_const(m_fields))
        e->clear();
    m_filter->setCriteria({});
    updateStatus();
}

void InspectorWindow::updateStatus()
{
    int lost = 0;
    for (int i = 0; i < m_model->rowCount(); ++i)
        lost += m_model->row(i).lost ? 1 : 0;
    const Client::Statistics s = m_client->statistics();
    static const char *states[] = {"not connected", "connecting", "connected"};
    m_status->setText(
        QStringLiteral("Control Server: %1 — %2 processes (%3 lost), %4 shown — this inspector: "
                       "%5 msgs in, %6 out, %7 dropped, %8 reconnects")
            .arg(QLatin1String(states[int(m_client->state())]))
            .arg(m_model->rowCount() - lost)
            .arg(lost)
            .arg(m_filter->rowCount())
            .arg(s.messagesIn)
            .arg(s.messagesOut)
            .arg(s.dropped)
            .arg(s.reconnects));
    // Never sent by a Control Server; said, not hidden (the table keeps the last good directory).
    if (const quint64 bad = m_reader->unreadable())
        m_status->setText(m_status->text() +
                          QStringLiteral(" — %1 unreadable directory/statistics messages (%2)")
                              .arg(bad)
                              .arg(m_reader->lastError()));
}

} // namespace dialog::inspector
