// The in-memory object repository of an IS server.
#include "dialog/is/repository.h"

#include "dialog/is/typeregistry.h"

#include "../rwlock_p.h"
#include <QMap>
#include <QMutex>

#include <QReadWriteLock>
#include <atomic>
#include <map>
#include <vector>

namespace dialog::is {


namespace {
struct Entry
{
    Object object;
    Time time;
    quint64 updateCount = 0;
};

enum class WriteMode
{
    Insert,
    Update,
    Upsert
};
} // namespace

class RepositoryPrivate
{
public:
    RepositoryPrivate(const QString &server, const TypeRegistry &types) : serverName(server), registry(types)
    {
    }

    // Counts the failure.
    Status fail(Status::Code code, const QString &message) const
    {
        ++failures;
        return Status(code, message);
    }
    QString fullName(const QString &objectName) const { return serverName + QLatin1Char('.') + objectName; }

    // InvalidName, not counted as a failure (the callers count).
    Status checkName(const QString &name, QString *objectName) const;
    Status checkObject(const Object &object) const;
    /// @p at: the time of the change (a mirrored change), or Time() for now. With @p replaceType an
    /// existing object of another type is replaced (mirrors) instead of refused.
    Status write(WriteMode mode, const QString &name, const Object &object, Time at = Time(),
                 bool replaceType = false);
    Status remove(const QString &name, Time at);
    // Called with no lock held.
    void notify(const Change &change) const;
    /// Calls @p take for each object matching @p criteria, in name order, on a snapshot: the lock is
    /// held only to share the map (a writer meanwhile copies it once), never while matching, so a
    /// costly expression stops no writer. Called with no lock held.
    template <typename Take>
    void scan(const Criteria &criteria, const Repository::ScanCheck &proceed, bool *complete, Take take) const
    {
        QMap<QString, Entry> snapshot;
        {
            ReadLocker locker(&lock);
            snapshot = objects;
        }
        if (complete)
            *complete = true;
        for (auto it = snapshot.cbegin(); it != snapshot.cend(); ++it) {
            if (proceed && !proceed()) {
                if (complete)
                    *complete = false;
                return;
            }
            if (criteria.matches(it.key(), it->object.typeName(), registry))
                take(it.key(), *it);
        }
    }

    const QString serverName;
    const TypeRegistry &registry;

    mutable QReadWriteLock lock;
    QMap<QString, Entry> objects; // guarded by lock
    quint64 sequence = 0;         // guarded by lock (write)

    mutable QMutex listenerLock;
    std::map<int, std::shared_ptr<const Repository::Listener>> listeners; // guarded by listenerLock
    int nextListenerId = 1;                                               // guarded by listenerLock

