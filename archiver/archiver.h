// dialog-archiver: subscribes to an IS server by criteria, stores the numeric attribute changes in
// an ArchiveStore and answers HISTORY requests (as the IS server does) from it.
#pragma once

#include "archivestore.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QHash>
#include <QObject>
#include <QThread>
#include <memory>

namespace dialog::archiver {

struct ArchiverOptions
{
    QString server;   ///< the IS server archived
    QString criteria; ///< object-name regex; empty: every object
    QString dataDir;
    ArchiveStore::Options store;
    ClientOptions client;
};

class Archiver : public QObject
{
    Q_OBJECT
public:
    explicit Archiver(const ArchiverOptions &options, QObject *parent = nullptr);
    ~Archiver() override;

    /// Opens the archive, joins the DIALOG system and subscribes. False with a reason.
    bool start(QString *error);
    /// Writes what is buffered (at exit).
    void stop();
    ArchiveStore &store() { return *m_store; }
    /// Its connection to the DIALOG system (null before start()).
    Client *client() const { return m_client.get(); }

private:
    void onEvent(const is::Event &event);
    void onRequest(const Request &request);

    ArchiverOptions m_options;
    std::unique_ptr<Client> m_client;
    std::unique_ptr<is::Dictionary> m_dictionary;
    std::unique_ptr<is::Receiver> m_receiver;
    std::unique_ptr<ArchiveStore> m_store;
    QThread m_storeThread;
    QHash<QString, qint32> m_series; // "object\nattribute" -> id
    qint32 m_nextId = 1;
    std::vector<qint64> m_lastTime; // by series id: the newest time stored
    std::vector<Sample> m_batch;
    QList<SeriesName> m_fresh;
    bool m_flushScheduled = false;
};

} // namespace dialog::archiver
