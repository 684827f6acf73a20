#include "runcontrolwindow.h"
#include "alarmbanner.h"
#include "alarmsummary.h"
#include "lastcrash.h"

#include "messagerates.h"
#include "runsview.h"
#include "treeview.h"

#include "dialog/directory.h"
#include "dialog/rc/protocol.h"

#include <QComboBox>
#include <QDateTime>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace dialog::runcontrol {

using namespace dialog::rc;

namespace {

enum SlaveColumn
{
    ColProcess,
    ColKind,
    ColState,
    ColRate,
    ColMBps,
    ColEvents,
    ColDetails,
    SlaveColumns
};
enum MessageColumn
{
    ColTime,
    ColFrom,
    ColSeverity,
    ColText,
    MessageColumns
};
constexpr int kMaxMessages = 5000;

QString formatDuration(qint64 ms)
{
    const qint64 s = ms / 1000;
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600, 2, 10, QLatin1Char('0'))
        .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}

/// The header's event rate: "1,234 events/s  (5.6 MB/s)".
QString rateText(qint64 rate, double mbps)
{
    return QStringLiteral("%1 events/s  (%2 MB/s)").arg(formatCount(rate)).arg(mbps, 0, 'f', 1);
}

QTableWidgetItem *item(const QString &text)
{
    auto *i = new QTableWidgetItem(text);
    i->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return i;
}

} // namespace

QString formatCount(qint64 n)
{
    return QLocale(QLocale::English).toString(n);
}

QColor stateColor(std::optional<State> state, bool busy)
{
    if (busy)
        return QColor(0xff, 0xd5, 0x80); // amber: a transition is in progress
    if (!state)
        return QColor(0xbd, 0xbd, 0xbd); // absent / unknown
    switch (*state) {
    case State::Running:
        return QColor(0x81, 0xc7, 0x84);
    case State::Paused:
        return QColor(0xff, 0xf1, 0x76);
    case State::Configured:
        return QColor(0x90, 0xca, 0xf9);
    case State::Error:
        return QColor(0xef, 0x53, 0x50);
    case State::Initial:
        break;
    }
    return QColor(0xe0, 0xe0, 0xe0);
}

