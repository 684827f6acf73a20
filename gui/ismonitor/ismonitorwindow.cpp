#include "ismonitorwindow.h"

#include "dialog/is/codec.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

namespace dialog::ismonitor {

namespace {
bool isNumeric(const QString &typeName)
{
    static const QStringList numeric{QStringLiteral("bool"),  QStringLiteral("s8"),    QStringLiteral("u8"),
                                     QStringLiteral("s16"),   QStringLiteral("u16"),   QStringLiteral("s32"),
                                     QStringLiteral("u32"),   QStringLiteral("s64"),   QStringLiteral("u64"),
                                     QStringLiteral("float"), QStringLiteral("double")};
    return numeric.contains(typeName);
}
} // namespace

IsMonitorWindow::IsMonitorWindow(const ClientOptions &options, QWidget *parent)
    : QMainWindow(parent), m_session(new MonitorSession(options, this)), m_objects(new ObjectModel(this)),
      m_proxy(new QSortFilterProxyModel(this)), m_attributes(new AttributeModel(this))
{
    setWindowTitle(QStringLiteral("IS Monitor — %1").arg(options.controlServers.join(QLatin1Char(','))));
    m_proxy->setSourceModel(m_objects);
    m_proxy->setSortRole(ObjectModel::SortRole);
    m_proxy->setDynamicSortFilter(true);

    auto *split = new QSplitter(Qt::Horizontal);
    split->addWidget(buildServers());
    split->addWidget(buildObjects());
    split->addWidget(buildValue());
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 4);
    split->setSizes({150, 420, 560});
    setCentralWidget(split);
    m_status = new QLabel;
    m_counts = new QLabel;
    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_counts);

    // Changes are applied at most ten times a second, whatever the event rate.
    m_refresh = new QTimer(this);
    m_refresh->setInterval(100);
    m_refresh->setSingleShot(true);
    connect(m_refresh, &QTimer::timeout, this, &IsMonitorWindow::refresh);
    connect(m_session, &MonitorSession::serversChanged, this, &IsMonitorWindow::showServers);
    connect(m_session, &MonitorSession::objectsCleared, m_objects, &ObjectModel::clear);
    connect(m_session, &MonitorSession::objectsListed, this, &IsMonitorWindow::onListed);
    connect(m_session, &MonitorSession::objectChanged, this, [this](const is::Event &e) {
        m_objects->add(e);
        scheduleRefresh();
    });
    connect(m_session, &MonitorSession::valueChanged, this, [this](const is::Object &o, is::Time time) {
        m_pendingValue = o;
        m_valueTime = time;
        m_valuePending = true;
        scheduleRefresh();
    });
    connect(m_session, &MonitorSession::valueRemoved, this, &IsMonitorWindow::onValueRemoved);
    connect(m_session, &MonitorSession::staleListed, this, [this](const QList<is::Entry> &stale) {
        refresh(); // events received before the answer first: they may make an object fresh
        m_objects->setStale(stale);
        showSelectedStaleness();
    });
    connect(m_session, &MonitorSession::typesChanged, this, &IsMonitorWindow::updateTypes);
    connect(m_session, &MonitorSession::statusChanged, this, &IsMonitorWindow::setStatus);
    connect(m_session, &MonitorSession::removeFinished, this, &IsMonitorWindow::removeFinished);
    auto *statusTimer = new QTimer(this);
    connect(statusTimer, &QTimer::timeout, this, &IsMonitorWindow::updateStatus);
    statusTimer->start(1000);
    resize(1280, 760);
}

IsMonitorWindow::~IsMonitorWindow() = default;

QWidget *IsMonitorWindow::buildServers()
{
    auto *box = new QGroupBox(QStringLiteral("IS servers"));
    auto *l = new QVBoxLayout(box);
    m_serverList = new QListWidget;
    m_serverList->setObjectName(QStringLiteral("servers"));
    l->addWidget(m_serverList);
    connect(m_serverList, &QListWidget::currentTextChanged, this, [this](const QString &s) {
        if (!s.isEmpty() && s != m_server)
            selectServer(s);
    });
    box->setMinimumWidth(120);
    return box;
}

