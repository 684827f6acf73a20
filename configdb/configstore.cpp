#include "configstore.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSet>
#include <QSqlQuery>

#include <csignal>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcConfigStore, "dialog.configdb.store", QtInfoMsg)

namespace dialog::configdb {

using config::Change;
using config::Commit;
using config::Document;

namespace {

// The newest row of every path at version ?1 (a removal is a row with NULL content).
const char *const snapshotSql =
    "SELECT d.path, d.version, d.content FROM documents d WHERE d.version = (SELECT max(e.version) FROM "
    "documents e WHERE e.path = d.path AND e.version <= ?) AND d.content IS NOT NULL AND substr(d.path, 1, "
    "?) = ? "
    "ORDER BY d.path";

Status notFound(const QString &why)
{
    return Status(Status::Code::NotFound, why);
}

QString when(qint64 ms)
{
    const QDateTime t = QDateTime::fromMSecsSinceEpoch(ms);
    return t.date() == QDate::currentDate() ? t.toString(QStringLiteral("HH:mm"))
                                            : t.toString(QStringLiteral("yyyy-MM-dd HH:mm"));
}

bool validTagName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z][A-Za-z0-9._-]{0,127}$"));
    return re.match(name).hasMatch() && name != QLatin1String("head");
}

} // namespace

Status ConfigStore::head(quint64 *version)
{
    QSqlQuery q = m_db->query();
    if (Status st = m_db->exec(q, QStringLiteral("SELECT max(version) FROM commits"), {},
                               "reading the newest version");
        !st.isOk())
        return st;
    *version = q.next() ? q.value(0).toULongLong() : 0;
    return {};
}

Status ConfigStore::resolve(const QString &ref, quint64 *version)
{
    quint64 newest = 0;
    if (Status st = head(&newest); !st.isOk())
        return st;
    if (ref.isEmpty() || ref == QLatin1String("head")) {
        *version = newest;
        return {};
    }
    bool number = false;
    const quint64 v = ref.toULongLong(&number);
    if (number) {
        if (v == 0 || v > newest)
            return notFound(QStringLiteral("unknown version %1 (the newest is %2)").arg(v).arg(newest));
        *version = v;
        return {};
    }
    QSqlQuery q = m_db->query();
    if (Status st =
            m_db->exec(q, QStringLiteral("SELECT version FROM tags WHERE name = ?"), {ref}, "reading a tag");
        !st.isOk())
        return st;
    if (!q.next())
        return notFound(QStringLiteral("unknown tag '%1'").arg(ref));
    *version = q.value(0).toULongLong();
    return {};
}

Status ConfigStore::get(const QString &path, quint64 version, Document *out)
{
    QSqlQuery q = m_db->query();
    if (Status st = m_db->exec(
            q,
            QStringLiteral("SELECT version, content FROM documents WHERE path = ? AND version <= ? "
                           "ORDER BY version DESC LIMIT 1"),
            {path, qint64(version)}, "reading a document");
        !st.isOk())
        return st;
    if (!q.next() || q.isNull(1))
        return notFound(QStringLiteral("no document %1 in version %2").arg(path).arg(version));
    *out = Document{path, q.value(1).toString().toUtf8(), q.value(0).toULongLong()};
    return {};
}

Status ConfigStore::list(const QString &prefix, quint64 version, bool withContent, QList<Document> *out)
{
    QSqlQuery q = m_db->query();
    q.setForwardOnly(true);
    if (Status st = m_db->exec(q, QLatin1String(snapshotSql), {qint64(version), int(prefix.size()), prefix},
                               "listing documents");
        !st.isOk())
        return st;
    while (q.next())
        out->append(Document{q.value(0).toString(),
                             withContent ? q.value(2).toString().toUtf8() : QByteArray(),
                             q.value(1).toULongLong()});
    return {};
}

Status ConfigStore::pathsOf(quint64 version, QStringList *out)
{
    QList<Document> docs;
    if (Status st = list(QString(), version, false, &docs); !st.isOk())
        return st;
    for (const Document &d : std::as_const(docs))
        out->append(d.path);
    return {};
}

Status ConfigStore::checkReferences(quint64 base, const QList<Change> &changes,
                                    const QHash<QString, QStringList> &references)
{
    QStringList basePaths;
    if (Status st = pathsOf(base, &basePaths); !st.isOk())
        return st;
    QSet<QString> present(basePaths.cbegin(), basePaths.cend());
    QSet<QString> removed;
    for (const Change &c : changes) {
        if (c.remove) {
            if (!present.remove(c.path))
                return notFound(
                    QStringLiteral("cannot remove %1: no such document in version %2").arg(c.path).arg(base));
            removed.insert(c.path);
        } else {
            present.insert(c.path);
        }
    }
    for (auto it = references.cbegin(); it != references.cend(); ++it)
        for (const QString &target : it.value())
            if (!present.contains(target))
                return Status(Status::Code::InvalidObject,
                              QStringLiteral("%1 refers to %2, which is not in the configuration")
                                  .arg(it.key(), target));
    if (removed.isEmpty())
        return {};
    // A removal must not leave a reference dangling in the documents that stay.
    for (const QString &prefix : {QStringLiteral("partitions/"), QStringLiteral("segments/")}) {
        QList<Document> docs;
        if (Status st = list(prefix, base, true, &docs); !st.isOk())
            return st;
        for (const Document &d : std::as_const(docs)) {
            if (references.contains(d.path) || removed.contains(d.path))
                continue;
            QStringList refs;
            config::validate(d.path, d.content, &refs);
            for (const QString &target : std::as_const(refs))
                if (removed.contains(target))
                    return Status(Status::Code::InvalidObject,
                                  QStringLiteral("cannot remove %1: %2 refers to it").arg(target, d.path));
        }
    }
    return {};
}