RunControlWindow::RunControlWindow(const ClientOptions &options, const QString &master, bool wantControl,
                                   QWidget *parent)
    : QMainWindow(parent), m_master(master), m_wantControl(wantControl)
{
    ClientOptions o = options;
    o.exitOnRefusal = false; // a refused control lock means monitoring mode, not exit
    m_client = std::make_unique<Client>(o);
    m_confirm = [this](const QString &question) {
        return QMessageBox::question(this, QStringLiteral("Run control"), question,
                                     QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
    };
    setWindowTitle(QStringLiteral("DIALOG run control — %1").arg(master));

    auto *central = new QWidget;
    auto *layout = new QVBoxLayout(central);
    layout->addWidget(buildHeader());
    // Below the header, above the buttons: the IS server's alarm banner (watchAlarms()) and the
    // alarm server's line, which shows itself when ALARM.Table is published.
    m_alarmRow = new QHBoxLayout;
    m_alarmSummary = new AlarmSummary(m_client.get());
    m_alarmRow->addWidget(m_alarmSummary, 1);
    layout->addLayout(m_alarmRow);
    layout->addWidget(buildButtons());
    m_crashes = new CrashWatch(m_client.get(), 3000, this);
    m_crashLine = new LastCrashLine(m_crashes, [this](const QString &p) { return m_rows.contains(p) || p == m_master; });
    layout->addWidget(m_crashLine);
    connect(m_crashes, &CrashWatch::crashed, this, [this](const QString &p) { markCrash(p); });
    auto *split = new QSplitter(Qt::Vertical);
    m_slaves = new QTableWidget(0, SlaveColumns);
    m_slaves->setHorizontalHeaderLabels({QStringLiteral("Process"), QStringLiteral("Kind"),
                                         QStringLiteral("State"), QStringLiteral("Events/s"),
                                         QStringLiteral("MB/s"), QStringLiteral("Events"),
                                         QStringLiteral("Details")});
    m_slaves->horizontalHeader()->setSectionResizeMode(ColDetails, QHeaderView::Stretch);
    m_slaves->verticalHeader()->hide();
    m_slaves->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_slaves->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tree = new TreeView(m_client.get(), master);
    m_tree->hide(); // until the master's tree has a segment
    connect(m_tree, &TreeView::totalsChanged, this, [this](qint64 rate, double mbps) {
        // With segments, the readouts below them count too (the slave table has the master's own).
        if (m_tree->hasSegments())
            m_rateLabel->setText(rateText(rate, mbps));
    });
    split->addWidget(m_tree);
    split->addWidget(m_slaves);
    split->addWidget(buildMessages());
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 2);
    layout->addWidget(split, 1);
    m_controlPage = central;
    setCentralWidget(central);
    resize(980, 720);

    m_client->subscribe(stateService(master), this, [this](const Message &m) { onMasterState(m.data()); });
    m_client->subscribe(logService(master), this, [this](const Message &m) { onLog(m.data()); });
    // The last hour's messages of every process, when a logger runs, above what arrives live.
    fetchRecentMessages(m_client.get(), this, 100, Severity::Info, [this](const QList<LogRecord> &records) {
        for (auto it = records.crbegin(); it != records.crend(); ++it)
            addMessage(it->timeMs, it->process, severityName(it->severity), it->text, true);
    });
    connect(m_client.get(), &Client::errorOccurred, this, [this](Client::Error e) {
        if (e == Client::Error::ServiceRefused && m_client->service(controlLockService())) {
            m_client->unpublish(controlLockService());
            setMode(Mode::Monitoring, QStringLiteral("another run-control GUI is in control"));
        }
    });
    connect(m_client.get(), &Client::stateChanged, this, [this](Client::State s) {
        statusBar()->showMessage(s == Client::State::Connected
                                     ? QStringLiteral("connected to the Control Server")
                                     : QStringLiteral("not connected to the Control Server"));
        updateButtons();
    });
    // Control is ours once the Control Server lists us as the provider of the lock service.
    m_client->subscribe(directoryServiceName(), this,
                        [this, pages = std::make_shared<DirectoryAssembler>()](const Message &m) {
                            std::optional<DirectorySnapshot> directory; // a large directory comes in pages
                            pages->add(m.data(), &directory);
                            if (!m_client->service(controlLockService()) || m_mode == Mode::Control)
                                return;
                            const ProcessEntry *self =
                                directory ? directory->process(m_client->name()) : nullptr;
                            if (self && self->services.contains(controlLockService()))
                                setMode(Mode::Control, QString());
                        });
    auto *tick = new QTimer(this);
    connect(tick, &QTimer::timeout, this, &RunControlWindow::updateDuration);
    tick->start(1000);
    setMode(Mode::Monitoring,
            wantControl ? QStringLiteral("acquiring control…") : QStringLiteral("read-only"));
    if (wantControl)
        takeControl();
    m_client->start();
    updateButtons();
}

RunControlWindow::~RunControlWindow()
{
    delete m_alarmBanner; // its IS subscription goes through m_client, destroyed before the child widgets
}

QWidget *RunControlWindow::buildHeader()
{
    auto *frame = new QFrame;
    frame->setFrameShape(QFrame::StyledPanel);
    auto *h = new QHBoxLayout(frame);
    m_stateLabel = new QLabel(QStringLiteral("—"));
    QFont big = m_stateLabel->font();
    big.setPointSize(26);
    big.setBold(true);
    m_stateLabel->setFont(big);
    m_stateLabel->setAlignment(Qt::AlignCenter);
    m_stateLabel->setMinimumSize(300, 90);
    m_stateLabel->setAutoFillBackground(true);
    m_stateLabel->setFrameShape(QFrame::Box);
    h->addWidget(m_stateLabel);

    auto *grid = new QGridLayout;
    QFont mid = font();
    mid.setPointSize(mid.pointSize() + 3);
    auto addRow = [&](int row, const QString &title, QLabel *&value) {
        auto *t = new QLabel(title);
        value = new QLabel(QStringLiteral("—"));
        value->setFont(mid);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        grid->addWidget(t, row, 0);
        grid->addWidget(value, row, 1);
    };
    addRow(0, QStringLiteral("Run number"), m_runLabel);
    addRow(1, QStringLiteral("Run duration"), m_durationLabel);
    addRow(2, QStringLiteral("Event rate"), m_rateLabel);
    addRow(3, QStringLiteral("Mode"), m_modeLabel);
    m_takeControl = new QPushButton(QStringLiteral("Take control"));
    m_takeControl->setToolTip(
        QStringLiteral("Only one run-control GUI may be in control in the whole system"));
    connect(m_takeControl, &QPushButton::clicked, this, &RunControlWindow::takeControl);
    grid->addWidget(m_takeControl, 3, 2);
    grid->setColumnStretch(1, 1);
    auto *right = new QVBoxLayout;
    right->addLayout(grid);
    m_detailLabel = new QLabel;
    m_detailLabel->setWordWrap(true);
    m_detailLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    right->addWidget(m_detailLabel);
    h->addLayout(right, 1);
    return frame;
}

