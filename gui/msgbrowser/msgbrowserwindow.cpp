#include "msgbrowserwindow.h"

#include "dialog/subscription.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

namespace dialog::msgbrowser {

namespace {
constexpr int PageSize = 200;
constexpr int RequestTimeoutMs = 10000;
} // namespace

MsgBrowserWindow::MsgBrowserWindow(const ClientOptions &options, QWidget *parent)
    : QMainWindow(parent), m_model(new LogModel(this))
{
    setWindowTitle(QStringLiteral("DIALOG message browser"));
    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 6, 6, 6);

    // The filters, in one row: they apply to the stored pages and to the live messages alike.
    auto *filters = new QHBoxLayout;
    auto field = [&](const QString &label, QWidget *w) {
        auto *box = new QVBoxLayout;
        box->setSpacing(1);
        auto *l = new QLabel(label);
        l->setStyleSheet(QStringLiteral("color: #555; font-size: 11px;"));
        box->addWidget(l);
        box->addWidget(w);
        filters->addLayout(box);
    };
    auto edit = [&](const QString &name, const QString &placeholder, int width) {
        auto *e = new QLineEdit;
        e->setObjectName(name);
        e->setPlaceholderText(placeholder);
        e->setMinimumWidth(width);
        connect(e, &QLineEdit::returnPressed, this, &MsgBrowserWindow::applyFilter);
        return e;
    };
    m_since = edit(QStringLiteral("since"), QStringLiteral("2h, ISO, ms"), 70);
    m_since->setText(QStringLiteral("1h"));
    m_until = edit(QStringLiteral("until"), QStringLiteral("now"), 70);
    m_severity = new QComboBox;
    m_severity->setObjectName(QStringLiteral("severity"));
    for (int s = 0; s <= int(Severity::Fatal); ++s)
        m_severity->addItem(severityName(Severity(s)));
    connect(m_severity, &QComboBox::activated, this, &MsgBrowserWindow::applyFilter);
    m_process = edit(QStringLiteral("process"), QStringLiteral("RO*"), 90);
    m_host = edit(QStringLiteral("host"), QStringLiteral("any"), 80);
    m_run = edit(QStringLiteral("run"), QStringLiteral("any"), 60);
    m_text = edit(QStringLiteral("text"), QStringLiteral("contains"), 140);
    field(QStringLiteral("Since"), m_since);
    field(QStringLiteral("Until"), m_until);
    field(QStringLiteral("Severity ≥"), m_severity);
    field(QStringLiteral("Process"), m_process);
    field(QStringLiteral("Host"), m_host);
    field(QStringLiteral("Run"), m_run);
    field(QStringLiteral("Text"), m_text);
    auto *apply = new QPushButton(QStringLiteral("Apply"));
    connect(apply, &QPushButton::clicked, this, &MsgBrowserWindow::applyFilter);
    auto *exportButton = new QPushButton(QStringLiteral("Export CSV…"));
    connect(exportButton, &QPushButton::clicked, this, &MsgBrowserWindow::exportSelection);
    filters->addWidget(apply, 0, Qt::AlignBottom);
    filters->addWidget(exportButton, 0, Qt::AlignBottom);
    filters->addStretch(1);
    layout->addLayout(filters);

    m_view = new QTableView;
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setColumnWidth(LogModel::Time, 170);
    m_view->setColumnWidth(LogModel::Severity, 70);
    m_view->setColumnWidth(LogModel::Process, 90);
    m_view->setColumnWidth(LogModel::Host, 80);
    m_view->setColumnWidth(LogModel::Category, 130);
    m_view->setColumnWidth(LogModel::Run, 60);
    m_detail = new QPlainTextEdit;
    m_detail->setReadOnly(true);
    m_detail->setPlaceholderText(QStringLiteral("Select a message to see every field."));
    auto *split = new QSplitter(Qt::Vertical);
    split->addWidget(m_view);
    split->addWidget(m_detail);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);
    setCentralWidget(central);
    m_status = new QLabel;
    statusBar()->addWidget(m_status, 1);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &MsgBrowserWindow::showDetails);
    // Scrolling to the bottom (the oldest row) fetches the next older page.
    connect(m_view->verticalScrollBar(), &QScrollBar::valueChanged, this, [this](int value) {
        if (value >= m_view->verticalScrollBar()->maximum() - 2)
            fetchOlder();
    });
    // Live rows arrive above: the view stays where the user is unless they were at the top.
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] { updateStatus(); });

    m_client = std::make_unique<Client>(options);
    m_client->subscribe(logservice::live(), this, [this](const Message &m) { onLive(m); });
    connect(m_client.get(), &Client::stateChanged, this, [this](Client::State s) {
        if (s == Client::State::Connected && m_model->rowCount() == 0 && !m_pending)
            applyFilter();
        updateStatus();
    });
    m_client->start();
    applyFilter();
    resize(1100, 620);
}

MsgBrowserWindow::~MsgBrowserWindow() = default;

QWidget *MsgBrowserWindow::filterField(const QString &name) const
{
    return findChild<QWidget *>(name);
}