QWidget *IsMonitorWindow::buildObjects()
{
    auto *box = new QGroupBox(QStringLiteral("Objects"));
    auto *l = new QVBoxLayout(box);
    auto *filter = new QHBoxLayout;
    m_regex = new QLineEdit;
    m_regex->setObjectName(QStringLiteral("regex"));
    m_regex->setPlaceholderText(QStringLiteral("name regex, e.g. RO.*"));
    m_regex->setClearButtonEnabled(true);
    m_type = new QComboBox;
    m_type->setObjectName(QStringLiteral("type"));
    m_type->addItem(QStringLiteral("(any type)"));
    m_type->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_subtypes = new QCheckBox(QStringLiteral("subtypes"));
    m_subtypes->setObjectName(QStringLiteral("subtypes"));
    m_subtypes->setChecked(true);
    m_subtypes->setToolTip(QStringLiteral("Objects of the type and of every type derived from it"));
    auto *apply = new QPushButton(QStringLiteral("Apply"));
    apply->setObjectName(QStringLiteral("apply"));
    connect(m_regex, &QLineEdit::returnPressed, this, &IsMonitorWindow::applyFilter);
    connect(apply, &QPushButton::clicked, this, &IsMonitorWindow::applyFilter);
    connect(m_type, &QComboBox::activated, this, &IsMonitorWindow::applyFilter);
    connect(m_subtypes, &QCheckBox::toggled, this, &IsMonitorWindow::applyFilter);
    filter->addWidget(m_regex, 1);
    filter->addWidget(m_type);
    filter->addWidget(m_subtypes);
    filter->addWidget(apply);
    l->addLayout(filter);

    m_objectView = new QTableView;
    m_objectView->setObjectName(QStringLiteral("objects"));
    m_objectView->setModel(m_proxy);
    m_objectView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_objectView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_objectView->setSortingEnabled(true);
    m_objectView->sortByColumn(ObjectModel::Name, Qt::AscendingOrder);
    m_objectView->horizontalHeader()->setStretchLastSection(true);
    m_objectView->verticalHeader()->hide();
    m_objectView->verticalHeader()->setDefaultSectionSize(20);
    m_objectView->setAlternatingRowColors(true);
    const int widths[] = {80, 110, 160}; // room for "12:00:00.000 · stale 12 s"
    // The update count (last, stretched) stays in view beside them at the default window size.
    m_objectView->horizontalHeader()->setMinimumSectionSize(48);
    for (int c = 0; c < 3; ++c)
        m_objectView->setColumnWidth(c, widths[c]);
    m_regex->setToolTip(QStringLiteral("POSIX regular expression that must match the whole object name "
                                       "(without the server prefix); empty: every object"));
    m_objectView->setContextMenuPolicy(Qt::CustomContextMenu);
    l->addWidget(m_objectView);
    connect(m_objectView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &cur) {
                if (!cur.isValid())
                    return;
                const QString object = m_proxy->index(cur.row(), ObjectModel::Name).data().toString();
                const QString name = m_server + QLatin1Char('.') + object;
                if (name != m_selected)
                    showObject(name);
            });
    connect(m_objectView, &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        if (m_selected.isEmpty())
            return;
        QMenu menu;
        menu.addAction(QStringLiteral("Copy name"), this, &IsMonitorWindow::copyName);
        menu.addAction(QStringLiteral("Copy value"), this, &IsMonitorWindow::copyValue);
        menu.addAction(QStringLiteral("Open in OMD"), this, &IsMonitorWindow::openInOmd);
        menu.addSeparator();
        menu.addAction(QStringLiteral("Remove…"), this, [this] { removeSelected(); });
        menu.exec(m_objectView->viewport()->mapToGlobal(pos));
    });
    return box;
}