QWidget *RunControlWindow::buildButtons()
{
    auto *w = new QWidget;
    auto *h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    const QList<QPair<Transition, QString>> buttons{{Transition::Configure, QStringLiteral("Configure")},
                                                    {Transition::Start, QStringLiteral("Start run")},
                                                    {Transition::Pause, QStringLiteral("Pause")},
                                                    {Transition::Resume, QStringLiteral("Resume")},
                                                    {Transition::Stop, QStringLiteral("Stop run")},
                                                    {Transition::Unconfigure, QStringLiteral("Unconfigure")},
                                                    {Transition::Reset, QStringLiteral("Reset")}};
    for (const auto &[t, label] : buttons) {
        auto *b = new QPushButton(label);
        b->setMinimumHeight(42);
        QFont f = b->font();
        f.setPointSize(f.pointSize() + 2);
        b->setFont(f);
        b->setObjectName(transitionName(t));
        const Transition tr = t;
        connect(b, &QPushButton::clicked, this, [this, tr] { requestTransition(tr); });
        h->addWidget(b);
        m_buttons.insert(int(t), b);
    }
    return w;
}

QWidget *RunControlWindow::buildMessages()
{
    auto *w = new QWidget;
    auto *v = new QVBoxLayout(w);
    v->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(QStringLiteral("Messages")));
    m_severity = new QComboBox;
    m_severity->addItems({QStringLiteral("All severities"), QStringLiteral("Warnings and errors"),
                          QStringLiteral("Errors only")});
    m_filter = new QLineEdit;
    m_filter->setPlaceholderText(QStringLiteral("Filter by process or text"));
    m_filter->setClearButtonEnabled(true);
    bar->addWidget(m_severity);
    bar->addWidget(m_filter, 1);
    m_rates = new MessageRateLabel(m_client.get());
    bar->addWidget(m_rates);
    v->addLayout(bar);
    m_messages = new QTableWidget(0, MessageColumns);
    m_messages->setHorizontalHeaderLabels({QStringLiteral("Time"), QStringLiteral("Process"),
                                           QStringLiteral("Severity"), QStringLiteral("Message")});
    m_messages->horizontalHeader()->setSectionResizeMode(ColText, QHeaderView::Stretch);
    m_messages->verticalHeader()->hide();
    m_messages->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_messages->setSelectionBehavior(QAbstractItemView::SelectRows);
    v->addWidget(m_messages);
    connect(m_filter, &QLineEdit::textChanged, this, &RunControlWindow::applyFilter);
    connect(m_severity, &QComboBox::currentIndexChanged, this, &RunControlWindow::applyFilter);
    return w;
}

void RunControlWindow::takeControl()
{
    m_wantControl = true;
    if (!m_client->service(controlLockService()))
        m_client->publish(controlLockService())->update(m_client->name().toUtf8());
    setMode(Mode::Monitoring, QStringLiteral("acquiring control…"));
}

void RunControlWindow::setMode(Mode m, const QString &why)
{
    const bool changed = m != m_mode;
    m_mode = m;
    m_modeLabel->setText(m == Mode::Control ? QStringLiteral("CONTROL")
                                            : QStringLiteral("Monitoring (%1)").arg(why));
    m_takeControl->setVisible(m == Mode::Monitoring && why != QLatin1String("acquiring control…"));
    if (!why.isEmpty() && m == Mode::Monitoring && why != QLatin1String("acquiring control…"))
        statusBar()->showMessage(QStringLiteral("monitoring mode: %1").arg(why));
    if (m_tree)
        m_tree->setControl(m == Mode::Control);
    updateButtons();
    if (changed)
        Q_EMIT modeChanged(m);
}

