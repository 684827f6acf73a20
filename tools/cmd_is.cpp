// dialogctl is …: the Information Service from the command line.
#include "clientsetup.h"

#include "dialog/is/codec.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>
#include <cstdio>

namespace dialog::tool {

namespace {

const char *isUsage =
    "usage: dialogctl is <command> [options]\n"
    "\n"
    "commands:\n"
    "  ls [SERVER]                  IS servers, or the objects of SERVER (criteria options; --stale)\n"
    "  get Server.Object            an object's value (and whether it is stale)\n"
    "  put Server.Object --type T attr=value …   create or update an object\n"
    "  rm Server.Object             remove an object\n"
    "  watch SERVER[.REGEX]         print every create/update/remove as it happens\n"
    "  types [TYPE]                 the IS types (meta-information) of the servers\n"
    "  stats SERVER                 a server's statistics (rates, subscribers, drops)\n"
    "  history Server.Object [ATTR] --since 10m   recent values of numeric attributes\n"
    "  migrate --data-dir D --server S --types T   rewrite a stopped server's checkpoint in new types\n"
    "\n"
    "Every command accepts --help, --json and --control-server host:port.\n";

void out(const QString &line)
{
    std::fputs(qPrintable(line), stdout);
    std::fputc('\n', stdout);
}

QString compact(const QJsonValue &v)
{
    if (v.isString())
        return v.toString();
    if (v.isArray())
        return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    if (v.isObject())
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    return v.toVariant().toString();
}

void addCriteriaOptions(OptionTable &p)
{
    p.add(Option::text(QStringLiteral("regex"), QStringLiteral("re"),
                       QStringLiteral("Regular expression (PCRE2) on the whole object name.")));
    p.add(Option::text(QStringLiteral("type"), QStringLiteral("type"),
                       QStringLiteral("Only objects of this type.")));
    p.add(Option::flag(QStringLiteral("subtypes"), QStringLiteral("With --type: also its subtypes.")));
    p.add(Option::flag(QStringLiteral("not"), QStringLiteral("With --type: objects of any type but it.")));
    p.add(Option::flag(QStringLiteral("or"), QStringLiteral("Match the regex OR the type (default AND).")));
}

bool criteriaFrom(const OptionTable &p, const QString &regex, is::Criteria &out, QString *error)
{
    using S = is::Criteria::TypeSelector;
    S sel = S::Any;
    if (p.isSet(QStringLiteral("type"))) {
        const bool sub = p.isSet(QStringLiteral("subtypes")), no = p.isSet(QStringLiteral("not"));
        sel = no ? (sub ? S::NotWithSubtypes : S::Not) : (sub ? S::WithSubtypes : S::Exactly);
    } else if (p.isSet(QStringLiteral("subtypes")) || p.isSet(QStringLiteral("not"))) {
        *error = QStringLiteral("--subtypes and --not need --type");
        return false;
    }
    out = is::Criteria(regex, p.value(QStringLiteral("type")), sel,
                       p.isSet(QStringLiteral("or")) ? is::Criteria::Logic::Or : is::Criteria::Logic::And);
    if (!out.isValid()) {
        *error = QStringLiteral("bad --regex: %1").arg(out.errorString());
        return false;
    }
    return true;
}

QJsonObject entryJson(const is::Entry &e)
{
    QJsonObject o{{QStringLiteral("name"), e.name},
                  {QStringLiteral("type"), e.typeName},
                  {QStringLiteral("time"), e.time.toString()},
                  {QStringLiteral("updates"), qint64(e.updateCount)}};
    if (e.object.isValid())
        o.insert(QStringLiteral("value"), is::toJson(e.object));
    e.staleness.addTo(o);
    return o;
}

void printObject(const is::Entry &e, const is::TypeRegistry &types)
{
    out(QStringLiteral("%1  (%2, updated %3)").arg(e.name, e.typeName, e.time.toString()));
    if (e.staleness.isStale())
        out(QStringLiteral("  STALE: %1; last update %2 s ago")
                .arg(e.staleness.reason(), QString::number(e.staleness.ageUs / 1e6, 'f', 1)));
    const QJsonObject v = is::toJson(e.object);
    const is::TypeInfo t = types.type(e.object.typeName());
    const QList<is::AttributeInfo> attrs = e.object.attributes();
    int width = 0;
    for (const auto &a : attrs)
        width = qMax(width, int(a.name().size()));
    for (const auto &a : attrs) {
        const QString type = a.typeName() + (a.isVector() ? QStringLiteral("[]") : QString());
        QString line =
            QStringLiteral("  %1 %2 = %3")
                .arg(a.name().leftJustified(width), type.leftJustified(8), compact(v.value(a.name())));
        if (!a.description().isEmpty())
            line += QStringLiteral("   # ") + a.description();
        out(line);
    }
    Q_UNUSED(t);
}

struct Session
{
    std::unique_ptr<Client> client;
    std::unique_ptr<is::Dictionary> dict;
};

// --timeout-ms of the verb that runs (one per process).
qint64 requestTimeoutMs = 5000;

bool open(const OptionTable &p, const QString &verb, Session &s, QString *error)
{
    s.client = makeClient(p, verb, error);
    if (!s.client)
        return false;
    s.dict = std::make_unique<is::Dictionary>(s.client.get());
    s.dict->setTimeout(int(requestTimeoutMs));
    return true;
}

/// Fails fast with "unknown server" when the directory does not list @p server.
bool checkServer(Session &s, const QString &server, QString *error)
{
    QStringList servers;
    const is::Status st = s.dict->serversSync(&servers);
    if (!st.isOk()) {
        *error = st.toString();
        return false;
    }
    if (!servers.contains(server)) {
        // The directory is published with a short delay: a server that just started may answer already.
        const int timeout = s.dict->timeout();
        s.dict->setTimeout(qMin(timeout, 1000));
        const bool answers = s.dict->fetchTypesSync(server).isOk();
        s.dict->setTimeout(timeout);
        if (answers)
            return true;
        *error =
            QStringLiteral("unknown server: no IS server '%1' is running (servers: %2)")
                .arg(server, servers.isEmpty() ? QStringLiteral("none") : servers.join(QLatin1String(", ")));
        return false;
    }
    return true;
}

bool setup(OptionTable &p, const QStringList &args, const QString &description)
{
    p.setDescription(description);
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Machine-readable JSON output.")));
    p.add(Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                           QStringLiteral("Time-out of each request (default 5000)."), &requestTimeoutMs,
                           OptionUnit::Milliseconds, 1, 3600000));
    return parse(p, args);
}

int isLs(const QStringList &args)
{
    const QString verb = QStringLiteral("is ls");
    OptionTable p(program(verb));
    p.addPositional(QStringLiteral("server"), QStringLiteral("IS server (default: list the servers)."),
                    QStringLiteral("[SERVER]"));
    addCriteriaOptions(p);
    p.add(Option::flag(QStringLiteral("stale"),
                       QStringLiteral("Only the stale objects (their writer lost, or not "
                                      "updated within their type's expected interval).")));
    if (!setup(p, args, QStringLiteral("Lists the IS servers, or the objects of one server.")))
        return 1;
    const bool json = p.isSet(QStringLiteral("json"));
    QString error;
    Session s;
    if (!open(p, verb, s, &error))
        return fail(verb, error);
    if (p.positionalArguments().isEmpty()) {
        QStringList servers;
        const is::Status st = s.dict->serversSync(&servers);
        if (!st.isOk())
            return fail(verb, st.toString());
        for (const QString &srv : servers) {
            is::Entry e;
            const is::Status ss = s.dict->getSync(srv + QStringLiteral(".Statistics"), &e);
            const qint64 objects = ss.isOk() ? e.object.get<quint64>(QStringLiteral("objects")) : -1;
            if (json)
                out(QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("server"), srv},
                                                                {QStringLiteral("objects"), objects}})
                                          .toJson(QJsonDocument::Compact)));
            else
                out(QStringLiteral("%1  %2 objects").arg(srv.leftJustified(20)).arg(objects));
        }
        return 0;
    }
    if (p.positionalArguments().size() != 1)
        return fail(verb, QStringLiteral("expected at most one server name"));
    const QString server = p.positionalArguments().first();
    is::Criteria c;
    if (!criteriaFrom(p, p.value(QStringLiteral("regex")), c, &error))
        return fail(verb, error);
    if (!checkServer(s, server, &error))
        return fail(verb, error);
    QList<is::Entry> entries;
    const is::Status st = p.isSet(QStringLiteral("stale")) ? s.dict->listStaleSync(server, c, &entries)
                                                           : s.dict->listSync(server, c, &entries, false);
    if (!st.isOk())
        return fail(verb, st.toString());
    for (const is::Entry &e : std::as_const(entries)) {
        if (json)
            out(QString::fromUtf8(QJsonDocument(entryJson(e)).toJson(QJsonDocument::Compact)));
        else
            out(QStringLiteral("%1 %2 %3%4")
                    .arg(e.name.leftJustified(40), e.typeName.leftJustified(20), e.time.toString(),
                         e.staleness.isStale() ? QStringLiteral("  STALE (%1)").arg(e.staleness.reason())
                                               : QString()));
    }
    return 0;
}