QWidget *IsMonitorWindow::buildValue()
{
    auto *box = new QGroupBox(QStringLiteral("Value"));
    auto *l = new QVBoxLayout(box);
    m_objectTitle = new QLabel(QStringLiteral("Select an object."));
    m_objectTitle->setObjectName(QStringLiteral("objectTitle"));
    m_objectTitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_objectTitle->setWordWrap(true);
    l->addWidget(m_objectTitle);
    m_staleLabel = new QLabel;
    m_staleLabel->setObjectName(QStringLiteral("staleLabel"));
    m_staleLabel->setWordWrap(true);
    m_staleLabel->setStyleSheet(QStringLiteral(
        "QLabel { background: #e4e4e4; color: #505050; border: 1px solid #b0b0b0; padding: 3px; }"));
    m_staleLabel->hide();
    l->addWidget(m_staleLabel);
    auto *buttons = new QHBoxLayout;
    const QList<QPair<QString, QString>> names{{QStringLiteral("Copy name"), QStringLiteral("copyName")},
                                               {QStringLiteral("Copy value"), QStringLiteral("copyValue")},
                                               {QStringLiteral("Open in OMD"), QStringLiteral("openInOmd")},
                                               {QStringLiteral("Remove…"), QStringLiteral("remove")}};
    QList<QPushButton *> b;
    for (const auto &n : names) {
        b << new QPushButton(n.first);
        b.last()->setObjectName(n.second);
        buttons->addWidget(b.last());
    }
    buttons->addStretch();
    connect(b[0], &QPushButton::clicked, this, &IsMonitorWindow::copyName);
    connect(b[1], &QPushButton::clicked, this, &IsMonitorWindow::copyValue);
    connect(b[2], &QPushButton::clicked, this, &IsMonitorWindow::openInOmd);
    connect(b[3], &QPushButton::clicked, this, [this] { removeSelected(); });
    l->addLayout(buttons);

    auto *split = new QSplitter(Qt::Vertical);
    m_attributeView = new QTreeView;
    m_attributeView->setObjectName(QStringLiteral("attributes"));
    m_attributeView->setModel(m_attributes);
    m_attributeView->setAlternatingRowColors(true);
    m_attributeView->setUniformRowHeights(true);
    m_attributeView->header()->setStretchLastSection(true);
    const int widths[] = {150, 90, 190};
    for (int c = 0; c < 3; ++c)
        m_attributeView->setColumnWidth(c, widths[c]);
    split->addWidget(m_attributeView);
    m_histogram = new HistogramView;
    m_histogram->setObjectName(QStringLiteral("histogram"));
    m_histogram->hide();
    split->addWidget(m_histogram);
    m_historyPlot = new HistoryPlot;
    m_historyPlot->setObjectName(QStringLiteral("historyPlot"));
    m_historyPlot->hide();
    split->addWidget(m_historyPlot);
    split->setSizes({380, 260, 180});
    connect(m_session, &MonitorSession::historyRead, this,
            [this](const QString &object, const is::HistorySeries &series, const QString &error) {
                if (object != m_selected || series.attribute != m_historyPlot->attribute())
                    return;
                m_historyPlot->setHistory(object, series.attribute, series.points);
                if (!error.isEmpty())
                    setStatus(error);
            });
    l->addWidget(split);
    connect(m_attributes, &QAbstractItemModel::modelReset, this, [this] {
        // Open the nested objects once; later updates keep what the user expanded or collapsed.
        for (int r = 0; r < m_attributes->rowCount(); ++r) {
            const QModelIndex i = m_attributes->index(r, 0);
            if (m_attributes->rowCount(i) > 0 && m_attributes->rowCount(i) <= 12)
                m_attributeView->expand(i);
        }
    });
    connect(m_attributeView->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex &cur) {
                const QModelIndex first = cur.sibling(cur.row(), 0);
                if (HistogramView::isHistogram(first.data(AttributeModel::ObjectRole).value<is::Object>())) {
                    m_histogramPath = m_attributes->path(first);
                    showHistogramFor(first);
                }
                showHistoryFor(first);
            });
    return box;
}