bool RunControlWindow::requestTransition(Transition t)
{
    if (m_mode != Mode::Control || m_pending)
        return false;
    const quint32 run = m_state ? m_state->runNumber : 0;
    if (t == Transition::Stop && !m_confirm(QStringLiteral("Stop run %1?").arg(run)))
        return false;
    if (t == Transition::Reset && m_state && m_state->state == State::Running &&
        !m_confirm(QStringLiteral("Reset aborts run %1 without a clean stop. Reset?").arg(run)))
        return false;
    m_pending = true;
    updateButtons();
    statusBar()->showMessage(QStringLiteral("%1…").arg(transitionActivity(t)));
    TransitionRequest req;
    req.transition = t;
    // The master answers when every slave is done (or failed); allow for its phases and time-outs.
    m_client->request(stateService(m_master), req.toJson(), 120000, this, [this, t](const Reply &r) {
        m_pending = false;
        if (r.isOk()) {
            statusBar()->showMessage(QStringLiteral("%1 done").arg(transitionName(t)), 5000);
        } else {
            const QString why = r.errorString().isEmpty() ? QStringLiteral("no answer from %1").arg(m_master)
                                                          : r.errorString();
            statusBar()->showMessage(QStringLiteral("%1 failed: %2").arg(transitionName(t), why));
            addMessage(nowMs(), m_client->name(), QStringLiteral("error"),
                       QStringLiteral("%1 failed: %2").arg(transitionName(t), why));
        }
        updateButtons();
    });
    return true;
}

void RunControlWindow::onMasterState(const QByteArray &data)
{
    StateRecord record;
    const Status parsed = StateRecord::fromJson(data, &record);
    m_state.reset();
    if (!parsed.isOk()) {
        statusBar()->showMessage(QStringLiteral("unreadable state from %1: %2").arg(m_master, parsed.message()));
        updateButtons();
        return;
    }
    m_state = std::move(record);
    const StateRecord &s = *m_state;
    m_stateLabel->setText(s.busy && s.transition ? transitionActivity(*s.transition) + QStringLiteral("…")
                                                 : stateName(s.state).toUpper());
    QPalette pal = m_stateLabel->palette();
    pal.setColor(QPalette::Window, stateColor(s.state, s.busy));
    pal.setColor(QPalette::WindowText, s.state == State::Error && !s.busy ? Qt::white : Qt::black);
    m_stateLabel->setPalette(pal);
    m_runLabel->setText(s.runNumber > 0 ? QStringLiteral("%1  (%2)").arg(s.runNumber).arg(s.runType)
                                        : QStringLiteral("—"));
    QString detail = QStringLiteral("Partition <b>%1</b>, master %2")
                         .arg(s.partition.toHtmlEscaped(), m_master.toHtmlEscaped());
    if (!s.error.isEmpty())
        detail +=
            QStringLiteral("<br><span style='color:#c62828'><b>%1</b></span>").arg(s.error.toHtmlEscaped());
    if (s.recoveringTo)
        detail += QStringLiteral("<br>waiting for the slaves to come back, then back to %1")
                      .arg(stateName(*s.recoveringTo));
    m_detailLabel->setText(detail);
    m_tree->setState(s);
    m_tree->setVisible(m_tree->hasSegments());

    for (const SlaveRecord &slave : s.slaves) {
        ensureSlaveRow(slave.name, slave.kind);
        const int row = m_rows.value(slave.name);
        QString st = slave.present ? stateName(slave.state)
                                   : (slave.lost ? QStringLiteral("LOST") : QStringLiteral("absent"));
        if (slave.busy && slave.transition)
            st = transitionActivity(*slave.transition) + QStringLiteral("…");
        QTableWidgetItem *it = m_slaves->item(row, ColState);
        it->setText(st);
        const QColor c = slave.present
                             ? stateColor(slave.state, slave.busy)
                             : stateColor(slave.lost ? std::optional(State::Error) : std::nullopt, false);
        it->setBackground(c);
        const bool culprit = s.culprits.contains(slave.name);
        QFont f = it->font();
        f.setBold(culprit);
        it->setFont(f);
        it->setToolTip(culprit ? QStringLiteral("culprit of the run's error. ") + slave.error : slave.error);
    }
    updateButtons();
    updateDuration();
}

