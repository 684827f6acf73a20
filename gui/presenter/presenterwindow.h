// dialog-presenter's window: a tab per configured page (labelled "sub-system: page", its icon the
// colour of the worst check on it), each a grid of HistogramWidgets kept up to date by the session.
#pragma once

#include "histogramwidget.h"
#include "presentersession.h"

#include <QMainWindow>

class QLabel;
class QTabWidget;

namespace dialog::presenter {

class PresenterWindow : public QMainWindow
{
    Q_OBJECT
public:
    PresenterWindow(const ClientOptions &options, const PageSet &pages, QWidget *parent = nullptr);
    ~PresenterWindow() override;

    PresenterSession *session() const { return m_session; }
    Client *client() const { return m_session->client(); }
    QTabWidget *tabs() const { return m_tabs; }
    /// The widgets of page @p page, in the order of the pages file.
    QList<HistogramWidget *> widgets(int page) const { return m_widgets.value(page); }
    /// The first widget showing @p histogram ("Server.Object"), nullptr if none.
    HistogramWidget *widgetFor(const QString &histogram) const;
    /// The worst verdict of the checks on page @p page (Quality::None when it has none).
    Quality pageQuality(int page) const;
    /// Shows the page labelled @p label ("sub-system: page" or the page's name); false if none is.
    bool showPage(const QString &label);

private:
    void onChanged(const QString &name);
    void updateTab(int page);

    PresenterSession *m_session;
    QTabWidget *m_tabs;
    QLabel *m_status;
    QList<QList<HistogramWidget *>> m_widgets;
};

} // namespace dialog::presenter
