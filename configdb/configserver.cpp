#include "configserver.h"

#include "dialog/handoff.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMetaEnum>

#include <algorithm>

Q_LOGGING_CATEGORY(lcConfigServer, "dialog.configdb.server", QtInfoMsg)

namespace dialog::configdb {

namespace {

QJsonObject documentJson(const config::Document &d, bool withContent)
{
    QJsonObject o{{QStringLiteral("path"), d.path}, {QStringLiteral("changed"), qint64(d.changed)}};
    if (withContent)
        o.insert(QStringLiteral("content"), QString::fromUtf8(d.content));
    return o;
}

QJsonValue optionalText(const std::optional<QByteArray> &b)
{
    return b ? QJsonValue(QString::fromUtf8(*b)) : QJsonValue();
}

QJsonObject tagJson(const config::Tag &t)
{
    return {{QStringLiteral("name"), t.name},
            {QStringLiteral("version"), qint64(t.version)},
            {QStringLiteral("author"), t.author},
            {QStringLiteral("time"), t.timeMs}};
}

Status parseChanges(const QJsonValue &v, QList<config::Change> *out)
{
    if (!v.isArray())
        return Status(Status::Code::BadRequest, QStringLiteral("changes: expected an array"));
    for (const QJsonValue &c : v.toArray()) {
        const QJsonObject o = c.toObject();
        const bool remove = o.value(QStringLiteral("remove")).toBool();
        if (!o.value(QStringLiteral("path")).isString() ||
            (!remove && !o.value(QStringLiteral("content")).isString()))
            return Status(Status::Code::BadRequest,
                          QStringLiteral("changes: each needs a path and a content or remove"));
        out->append(config::Change{o.value(QStringLiteral("path")).toString(),
                                   o.value(QStringLiteral("content")).toString().toUtf8(), remove});
    }
    return {};
}

/// Who a request comes from: the process name it proved with its process key, with the user and
/// host it says (`Master (daq@cr-03)`); else the user and host its process says in its HELLO
/// (authenticated by the partition's secret or TLS, a claim without), or its process name.
QString authorOf(const Request &r)
{
    const QString userHost = r.originUser().isEmpty() && r.originHost().isEmpty()
                                 ? QString()
                                 : r.originUser() + QLatin1Char('@') + r.originHost();
    if (r.originProven())
        return userHost.isEmpty() ? r.origin() : QStringLiteral("%1 (%2)").arg(r.origin(), userHost);
    return userHost.isEmpty() ? r.origin() : userHost;
}

} // namespace

ConfigServer::ConfigServer(Client *client, const sql::DatabaseConfig &database, const QString &name,
                           int crashAfterRows)
    : m_client(client), m_config(database), m_service(config::ConfigClient::serviceName(name)),
      m_crashAfterRows(crashAfterRows),
      m_proven(!client->options().secretFile.isEmpty() || !client->options().tlsCert.isEmpty())
{
    m_worker = new QObject;
    m_worker->moveToThread(&m_thread);
    m_thread.setObjectName(QStringLiteral("configdb-database"));
    handoff::startThread(m_thread);
}

ConfigServer::~ConfigServer()
{
    // The database objects go in the thread that opened them.
    handoff::callBlocking(m_worker, [this] {
        m_runs.reset();
        m_store.reset();
        m_db.reset();
        delete m_worker;
    });
    m_thread.quit();
    m_thread.wait();
}

bool ConfigServer::start(QString *error)
{
    Status opened;
    handoff::callBlocking(m_worker, [this, &opened] {
        m_db = std::make_unique<ConfigDatabase>(m_config);
        opened = m_db->open();
        m_store = std::make_unique<ConfigStore>(m_db.get());
        m_store->setCrashAfterRows(m_crashAfterRows);
        m_runs = std::make_unique<RunRegistry>(m_db.get());
    });
    if (!opened.isOk()) {
        *error = opened.message();
        return false;
    }
    if (!m_client->publish(m_service)) {
        *error = m_client->errorString();
        return false;
    }
    connect(m_client, &Client::requestReceived, this, &ConfigServer::onRequest);
    return true;
}

void ConfigServer::onRequest(const Request &request)
{
    if (request.service() != m_service) {
        m_client->replyError(request, QStringLiteral("unknown service"));
        return;
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(request.data(), &pe);
    if (!doc.isObject()) {
        m_client->replyError(request, QStringLiteral("malformed request: expected a JSON object"));
        return;
    }
    // Client::reply() is thread-safe: the database thread answers.
    handoff::post(m_worker, [this, request, o = doc.object()] {
        const QJsonObject a = answer(o, request);
        m_client->reply(request, QJsonDocument(a).toJson(QJsonDocument::Compact));
    });
}

bool ConfigServer::listenWeb(const QHostAddress &address, quint16 port, QString *error)
{
    m_web = std::make_unique<ConfigWeb>(this);
    if (const Status s = m_web->listen(address, port); !s.isOk())
        return *error = s.message(), false;
    return true;
}

quint16 ConfigServer::webPort() const
{
    return m_web ? m_web->port() : 0;
}

void ConfigServer::query(const QJsonObject &request, QObject *context,
                         std::function<void(const QJsonObject &)> done)
{
    static const QStringList readOnly{
        QStringLiteral("runs"), QStringLiteral("run"),  QStringLiteral("get"),  QStringLiteral("ls"),
        QStringLiteral("log"),  QStringLiteral("diff"), QStringLiteral("tags"), QStringLiteral("resolve")};
    if (!readOnly.contains(request.value(QStringLiteral("op")).toString())) {
        done({{QStringLiteral("error"), QStringLiteral("not a read-only request")},
              {QStringLiteral("code"), QStringLiteral("BadRequest")}});
        return;
    }
    handoff::post(m_worker, [this, request, context, done = std::move(done)] {
        const QJsonObject a = answer(request, Request());
        handoff::post(context, [done, a] { done(a); });
    });
}

QJsonObject ConfigServer::answer(const QJsonObject &r, const Request &origin)
{
    const QString op = r.value(QStringLiteral("op")).toString();
    Status st = m_db->ensureOpen();
    QJsonObject a;
    if (!st.isOk()) {
        // The database cannot be reached: that is the answer.
    } else if (op == QLatin1String("run-start")) {
        QJsonObject run = r.value(QStringLiteral("run")).toObject();
        st = m_runs->start(run, &a);
    } else if (op == QLatin1String("run-end")) {
        st = m_runs->end(
            r.value(QStringLiteral("number")).toInteger(), r.value(QStringLiteral("reason")).toString(),
            r.value(QStringLiteral("message")).toString(), r.value(QStringLiteral("events")).toInteger(),
            r.value(QStringLiteral("bytes")).toInteger(), r.value(QStringLiteral("messages")).toObject(),
            r.value(QStringLiteral("out")), &a);
    } else if (op == QLatin1String("run")) {
        st = m_runs->show(r.value(QStringLiteral("number")).toInteger(), &a);
    } else if (op == QLatin1String("runs")) {
        QList<QJsonObject> runs;
        st = m_runs->list(r.value(QStringLiteral("since")).toInteger(),
                          r.value(QStringLiteral("run_type")).toString(),
                          r.value(QStringLiteral("partition")).toString(),
                          int(std::clamp<qint64>(r.value(QStringLiteral("limit")).toInteger(100), 1, 100000)),
                          r.value(QStringLiteral("before")).toInteger(), &runs);
        QJsonArray list;
        for (const QJsonObject &run : std::as_const(runs))
            list.append(run);
        a.insert(QStringLiteral("runs"), list);
    } else {
        a = configAnswer(op, r, origin, &st);
    }
    if (st.isOk())
        return a;
    qCDebug(lcConfigServer).noquote() << op << "from" << origin.origin() << "refused:" << st.toString();
    return {{QStringLiteral("error"), st.message()},
            {QStringLiteral("code"),
             QLatin1String(QMetaEnum::fromType<Status::Code>().valueToKey(int(st.code())))}};
}

QJsonObject ConfigServer::configAnswer(const QString &op, const QJsonObject &r, const Request &origin,
                                       Status *st)
{
    QJsonObject a;
    quint64 version = 0;
    const QString ref = r.value(QStringLiteral("ref")).toString();
    if (op == QLatin1String("resolve") || op == QLatin1String("get") || op == QLatin1String("ls") ||
        op == QLatin1String("tag")) {
        if (*st = m_store->resolve(ref, &version); !st->isOk())
            return a;
        a.insert(QStringLiteral("version"), qint64(version));
    }
    if (op == QLatin1String("resolve")) {
    } else if (op == QLatin1String("get")) {
        config::Document d;
        if (*st = m_store->get(r.value(QStringLiteral("path")).toString(), version, &d); st->isOk()) {
            const QJsonObject o = documentJson(d, true);
            for (auto it = o.begin(); it != o.end(); ++it)
                a.insert(it.key(), it.value());
        }
    } else if (op == QLatin1String("ls")) {
        QList<config::Document> docs;
        const bool content = r.value(QStringLiteral("content")).toBool();
        *st = m_store->list(r.value(QStringLiteral("prefix")).toString(), version, content, &docs);
        QJsonArray list;
        for (const config::Document &d : std::as_const(docs))
            list.append(documentJson(d, content));
        a.insert(QStringLiteral("documents"), list);
    } else if (op == QLatin1String("commit")) {
        QList<config::Change> changes;
        config::Commit c;
        if (*st = parseChanges(r.value(QStringLiteral("changes")), &changes); st->isOk())
            *st = m_store->commit(quint64(r.value(QStringLiteral("base")).toInteger()), changes,
                                  authorOf(origin), m_proven || origin.originProven(),
                                  r.value(QStringLiteral("message")).toString(), &c);
        a = c.toJson();
    } else if (op == QLatin1String("log")) {
        QList<config::Commit> commits;
        *st = m_store->log(
            r.value(QStringLiteral("path")).toString(),
            int(std::clamp<qint64>(r.value(QStringLiteral("limit")).toInteger(100), 1, 100000)), &commits);
        QJsonArray list;
        for (const config::Commit &c : std::as_const(commits))
            list.append(c.toJson());
        a.insert(QStringLiteral("commits"), list);
    } else if (op == QLatin1String("diff")) {
        quint64 from = 0, to = 0;
        QList<config::DocumentDiff> diffs;
        if ((*st = m_store->resolve(r.value(QStringLiteral("from")).toString(), &from)).isOk() &&
            (*st = m_store->resolve(r.value(QStringLiteral("to")).toString(), &to)).isOk())
            *st = m_store->diff(from, to, &diffs);
        QJsonArray list;
        for (const config::DocumentDiff &d : std::as_const(diffs))
            list.append(QJsonObject{{QStringLiteral("path"), d.path},
                                    {QStringLiteral("before"), optionalText(d.before)},
                                    {QStringLiteral("after"), optionalText(d.after)}});
        a = {{QStringLiteral("from"), qint64(from)},
             {QStringLiteral("to"), qint64(to)},
             {QStringLiteral("changes"), list}};
    } else if (op == QLatin1String("tag")) {
        config::Tag t;
        *st = m_store->tag(r.value(QStringLiteral("name")).toString(), version, authorOf(origin), &t);
        a = tagJson(t);
    } else if (op == QLatin1String("tags")) {
        QList<config::Tag> tags;
        *st = m_store->tags(&tags);
        QJsonArray list;
        for (const config::Tag &t : std::as_const(tags))
            list.append(tagJson(t));
        a.insert(QStringLiteral("tags"), list);
    } else {
        *st = Status(Status::Code::BadRequest, QStringLiteral("unknown op '%1'").arg(op));
    }
    return a;
}

} // namespace dialog::configdb
