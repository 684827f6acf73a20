// The versioned documents of dialog-configdb: every change an immutable commit, one transaction
// each, on the version it names as its base or not at all; tags; any version read or compared.
#pragma once

#include "configdatabase.h"

#include "dialog/config.h"

namespace dialog::configdb {

/// Used in one thread (the one its database connection was opened in).
class ConfigStore
{
public:
    explicit ConfigStore(ConfigDatabase *db) : m_db(db) {}
    /// For tests: the process kills itself (SIGKILL) once it has written @p rows document rows of a
    /// commit, before the commit ends (0: never).
    void setCrashAfterRows(int rows) { m_crashAfterRows = rows; }

    /// The newest version (0: nothing committed yet).
    Status head(quint64 *version);
    /// The version @p ref names: "", "head", a number or a tag. NotFound names what is unknown.
    Status resolve(const QString &ref, quint64 *version);
    /// Document @p path as of @p version. NotFound if it is absent there.
    Status get(const QString &path, quint64 version, config::Document *out);
    /// The documents under @p prefix as of @p version, sorted by path.
    Status list(const QString &prefix, quint64 version, bool withContent, QList<config::Document> *out);
    /// Validates @p changes (each document, and the references of the version they make) and commits
    /// them as version @p base + 1, all or nothing. AlreadyExists, naming who changed what, when
    /// @p base is not the newest version.
    Status commit(quint64 base, const QList<config::Change> &changes, const QString &author, bool proven,
                  const QString &message, config::Commit *out);
    /// The newest commits first (those that touched @p path, if given), at most @p limit.
    Status log(const QString &path, int limit, QList<config::Commit> *out);
    /// What differs between versions @p from and @p to.
    Status diff(quint64 from, quint64 to, QList<config::DocumentDiff> *out);
    /// Names @p version @p name (never moved: AlreadyExists for a name in use).
    Status tag(const QString &name, quint64 version, const QString &author, config::Tag *out);
    /// Every tag, the newest first.
    Status tags(QList<config::Tag> *out);

private:
    /// "configuration changed since version B: PATH by AUTHOR at HH:MM; … — read again and re-apply".
    Status staleBase(quint64 base);
    /// Checks that the version @p changes make on top of @p base refers only to documents in it.
    Status checkReferences(quint64 base, const QList<config::Change> &changes,
                           const QHash<QString, QStringList> &references);
    /// Checks the IS type documents of the version @p changes make together, if they touch one.
    Status checkTypes(quint64 base, const QList<config::Change> &changes);
    Status pathsOf(quint64 version, QStringList *out);

    ConfigDatabase *m_db;
    int m_crashAfterRows = 0;
};

} // namespace dialog::configdb
