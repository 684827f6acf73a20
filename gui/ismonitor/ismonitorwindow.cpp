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
    : QMainWindow(parent), m_client(std::make_unique<Client>(options)),
      m_dictionary(new is::Dictionary(m_client.get(), this)),
      m_receiver(new is::Receiver(m_dictionary, this)), m_objects(new ObjectModel(this)),
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
    m_receiver->setCallback([this](const is::Event &e) { onEvent(e); });
    connect(m_receiver, &is::Receiver::subscriptionChanged, this,
            [this](int id, bool active, const QString &error) {
                if (id != m_objectsSub)
                    return;
                if (active) {
                    updateTypes();
                    list();
                } else {
                    m_loaded = false;
                    setStatus(error);
                }
            });

    // The IS servers come and go with the DIALOG directory; look again when it changes.
    m_serversTimer = new QTimer(this);
    m_serversTimer->setInterval(300);
    m_serversTimer->setSingleShot(true);
    connect(m_serversTimer, &QTimer::timeout, this, &IsMonitorWindow::onDirectory);
    m_client->subscribe(QStringLiteral("DIALOG.Directory"), this, [this](const Message &) {
        if (!m_serversTimer->isActive())
            m_serversTimer->start();
    });
    auto *statusTimer = new QTimer(this);
    connect(statusTimer, &QTimer::timeout, this, &IsMonitorWindow::updateStatus);
    statusTimer->start(1000);
    m_client->start();
    resize(1280, 760);
}

IsMonitorWindow::~IsMonitorWindow()
{
    // The receiver and dictionary use the client: they go first.
    delete m_receiver;
    delete m_dictionary;
}

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
    const int widths[] = {110, 125, 95};
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
    split->setSizes({380, 260});
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
            });
    return box;
}

void IsMonitorWindow::onDirectory()
{
    QPointer<IsMonitorWindow> guard(this);
    m_dictionary->servers([this, guard](const is::Status &s, const QStringList &names) {
        if (!guard || !s.isOk() || names == m_servers)
            return;
        m_servers = names;
        const QSignalBlocker block(m_serverList);
        m_serverList->clear();
        m_serverList->addItems(names);
        if (m_server.isEmpty() && !names.isEmpty())
            selectServer(names.first());
        const QList<QListWidgetItem *> cur = m_serverList->findItems(m_server, Qt::MatchExactly);
        if (!cur.isEmpty())
            m_serverList->setCurrentItem(cur.first());
    });
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
    ++m_generation;
    if (m_objectsSub)
        m_receiver->unsubscribe(m_objectsSub);
    m_objectsSub = 0;
    m_loaded = false;
    m_listing = false;
    m_objects->clear();
    const QString type = m_type->currentIndex() > 0 ? m_type->currentText() : QString();
    const is::Criteria c(m_regex->text().trimmed(), type,
                         type.isEmpty() ? is::Criteria::TypeSelector::Any
                                        : (m_subtypes->isChecked() ? is::Criteria::TypeSelector::WithSubtypes
                                                                   : is::Criteria::TypeSelector::Exactly));
    m_regex->setStyleSheet(c.isValid() ? QString() : QStringLiteral("background: #fdd"));
    if (!c.isValid()) {
        setStatus(QStringLiteral("bad regular expression: %1").arg(c.errorString()));
        return;
    }
    // Names only: the value of the selected object comes through its own subscription, so
    // 10,000 busy objects cost names and times, not values.
    m_objectsSub = m_receiver->subscribe(m_server, c, false);
    setStatus(QStringLiteral("subscribing to %1…").arg(m_server));
}