void RunControlWindow::ensureSlaveRow(const QString &name, const QString &kind)
{
    if (m_rows.contains(name))
        return;
    const int row = m_slaves->rowCount();
    m_slaves->insertRow(row);
    m_rows.insert(name, row);
    m_slaves->setItem(row, ColProcess, item(name));
    m_slaves->setItem(row, ColKind, item(kind));
    for (int c = ColState; c < SlaveColumns; ++c)
        m_slaves->setItem(row, c, item(QString()));
    for (int c : {ColRate, ColMBps, ColEvents})
        m_slaves->item(row, c)->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_client->subscribe(statusService(name), this,
                        [this, name](const Message &m) { onStatus(name, m.data()); });
    m_client->subscribe(logService(name), this, [this](const Message &m) { onLog(m.data()); });
    markCrash(name);
}

void RunControlWindow::markCrash(const QString &name)
{
    const auto crash = m_crashes->lastCrash(name);
    if (!crash || !m_rows.contains(name))
        return;
    QTableWidgetItem *it = m_slaves->item(m_rows.value(name), ColProcess);
    it->setToolTip(QStringLiteral("last crash: ") + CrashWatch::describe(*crash));
    it->setForeground(QColor(0x8a, 0x1c, 0x12));
}

void RunControlWindow::onStatus(const QString &process, const QByteArray &data)
{
    const QJsonObject s = QJsonDocument::fromJson(data).object();
    m_status.insert(process, s);
    const int row = m_rows.value(process, -1);
    if (row < 0)
        return;
    if (s.value(QStringLiteral("kind")).toString() == QLatin1String("readout")) {
        m_slaves->item(row, ColRate)->setText(formatCount(s.value(QStringLiteral("rate_hz")).toInteger()));
        m_slaves->item(row, ColMBps)
            ->setText(QString::number(s.value(QStringLiteral("mb_per_s")).toDouble(), 'f', 1));
        m_slaves->item(row, ColEvents)->setText(formatCount(s.value(QStringLiteral("events")).toInteger()));
        m_slaves->item(row, ColDetails)
            ->setText(QStringLiteral("%1 · queue %2/%3 · %4 threads · %5 errors")
                          .arg(s.value(QStringLiteral("running")).toBool()
                                   ? (s.value(QStringLiteral("in_spill")).toBool()
                                          ? QStringLiteral("spill")
                                          : QStringLiteral("between spills"))
                                   : QStringLiteral("idle"))
                          .arg(s.value(QStringLiteral("input_queue")).toInt())
                          .arg(s.value(QStringLiteral("queue_capacity")).toInt())
                          .arg(s.value(QStringLiteral("threads")).toInt())
                          .arg(s.value(QStringLiteral("errors")).toInteger()));
    } else {
        for (int c : {ColRate, ColMBps, ColEvents})
            m_slaves->item(row, c)->setText(QStringLiteral("—"));
        m_slaves->item(row, ColDetails)
            ->setText(QStringLiteral("%1 regs %2 · trigger %3 · %4 upsets · %5 °C")
                          .arg(s.value(QStringLiteral("registers")).toInt())
                          .arg(s.value(QStringLiteral("configured")).toBool() ? QStringLiteral("loaded")
                                                                              : QStringLiteral("not loaded"))
                          .arg(s.value(QStringLiteral("trigger_enabled")).toBool() ? QStringLiteral("on")
                                                                                   : QStringLiteral("off"))
                          .arg(s.value(QStringLiteral("upsets")).toInteger())
                          .arg(s.value(QStringLiteral("temperature_c")).toDouble(), 0, 'f', 1));
    }
    qint64 rate = 0;
    double mbps = 0;
    for (const QJsonObject &o : std::as_const(m_status)) {
        rate += o.value(QStringLiteral("rate_hz")).toInteger();
        mbps += o.value(QStringLiteral("mb_per_s")).toDouble();
    }
    if (!m_tree->hasSegments()) // else the tree's totals (every readout of the tree)
        m_rateLabel->setText(rateText(rate, mbps));
}

void RunControlWindow::onLog(const QByteArray &data)
{
    LogMessage r;
    if (!LogMessage::fromJson(data, &r).isOk())
        return;
    addMessage(r.timeMs, r.process, severityName(r.severity), r.text);
}