    std::atomic<quint64> inserts{0}, updates{0}, removes{0};
    mutable std::atomic<quint64> gets{0}, failures{0};
};

Status RepositoryPrivate::checkName(const QString &name, QString *objectName) const
{
    QString result = name;
    const qsizetype dot = name.indexOf(QLatin1Char('.'));
    if (dot >= 0) {
        const QString server = name.left(dot);
        if (server != serverName)
            return Status(Status::Code::InvalidName, QStringLiteral("object name '%1' belongs to server '%2', not '%3'")
                                                         .arg(name, server, serverName));
        result = name.mid(dot + 1);
    }
    if (result.isEmpty())
        return Status(Status::Code::InvalidName, name.isEmpty() ? QStringLiteral("empty object name")
                                                                : QStringLiteral("empty object name in '%1'").arg(name));
    *objectName = result;
    return {};
}

Status RepositoryPrivate::checkObject(const Object &object) const
{
    if (!object.isValid())
        return fail(Status::Code::InvalidObject, QStringLiteral("invalid object (no type)"));
    const TypeInfo type = registry.type(object.typeName());
    if (!type.isValid())
        return fail(Status::Code::UnknownType,
                    QStringLiteral("unknown type '%1' in server '%2'").arg(object.typeName(), serverName));
    // An object made with another registry may carry a different definition under the same name.
    if (type.allAttributes() != object.attributes())
        return fail(Status::Code::InvalidObject,
                    QStringLiteral("object of type '%1' does not match the registry's definition of the type")
                        .arg(object.typeName()));
    return {};
}

Status RepositoryPrivate::write(WriteMode mode, const QString &name, const Object &object, Time at,
                                bool replaceType)
{
    QString objectName;
    if (const Status bad = checkName(name, &objectName); !bad.isOk())
        return fail(bad.code(), bad.message());
    if (Status checked = checkObject(object); !checked.isOk())
        return checked;

    Change change;
    {
        WriteLocker locker(&lock);
        auto it = objects.find(objectName);
        const Time now = at == Time() ? Time::currentTime() : at;
        if (it == objects.end()) {
            if (mode == WriteMode::Update)
                return fail(Status::Code::NotFound,
                            QStringLiteral("object '%1' does not exist").arg(fullName(objectName)));
            objects.insert(objectName, Entry{object, now, 0});
            change.kind = Change::Kind::Created;
            ++inserts;
        } else {
            if (mode == WriteMode::Insert)
                return fail(Status::Code::AlreadyExists,
                            QStringLiteral("object '%1' already exists").arg(fullName(objectName)));
            if (it->object.typeName() != object.typeName() && !replaceType)
                return fail(Status::Code::TypeMismatch,
                            QStringLiteral("object '%1' is of type '%2', not '%3'")
                                .arg(fullName(objectName), it->object.typeName(), object.typeName()));
            it->object = object;
            it->time = now;
            ++it->updateCount;
            change.kind = Change::Kind::Updated;
            ++updates;
        }
        change.sequence = ++sequence;
        change.time = now;
    }
    change.name = objectName;
    change.typeName = object.typeName();
    change.object = object;
    notify(change);
    return {};
}

void RepositoryPrivate::notify(const Change &change) const
{
    std::vector<std::shared_ptr<const Repository::Listener>> targets;
    {
        QMutexLocker locker(&listenerLock);
        targets.reserve(listeners.size());
        for (const auto &[id, listener] : listeners)
            targets.push_back(listener);
    }
    for (const auto &listener : targets)
        (*listener)(change);
}

Repository::Repository(const QString &serverName, const TypeRegistry &registry)
    : d(std::make_unique<RepositoryPrivate>(serverName, registry))
{
}

Repository::~Repository() = default;

QString Repository::serverName() const
{
    return d->serverName;
}

const TypeRegistry &Repository::registry() const
{
    return d->registry;
}

Status Repository::objectName(const QString &name, QString *out) const
{
    return d->checkName(name, out);
}

Status Repository::insert(const QString &name, const Object &object)
{
    return d->write(WriteMode::Insert, name, object);
}

Status Repository::update(const QString &name, const Object &object)
{
    return d->write(WriteMode::Update, name, object);
}

Status Repository::upsert(const QString &name, const Object &object)
{
    return d->write(WriteMode::Upsert, name, object);
}

Status RepositoryPrivate::remove(const QString &name, Time at)
{
    QString objectName;
    if (const Status bad = checkName(name, &objectName); !bad.isOk())
        return fail(bad.code(), bad.message());
    Change change;
    {
        WriteLocker locker(&lock);
        auto it = objects.find(objectName);
        if (it == objects.end())
            return fail(Status::Code::NotFound,
                        QStringLiteral("object '%1' does not exist").arg(fullName(objectName)));
        change.typeName = it->object.typeName();
        objects.erase(it);
        change.sequence = ++sequence;
        ++removes;
    }
    change.kind = Change::Kind::Removed;
    change.name = objectName;
    change.time = at == Time() ? Time::currentTime() : at;
    notify(change);
    return {};
}

Status Repository::mirror(const Change &change)
{
    if (change.kind == Change::Kind::Removed)
        return d->remove(change.name, change.time);
    return d->write(WriteMode::Upsert, change.name, change.object, change.time, true);
}

Status Repository::remove(const QString &name)
{
    return d->remove(name, Time());
}

Status Repository::get(const QString &name, Object *out, const QString &expectedType, ObjectInfo *info) const
{
    QString objectName;
    if (const Status bad = d->checkName(name, &objectName); !bad.isOk())
        return d->fail(bad.code(), bad.message());
    if (!expectedType.isEmpty() && !d->registry.contains(expectedType))
        return d->fail(Status::Code::UnknownType, QStringLiteral("unknown type '%1'").arg(expectedType));
    Entry entry;
    {
        ReadLocker locker(&d->lock);
        const auto it = d->objects.constFind(objectName);
        if (it == d->objects.cend())
            return d->fail(Status::Code::NotFound,
                           QStringLiteral("object '%1' does not exist").arg(d->fullName(objectName)));
        entry = *it;
    }
    // Outside the lock: asBase() copies values and consults the registry.
    Object result = entry.object;
    if (!expectedType.isEmpty() && expectedType != entry.object.typeName()) {
        if (const Status read = entry.object.asBase(d->registry, expectedType, &result); !read.isOk())
            return d->fail(read.code(), QStringLiteral("object '%1': %2").arg(d->fullName(objectName), read.message()));
    }
    ++d->gets;
    if (out)
        *out = result;
    if (info)
        *info = ObjectInfo{objectName, entry.object.typeName(), entry.time, entry.updateCount};
    return {};
}

QList<ObjectInfo> Repository::list(const Criteria &criteria) const
{
    return list(criteria, {}, nullptr);
}

QList<StoredObject> Repository::objects(const Criteria &criteria) const
{
    return objects(criteria, {}, nullptr);
}

QList<ObjectInfo> Repository::list(const Criteria &criteria, const ScanCheck &proceed, bool *complete) const
{
    QList<ObjectInfo> result;
    d->scan(criteria, proceed, complete, [&result](const QString &name, const Entry &e) {
        result.append(ObjectInfo{name, e.object.typeName(), e.time, e.updateCount});
    });
    return result;
}

QList<StoredObject> Repository::objects(const Criteria &criteria, const ScanCheck &proceed,
                                        bool *complete) const
{
    QList<StoredObject> result;
    d->scan(criteria, proceed, complete, [&result](const QString &name, const Entry &e) {
        result.append(StoredObject{name, e.object, e.time, e.updateCount});
    });
    return result;
}

qsizetype Repository::size() const
{
    ReadLocker locker(&d->lock);
    return d->objects.size();
}

Repository::Statistics Repository::statistics() const
{
    Statistics s;
    s.inserts = d->inserts;
    s.updates = d->updates;
    s.removes = d->removes;
    s.gets = d->gets;
    s.failures = d->failures;
    s.objects = size();
    return s;
}

Status Repository::replaceAll(const QList<StoredObject> &objects)
{
    QMap<QString, Entry> fresh;
    for (const StoredObject &o : objects) {
        // StoredObject::name is an object name: it is not parsed for a server prefix.
        const QString &objectName = o.name;
        if (objectName.isEmpty())
            return d->fail(Status::Code::InvalidName, QStringLiteral("empty object name"));
        if (const Status checked = d->checkObject(o.object); !checked.isOk())
            return Status(checked.code(), QStringLiteral("object '%1': %2").arg(d->fullName(objectName), checked.message()));
        if (fresh.contains(objectName))
            return d->fail(Status::Code::AlreadyExists,
                           QStringLiteral("object '%1' appears twice").arg(d->fullName(objectName)));
        fresh.insert(objectName, Entry{o.object, o.time, o.updateCount});
    }
    {
        WriteLocker locker(&d->lock);
        d->objects.swap(fresh);
    }
    // The old content is destroyed here, outside the lock.
    return {};
}

int Repository::addListener(Listener listener)
{
    QMutexLocker locker(&d->listenerLock);
    const int id = d->nextListenerId++;
    d->listeners.emplace(id, std::make_shared<const Listener>(std::move(listener)));
    return id;
}

void Repository::removeListener(int id)
{
    QMutexLocker locker(&d->listenerLock);
    d->listeners.erase(id);
}

} // namespace dialog::is
