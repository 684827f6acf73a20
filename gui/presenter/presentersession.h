// The IS side of dialog-presenter, apart from its widgets: the histograms and check results that
// the pages name, followed live (one subscription with snapshot per object, made again whenever its
// server comes back), and the reference files, read again when they change. The window draws what
// this holds; nothing here touches a widget.
#pragma once

#include "histogramdata.h"
#include "pages.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <memory>

class QTimer;

namespace dialog::presenter {

class PresenterSession : public QObject
{
    Q_OBJECT
public:
    PresenterSession(const ClientOptions &options, const PageSet &pages, QObject *parent = nullptr);
    ~PresenterSession() override;

    Client *client() const { return m_client.get(); }
    const PageSet &pages() const { return m_pages; }

    /// The last value of the histogram @p name (invalid while unknown or when not a histogram).
    Histogram histogram(const QString &name) const { return m_histograms.value(name).data; }
    /// Why histogram(@p name) is invalid ("waiting for …", "not in the IS", "is a X, not a histogram").
    QString histogramMessage(const QString &name) const { return m_histograms.value(name).message; }
    /// The last result of the check object @p name (Undefined with the reason while there is none).
    CheckResult check(const QString &name) const;
    /// The reference read from @p file (invalid when there is none or it does not parse).
    Histogram reference(const QString &file) const { return m_references.value(file).data; }
    /// Updates received for the pages' objects since the start (histograms and checks).
    quint64 updates() const { return m_updates; }

    /// Reads the reference files again when their modification time changed (done every 2 s).
    void reloadReferences();

Q_SIGNALS:
    /// The histogram, check or reference file @p name changed (its value, its absence or its reason).
    /// Emitted in the session's thread, once per change.
    void changed(const QString &name);

private:
    struct Held
    {
        Histogram data;
        QString message;
    };
    struct HeldCheck
    {
        CheckResult result;
        bool known = false;
    };
    struct HeldReference
    {
        Histogram data;
        QDateTime modified;
        bool exists = false;
    };
    void onEvent(const is::Event &e);
    void setObject(const QString &name, const is::Object &object);
    void setAbsent(const QString &name, const QString &why);

    std::unique_ptr<Client> m_client;
    std::unique_ptr<is::Dictionary> m_dictionary;
    std::unique_ptr<is::Receiver> m_receiver;
    PageSet m_pages;
    QHash<int, QString> m_subscriptions; ///< subscription id -> the object it follows
    QHash<QString, bool> m_seenInSnapshot;
    QHash<QString, Held> m_histograms;
    QHash<QString, HeldCheck> m_checks;
    QHash<QString, HeldReference> m_references;
    QTimer *m_referenceTimer = nullptr;
    quint64 m_updates = 0;
};

} // namespace dialog::presenter
