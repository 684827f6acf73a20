#include "dialog/is/dictionary.h"

#include "dialog/client.h"
#include "dialog/directory.h"
#include "dialog/handoff.h"
#include "dialog/is/codec.h"
#include "dialog/is/evolution.h"
#include "protocol_p.h"

#include <QEventLoop>
#include <QHash>
#include <QJsonDocument>
#include <QPointer>
#include <QSet>
#include <QTimer>

namespace dialog::is {

using namespace protocol;

class DictionaryPrivate
{
public:
    Client *client = nullptr;
    // Shared: events (is::Event) hold it too, and may outlive the dictionary.
    std::shared_ptr<TypeRegistry> types = std::make_shared<TypeRegistry>();
    int timeoutMs = 5000;
    QSet<QString> typesFetched; // servers whose types are in `types`
    // Servers whose types differ from ours (other type files): their objects are converted.
    QHash<QString, std::shared_ptr<const Evolution>> evolutions;

    using ReplyFn = std::function<void(const Status &, const isproto::Reply &)>;
    void call(Dictionary *q, const QString &server, const isproto::Request &request, ReplyFn done);
    /// As call(), to @p service (an IS server's or its archiver's); @p what names it in errors.
    void callService(Dictionary *q, const QString &service, const QString &what, const QString &missing,
                     const isproto::Request &request, ReplyFn done);
    void withTypes(Dictionary *q, const QString &server, std::function<void(const Status &)> then);
    Entry entryFrom(const QString &server, const isproto::Entry &e, Status *status);
    void list(Dictionary *q, const QString &server, const Criteria &criteria, Dictionary::ListDone done,
              bool withValues, bool staleOnly);
};

void DictionaryPrivate::call(Dictionary *q, const QString &server, const isproto::Request &request, ReplyFn done)
{
    if (server.isEmpty() || !Client::isValidName(serviceName(server))) {
        done(Status(Status::Code::InvalidName, QStringLiteral("invalid IS server name '%1'").arg(server)),
             isproto::Reply());
        return;
    }
    callService(q, serviceName(server), QStringLiteral("IS server %1").arg(server),
                QStringLiteral("no IS server '%1' is running").arg(server), request, std::move(done));
}

void DictionaryPrivate::callService(Dictionary *q, const QString &service, const QString &what,
                                    const QString &missing, const isproto::Request &request, ReplyFn done)
{
    client->request(service, serialize(request), timeoutMs, q, [=](const Reply &r) {
        isproto::Reply reply;
        switch (r.error()) {
        case Status::Code::Ok: {
            const QByteArray data = r.data();
            if (!reply.ParseFromArray(data.constData(), int(data.size()))) {
                done(Status(Status::Code::ServerError, QStringLiteral("%1 sent a malformed reply").arg(what)),
                     reply);
                return;
            }
            done(statusFromReply(reply), reply);
            return;
        }
        case Status::Code::Timeout:
            if (client->providerOf(service).isEmpty())
                done(Status(Status::Code::UnknownServer, missing), reply);
            else
                done(Status(Status::Code::Timeout,
                            QStringLiteral("%1 did not answer within %2 ms").arg(what).arg(timeoutMs)),
                     reply);
            return;
        case Status::Code::NotAccepted:
            done(Status(Status::Code::UnknownServer, r.errorString()), reply);
            return;
        case Status::Code::ProviderLost:
            done(Status(Status::Code::UnknownServer, r.errorString()), reply);
            return;
        case Status::Code::InvalidName:
        case Status::Code::MessageTooLarge:
        case Status::Code::NotConnected:
            done(Status(Status::Code::BadRequest, r.errorString()), reply);
            return;
        default:
            done(Status(Status::Code::ServerError, r.errorString()), reply);
            return;
        }
    });
}

void DictionaryPrivate::withTypes(Dictionary *q, const QString &server, std::function<void(const Status &)> then)
{
    if (typesFetched.contains(server)) {
        then(Status());
        return;
    }
    q->fetchTypes(server, std::move(then));
}

Entry DictionaryPrivate::entryFrom(const QString &server, const isproto::Entry &e, Status *status)
{
    Entry out;
    out.name = server + QLatin1Char('.') + QString::fromStdString(e.name());
    out.typeName = QString::fromStdString(e.type());
    out.time = Time(e.time_us());
    out.updateCount = e.update_count();
    out.staleness.writerLost = e.writer_lost();
    out.staleness.overdue = e.overdue();
    out.staleness.ageUs = e.age_us();
    out.staleness.expectedIntervalS = e.expected_interval_s();
    if (!e.value().empty()) {
        const QByteArrayView value(e.value().data(), qsizetype(e.value().size()));
        const auto evolution = evolutions.constFind(server);
        const Status st = evolution != evolutions.cend() ? (*evolution)->decode(value, out.object)
                                                         : decode(value, *types, out.object);
        if (!st.isOk() && status)
            *status = Status(st.code(), QStringLiteral("cannot decode %1: %2").arg(out.name, st.message()));
    }
    return out;
}

Dictionary::Dictionary(Client *client, QObject *parent) : QObject(parent), d(std::make_unique<DictionaryPrivate>())
{
    qRegisterMetaType<dialog::is::Status>();
    qRegisterMetaType<dialog::is::Entry>();
    d->client = client;
}

Dictionary::~Dictionary() = default;

Client *Dictionary::client() const
{
    return d->client;
}
TypeRegistry &Dictionary::types()
{
    return *d->types;
}

std::shared_ptr<const TypeRegistry> Dictionary::sharedTypes() const
{
    return d->types;
}
void Dictionary::setTimeout(int ms)
{
    d->timeoutMs = ms;
}
int Dictionary::timeout() const
{
    return d->timeoutMs;
}

bool Dictionary::splitName(const QString &name, QString *server, QString *object)
{
    const qsizetype dot = name.indexOf(QLatin1Char('.'));
    if (dot <= 0 || dot == name.size() - 1)
        return false;
    if (server)
        *server = name.left(dot);
    if (object)
        *object = name.mid(dot + 1);
    return true;
}

namespace {
Status badName(const QString &name)
{
    return Status(Status::Code::InvalidName,
                  QStringLiteral("'%1' is not an IS object name (expected Server.Object)").arg(name));
}
} // namespace

static void write(Dictionary *q, DictionaryPrivate *d, isproto::Request::Op op, const QString &name,
                  const Object &object, Dictionary::Done done)
{
    if (!done)
        done = [](const Status &) {};
    QString server, obj;
    if (!Dictionary::splitName(name, &server, &obj)) {
        done(badName(name));
        return;
    }
    isproto::Request r;
    r.set_op(op);
    r.set_name(name.toStdString()); // the full name: an object name may contain dots
    if (op != isproto::Request::REMOVE) {
        if (!object.isValid()) {
            done(Status(Status::Code::InvalidObject, QStringLiteral("invalid object for %1").arg(name)));
            return;
        }
        const QByteArray v = encode(object);
        r.set_value(v.constData(), size_t(v.size()));
    }
    d->call(q, server, r, [done](const Status &s, const isproto::Reply &) { done(s); });
}

void Dictionary::insert(const QString &name, const Object &object, Done done)
{
    write(this, d.get(), isproto::Request::INSERT, name, object, std::move(done));
}

void Dictionary::update(const QString &name, const Object &object, UpdateMode mode, Done done)
{
    write(this, d.get(), mode == UpdateMode::MustExist ? isproto::Request::UPDATE : isproto::Request::UPSERT, name,
          object, std::move(done));
}

void Dictionary::remove(const QString &name, Done done)
{
    write(this, d.get(), isproto::Request::REMOVE, name, Object(), std::move(done));
}

void Dictionary::get(const QString &name, GetDone done, const QString &asType)
{
    QString server, obj;
    if (!splitName(name, &server, &obj)) {
        done(badName(name), Entry());
        return;
    }
    d->withTypes(this, server, [this, server, obj, asType, done](const Status &ts) {
        if (!ts.isOk()) {
            done(ts, Entry());
            return;
        }
        isproto::Request r;
        r.set_op(isproto::Request::GET);
        r.set_name(QString(server + QLatin1Char('.') + obj).toStdString());
        r.set_type(asType.toStdString());
        d->call(this, server, r, [this, server, done](const Status &s, const isproto::Reply &reply) {
            if (!s.isOk() || reply.entries_size() != 1) {
                done(s.isOk() ? Status(Status::Code::ServerError, QStringLiteral("empty reply")) : s, Entry());
                return;
            }
            Status st;
            const Entry e = d->entryFrom(server, reply.entries(0), &st);
            done(st, e);
        });
    });
}

void Dictionary::list(const QString &server, const Criteria &criteria, ListDone done, bool withValues)
{
    d->list(this, server, criteria, std::move(done), withValues, false);
}

void Dictionary::listStale(const QString &server, const Criteria &criteria, ListDone done)
{
    d->list(this, server, criteria, std::move(done), false, true);
}

void DictionaryPrivate::list(Dictionary *q, const QString &server, const Criteria &criteria,
                             Dictionary::ListDone done, bool withValues, bool staleOnly)
{
    if (!criteria.isValid()) {
        done(Status(Status::Code::BadRequest, criteria.errorString()), {});
        return;
    }
    withTypes(q, server, [this, q, server, criteria, withValues, staleOnly, done](const Status &ts) {
        if (!ts.isOk()) {
            done(ts, {});
            return;
        }
        isproto::Request r;
        r.set_op(isproto::Request::LIST);
        r.set_with_values(withValues);
        r.set_stale_only(staleOnly);
        toProto(criteria, r.mutable_criteria());
        call(q, server, r, [this, server, done](const Status &s, const isproto::Reply &reply) {
            QList<Entry> out;
            Status st = s;
            if (s.isOk()) {
                out.reserve(reply.entries_size());
                for (const isproto::Entry &e : reply.entries())
                    out.append(entryFrom(server, e, &st));
            }
            done(st, out);
        });
    });
}

namespace {
isproto::Request historyRequest(const QString &name, const QString &attribute, Time from, Time to,
                                qsizetype maxPoints)
{
    isproto::Request r;
    r.set_op(isproto::Request::HISTORY);
    r.set_name(name.toStdString());
    r.set_attribute(attribute.toStdString());
    r.set_from_us(from.microsecondsSinceEpoch());
    r.set_to_us(to.microsecondsSinceEpoch());
    r.set_max_points(quint32(qBound(qsizetype(0), maxPoints, qsizetype(0x7fffffff))));
    return r;
}

// The archive's part (older) in front of the ring's, per attribute, downsampled again.
History merged(const History &archive, const History &ring, qsizetype maxPoints)
{
    History out = ring;
    if (out.typeName.isEmpty())
        out.typeName = archive.typeName;
    if (out.series.isEmpty()) {
        out.series = archive.series;
        return out;
    }
    for (HistorySeries &s : out.series) {
        for (const HistorySeries &a : archive.series) {
            if (a.attribute != s.attribute)
                continue;
            // The server stamps changes to the millisecond, the archive keeps values of one
            // millisecond apart (a microsecond each): of the oldest millisecond of the ring, the
            // archive adds the values the ring no longer holds.
            const qint64 oldest = ring.oldest.microsecondsSinceEpoch();
            const qsizetype inRing = ring.oldestCount;
            QList<HistoryPoint> points, sameMs;
            for (const HistoryPoint &p : a.points) {
                const qint64 t = p.time.microsecondsSinceEpoch();
                if (ring.oldest == Time() || t < oldest)
                    points.append(p);
                else if (t < oldest + 1000)
                    sameMs.append(p);
            }
            points.append(sameMs.mid(0, qMax<qsizetype>(0, sameMs.size() - inRing)));
            points.append(s.points);
            s.points = downsample(points, maxPoints);
        }
    }
    return out;
}
} // namespace

void Dictionary::history(const QString &name, Time from, Time to, qsizetype maxPoints, HistoryDone done,
                         const QString &attribute)
{
    QString server, obj;
    if (!splitName(name, &server, &obj)) {
        done(badName(name), History());
        return;
    }
    if (to < from) {
        done(Status(Status::Code::BadRequest,
                    QStringLiteral("the history of %1 is asked for an empty interval").arg(name)),
             History());
        return;
    }
    const isproto::Request r = historyRequest(name, attribute, from, to, maxPoints);
    d->call(this, server, r, [=](const Status &s, const isproto::Reply &reply) {
        History ring = historyFromProto(reply);
        ring.name = name;
        const QString archive = QString::fromStdString(reply.archive_service());
        const bool older = ring.oldest == Time() || from < ring.oldest;
        if ((!s.isOk() && s.code() != Status::Code::NotFound) || archive.isEmpty() || !older) {
            done(s, ring);
            return;
        }
        // The part before the ring from the archiver, which runs apart: the IS server never waits for it.
        // Raw: up to the end of the ring's oldest millisecond, to join exactly (merged()). Downsampled:
        // strictly before the ring (values of that one millisecond the ring dropped are left out).
        const qint64 edge = ring.oldest.microsecondsSinceEpoch() + (maxPoints > 0 ? -1 : 999);
        const Time archiveTo = ring.oldest == Time() ? to : qMin(to, Time(edge));
        const isproto::Request ar = historyRequest(name, attribute, from, archiveTo, maxPoints);
        d->callService(this, archive, QStringLiteral("archiver of %1").arg(server),
                       QStringLiteral("no archiver of %1 is running").arg(server), ar,
                       [=](const Status &as, const isproto::Reply &areply) {
                           if (!as.isOk()) {
                               // The ring's part is still worth having; without it, the archive's error.
                               done(s.isOk() ? s : as, ring);
                               return;
                           }
                           done(Status(), merged(historyFromProto(areply), ring, maxPoints));
                       });
    });
}

void Dictionary::fetchTypes(const QString &server, Done done)
{
    isproto::Request r;
    r.set_op(isproto::Request::TYPES);
    d->call(this, server, r, [this, server, done](const Status &s, const isproto::Reply &reply) {
        if (!s.isOk()) {
            done(s);
            return;
        }
        QJsonParseError pe;
        const QJsonDocument doc = QJsonDocument::fromJson(
            QByteArray::fromStdString(reply.types_json()), &pe);
        QList<TypeInfo> types;
        Status st(Status::Code::ServerError, pe.errorString());
        QStringList kept; // known here with another definition: ours is kept, theirs converted
        Layouts theirs;
        if (doc.isArray() && (st = typesFromJson(doc.array(), &types)).isOk())
            st = declareNewTypes(*d->types, types, &kept);
        if (st.isOk() && !kept.isEmpty())
            st = Layouts::of(types, &theirs);
        if (!st.isOk()) {
            done(Status(Status::Code::ServerError, QStringLiteral("types of IS server %1: %2").arg(server, st.message())));
            return;
        }
        if (kept.isEmpty())
            d->evolutions.remove(server);
        else
            d->evolutions.insert(server, std::make_shared<const Evolution>(*d->types, theirs));
        d->typesFetched.insert(server);
        done(Status());
    });
}

void Dictionary::declareTypes(const QString &server, const QList<TypeInfo> &types, Done done)
{
    if (!done)
        done = [](const Status &) {};
    isproto::Request r;
    r.set_op(isproto::Request::DECLARE_TYPES);
    QJsonArray arr;
    for (const TypeInfo &t : types)
        arr.append(typeToJson(t));
    r.set_types_json(QJsonDocument(arr).toJson(QJsonDocument::Compact).toStdString());
    d->call(this, server, r, [this, types, done](const Status &s, const isproto::Reply &) {
        if (s.isOk()) {
            if (const Status merged = mergeTypes(*d->types, types); !merged.isOk()) {
                done(merged);
                return;
            }
        }
        done(s);
    });
}

void Dictionary::statistics(const QString &server, GetDone done)
{
    get(server + QStringLiteral(".Statistics"), std::move(done));
}

void Dictionary::servers(std::function<void(const Status &, const QStringList &)> done)
{
    Subscription *sub = d->client->subscribe(QStringLiteral("DIALOG.Directory"));
    if (!sub) {
        done(Status(Status::Code::ServerError, QStringLiteral("cannot read the DIALOG directory")), {});
        return;
    }
    auto *timer = new QTimer(sub);
    timer->setSingleShot(true);
    auto finished = std::make_shared<bool>(false);
    const auto finish = [this, sub, done, finished](const Status &s, const QStringList &names) {
        if (*finished)
            return;
        *finished = true;
        QMetaObject::invokeMethod(this, handoff::handOff([this, sub] { d->client->unsubscribe(sub); }),
                                  Qt::QueuedConnection);
        done(s, names);
    };
    connect(timer, &QTimer::timeout, this, [finish, this] {
        finish(Status(Status::Code::Timeout,
                      QStringLiteral("no directory from the Control Server within %1 ms").arg(d->timeoutMs)),
               {});
    });
    connect(sub, &Subscription::messageReceived, this,
            [finish, pages = std::make_shared<DirectoryAssembler>()](const Message &m) {
                std::optional<DirectorySnapshot> dir; // a large directory comes in pages
                if (!pages->add(m.data(), &dir).isOk() || !dir)
                    return;
                QStringList names;
                for (const ProcessEntry &p : dir->processes)
                    for (const QString &s : p.services)
                        if (s.startsWith(servicePrefix()))
                            names << s.mid(servicePrefix().size());
                names.sort();
                finish(Status(), names);
            });
    timer->start(d->timeoutMs);
}

// Blocking forms: run a local event loop until the callback ran.
template <typename Start> static Status runSync(Start &&start)
{
    QEventLoop loop;
    Status result;
    bool done = false;
    start([&](const Status &s) {
        result = s;
        done = true;
        loop.quit();
    });
    if (!done)
        loop.exec();
    return result;
}

Status Dictionary::insertSync(const QString &name, const Object &object)
{
    return runSync([&](Done fin) { insert(name, object, fin); });
}
Status Dictionary::updateSync(const QString &name, const Object &object, UpdateMode mode)
{
    return runSync([&](Done fin) { update(name, object, mode, fin); });
}
Status Dictionary::removeSync(const QString &name)
{
    return runSync([&](Done fin) { remove(name, fin); });
}
Status Dictionary::getSync(const QString &name, Entry *out, const QString &asType)
{
    return runSync([&](Done fin) {
        get(
            name,
            [out, fin](const Status &s, const Entry &e) {
                if (out)
                    *out = e;
                fin(s);
            },
            asType);
    });
}
Status Dictionary::listSync(const QString &server, const Criteria &criteria, QList<Entry> *out, bool withValues)
{
    return runSync([&](Done fin) {
        list(
            server, criteria,
            [out, fin](const Status &s, const QList<Entry> &l) {
                if (out)
                    *out = l;
                fin(s);
            },
            withValues);
    });
}
Status Dictionary::listStaleSync(const QString &server, const Criteria &criteria, QList<Entry> *out)
{
    return runSync([&](Done fin) {
        listStale(server, criteria, [out, fin](const Status &s, const QList<Entry> &l) {
            if (out)
                *out = l;
            fin(s);
        });
    });
}
Status Dictionary::historySync(const QString &name, Time from, Time to, qsizetype maxPoints, History *out,
                               const QString &attribute)
{
    return runSync([&](Done fin) {
        history(
            name, from, to, maxPoints,
            [out, fin](const Status &s, const History &h) {
                if (out)
                    *out = h;
                fin(s);
            },
            attribute);
    });
}
Status Dictionary::fetchTypesSync(const QString &server)
{
    return runSync([&](Done fin) { fetchTypes(server, fin); });
}
Status Dictionary::declareTypesSync(const QString &server, const QList<TypeInfo> &types)
{
    return runSync([&](Done fin) { declareTypes(server, types, fin); });
}
Status Dictionary::serversSync(QStringList *out)
{
    return runSync([&](Done fin) {
        servers([out, fin](const Status &s, const QStringList &l) {
            if (out)
                *out = l;
            fin(s);
        });
    });
}

Iterator::Iterator(Dictionary &dictionary, const QString &server, const Criteria &criteria, bool withValues)
{
    m_status = dictionary.listSync(server, criteria, &m_entries, withValues);
}

bool Iterator::next()
{
    if (m_index + 1 >= m_entries.size())
        return false;
    ++m_index;
    return true;
}

} // namespace dialog::is