int isGet(const QStringList &args)
{
    const QString verb = QStringLiteral("is get");
    OptionTable p(program(verb));
    p.addPositional(QStringLiteral("name"), QStringLiteral("Server.Object"));
    p.add(Option::text(QStringLiteral("as"), QStringLiteral("type"),
                       QStringLiteral("Read the object as this (base) type.")));
    if (!setup(p, args, QStringLiteral("Prints the value of an IS object.")))
        return 1;
    if (p.positionalArguments().size() != 1)
        return fail(verb, QStringLiteral("expected one object name Server.Object"));
    const QString name = p.positionalArguments().first();
    QString server, error;
    if (!is::Dictionary::splitName(name, &server, nullptr))
        return fail(verb, QStringLiteral("'%1' is not an IS object name (expected Server.Object)").arg(name));
    Session s;
    if (!open(p, verb, s, &error) || !checkServer(s, server, &error))
        return fail(verb, error);
    is::Entry e;
    const is::Status st = s.dict->getSync(name, &e, p.value(QStringLiteral("as")));
    if (!st.isOk())
        return fail(verb, st.toString());
    if (p.isSet(QStringLiteral("json")))
        out(QString::fromUtf8(QJsonDocument(entryJson(e)).toJson(QJsonDocument::Compact)));
    else
        printObject(e, s.dict->types());
    return 0;
}

