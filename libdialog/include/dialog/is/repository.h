#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/object.h"
#include "dialog/is/time.h"
#include "dialog/status.h"

#include <QList>
#include <QString>
#include <functional>
#include <memory>

namespace dialog::is {

class RepositoryPrivate;
class TypeRegistry;

/// Name, type and bookkeeping of one stored object, as returned by Repository::list().
struct ObjectInfo
{
    QString name; ///< object name, without the "Server." prefix
    /// The object's type.
    QString typeName;
    Time time;               ///< last update (creation for a never-updated object)
    quint64 updateCount = 0; ///< 0 when created, +1 on every update
};

/// One stored object with its bookkeeping, as returned by Repository::objects() and accepted by
/// Repository::replaceAll() (checkpoints, mirrors).
struct StoredObject
{
    QString name; ///< object name, without the "Server." prefix
    /// The object's value.
    Object object;
    /// Last update (creation for a never-updated object).
    Time time;
    /// 0 when created, +1 on every update.
    quint64 updateCount = 0;
};

/// A change applied to a Repository, as passed to its listeners.
struct Change
{
    /// What happened to the object.
    enum class Kind
    {
        Created,
        Updated,
        Removed
    };
    /// Created, Updated or Removed.
    Kind kind = Kind::Created;
    QString name; ///< object name, without the "Server." prefix
    /// The object's type.
    QString typeName;
    Time time; ///< time of the change (the object's new last-update time)
    /// The new value; invalid for Removed. A value written from bytes carries them (is::decode of a
    /// QByteArray): encode() of it returns those bytes, so listeners share one encoding.
    Object object;
    /// Increases by one with every change of the repository (assigned under its write lock), so
    /// listeners called from several writer threads can restore the order of the changes.
    quint64 sequence = 0;
};

/// The information objects of one IS server, held in memory (the ATLAS IS repository).
///
/// Objects are named `ServerName.ObjectName`. Every function taking a name accepts the full name
/// or the bare object name. A name holding a '.' is always a full name: its part before the first
/// '.' must be this server's name (so an object name containing dots, "a.b", must be written
/// "Server.a.b"). Only objects of types known to the registry are stored.
///
/// Operations never throw: they return a dialog::Status, its code decided where the error is found:
/// InvalidName (empty name, or the name of another server), InvalidObject (an invalid Object, or
/// one not matching the registry's type definition), UnknownType (the object's type, or the expected
/// type of get(), is not in the registry), AlreadyExists (insert() of an existing name), NotFound
/// (update(), remove() or get() of a missing name) or TypeMismatch (update of an object of another
/// type; get() as an unrelated type); the message names the object.
///
/// Thread safety: every function may be called from any thread. Reads (get, list, objects, size)
/// take a read lock and run concurrently; writes take the write lock. Objects are implicitly
/// shared, so returned objects are cheap copies, unaffected by later changes.
///
/// Listeners are called after the change is applied, in the thread that made the change, with
/// no repository lock held: they may call back into the repository (read or write). Changes made
/// concurrently by several threads may reach a listener out of order; Change::sequence gives the
/// order in which they were applied.
class Repository
{
public:
    /// Counts of successful operations since construction; upsert() counts as insert or update.
    struct Statistics
    {
        /// Objects created (insert(), or upsert() of a missing object).
        quint64 inserts = 0;
        /// Objects updated (update(), or upsert() of an existing object).
        quint64 updates = 0;
        /// Objects removed.
        quint64 removes = 0;
        /// Objects read.
        quint64 gets = 0;
        quint64 failures = 0; ///< operations that returned anything but an ok Status
        /// Objects held at the moment statistics() was called.
        qsizetype objects = 0;
    };

    /// Called with every change applied, in the thread that applied it, with the repository's lock not held.
    using Listener = std::function<void(const Change &)>;

    /// @p registry must outlive the repository.
    Repository(const QString &serverName, const TypeRegistry &registry);
    ~Repository();
    Repository(const Repository &) = delete;
    Repository &operator=(const Repository &) = delete;