void IsMonitorWindow::list()
{
    const int generation = m_generation;
    const QString type = m_type->currentIndex() > 0 ? m_type->currentText() : QString();
    const is::Criteria c(m_regex->text().trimmed(), type,
                         type.isEmpty() ? is::Criteria::TypeSelector::Any
                                        : (m_subtypes->isChecked() ? is::Criteria::TypeSelector::WithSubtypes
                                                                   : is::Criteria::TypeSelector::Exactly));
    m_listing = true;
    QPointer<IsMonitorWindow> guard(this);
    m_dictionary->list(
        m_server, c,
        [this, guard, generation](const is::Status &s, const QList<is::Entry> &entries) {
            if (!guard || generation != m_generation)
                return;
            m_listing = false;
            if (!s.isOk()) {
                setStatus(s.toString());
                return;
            }
            m_objects->addEntries(entries);
            m_loaded = true;
            setStatus(QStringLiteral("live: %1 (%2 objects when listed)").arg(m_server).arg(entries.size()));
            refresh();
            if (!m_selected.isEmpty())
                selectObject(m_selected.mid(m_server.size() + 1));
        },
        false);
}

void IsMonitorWindow::onEvent(const is::Event &e)
{
    if (e.subscription() == m_objectsSub) {
        ++m_events;
        m_objects->add(e);
        scheduleRefresh();
    } else if (e.subscription() == m_valueSub) {
        if (e.kind() == is::Event::Kind::Removed) {
            m_valuePending = false;
            m_attributes->setObject({});
            m_histogram->hide();
            m_objectTitle->setText(QStringLiteral("<b>%1</b> was removed").arg(m_selected.toHtmlEscaped()));
            return;
        }
        m_pendingValue = e.object();
        m_valueTime = e.time();
        m_valuePending = true;
        scheduleRefresh();
    }
}

void IsMonitorWindow::scheduleRefresh()
{
    if (!m_refresh->isActive())
        m_refresh->start();
}

void IsMonitorWindow::refresh()
{
    // While the listing is on its way, events wait: they are applied over it.
    if (!m_listing)
        m_objects->flush();
    if (m_valuePending) {
        m_valuePending = false;
        showValue(m_pendingValue, m_valueTime);
    }
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
    if (m_valueSub)
        m_receiver->unsubscribe(m_valueSub);
    m_valueSub = 0;
    m_valuePending = false;
    m_valueTime = is::Time();
    m_histogramPath.clear();
    m_attributes->setObject({});
    m_histogram->clear();
    m_histogram->hide();
    if (name.isEmpty()) {
        m_objectTitle->setText(QStringLiteral("Select an object."));
        return;
    }
    m_objectTitle->setText(QStringLiteral("<b>%1</b>").arg(name.toHtmlEscaped()));
    QString server, object;
    is::Dictionary::splitName(name, &server, &object);
    m_valueSub = m_receiver->subscribe(server, is::Criteria::exactName(object), true);
    QPointer<IsMonitorWindow> guard(this);
    m_dictionary->get(name, [this, guard, name](const is::Status &s, const is::Entry &e) {
        if (!guard || name != m_selected)
            return;
        if (!s.isOk()) {
            setStatus(s.toString());
            return;
        }
        if (!m_attributes->object().isValid() || !(e.time < m_valueTime))
            showValue(e.object, e.time);
    });
}

void IsMonitorWindow::showValue(const is::Object &o, is::Time time)
{
    if (!o.isValid())
        return;
    m_valueTime = time;
    m_attributes->setObject(o);
    const is::TypeInfo t = m_dictionary->types().type(o.typeName());
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

void IsMonitorWindow::updateTypes()
{
    const QString current = m_type->currentText();
    const QStringList names = m_dictionary->types().typeNames();
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
    QPointer<IsMonitorWindow> guard(this);
    m_dictionary->remove(name, [this, guard, name](const is::Status &s) {
        if (!guard)
            return;
        setStatus(s.isOk() ? QStringLiteral("removed %1").arg(name)
                           : QStringLiteral("could not remove %1: %2").arg(name, s.toString()));
        Q_EMIT removeFinished(name, s.isOk(), s.toString());
    });
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
    args << QStringLiteral("--control-server") << m_client->options().controlServers.join(QLatin1Char(','));
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
    m_counts->setText(QStringLiteral("%1 objects · %2 events/s · %3")
                          .arg(m_objects->rowCount())
                          .arg(m_events - m_eventsAtLastStatus)
                          .arg(m_client->state() == Client::State::Connected
                                   ? QStringLiteral("connected")
                                   : QStringLiteral("not connected")));
    m_eventsAtLastStatus = m_events;
}

} // namespace dialog::ismonitor