bool MsgBrowserWindow::readFilter(LogQuery *q, QString *error) const
{
    *q = LogQuery();
    q->limit = PageSize;
    for (QLineEdit *e : {m_since, m_until}) {
        const QString t = e->text().trimmed();
        if (t.isEmpty())
            continue;
        const auto ms = parseLogTime(t);
        if (!ms) {
            *error = QStringLiteral("invalid %1 '%2' (e.g. 2h, 30m, 2026-11-23T18:00:00 or ms)")
                         .arg(e->objectName(), t);
            return false;
        }
        (e == m_since ? q->sinceMs : q->untilMs) = *ms;
    }
    q->minSeverity = Severity(m_severity->currentIndex());
    q->process = m_process->text().trimmed();
    q->host = m_host->text().trimmed();
    q->text = m_text->text().trimmed();
    const QString run = m_run->text().trimmed();
    if (!run.isEmpty()) {
        bool ok = false;
        const uint n = run.toUInt(&ok);
        if (!ok || n == 0) {
            *error = QStringLiteral("invalid run '%1' (a run number)").arg(run);
            return false;
        }
        q->run = n;
    }
    return true;
}

void MsgBrowserWindow::applyFilter()
{
    LogQuery q;
    QString error;
    ++m_generation;
    m_model->clear();
    m_detail->clear();
    m_more = false;
    m_pending = false;
    if (!readFilter(&q, &error)) {
        m_error = error;
        m_filter = LogFilter();
        updateStatus();
        Q_EMIT pageLoaded();
        return;
    }
    m_error.clear();
    m_filter = LogFilter(q);
    fetch(0);
}

void MsgBrowserWindow::fetchOlder()
{
    if (!m_more || m_pending || !m_error.isEmpty())
        return;
    fetch(m_model->oldestId());
}

void MsgBrowserWindow::fetch(qint64 beforeId)
{
    LogQuery q = m_filter.query();
    q.beforeId = beforeId;
    m_pending = true;
    updateStatus();
    const quint64 generation = m_generation;
    m_client->request(logservice::service(), QByteArray(1, logservice::QueryKind) + q.encode(),
                      RequestTimeoutMs, this, [this, generation](const Reply &reply) {
                          if (generation != m_generation)
                              return; // the filter changed meanwhile
                          m_pending = false;
                          if (!reply.isOk()) {
                              m_error = reply.errorString();
                              if (reply.error() == Status::Code::Timeout ||
                                  reply.error() == Status::Code::NotConnected)
                                  m_error = QStringLiteral("no logger answers (%1)").arg(reply.errorString());
                          } else {
                              LogPage page;
                              if (const Status read = LogPage::decode(reply.data(), &page); !read.isOk()) {
                                  m_error = read.message();
                              } else {
                                  m_error.clear();
                                  m_more = page.more;
                                  m_model->add(page.records);
                              }
                          }
                          updateStatus();
                          Q_EMIT pageLoaded();
                          // A view not yet full has no scroll bar to pull: fill it.
                          if (m_more && m_view->verticalScrollBar()->maximum() == 0)
                              fetchOlder();
                      });
}

void MsgBrowserWindow::onLive(const Message &message)
{
    QList<LogRecord> records;
    if (!decodeRecords(message.data(), &records).isOk() || !m_error.isEmpty())
        return;
    QList<LogRecord> shown;
    for (const LogRecord &r : records)
        if (m_filter.matches(r))
            shown.append(r);
    m_liveCount += shown.size();
    // Held at the top only if the user looks at the top; otherwise the rows they read stay put.
    QScrollBar *bar = m_view->verticalScrollBar();
    const bool atTop = bar->value() == bar->minimum();
    const int before = m_model->rowCount();
    const int value = bar->value();
    m_model->add(shown);
    if (!atTop)
        bar->setValue(value + (m_model->rowCount() - before));
}

void MsgBrowserWindow::showDetails()
{
    const QModelIndex current = m_view->currentIndex();
    m_detail->setPlainText(current.isValid() ? m_model->details(current.row()) : QString());
}

bool MsgBrowserWindow::exportCsv(const QString &path, QString *error) const
{
    QList<int> rows;
    for (const QModelIndex &i : m_view->selectionModel()->selectedRows())
        rows.append(i.row());
    std::sort(rows.begin(), rows.end());
    if (rows.isEmpty())
        for (int r = 0; r < m_model->rowCount(); ++r)
            rows.append(r);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        *error = QStringLiteral("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    const QByteArray csv = m_model->toCsv(rows);
    if (f.write(csv) != csv.size() || !f.flush()) {
        *error = QStringLiteral("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

void MsgBrowserWindow::exportSelection()
{
    const QString path =
        QFileDialog::getSaveFileName(this, QStringLiteral("Export messages"), QStringLiteral("messages.csv"),
                                     QStringLiteral("CSV files (*.csv)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportCsv(path, &error))
        QMessageBox::warning(this, QStringLiteral("Export messages"), error);
}

QString MsgBrowserWindow::statusText() const
{
    return m_status->text();
}

void MsgBrowserWindow::updateStatus()
{
    QString s;
    if (!m_error.isEmpty())
        s = QStringLiteral("⚠ ") + m_error;
    else if (m_client && m_client->state() != Client::State::Connected)
        s = QStringLiteral("connecting to the Control Server…");
    else
        s = QStringLiteral("%1 messages%2%3 · live")
                .arg(m_model->rowCount())
                .arg(m_more ? QStringLiteral(", older ones on scrolling down") : QString(),
                     m_pending ? QStringLiteral(" · loading…") : QString());
    m_status->setText(s);
}

} // namespace dialog::msgbrowser