QVariant parseValue(const is::AttributeInfo &a, const QString &text)
{
    if (a.isVector()) {
        const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
        if (doc.isArray())
            return doc.array().toVariantList();
        QVariantList l;
        for (const QString &part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
            l << part.trimmed();
        return l;
    }
    if (a.type() == is::BasicType::Bool) {
        const QString t = text.trimmed().toLower();
        if (t == QLatin1String("true") || t == QLatin1String("1") || t == QLatin1String("yes"))
            return true;
        if (t == QLatin1String("false") || t == QLatin1String("0") || t == QLatin1String("no"))
            return false;
    }
    return text;
}

int isPut(const QStringList &args)
{
    const QString verb = QStringLiteral("is put");
    OptionTable p(program(verb));
    p.addPositional(QStringLiteral("name"), QStringLiteral("Server.Object"));
    p.addPositional(QStringLiteral("values"), QStringLiteral("attr=value … (vectors: a,b,c or a JSON array)"),
                    QStringLiteral("[attr=value…]"));
    p.add(Option::text(QStringLiteral("type"), QStringLiteral("type"),
                       QStringLiteral("The object's IS type (required).")));
    p.add(Option::flag(QStringLiteral("insert"), QStringLiteral("Fail if the object exists.")));
    p.add(Option::flag(QStringLiteral("must-exist"), QStringLiteral("Fail if the object does not exist.")));
    if (!setup(
            p, args,
            QStringLiteral("Creates or updates an IS object. Attributes not given keep their current value "
                           "(or the default for a new object).")))
        return 1;
    if (p.positionalArguments().isEmpty())
        return fail(verb, QStringLiteral("expected an object name Server.Object"));
    const QString name = p.positionalArguments().first();
    const QString type = p.value(QStringLiteral("type"));
    if (type.isEmpty())
        return fail(verb, QStringLiteral("--type is required"));
    QString server, error;
    if (!is::Dictionary::splitName(name, &server, nullptr))
        return fail(verb, QStringLiteral("'%1' is not an IS object name (expected Server.Object)").arg(name));
    Session s;
    if (!open(p, verb, s, &error) || !checkServer(s, server, &error))
        return fail(verb, error);
    const is::Status ts = s.dict->fetchTypesSync(server);
    if (!ts.isOk())
        return fail(verb, ts.toString());
    if (!s.dict->types().contains(type))
        return fail(verb, QStringLiteral("unknown type: server %1 has no type '%2'").arg(server, type));
    is::Object obj;
    is::Entry current;
    if (!p.isSet(QStringLiteral("insert")) && s.dict->getSync(name, &current).isOk() &&
        current.typeName == type)
        obj = current.object;
    else
        obj = is::Object::create(s.dict->types(), type); // known: checked above
    for (const QString &kv : p.positionalArguments().mid(1)) {
        const qsizetype eq = kv.indexOf(QLatin1Char('='));
        if (eq <= 0)
            return fail(verb, QStringLiteral("'%1' is not attr=value").arg(kv));
        const QString attr = kv.left(eq);
        const int index = obj.indexOf(attr);
        if (index < 0)
            return fail(verb, QStringLiteral("type %1 has no attribute '%2'").arg(type, attr));
        if (const is::Status set = obj.setVariant(index, parseValue(obj.attributes().at(index), kv.mid(eq + 1)));
            !set.isOk())
            return fail(verb, set.message());
    }
    is::Status st;
    if (p.isSet(QStringLiteral("insert")))
        st = s.dict->insertSync(name, obj);
    else
        st = s.dict->updateSync(name, obj,
                                p.isSet(QStringLiteral("must-exist"))
                                    ? is::Dictionary::UpdateMode::MustExist
                                    : is::Dictionary::UpdateMode::CreateIfMissing);
    if (!st.isOk())
        return fail(verb, st.toString());
    return 0;
}

int isRm(const QStringList &args)
{
    const QString verb = QStringLiteral("is rm");
    OptionTable p(program(verb));
    p.addPositional(QStringLiteral("name"), QStringLiteral("Server.Object"));
    if (!setup(p, args, QStringLiteral("Removes an IS object.")))
        return 1;
    if (p.positionalArguments().size() != 1)
        return fail(verb, QStringLiteral("expected one object name Server.Object"));
    const QString name = p.positionalArguments().first();
    QString server, error;
    if (!is::Dictionary::splitName(name, &server, nullptr))
        return fail(verb, QStringLiteral("'%1' is not an IS object name (expected Server.Object)").arg(name));
    Session s;
    if (!open(p, verb, s, &error) || !checkServer(s, server, &error))
        return fail(verb, error);
    const is::Status st = s.dict->removeSync(name);
    return st.isOk() ? 0 : fail(verb, st.toString());
}

int isWatch(const QStringList &args)
{
    const QString verb = QStringLiteral("is watch");
    qint64 count = 0;
    OptionTable p(program(verb));
    p.addPositional(QStringLiteral("criteria"),
                    QStringLiteral("SERVER or SERVER.REGEX (the regex matches whole object names)"));
    addCriteriaOptions(p);
    p.add(Option::flag(QStringLiteral("names-only"), QStringLiteral("Subscribe without values.")));
    p.add(Option::flag(QStringLiteral("snapshot"),
                       QStringLiteral("First print the matching objects the server holds (as 'created', between "
                                      "'snapshot-begin' and 'snapshot-end'), and again whenever the server "
                                      "restarted: what changed while it was away is then not missed.")));
    p.add(Option::integer(QStringLiteral("count"), QStringLiteral("n"),
                          QStringLiteral("Exit after N events."), &count, 1, qint64(1) << 62));
    if (!setup(p, args,
               QStringLiteral("Prints every creation, update and removal of matching objects.")))
        return 1;
    if (p.positionalArguments().size() != 1)
        return fail(verb, QStringLiteral("expected SERVER or SERVER.REGEX"));
    const QString spec = p.positionalArguments().first();
    const qsizetype dot = spec.indexOf(QLatin1Char('.'));
    const QString server = dot < 0 ? spec : spec.left(dot);
    QString regex = dot < 0 ? QString() : spec.mid(dot + 1);
    if (p.isSet(QStringLiteral("regex")))
        regex = p.value(QStringLiteral("regex"));
    QString error;
    is::Criteria c;
    if (!criteriaFrom(p, regex, c, &error))
        return fail(verb, error);
    Session s;
    if (!open(p, verb, s, &error) || !checkServer(s, server, &error))
        return fail(verb, error);
    const bool json = p.isSet(QStringLiteral("json"));
    is::Receiver receiver(s.dict.get());
    qint64 seen = 0;
    int rc = 0;
    bool broken = false;
    static const char *kinds[] = {"created", "updated", "removed", "snapshot-begin", "snapshot-end"};
    receiver.setCallback([&](const is::Event &e) {
        if (e.kind() == is::Event::Kind::SnapshotBegin || e.kind() == is::Event::Kind::SnapshotEnd) {
            const QLatin1String kind(kinds[int(e.kind())]);
            out(json ? QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("event"), kind},
                                                                   {QStringLiteral("server"), server}})
                                             .toJson(QJsonDocument::Compact))
                     : QStringLiteral("%1 %2").arg(kind, server));
            std::fflush(stdout);
            return; // a marker, not an event that --count counts
        }
        if (int(e.kind()) > int(is::Event::Kind::Removed))
            return;
        const is::Object o = e.object();
        if (json) {
            QJsonObject j{{QStringLiteral("event"), QLatin1String(kinds[int(e.kind())])},
                          {QStringLiteral("name"), e.name()},
                          {QStringLiteral("type"), e.typeName()},
                          {QStringLiteral("time"), e.time().toString()}};
            if (o.isValid())
                j.insert(QStringLiteral("value"), is::toJson(o));
            out(QString::fromUtf8(QJsonDocument(j).toJson(QJsonDocument::Compact)));
        } else {
            out(QStringLiteral("%1 %2 %3 %4 %5")
                    .arg(e.time().toString(), QString::fromLatin1(kinds[int(e.kind())]).leftJustified(7),
                         e.name(), e.typeName(),
                         o.isValid()
                             ? QString::fromUtf8(QJsonDocument(is::toJson(o)).toJson(QJsonDocument::Compact))
                             : QString()));
        }
        std::fflush(stdout);
        if (count && ++seen >= count)
            QCoreApplication::exit(0);
    });
    QObject::connect(&receiver, &is::Receiver::subscriptionChanged, &receiver,
                     [&](int, const is::Status &status) {
                         if (status.code() == is::Status::Code::BadRequest) {
                             fail(verb, status.toString());
                             rc = 1;
                             QCoreApplication::exit(1);
                         } else if (!status.isOk()) {
                             std::fprintf(stderr, "dialogctl %s: %s\n", qPrintable(verb), qPrintable(status.toString()));
                             broken = true;
                         } else if (broken) {
                             std::fprintf(stderr, "dialogctl %s: subscribed to %s again\n", qPrintable(verb),
                                          qPrintable(server));
                             broken = false;
                         }
                     });
    if (p.isSet(QStringLiteral("snapshot")))
        receiver.subscribeWithSnapshot(server, c, !p.isSet(QStringLiteral("names-only")));
    else
        receiver.subscribe(server, c, !p.isSet(QStringLiteral("names-only")));
    const int code = QCoreApplication::exec();
    return rc ? rc : code;
}

