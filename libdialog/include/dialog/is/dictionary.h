#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/history.h"
#include "dialog/is/object.h"
#include "dialog/is/staleness.h"
#include "dialog/is/time.h"
#include "dialog/is/typeregistry.h"
#include "dialog/status.h"

#include <QObject>
#include <QStringList>
#include <functional>
#include <memory>

namespace dialog {
class Client;
}

namespace dialog::is {

class DictionaryPrivate;

/// Outcome of an IS operation: the library's one status type (dialog::Status).
using Status = dialog::Status;

/// An object as read from a server.
struct Entry
{
    QString name;     ///< full name, "Server.Object"
    QString typeName; ///< the stored type (the object may have been read as a base type)
    Time time;        ///< last update
    /// Writes of the object since it was created.
    quint64 updateCount = 0;
    Object object; ///< invalid when listed without values
    Staleness staleness; ///< as the server saw it when it answered (ageUs -1 from an older server)
};

/// The IS dictionary (ATLAS IS API): insert, update, remove, get and list objects of any IS server.
/// Every call is asynchronous; the callback runs once, in this object's thread. The *Sync forms wait
/// (running a local event loop) and are meant for command-line tools and tests.
///
/// Values travel in the binary IS encoding; the types needed to decode them are fetched from the
/// server on first use and kept in types(), so code that does not know a type at compile time
/// can still read every attribute (Object::variant, attributes()).
class Dictionary : public QObject
{
    Q_OBJECT
public:
    /// What update() does when the object does not exist.
    enum class UpdateMode
    {
        CreateIfMissing, ///< insert the object if it does not exist
        MustExist,       ///< fail with NotFound if it does not exist
    };
    ///@{
    /// Callbacks of the asynchronous calls: the outcome, and what was read. Each runs once, in the
    /// dictionary's thread.
    using Done = std::function<void(const Status &)>;
    using GetDone = std::function<void(const Status &, const Entry &)>;
    using ListDone = std::function<void(const Status &, const QList<Entry> &)>;
    using HistoryDone = std::function<void(const Status &, const History &)>;
    ///@}

    /// @p client must outlive the dictionary.
    explicit Dictionary(Client *client, QObject *parent = nullptr);
    ~Dictionary() override;

    /// The Client the requests go through.
    Client *client() const;
    /// Types known to this process: fetched from servers, loaded from XML, declared.
    TypeRegistry &types();
    /// types(), shared: it stays valid after the dictionary is gone (every Event holds it).
    std::shared_ptr<const TypeRegistry> sharedTypes() const;
    /// Time-out of each request (default 5000 ms).
    void setTimeout(int ms);
    /// The time-out of each request, in ms.
    int timeout() const;

    /// Creates the object @p name ("Server.Object"); AlreadyExists if it does.
    void insert(const QString &name, const Object &object, Done done = {});
    /// Writes the object @p name ("Server.Object"): every attribute of @p object replaces the stored one.
    void update(const QString &name, const Object &object, UpdateMode mode = UpdateMode::CreateIfMissing,
                Done done = {});
    /// Removes the object @p name ("Server.Object"); NotFound if it does not exist.
    void remove(const QString &name, Done done = {});
    /// With @p asType set, the object must be of that type or derived from it and is read as it.
    void get(const QString &name, GetDone done, const QString &asType = {});
    /// Objects of @p server matching @p criteria, sorted by name (values only if @p withValues).
    void list(const QString &server, const Criteria &criteria, ListDone done, bool withValues = true);
    /// The stale objects of @p server matching @p criteria (Entry::staleness says why and since
    /// when), sorted by name, without values: cheap enough to ask every second.
    void listStale(const QString &server, const Criteria &criteria, ListDone done);
    /// The values of the numeric attributes of @p name between @p from and @p to, oldest first, at
    /// most @p maxPoints per attribute (downsampled with min/max/mean buckets beyond; <= 0: every
    /// point); only @p attribute when it is set. The server answers from its history ring; the part
    /// before the oldest value of the ring comes from the server's archiver (dialog-archiver) when
    /// one runs, and is merged in front. NotFound when neither holds values of the object.
    void history(const QString &name, Time from, Time to, qsizetype maxPoints, HistoryDone done,
                 const QString &attribute = {});
    /// Merges the server's types into types().
    void fetchTypes(const QString &server, Done done);
    /// Declares types on a server at run time (and in types()).
    void declareTypes(const QString &server, const QList<TypeInfo> &types, Done done = {});
    /// The server's statistics object ("<server>.Statistics").
    void statistics(const QString &server, GetDone done);
    /// Names of the IS servers registered with the Control Server.
    void servers(std::function<void(const Status &, const QStringList &)> done);

    ///@{
    /// The blocking forms of the calls above (for command-line tools and tests): they wait, running a local
    /// event loop, and return the outcome; what was read goes to @p out.
    Status insertSync(const QString &name, const Object &object);
    Status updateSync(const QString &name, const Object &object, UpdateMode mode = UpdateMode::CreateIfMissing);
    Status removeSync(const QString &name);
    Status getSync(const QString &name, Entry *out, const QString &asType = {});
    Status listSync(const QString &server, const Criteria &criteria, QList<Entry> *out, bool withValues = true);
    Status listStaleSync(const QString &server, const Criteria &criteria, QList<Entry> *out);
    Status historySync(const QString &name, Time from, Time to, qsizetype maxPoints, History *out,
                       const QString &attribute = {});
    Status fetchTypesSync(const QString &server);
    Status declareTypesSync(const QString &server, const QList<TypeInfo> &types);
    Status serversSync(QStringList *out);
    ///@}

    /// Splits "Server.Object" (false if there is no '.' or either part is empty).
    static bool splitName(const QString &name, QString *server, QString *object);

private:
    std::unique_ptr<DictionaryPrivate> const d;
};

/// Iteration over the objects of a server matching criteria (fetched at construction, blocking).
///
///     dialog::is::Iterator it(dictionary, "DAQ", dialog::is::Criteria("Readout.*"));
///     while (it.next())
///         qInfo() << it.entry().name << it.entry().object.variant("events");
class Iterator
{
public:
    /// Fetches the objects of @p server matching @p criteria (values only if @p withValues), blocking.
    Iterator(Dictionary &dictionary, const QString &server, const Criteria &criteria = Criteria(),
             bool withValues = true);
    /// The outcome of the fetch.
    Status status() const { return m_status; }
    /// The number of objects fetched.
    qsizetype size() const { return m_entries.size(); }
    /// Moves to the next object (the first on the first call); false past the last one or when the fetch
    /// failed.
    bool next();
    /// The current object (after next() returned true).
    const Entry &entry() const { return m_entries.at(m_index); }

private:
    Status m_status;
    QList<Entry> m_entries;
    qsizetype m_index = -1;
};

} // namespace dialog::is

Q_DECLARE_METATYPE(dialog::is::Entry)
