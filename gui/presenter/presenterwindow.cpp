#include "presenterwindow.h"

#include <QGridLayout>
#include <QIcon>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>

namespace dialog::presenter {

namespace {

// How bad a verdict is, to find a page's worst.
int severity(Quality q)
{
    switch (q) {
    case Quality::None:
        return 0;
    case Quality::Good:
        return 1;
    case Quality::Undefined:
        return 2;
    case Quality::Warning:
        return 3;
    case Quality::Bad:
        return 4;
    }
    return 0;
}

QIcon qualityIcon(Quality q)
{
    QPixmap pm(14, 14);
    pm.fill(Qt::transparent);
    if (q != Quality::None) {
        QPainter p(&pm);
        p.setRenderHint(QPainter::Antialiasing);
        p.setBrush(HistogramPainter::qualityColor(q));
        p.setPen(HistogramPainter::qualityColor(q).darker(140));
        p.drawEllipse(QRectF(1.5, 1.5, 11, 11));
    }
    return QIcon(pm);
}

} // namespace

PresenterWindow::PresenterWindow(const ClientOptions &options, const PageSet &pages, QWidget *parent)
    : QMainWindow(parent), m_session(new PresenterSession(options, pages, this)),
      m_tabs(new QTabWidget(this)), m_status(new QLabel(this))
{
    setWindowTitle(QStringLiteral("DIALOG histogram presenter"));
    setCentralWidget(m_tabs);
    statusBar()->addWidget(m_status, 1);
    for (const Page &page : pages.pages) {
        auto *w = new QWidget;
        auto *grid = new QGridLayout(w);
        grid->setContentsMargins(6, 6, 6, 6);
        grid->setSpacing(6);
        QList<HistogramWidget *> list;
        for (qsizetype i = 0; i < page.entries.size(); ++i) {
            auto *h = new HistogramWidget(page.entries.at(i), w);
            grid->addWidget(h, int(i / page.columns), int(i % page.columns));
            list << h;
            h->setHistogram(m_session->histogram(h->entry().histogram),
                            m_session->histogramMessage(h->entry().histogram));
            if (!h->entry().referenceFile.isEmpty())
                h->setReference(m_session->reference(h->entry().referenceFile));
        }
        m_widgets << list;
        m_tabs->addTab(w, page.label());
        updateTab(int(m_widgets.size() - 1));
    }
    connect(m_session, &PresenterSession::changed, this, &PresenterWindow::onChanged);
    auto *statusTimer = new QTimer(this);
    statusTimer->setInterval(1000);
    connect(statusTimer, &QTimer::timeout, this, [this] {
        m_status->setText(QStringLiteral("%1 · %2 updates")
                              .arg(client()->state() == Client::State::Connected
                                       ? QStringLiteral("connected")
                                       : QStringLiteral("not connected"))
                              .arg(m_session->updates()));
    });
    statusTimer->start();
    resize(1000, 720);
}

PresenterWindow::~PresenterWindow() = default;

HistogramWidget *PresenterWindow::widgetFor(const QString &histogram) const
{
    for (const auto &page : m_widgets)
        for (HistogramWidget *w : page)
            if (w->entry().histogram == histogram)
                return w;
    return nullptr;
}

Quality PresenterWindow::pageQuality(int page) const
{
    Quality worst = Quality::None;
    for (HistogramWidget *w : m_widgets.value(page))
        if (severity(w->quality()) > severity(worst))
            worst = w->quality();
    return worst;
}

bool PresenterWindow::showPage(const QString &label)
{
    const QList<Page> &pages = m_session->pages().pages;
    for (qsizetype i = 0; i < pages.size(); ++i)
        if (pages.at(i).label() == label || pages.at(i).name == label) {
            m_tabs->setCurrentIndex(int(i));
            return true;
        }
    return false;
}

void PresenterWindow::onChanged(const QString &name)
{
    for (qsizetype page = 0; page < m_widgets.size(); ++page) {
        bool checkChanged = false;
        for (HistogramWidget *w : std::as_const(m_widgets[page])) {
            const PageEntry &e = w->entry();
            if (e.histogram == name)
                w->setHistogram(m_session->histogram(name), m_session->histogramMessage(name));
            if (e.check == name) {
                w->setCheck(m_session->check(name));
                checkChanged = true;
            }
            if (e.referenceFile == name)
                w->setReference(m_session->reference(name));
        }
        if (checkChanged)
            updateTab(int(page));
    }
}

void PresenterWindow::updateTab(int page)
{
    m_tabs->setTabIcon(page, qualityIcon(pageQuality(page)));
}

} // namespace dialog::presenter