void IsMonitorWindow::showServers(const QStringList &names)
{
    const QSignalBlocker block(m_serverList);
    m_serverList->clear();
    m_serverList->addItems(names);
    if (m_server.isEmpty() && !names.isEmpty())
        selectServer(names.first());
    const QList<QListWidgetItem *> cur = m_serverList->findItems(m_server, Qt::MatchExactly);
    if (!cur.isEmpty())
        m_serverList->setCurrentItem(cur.first());
}

void IsMonitorWindow::selectServer(const QString &server)
{
    m_server = server;
    const QList<QListWidgetItem *> cur = m_serverList->findItems(server, Qt::MatchExactly);
    if (!cur.isEmpty() && m_serverList->currentItem() != cur.first()) {
        const QSignalBlocker block(m_serverList);
        m_serverList->setCurrentItem(cur.first());
    }
    showObject({});
    subscribeObjects();
}

void IsMonitorWindow::setFilter(const QString &regex, const QString &type, bool withSubtypes)
{
    m_regex->setText(regex);
    const int i = type.isEmpty() ? 0 : m_type->findText(type);
    if (i < 0)
        m_type->addItem(type);
    m_type->setCurrentIndex(i < 0 ? m_type->count() - 1 : i);
    const QSignalBlocker block(m_subtypes);
    m_subtypes->setChecked(withSubtypes);
    applyFilter();
}

void IsMonitorWindow::applyFilter()
{
    if (!m_server.isEmpty())
        subscribeObjects();
}

void IsMonitorWindow::subscribeObjects()
{
    const QString type = m_type->currentIndex() > 0 ? m_type->currentText() : QString();
    const is::Criteria c(m_regex->text().trimmed(), type,
                         type.isEmpty() ? is::Criteria::TypeSelector::Any
                                        : (m_subtypes->isChecked() ? is::Criteria::TypeSelector::WithSubtypes
                                                                   : is::Criteria::TypeSelector::Exactly));
    m_regex->setStyleSheet(c.isValid() ? QString() : QStringLiteral("background: #fdd"));
    if (!m_session->watchObjects(m_server, c)) {
        // The last good watch goes too: what the table shows must match the filter fields.
        m_session->watchObjects(QString(), is::Criteria());
        setStatus(QStringLiteral("bad regular expression: %1").arg(c.errorString()));
    }
}

void IsMonitorWindow::onListed(const QList<is::Entry> &entries)
{
    m_objects->addEntries(entries);
    refresh();
    if (!m_selected.isEmpty())
        selectObject(m_selected.mid(m_server.size() + 1));
}

void IsMonitorWindow::onValueRemoved()
{
    m_valuePending = false;
    m_attributes->setObject({});
    m_histogram->hide();
    m_objectTitle->setText(QStringLiteral("<b>%1</b> was removed").arg(m_selected.toHtmlEscaped()));
}

void IsMonitorWindow::scheduleRefresh()
{
    if (!m_refresh->isActive())
        m_refresh->start();
}

void IsMonitorWindow::refresh()
{
    // While the listing is on its way, events wait: they are applied over it.
    if (!m_session->isListing())
        m_objects->flush();
    if (m_valuePending) {
        m_valuePending = false;
        showValue(m_pendingValue, m_valueTime);
    }
    showSelectedStaleness();
}

void IsMonitorWindow::showSelectedStaleness()
{
    const QString object = m_selected.mid(m_server.size() + 1);
    std::optional<is::Staleness> st;
    if (!m_selected.isEmpty() && m_attributes->object().isValid()) {
        st = m_objects->staleness(object);
        const int r = m_objects->rowOf(object);
        if (st && r >= 0 && m_objects->row(r).time < m_valueTime)
            st.reset(); // a newer value than the row's came through the value's own subscription
    }
    if (m_attributes->isStale() != st.has_value()) {
        m_attributes->setStale(st.has_value());
        m_attributeView->viewport()->update(); // nested rows too
    }
    if (!st) {
        m_staleLabel->hide();
        return;
    }
    m_staleLabel->setText(
        QStringLiteral("<b>Stale</b> — %1; last update %2 s ago. The values below are the last "
                       "ones written.")
            .arg(st->reason().toHtmlEscaped(), QString::number(st->ageUs / 1e6, 'f', 0)));
    m_staleLabel->show();
}