Status ConfigStore::checkTypes(quint64 base, const QList<Change> &changes)
{
    const bool touched = std::any_of(changes.cbegin(), changes.cend(), [](const Change &c) {
        return config::kindOf(c.path) == config::Kind::IsTypes;
    });
    if (!touched)
        return {};
    QList<Document> types;
    if (Status st = list(QStringLiteral("is-types/"), base, true, &types); !st.isOk())
        return st;
    for (const Change &c : changes) {
        if (config::kindOf(c.path) != config::Kind::IsTypes)
            continue;
        types.removeIf([&](const Document &d) { return d.path == c.path; });
        if (!c.remove)
            types.append(Document{c.path, c.content, 0});
    }
    return config::validateTypes(types);
}

Status ConfigStore::staleBase(quint64 base)
{
    QList<Commit> since;
    if (Status st = log(QString(), 1000, &since); !st.isOk())
        return st;
    QStringList what;
    for (auto it = since.crbegin(); it != since.crend(); ++it)
        if (it->version > base)
            what << QStringLiteral("%1 by %2 at %3")
                        .arg(it->paths.join(QStringLiteral(", ")), it->author, when(it->timeMs));
    return Status(Status::Code::AlreadyExists,
                  QStringLiteral("configuration changed since version %1: %2 — read again and re-apply")
                      .arg(base)
                      .arg(what.join(QStringLiteral("; "))));
}

Status ConfigStore::commit(quint64 base, const QList<Change> &changes, const QString &author, bool proven,
                           const QString &message, Commit *out)
{
    if (changes.isEmpty())
        return Status(Status::Code::BadRequest, QStringLiteral("a commit needs at least one change"));
    QHash<QString, QStringList> references;
    QSet<QString> paths;
    for (const Change &c : changes) {
        if (paths.contains(c.path))
            return Status(Status::Code::BadRequest,
                          QStringLiteral("%1 is changed twice in one commit").arg(c.path));
        paths.insert(c.path);
        if (c.remove) {
            if (!config::kindOf(c.path))
                return Status(Status::Code::InvalidName,
                              QStringLiteral("%1: not a document path").arg(c.path));
            continue;
        }
        QStringList refs;
        if (Status st = config::validate(c.path, c.content, &refs); !st.isOk())
            return st;
        if (!refs.isEmpty())
            references.insert(c.path, refs);
    }
    if (Status st = m_db->begin(); !st.isOk())
        return st;
    // Everything below reads and writes under the writer lock: the base is checked against the
    // newest version nobody can change meanwhile.
    quint64 newest = 0;
    Status st = head(&newest);
    if (st.isOk() && newest != base)
        st =
            base > newest
                ? notFound(QStringLiteral("unknown base version %1 (the newest is %2)").arg(base).arg(newest))
                : staleBase(base);
    if (st.isOk())
        st = checkReferences(base, changes, references);
    if (st.isOk())
        st = checkTypes(base, changes);
    Commit c{newest + 1, base, author, proven, QDateTime::currentMSecsSinceEpoch(), message, {}};
    QSqlQuery q = m_db->query();
    if (st.isOk())
        st = m_db->exec(
            q,
            QStringLiteral("INSERT INTO commits (version, parent, author, proven, time, message) VALUES "
                           "(?, ?, ?, ?, ?, ?)"),
            {qint64(c.version), qint64(c.parent), author, int(proven), c.timeMs, message},
            "writing the commit");
    for (const Change &change : changes) {
        if (!st.isOk())
            break;
        st = m_db->exec(q, QStringLiteral("INSERT INTO documents (path, version, content) VALUES (?, ?, ?)"),
                        {change.path, qint64(c.version),
                         change.remove ? QVariant(QMetaType::fromType<QString>())
                                       : QVariant(QString::fromUtf8(change.content))},
                        "writing a document");
        c.paths << change.path;
        if (m_crashAfterRows > 0 && c.paths.size() == m_crashAfterRows) {
            qCWarning(lcConfigStore)
                << "crashing in the middle of a commit as requested (--crash-after-rows)";
            ::kill(::getpid(), SIGKILL);
        }
    }
    if (!st.isOk()) {
        m_db->rollback();
        return st;
    }
    if (st = m_db->commit(); !st.isOk())
        return st;
    qCInfo(lcConfigStore).noquote() << "version" << c.version << "by" << author << ":"
                                    << c.paths.join(QStringLiteral(", "));
    *out = c;
    return {};
}

