// The client of dialog-configdb: JSON requests on CONFIG.<database>, answers mapped to Status.
#include "dialog/client.h"
#include "dialog/config.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMetaEnum>

Q_LOGGING_CATEGORY(lcConfigClient, "dialog.config.client", QtInfoMsg)

namespace dialog::config {

class ConfigClientPrivate
{
public:
    Client *client;
    QString database;
    int timeoutMs = 10000;
};

namespace {

QString text(const QJsonValue &v)
{
    return v.toString();
}

QByteArray bytes(const QJsonValue &v)
{
    return v.toString().toUtf8();
}

Document documentFromJson(const QJsonObject &o)
{
    return Document{text(o.value(QStringLiteral("path"))), bytes(o.value(QStringLiteral("content"))),
                    quint64(o.value(QStringLiteral("changed")).toInteger())};
}

Tag tagFromJson(const QJsonObject &o)
{
    return Tag{text(o.value(QStringLiteral("name"))), quint64(o.value(QStringLiteral("version")).toInteger()),
               text(o.value(QStringLiteral("author"))), o.value(QStringLiteral("time")).toInteger()};
}

/// The Status a reply stands for: the server's {"code", "error"}, or the transport's failure.
Status statusOf(const Reply &reply, const QString &service, QJsonObject *answer)
{
    switch (reply.error()) {
    case Status::Code::Ok:
        break;
    case Status::Code::Timeout:
        return Status(Status::Code::Timeout,
                      QStringLiteral("no answer from %1 (is dialog-configdb running?)").arg(service));
    default:
        return Status(reply.error(), QStringLiteral("%1: %2").arg(service, reply.errorString()));
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(reply.data(), &pe);
    if (!doc.isObject())
        return Status(Status::Code::ProtocolError,
                      QStringLiteral("%1 answered something that is not JSON").arg(service));
    *answer = doc.object();
    if (!answer->contains(QStringLiteral("error")))
        return {};
    bool known = false;
    const int code = QMetaEnum::fromType<Status::Code>().keyToValue(
        answer->value(QStringLiteral("code")).toString().toLatin1().constData(), &known);
    return Status(known ? Status::Code(code) : Status::Code::ServerError,
                  text(answer->value(QStringLiteral("error"))));
}

} // namespace

QJsonObject Commit::toJson() const
{
    return QJsonObject{{QStringLiteral("version"), qint64(version)},
                       {QStringLiteral("parent"), qint64(parent)},
                       {QStringLiteral("author"), author},
                       {QStringLiteral("proven"), authorProven},
                       {QStringLiteral("time"), timeMs},
                       {QStringLiteral("message"), message},
                       {QStringLiteral("paths"), QJsonArray::fromStringList(paths)}};
}

Commit Commit::fromJson(const QJsonObject &o)
{
    Commit c;
    c.version = quint64(o.value(QStringLiteral("version")).toInteger());
    c.parent = quint64(o.value(QStringLiteral("parent")).toInteger());
    c.author = text(o.value(QStringLiteral("author")));
    c.authorProven = o.value(QStringLiteral("proven")).toBool();
    c.timeMs = o.value(QStringLiteral("time")).toInteger();
    c.message = text(o.value(QStringLiteral("message")));
    for (const QJsonValue &p : o.value(QStringLiteral("paths")).toArray())
        c.paths << p.toString();
    return c;
}

ConfigClient::ConfigClient(Client *client, const QString &database, QObject *parent)
    : QObject(parent), d(new ConfigClientPrivate{client, database})
{
}

ConfigClient::~ConfigClient() = default;

QString ConfigClient::defaultDatabase()
{
    const QString env = qEnvironmentVariable("DIALOG_CONFIGDB");
    return env.isEmpty() ? QStringLiteral("configdb") : env;
}

QString ConfigClient::serviceName(const QString &database)
{
    return QStringLiteral("CONFIG.") + database;
}

QString ConfigClient::database() const
{
    return d->database;
}

void ConfigClient::setTimeoutMs(int ms)
{
    d->timeoutMs = ms;
}

void ConfigClient::call(const QJsonObject &request,
                        std::function<void(const Status &, const QJsonObject &)> done)
{
    const QString service = serviceName(d->database);
    d->client->request(service, QJsonDocument(request).toJson(QJsonDocument::Compact), d->timeoutMs, this,
                       [service, done = std::move(done)](const Reply &reply) {
                           QJsonObject answer;
                           const Status st = statusOf(reply, service, &answer);
                           if (!st.isOk())
                               qCDebug(lcConfigClient) << st.toString();
                           done(st, answer);
                       });
}

void ConfigClient::resolve(const QString &ref, std::function<void(const Status &, quint64)> done)
{
    call({{QStringLiteral("op"), QStringLiteral("resolve")}, {QStringLiteral("ref"), ref}},
         [done = std::move(done)](const Status &st, const QJsonObject &a) {
             done(st, quint64(a.value(QStringLiteral("version")).toInteger()));
         });
}

void ConfigClient::get(const QString &path, const QString &ref,
                       std::function<void(const Status &, const Document &, quint64)> done)
{
    call({{QStringLiteral("op"), QStringLiteral("get")},
          {QStringLiteral("path"), path},
          {QStringLiteral("ref"), ref}},
         [done = std::move(done)](const Status &st, const QJsonObject &a) {
             done(st, documentFromJson(a), quint64(a.value(QStringLiteral("version")).toInteger()));
         });
}

void ConfigClient::list(const QString &prefix, const QString &ref, bool withContent,
                        std::function<void(const Status &, const QList<Document> &, quint64)> done)
{
    call({{QStringLiteral("op"), QStringLiteral("ls")},
          {QStringLiteral("prefix"), prefix},
          {QStringLiteral("ref"), ref},
          {QStringLiteral("content"), withContent}},
         [done = std::move(done)](const Status &st, const QJsonObject &a) {
             QList<Document> docs;
             for (const QJsonValue &v : a.value(QStringLiteral("documents")).toArray())
                 docs << documentFromJson(v.toObject());
             done(st, docs, quint64(a.value(QStringLiteral("version")).toInteger()));
         });
}

void ConfigClient::commit(quint64 base, const QList<Change> &changes, const QString &message,
                          std::function<void(const Status &, const Commit &)> done)
{
    QJsonArray list;
    for (const Change &c : changes) {
        QJsonObject o{{QStringLiteral("path"), c.path}};
        if (c.remove)
            o.insert(QStringLiteral("remove"), true);
        else
            o.insert(QStringLiteral("content"), QString::fromUtf8(c.content));
        list.append(o);
    }
    call({{QStringLiteral("op"), QStringLiteral("commit")},
          {QStringLiteral("base"), qint64(base)},
          {QStringLiteral("message"), message},
          {QStringLiteral("changes"), list}},
         [done = std::move(done)](const Status &st, const QJsonObject &a) { done(st, Commit::fromJson(a)); });
}

void ConfigClient::log(const QString &path, int limit,
                       std::function<void(const Status &, const QList<Commit> &)> done)
{
    call({{QStringLiteral("op"), QStringLiteral("log")},
          {QStringLiteral("path"), path},
          {QStringLiteral("limit"), limit}},
         [done = std::move(done)](const Status &st, const QJsonObject &a) {
             QList<Commit> commits;
             for (const QJsonValue &v : a.value(QStringLiteral("commits")).toArray())
                 commits << Commit::fromJson(v.toObject());
             done(st, commits);
         });
}

void ConfigClient::diff(const QString &from, const QString &to,
                        std::function<void(const Status &, const QList<DocumentDiff> &)> done)
{
    call({{QStringLiteral("op"), QStringLiteral("diff")},
          {QStringLiteral("from"), from},
          {QStringLiteral("to"), to}},
         [done = std::move(done)](const Status &st, const QJsonObject &a) {
             QList<DocumentDiff> out;
             for (const QJsonValue &v : a.value(QStringLiteral("changes")).toArray()) {
                 const QJsonObject o = v.toObject();
                 DocumentDiff dd{text(o.value(QStringLiteral("path"))), std::nullopt, std::nullopt};
                 if (o.value(QStringLiteral("before")).isString())
                     dd.before = bytes(o.value(QStringLiteral("before")));
                 if (o.value(QStringLiteral("after")).isString())
                     dd.after = bytes(o.value(QStringLiteral("after")));
                 out << dd;
             }
             done(st, out);
         });
}

void ConfigClient::tag(const QString &name, const QString &ref,
                       std::function<void(const Status &, const Tag &)> done)
{
    call({{QStringLiteral("op"), QStringLiteral("tag")},
          {QStringLiteral("name"), name},
          {QStringLiteral("ref"), ref}},
         [done = std::move(done)](const Status &st, const QJsonObject &a) { done(st, tagFromJson(a)); });
}

void ConfigClient::tags(std::function<void(const Status &, const QList<Tag> &)> done)
{
    call({{QStringLiteral("op"), QStringLiteral("tags")}},
         [done = std::move(done)](const Status &st, const QJsonObject &a) {
             QList<Tag> out;
             for (const QJsonValue &v : a.value(QStringLiteral("tags")).toArray())
                 out << tagFromJson(v.toObject());
             done(st, out);
         });
}

} // namespace dialog::config