void IsMonitorWindow::selectObject(const QString &object)
{
    const int r = m_objects->rowOf(object);
    if (r >= 0) {
        const QModelIndex i = m_proxy->mapFromSource(m_objects->index(r, 0));
        m_objectView->setCurrentIndex(i);
        m_objectView->scrollTo(i);
    }
    const QString name = m_server + QLatin1Char('.') + object;
    if (name != m_selected)
        showObject(name);
}

void IsMonitorWindow::showObject(const QString &name)
{
    m_selected = name;
    m_valuePending = false;
    m_valueTime = is::Time();
    m_histogramPath.clear();
    m_attributes->setObject({});
    m_histogram->clear();
    m_histogram->hide();
    m_historyPlot->clear();
    m_historyPlot->hide();
    m_objectTitle->setText(name.isEmpty() ? QStringLiteral("Select an object.")
                                          : QStringLiteral("<b>%1</b>").arg(name.toHtmlEscaped()));
    m_session->watchValue(name);
}

void IsMonitorWindow::showValue(const is::Object &o, is::Time time)
{
    if (!o.isValid())
        return;
    m_valueTime = time;
    m_attributes->setObject(o);
    plotValue(o, time);
    const is::TypeInfo t = dictionary()->types().type(o.typeName());
    m_objectTitle->setText(QStringLiteral("<b>%1</b> &nbsp; %2 &nbsp; updated %3<br><i>%4</i>")
                               .arg(m_selected.toHtmlEscaped(), o.typeName().toHtmlEscaped(),
                                    time.toDateTime().toLocalTime().toString(QStringLiteral("HH:mm:ss.zzz")),
                                    t.description().toHtmlEscaped()));
    QModelIndex h = m_histogramPath.isEmpty() ? QModelIndex() : m_attributes->find(m_histogramPath);
    for (int r = 0; !h.isValid() && r < m_attributes->rowCount(); ++r) {
        const QModelIndex i = m_attributes->index(r, 0);
        if (HistogramView::isHistogram(i.data(AttributeModel::ObjectRole).value<is::Object>()))
            h = i;
    }
    if (HistogramView::isHistogram(o) && !h.isValid()) {
        m_histogram->setHistogram(o, m_selected);
        m_histogram->show();
        return;
    }
    showHistogramFor(h);
}

void IsMonitorWindow::showHistogramFor(const QModelIndex &attribute)
{
    const is::Object h = attribute.data(AttributeModel::ObjectRole).value<is::Object>();
    if (!HistogramView::isHistogram(h)) {
        m_histogram->hide();
        return;
    }
    m_histogram->setHistogram(h, m_attributes->path(attribute));
    m_histogram->show();
}

void IsMonitorWindow::showHistoryFor(const QModelIndex &attribute)
{
    // Top-level scalar numbers only: what the IS server keeps a history of.
    const QString name = attribute.isValid() && !attribute.parent().isValid()
                             ? attribute.siblingAtColumn(AttributeModel::Name).data().toString()
                             : QString();
    const QString type = attribute.siblingAtColumn(AttributeModel::Type).data().toString();
    static const QStringList numeric = {
        QStringLiteral("bool"), QStringLiteral("s8"),    QStringLiteral("u8"),    QStringLiteral("s16"),
        QStringLiteral("u16"),  QStringLiteral("s32"),   QStringLiteral("u32"),   QStringLiteral("s64"),
        QStringLiteral("u64"),  QStringLiteral("float"), QStringLiteral("double")};
    if (name.isEmpty() || !numeric.contains(type)) {
        m_historyPlot->clear();
        m_historyPlot->hide();
        return;
    }
    m_historyPlot->setHistory(m_selected, name, {});
    m_historyPlot->show();
    m_session->readHistory(m_selected, name, 3600, 1000);
}