    /// The IS server's name (the "Server." prefix of its objects).
    QString serverName() const;
    /// The types the repository validates objects against.
    const TypeRegistry &registry() const;

    /// The object name for @p name (with or without the server prefix) into @p out;
    /// Status::Code::InvalidName if @p name is not a valid name of this server (@p out untouched).
    Status objectName(const QString &name, QString *out) const;

    /// Creates the object: Status::Code::AlreadyExists if there is one of that name; InvalidName,
    /// InvalidObject or UnknownType for a bad name or object.
    Status insert(const QString &name, const Object &object);
    /// Replaces the value of an existing object of the same type: Status::Code::NotFound if there is
    /// none, TypeMismatch if it is of another type; InvalidName, InvalidObject or UnknownType as insert().
    Status update(const QString &name, const Object &object);
    /// insert() if missing, else update() (their codes, but never NotFound nor AlreadyExists).
    Status upsert(const QString &name, const Object &object);
    /// Removes the object: Status::Code::NotFound if there is none of that name, InvalidName for a bad
    /// name.
    Status remove(const QString &name);

    /// Reads an object into @p out (untouched on failure) and its times into @p info (if given).
    /// With @p expectedType set, the stored type must be it or derive from it and the object is
    /// returned read as that type. Status::Code::NotFound for a missing name, InvalidName for a bad
    /// one, UnknownType for an @p expectedType not in the registry, TypeMismatch for a stored type
    /// that is not @p expectedType nor derives from it.
    Status get(const QString &name, Object *out, const QString &expectedType = {},
               ObjectInfo *info = nullptr) const;

    /// The matching objects, sorted by name. An invalid Criteria matches nothing. The names are
    /// matched on a snapshot taken under the lock and outside it: writers wait for the snapshot
    /// only, never for the matching.
    QList<ObjectInfo> list(const Criteria &criteria = Criteria()) const;
    /// The matching objects with their values, sorted by name (checkpoints, mirrors). Matched
    /// outside the lock, as by list().
    QList<StoredObject> objects(const Criteria &criteria = Criteria()) const;
    /// Decides, between two names of a scan, whether the scan goes on (a budget, a cancellation).
    using ScanCheck = std::function<bool()>;
    /// As list(), but @p proceed is asked before each name is matched; when it says no, the scan
    /// stops there and @p complete (if given) is set false (true when every name was matched).
    QList<ObjectInfo> list(const Criteria &criteria, const ScanCheck &proceed, bool *complete) const;
    /// As objects(), stopping as list(criteria, proceed, complete) does.
    QList<StoredObject> objects(const Criteria &criteria, const ScanCheck &proceed, bool *complete) const;
    /// The number of objects held.
    qsizetype size() const;
    /// The counts at this moment.
    Statistics statistics() const;

    /// Replaces the whole content by @p objects (checkpoint load), keeping their times and update
    /// counts. All-or-nothing: every name and object is validated first (objects as by insert();
    /// names are object names, taken as they are: not empty, no duplicates); on failure the repository is
    /// unchanged. Listeners are not called and the insert/update counters are not changed (a failure counts
    /// in Statistics::failures). The codes of insert() (InvalidName for an empty name, AlreadyExists for
    /// a name given twice), the message naming the object.
    Status replaceAll(const QList<StoredObject> &objects);

    /// Applies a change made in another repository (an IS mirror copying its master), keeping the
    /// change's time: Created and Updated store change.object under change.name (inserting it, or
    /// replacing the current object even if it is of another type), Removed removes it (NotFound if
    /// there is none). Validated as by upsert(); listeners are called as for any change. Update counts
    /// are this repository's own. The codes of upsert() and remove().
    Status mirror(const Change &change);

    /// Registers @p listener; returns its id (> 0) for removeListener().
    int addListener(Listener listener);
    /// A call that had already started in another thread may still complete after this returns.
    void removeListener(int id);

private:
    std::unique_ptr<RepositoryPrivate> const d;
};

} // namespace dialog::is