int isTypes(const QStringList &args)
{
    const QString verb = QStringLiteral("is types");
    OptionTable p(program(verb));
    p.addPositional(QStringLiteral("type"), QStringLiteral("Only this type."), QStringLiteral("[TYPE]"));
    p.add(Option::text(QStringLiteral("server"), QStringLiteral("server"),
                       QStringLiteral("Only the types of this server (default: all).")));
    if (!setup(p, args, QStringLiteral("Prints the IS types: names, descriptions, attributes.")))
        return 1;
    QString error;
    Session s;
    if (!open(p, verb, s, &error))
        return fail(verb, error);
    QStringList servers;
    if (p.isSet(QStringLiteral("server"))) {
        if (!checkServer(s, p.value(QStringLiteral("server")), &error))
            return fail(verb, error);
        servers << p.value(QStringLiteral("server"));
    } else {
        const is::Status st = s.dict->serversSync(&servers);
        if (!st.isOk())
            return fail(verb, st.toString());
    }
    for (const QString &srv : std::as_const(servers)) {
        const is::Status st = s.dict->fetchTypesSync(srv);
        if (!st.isOk())
            return fail(verb, st.toString());
    }
    QStringList names = s.dict->types().typeNames();
    if (!p.positionalArguments().isEmpty()) {
        const QString only = p.positionalArguments().first();
        if (!names.contains(only))
            return fail(verb, QStringLiteral("unknown type '%1'").arg(only));
        names = {only};
    }
    for (const QString &n : std::as_const(names)) {
        const is::TypeInfo t = s.dict->types().type(n);
        if (p.isSet(QStringLiteral("json"))) {
            QJsonObject j = is::typeToJson(t);
            j.insert(QStringLiteral("subtypes"), QJsonArray::fromStringList(s.dict->types().subtypesOf(n)));
            out(QString::fromUtf8(QJsonDocument(j).toJson(QJsonDocument::Compact)));
            continue;
        }
        const double interval = s.dict->types().expectedIntervalS(n);
        out(QStringLiteral("%1%2  %3%4")
                .arg(n, t.baseName().isEmpty() ? QString() : QStringLiteral(" : ") + t.baseName(),
                     t.description(),
                     interval > 0 ? QStringLiteral("  (expected every %1 s)").arg(interval) : QString()));
        for (const is::AttributeInfo &a : t.allAttributes())
            out(QStringLiteral("    %1 %2  %3")
                    .arg(a.name().leftJustified(20),
                         (a.typeName() + (a.isVector() ? QStringLiteral("[]") : QString())).leftJustified(14),
                         a.description()));
    }
    return 0;
}