Status ConfigStore::log(const QString &path, int limit, QList<Commit> *out)
{
    QSqlQuery q = m_db->query();
    Status st =
        path.isEmpty()
            ? m_db->exec(q,
                         QStringLiteral("SELECT version, parent, author, proven, time, message FROM commits "
                                        "ORDER BY version DESC LIMIT ?"),
                         {limit}, "reading the log")
            : m_db->exec(
                  q,
                  QStringLiteral("SELECT c.version, c.parent, c.author, c.proven, c.time, c.message "
                                 "FROM commits c JOIN documents d ON d.version = c.version WHERE d.path = ? "
                                 "ORDER BY c.version DESC LIMIT ?"),
                  {path, limit}, "reading the log");
    if (!st.isOk())
        return st;
    QList<Commit> commits;
    while (q.next())
        commits.append(Commit{q.value(0).toULongLong(),
                              q.value(1).toULongLong(),
                              q.value(2).toString(),
                              q.value(3).toInt() != 0,
                              q.value(4).toLongLong(),
                              q.value(5).toString(),
                              {}});
    if (commits.isEmpty()) {
        *out = commits;
        return {};
    }
    // The paths of all of them in one query.
    QSqlQuery p = m_db->query();
    if (st = m_db->exec(
            p,
            QStringLiteral(
                "SELECT version, path FROM documents WHERE version >= ? AND version <= ? ORDER BY path"),
            {qint64(commits.last().version), qint64(commits.first().version)}, "reading the log");
        !st.isOk())
        return st;
    QHash<quint64, QStringList> paths;
    while (p.next())
        paths[p.value(0).toULongLong()].append(p.value(1).toString());
    for (Commit &c : commits)
        c.paths = paths.value(c.version);
    *out = commits;
    return {};
}

Status ConfigStore::diff(quint64 from, quint64 to, QList<config::DocumentDiff> *out)
{
    QList<Document> a, b;
    if (Status st = list(QString(), from, true, &a); !st.isOk())
        return st;
    if (Status st = list(QString(), to, true, &b); !st.isOk())
        return st;
    QMap<QString, config::DocumentDiff> byPath;
    for (const Document &d : std::as_const(a))
        byPath[d.path] = config::DocumentDiff{d.path, d.content, std::nullopt};
    for (const Document &d : std::as_const(b)) {
        auto it = byPath.find(d.path);
        if (it == byPath.end())
            byPath.insert(d.path, config::DocumentDiff{d.path, std::nullopt, d.content});
        else if (it->before == d.content)
            byPath.erase(it);
        else
            it->after = d.content;
    }
    *out = byPath.values();
    return {};
}

Status ConfigStore::tag(const QString &name, quint64 version, const QString &author, config::Tag *out)
{
    if (!validTagName(name))
        return Status(
            Status::Code::InvalidName,
            QStringLiteral("'%1' is not a tag name (a letter, then letters, digits, '.', '_' or '-'; not "
                           "'head')")
                .arg(name));
    if (version == 0)
        return notFound(QStringLiteral("nothing committed yet: no version to tag"));
    if (Status st = m_db->begin(); !st.isOk())
        return st;
    QSqlQuery q = m_db->query();
    Status st =
        m_db->exec(q, QStringLiteral("SELECT version FROM tags WHERE name = ?"), {name}, "reading a tag");
    if (st.isOk() && q.next())
        st = Status(Status::Code::AlreadyExists,
                    QStringLiteral("tag '%1' already names version %2 (tags are never moved)")
                        .arg(name)
                        .arg(q.value(0).toULongLong()));
    const config::Tag t{name, version, author, QDateTime::currentMSecsSinceEpoch()};
    if (st.isOk())
        st = m_db->exec(q,
                        QStringLiteral("INSERT INTO tags (name, version, author, time) VALUES (?, ?, ?, ?)"),
                        {name, qint64(version), author, t.timeMs}, "writing the tag");
    if (!st.isOk()) {
        m_db->rollback();
        return st;
    }
    if (st = m_db->commit(); !st.isOk())
        return st;
    *out = t;
    return {};
}

Status ConfigStore::tags(QList<config::Tag> *out)
{
    QSqlQuery q = m_db->query();
    if (Status st = m_db->exec(
            q, QStringLiteral("SELECT name, version, author, time FROM tags ORDER BY time DESC, name"), {},
            "reading the tags");
        !st.isOk())
        return st;
    while (q.next())
        out->append(config::Tag{q.value(0).toString(), q.value(1).toULongLong(), q.value(2).toString(),
                                q.value(3).toLongLong()});
    return {};
}

} // namespace dialog::configdb
