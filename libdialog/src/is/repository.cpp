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

using Result = Repository::Result;

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

    Result fail(Result result, QString *error, const QString &message) const
    {
        ++failures;
        if (error)
            *error = message;
        return result;
    }
    Result ok(QString *error) const
    {
        if (error)
            error->clear();
        return Result::Ok;
    }
    QString fullName(const QString &objectName) const { return serverName + QLatin1Char('.') + objectName; }

    bool checkName(const QString &name, QString *objectName, QString *error) const;
    Result checkObject(const Object &object, QString *error) const;
    /// @p at: the time of the change (a mirrored change), or Time() for now. With @p replaceType an
    /// existing object of another type is replaced (mirrors) instead of refused.
    Result write(WriteMode mode, const QString &name, const Object &object, QString *error, Time at = Time(),
                 bool replaceType = false);
    Result remove(const QString &name, Time at, QString *error);
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

bool RepositoryPrivate::checkName(const QString &name, QString *objectName, QString *error) const
{
    QString result = name;
    const qsizetype dot = name.indexOf(QLatin1Char('.'));
    if (dot >= 0) {
        const QString server = name.left(dot);
        if (server != serverName) {
            if (error)
                *error = QStringLiteral("object name '%1' belongs to server '%2', not '%3'")
                             .arg(name, server, serverName);
            return false;
        }
        result = name.mid(dot + 1);
    }
    if (result.isEmpty()) {
        if (error)
            *error = name.isEmpty() ? QStringLiteral("empty object name")
                                    : QStringLiteral("empty object name in '%1'").arg(name);
        return false;
    }
    *objectName = result;
    return true;
}

Result RepositoryPrivate::checkObject(const Object &object, QString *error) const
{
    if (!object.isValid())
        return fail(Result::InvalidObject, error, QStringLiteral("invalid object (no type)"));
    const TypeInfo type = registry.type(object.typeName());
    if (!type.isValid())
        return fail(Result::UnknownType, error,
                    QStringLiteral("unknown type '%1' in server '%2'").arg(object.typeName(), serverName));
    // An object made with another registry may carry a different definition under the same name.
    if (type.allAttributes() != object.attributes())
        return fail(Result::InvalidObject, error,
                    QStringLiteral("object of type '%1' does not match the registry's definition of the type")
                        .arg(object.typeName()));
    return Result::Ok;
}

Result RepositoryPrivate::write(WriteMode mode, const QString &name, const Object &object, QString *error,
                                Time at, bool replaceType)
{
    QString objectName;
    if (!checkName(name, &objectName, error))
        return fail(Result::InvalidName, error, error ? *error : QString());
    const Result checked = checkObject(object, error);
    if (checked != Result::Ok)
        return checked;

    Change change;
    {
        WriteLocker locker(&lock);
        auto it = objects.find(objectName);
        const Time now = at == Time() ? Time::currentTime() : at;
        if (it == objects.end()) {
            if (mode == WriteMode::Update)
                return fail(Result::NotFound, error,
                            QStringLiteral("object '%1' does not exist").arg(fullName(objectName)));
            objects.insert(objectName, Entry{object, now, 0});
            change.kind = Change::Kind::Created;
            ++inserts;
        } else {
            if (mode == WriteMode::Insert)
                return fail(Result::AlreadyExists, error,
                            QStringLiteral("object '%1' already exists").arg(fullName(objectName)));
            if (it->object.typeName() != object.typeName() && !replaceType)
                return fail(Result::TypeMismatch, error,
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
    return ok(error);
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

QString Repository::objectName(const QString &name, QString *error) const
{
    QString result;
    if (!d->checkName(name, &result, error))
        return QString();
    return result;
}

Result Repository::insert(const QString &name, const Object &object, QString *error)
{
    return d->write(WriteMode::Insert, name, object, error);
}

Result Repository::update(const QString &name, const Object &object, QString *error)
{
    return d->write(WriteMode::Update, name, object, error);
}

Result Repository::upsert(const QString &name, const Object &object, QString *error)
{
    return d->write(WriteMode::Upsert, name, object, error);
}

Result RepositoryPrivate::remove(const QString &name, Time at, QString *error)
{
    QString objectName;
    if (!checkName(name, &objectName, error))
        return fail(Result::InvalidName, error, error ? *error : QString());
    Change change;
    {
        WriteLocker locker(&lock);
        auto it = objects.find(objectName);
        if (it == objects.end())
            return fail(Result::NotFound, error,
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
    return ok(error);
}

Result Repository::mirror(const Change &change, QString *error)
{
    if (change.kind == Change::Kind::Removed)
        return d->remove(change.name, change.time, error);
    return d->write(WriteMode::Upsert, change.name, change.object, error, change.time, true);
}

Result Repository::remove(const QString &name, QString *error)
{
    return d->remove(name, Time(), error);
}

Result Repository::get(const QString &name, Object *out, const QString &expectedType, QString *error,
                       ObjectInfo *info) const
{
    QString objectName;
    if (!d->checkName(name, &objectName, error))
        return d->fail(Result::InvalidName, error, error ? *error : QString());
    if (!expectedType.isEmpty() && !d->registry.contains(expectedType))
        return d->fail(Result::UnknownType, error, QStringLiteral("unknown type '%1'").arg(expectedType));
    Entry entry;
    {
        ReadLocker locker(&d->lock);
        const auto it = d->objects.constFind(objectName);
        if (it == d->objects.cend())
            return d->fail(Result::NotFound, error,
                           QStringLiteral("object '%1' does not exist").arg(d->fullName(objectName)));
        entry = *it;
    }
    // Outside the lock: asBase() copies values and consults the registry.
    Object result = entry.object;
    if (!expectedType.isEmpty() && expectedType != entry.object.typeName()) {
        QString reason;
        result = entry.object.asBase(d->registry, expectedType, &reason);
        if (!result.isValid())
            return d->fail(Result::TypeMismatch, error,
                           QStringLiteral("object '%1': %2").arg(d->fullName(objectName), reason));
    }
    ++d->gets;
    if (out)
        *out = result;
    if (info)
        *info = ObjectInfo{objectName, entry.object.typeName(), entry.time, entry.updateCount};
    return d->ok(error);
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

Result Repository::replaceAll(const QList<StoredObject> &objects, QString *error)
{
    QMap<QString, Entry> fresh;
    for (const StoredObject &o : objects) {
        // StoredObject::name is an object name: it is not parsed for a server prefix.
        const QString &objectName = o.name;
        QString reason;
        if (objectName.isEmpty())
            return d->fail(Result::InvalidName, error, QStringLiteral("empty object name"));
        const Result checked = d->checkObject(o.object, &reason);
        if (checked != Result::Ok) {
            if (error)
                *error = QStringLiteral("object '%1': %2").arg(d->fullName(objectName), reason);
            return checked;
        }
        if (fresh.contains(objectName))
            return d->fail(Result::AlreadyExists, error,
                           QStringLiteral("object '%1' appears twice").arg(d->fullName(objectName)));
        fresh.insert(objectName, Entry{o.object, o.time, o.updateCount});
    }
    {
        WriteLocker locker(&d->lock);
        d->objects.swap(fresh);
    }
    // The old content is destroyed here, outside the lock.
    return d->ok(error);
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