int isStats(const QStringList &args)
{
    const QString verb = QStringLiteral("is stats");
    OptionTable p(program(verb));
    p.addPositional(QStringLiteral("server"), QStringLiteral("IS server"));
    if (!setup(p, args,
               QStringLiteral("Prints a server's statistics: objects, rates, subscribers, drops.")))
        return 1;
    if (p.positionalArguments().size() != 1)
        return fail(verb, QStringLiteral("expected one server name"));
    const QString server = p.positionalArguments().first();
    QString error;
    Session s;
    if (!open(p, verb, s, &error) || !checkServer(s, server, &error))
        return fail(verb, error);
    is::Entry e;
    const is::Status st = s.dict->getSync(server + QStringLiteral(".Statistics"), &e);
    if (!st.isOk())
        return fail(verb, st.toString());
    const QJsonObject v = is::toJson(e.object);
    if (p.isSet(QStringLiteral("json"))) {
        QJsonObject j = v;
        j.insert(QStringLiteral("server"), server);
        j.insert(QStringLiteral("time"), e.time.toString());
        out(QString::fromUtf8(QJsonDocument(j).toJson(QJsonDocument::Compact)));
        return 0;
    }
    out(QStringLiteral("IS server %1 (at %2)").arg(server, e.time.toString()));
    for (const char *k :
         {"objects", "changes", "changesPerSecond", "deliveries", "deliveriesPerSecond", "subscribers",
          "slowSubscribers", "dropped", "requests", "lastCheckpoint", "checkpointErrors"})
        out(QStringLiteral("  %1 %2").arg(QString::fromLatin1(k).leftJustified(20),
                                          compact(v.value(QLatin1String(k)))));
    const QJsonArray names = v.value(QLatin1String("subscriberNames")).toArray();
    if (!names.isEmpty())
        out(QStringLiteral("  subscribers: priority delivered dropped"));
    for (qsizetype i = 0; i < names.size(); ++i)
        out(QStringLiteral("    %1 %2 %3 %4")
                .arg(names.at(i).toString().leftJustified(40))
                .arg(v.value(QLatin1String("subscriberPriorities")).toArray().at(i).toInt(), 3)
                .arg(compact(v.value(QLatin1String("subscriberDelivered")).toArray().at(i)), 12)
                .arg(compact(v.value(QLatin1String("subscriberDropped")).toArray().at(i)), 10));
    return 0;
}