void IsMonitorWindow::plotValue(const is::Object &o, is::Time time)
{
    if (m_historyPlot->attribute().isEmpty())
        return;
    const QVariant v = o.variant(m_historyPlot->attribute());
    bool ok = false;
    const double d = v.toDouble(&ok);
    if (ok && v.typeId() != QMetaType::QString)
        m_historyPlot->addValue(time, d);
}

void IsMonitorWindow::updateTypes()
{
    const QString current = m_type->currentText();
    const QStringList names = dictionary()->types().typeNames();
    if (m_type->count() == names.size() + 1)
        return;
    const QSignalBlocker block(m_type);
    m_type->clear();
    m_type->addItem(QStringLiteral("(any type)"));
    m_type->addItems(names);
    m_type->setCurrentIndex(std::max(0, m_type->findText(current)));
}

void IsMonitorWindow::removeSelected(bool confirm)
{
    const QString name = m_selected;
    if (name.isEmpty())
        return;
    if (confirm &&
        QMessageBox::question(
            this, QStringLiteral("Remove IS object"),
            QStringLiteral("Remove %1 from the IS server? Its publisher may create it again.").arg(name),
            QMessageBox::Yes | QMessageBox::No, QMessageBox::No) != QMessageBox::Yes)
        return;
    m_session->remove(name);
}

void IsMonitorWindow::copyName()
{
    if (!m_selected.isEmpty())
        QApplication::clipboard()->setText(m_selected);
}

void IsMonitorWindow::copyValue()
{
    if (m_attributes->object().isValid())
        QApplication::clipboard()->setText(QString::fromUtf8(
            QJsonDocument(is::toJson(m_attributes->object())).toJson(QJsonDocument::Indented)));
}

QStringList IsMonitorWindow::omdArguments(const QString &object, const QString &attribute) const
{
    QStringList args{QStringLiteral("--object"), object};
    if (!attribute.isEmpty())
        args << QStringLiteral("--attribute") << attribute;
    args << QStringLiteral("--control-server") << client()->options().controlServers.join(QLatin1Char(','));
    return args;
}

void IsMonitorWindow::openInOmd()
{
    if (m_selected.isEmpty())
        return;
    // A numeric attribute selected in the tree is plotted alone; otherwise every numeric one.
    const QModelIndex cur = m_attributeView->currentIndex();
    const QString attribute =
        cur.isValid() && isNumeric(cur.sibling(cur.row(), AttributeModel::Type).data().toString())
            ? m_attributes->path(cur)
            : QString();
    const QString program = QCoreApplication::applicationDirPath() + QStringLiteral("/dialog-omd");
    if (!QFileInfo(program).isExecutable()) {
        setStatus(QStringLiteral("cannot open OMD: %1 not found").arg(program));
        return;
    }
    if (!QProcess::startDetached(program, omdArguments(m_selected, attribute)))
        setStatus(QStringLiteral("cannot start %1").arg(program));
    else
        setStatus(QStringLiteral("opened %1 in OMD").arg(m_selected));
}

void IsMonitorWindow::setStatus(const QString &message)
{
    m_status->setText(message);
}

void IsMonitorWindow::updateStatus()
{
    m_counts->setText(
        QStringLiteral("%1 objects%2 · %3 events/s · %4")
            .arg(m_objects->rowCount())
            .arg(m_objects->staleCount() > 0 ? QStringLiteral(" (%1 stale)").arg(m_objects->staleCount())
                                             : QString())
            .arg(m_session->objectEvents() - m_eventsAtLastStatus)
            .arg(client()->state() == Client::State::Connected ? QStringLiteral("connected")
                                                               : QStringLiteral("not connected")));
    m_eventsAtLastStatus = m_session->objectEvents();
}

} // namespace dialog::ismonitor