void RunControlWindow::addMessage(qint64 timeMs, const QString &process, const QString &severity,
                                  const QString &text, bool atTop)
{
    if (m_messages->rowCount() >= kMaxMessages) {
        if (atTop)
            return;
        m_messages->removeRow(0);
    }
    const int row = atTop ? 0 : m_messages->rowCount();
    m_messages->insertRow(row);
    m_messages->setItem(
        row, ColTime, item(QDateTime::fromMSecsSinceEpoch(timeMs).toString(QStringLiteral("HH:mm:ss.zzz"))));
    m_messages->setItem(row, ColFrom, item(process));
    auto *sev = item(severity);
    if (severity == QLatin1String("error"))
        sev->setBackground(stateColor(State::Error, false));
    else if (severity == QLatin1String("warning"))
        sev->setBackground(stateColor(State::Paused, false));
    m_messages->setItem(row, ColSeverity, sev);
    m_messages->setItem(row, ColText, item(text));
    applyFilter();
    if (!atTop && !m_messages->isRowHidden(row))
        m_messages->scrollToBottom();
}

void RunControlWindow::applyFilter()
{
    const QString needle = m_filter->text().trimmed();
    const int level = m_severity->currentIndex(); // 0 all, 1 warnings+errors, 2 errors
    for (int r = 0; r < m_messages->rowCount(); ++r) {
        const QString sev = m_messages->item(r, ColSeverity)->text();
        bool show = level == 0 || (level == 1 && sev != QLatin1String("info")) ||
                    (level == 2 && sev == QLatin1String("error"));
        if (show && !needle.isEmpty())
            show = m_messages->item(r, ColFrom)->text().contains(needle, Qt::CaseInsensitive) ||
                   m_messages->item(r, ColText)->text().contains(needle, Qt::CaseInsensitive);
        m_messages->setRowHidden(r, !show);
    }
}

void RunControlWindow::updateButtons()
{
    const bool known = m_state.has_value();
    const State state = known ? m_state->state : State::Initial;
    const bool usable = m_mode == Mode::Control && !m_pending && known && !m_state->busy &&
                        m_client->state() == Client::State::Connected;
    const QList<Transition> legal = known ? legalTransitions(state) : QList<Transition>{};
    for (auto it = m_buttons.begin(); it != m_buttons.end(); ++it) {
        const Transition t = Transition(it.key());
        const bool ok = usable && legal.contains(t) && !(t == Transition::Reset && state == State::Initial);
        it.value()->setEnabled(ok);
        it.value()->setToolTip(m_mode != Mode::Control ? QStringLiteral("monitoring mode: read-only")
                               : !known                ? QStringLiteral("no state from %1 yet").arg(m_master)
                               : ok                    ? QString()
                                    : QStringLiteral("not possible in state %1").arg(stateName(state)));
    }
}

void RunControlWindow::updateDuration()
{
    if (!m_state || m_state->runNumber == 0) {
        m_durationLabel->setText(QStringLiteral("—"));
        return;
    }
    qint64 active = m_state->runActiveMs;
    if (m_state->state == State::Running)
        active += qMax<qint64>(0, nowMs() - m_state->timeMs);
    m_durationLabel->setText(formatDuration(active));
}

void RunControlWindow::watchAlarms(const QString &isServer)
{
    if (m_alarmBanner)
        return;
    m_alarmBanner = new AlarmBanner(m_client.get(), isServer);
    m_alarmRow->insertWidget(0, m_alarmBanner, 2);
}

void RunControlWindow::showRuns(const QString &database)
{
    if (m_runsView)
        return;
    auto *tabs = new QTabWidget;
    tabs->addTab(takeCentralWidget(), QStringLiteral("Run control"));
    m_runsView = new RunsView(m_client.get(), database);
    tabs->addTab(m_runsView, QStringLiteral("Runs"));
    // The registry is read when the tab is opened, then every 5 s while it is shown.
    connect(tabs, &QTabWidget::currentChanged, m_runsView, [this, tabs](int index) {
        if (tabs->widget(index) == m_runsView)
            m_runsView->refresh();
    });
    setCentralWidget(tabs);
}

} // namespace dialog::runcontrol