int isHistory(const QStringList &args)
{
    const QString verb = QStringLiteral("is history");
    qint64 maxPoints = 0;
    OptionTable p(program(verb));
    p.addPositional(QStringLiteral("name"), QStringLiteral("Server.Object"));
    p.addPositional(QStringLiteral("attribute"),
                    QStringLiteral("One numeric attribute (default: every one)."), QStringLiteral("[ATTR]"));
    p.add(Option::text(QStringLiteral("since"), QStringLiteral("duration"),
                       QStringLiteral("How far back: 90s, 10m, 2h, 7d (default 10m)."))
              .defaultValue(QStringLiteral("10m")));
    p.add(Option::integer(
        QStringLiteral("max-points"), QStringLiteral("n"),
        QStringLiteral("At most this many points per attribute, min/max/mean buckets beyond (default: all)."),
        &maxPoints, 0, 10000000));
    if (!setup(p, args,
               QStringLiteral(
                   "Prints the recent values of the numeric attributes of an IS object, from the server's "
                   "history ring and, further back, its archiver.")))
        return 1;
    const QStringList pos = p.positionalArguments();
    if (pos.isEmpty() || pos.size() > 2)
        return fail(verb, QStringLiteral("expected Server.Object [ATTRIBUTE]"));
    const QString name = pos.first();
    QString server, error;
    if (!is::Dictionary::splitName(name, &server, nullptr))
        return fail(verb, QStringLiteral("'%1' is not an IS object name (expected Server.Object)").arg(name));
    const qint64 since = is::parseDurationUs(p.value(QStringLiteral("since")));
    if (since < 0)
        return fail(verb, QStringLiteral("invalid --since '%1' (e.g. 90s, 10m, 2h, 7d)")
                              .arg(p.value(QStringLiteral("since"))));
    Session s;
    if (!open(p, verb, s, &error) || !checkServer(s, server, &error))
        return fail(verb, error);
    const is::Time now = is::Time::currentTime();
    is::History h;
    const is::Status st = s.dict->historySync(name, is::Time(now.microsecondsSinceEpoch() - since), now,
                                              maxPoints, &h, pos.size() > 1 ? pos.at(1) : QString());
    if (!st.isOk())
        return fail(verb, st.toString());
    const bool json = p.isSet(QStringLiteral("json"));
    for (const is::HistorySeries &series : std::as_const(h.series)) {
        if (json) {
            QJsonArray points;
            for (const is::HistoryPoint &pt : series.points) {
                QJsonObject o{{QStringLiteral("time"), pt.time.toString()},
                              {QStringLiteral("value"), pt.value}};
                if (pt.count != 1) {
                    o.insert(QStringLiteral("min"), pt.min);
                    o.insert(QStringLiteral("max"), pt.max);
                    o.insert(QStringLiteral("count"), qint64(pt.count));
                }
                points.append(o);
            }
            out(QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("name"), name},
                                                            {QStringLiteral("type"), h.typeName},
                                                            {QStringLiteral("attribute"), series.attribute},
                                                            {QStringLiteral("points"), points}})
                                      .toJson(QJsonDocument::Compact)));
            continue;
        }
        out(QStringLiteral("%1 %2 (%3 points)").arg(name, series.attribute).arg(series.points.size()));
        for (const is::HistoryPoint &pt : series.points)
            out(pt.count == 1 ? QStringLiteral("  %1  %2").arg(pt.time.toString()).arg(pt.value, 0, 'g', 10)
                              : QStringLiteral("  %1  %2  min %3  max %4  (%5 values)")
                                    .arg(pt.time.toString())
                                    .arg(pt.value, 0, 'g', 10)
                                    .arg(pt.min, 0, 'g', 10)
                                    .arg(pt.max, 0, 'g', 10)
                                    .arg(pt.count));
    }
    return 0;
}

} // namespace

int is(const QStringList &args)
{
    if (args.size() < 2 || args.at(1) == QLatin1String("--help") || args.at(1) == QLatin1String("-h")) {
        std::fputs(isUsage, args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? 1 : 0;
    }
    QStringList rest = args;
    const QString cmd = rest.takeAt(1);
    rest[0] = QStringLiteral("dialogctl is ") + cmd;
    if (cmd == QLatin1String("ls"))
        return isLs(rest);
    if (cmd == QLatin1String("get"))
        return isGet(rest);
    if (cmd == QLatin1String("put"))
        return isPut(rest);
    if (cmd == QLatin1String("rm"))
        return isRm(rest);
    if (cmd == QLatin1String("watch"))
        return isWatch(rest);
    if (cmd == QLatin1String("types"))
        return isTypes(rest);
    if (cmd == QLatin1String("stats"))
        return isStats(rest);
    if (cmd == QLatin1String("history"))
        return isHistory(rest);
    if (cmd == QLatin1String("migrate"))
        return isMigrate(rest);
    std::fprintf(stderr, "dialogctl is: unknown command '%s'\n\n%s", qPrintable(cmd), isUsage);
    return 1;
}

} // namespace dialog::tool
