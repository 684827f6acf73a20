/// @file
/// The configuration database (dialog-configdb): documents by path, validated by kind, versioned by
/// immutable commits, tagged; and the client that reads and changes it over DIALOG requests.
#pragma once

#include "dialog/status.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>
#include <memory>
#include <optional>

namespace dialog {

class Client;

namespace config {

/// What a document is, from the first element of its path.
enum class Kind
{
    Partition, ///< "partitions/NAME": a partition (JSON, as rc::Partition reads it)
    Slave,     ///< "slaves/NAME": a control slave's parameters (JSON object)
    Readout,   ///< "readout/NAME": a readout slave's parameters (JSON object)
    Segment,   ///< "segments/NAME": a group of slaves and readouts: {"members": ["slaves/FE1", …]}
    IsTypes,   ///< "is-types/NAME": IS type declarations (XML, as the type registry reads it)
    Access,    ///< "access/NAME": an access list (JSON, as dialog/access.h reads it)
    Alarms,    ///< "alarms/NAME": alarm rules (JSON, as dialog-alarmserver --rules reads them)
};

/// The kind of the document at @p path, or std::nullopt when the path has no known prefix or is
/// not a valid document path (empty elements, "..", characters outside [A-Za-z0-9._@+-]).
std::optional<Kind> kindOf(const QString &path);
/// The known path prefixes ("partitions/", "slaves/", …), for messages and listings.
QStringList knownPrefixes();

/// Checks @p content as a document at @p path: its syntax (malformed JSON or XML: the path, line and
/// column), its schema (the field and what is allowed). @p references receives the paths the
/// document refers to (a partition's segments and slave parameter documents, a segment's members);
/// whether they exist is the database's check. Ok, or InvalidObject with a one-line reason.
Status validate(const QString &path, const QByteArray &content, QStringList *references = nullptr);

struct Document;
/// Checks the IS type documents (is-types/) among @p documents together, as one version holds them:
/// a type may refer to types of another document. validate() checks each alone only as XML.
/// Ok, or InvalidObject naming the document, line and problem.
Status validateTypes(const QList<Document> &documents);

/// The parameter document of slave @p name of kind @p slaveKind ("control" or "readout"):
/// "slaves/NAME" or "readout/NAME".
QString slaveDocumentPath(const QString &slaveKind, const QString &name);
/// The parameters a slave of kind @p slaveKind ("control" or "readout") takes from its document:
/// the JSON keys, each the dialog-slave option of that name with '_' for '-'.
QStringList slaveParameterKeys(const QString &slaveKind);
/// A slave's parameters (a "slaves/" or "readout/" document) as the command-line options of
/// dialog-slave that mean the same ("threads": 4 → "--threads", "4"). @p content must be valid.
QStringList slaveArguments(const QByteArray &content);

/// A document as stored in one version.
struct Document
{
    QString path;        ///< e.g. "partitions/demo"
    QByteArray content;  ///< the text as committed (JSON or XML)
    quint64 changed = 0; ///< the version that last changed it
};

/// A version of the whole database and what it changed. Immutable once committed.
struct Commit
{
    quint64 version = 0;       ///< 1, 2, …: each commit's number is its parent's plus one
    quint64 parent = 0;        ///< the version it was based on (0 for the first)
    QString author;            ///< user\@host of the committing process
    bool authorProven = false; ///< true when the partition has a secret: the identity was proven
    qint64 timeMs = 0;         ///< when it was committed, ms since the epoch
    QString message;           ///< what the author said about it
    QStringList paths;         ///< the documents it added, changed or removed

    /// The commit as JSON (the wire format and `dialogctl config log --json`).
    QJsonObject toJson() const;
    /// The commit of @p o (missing fields are zero or empty).
    static Commit fromJson(const QJsonObject &o);
};

/// One change of a commit: a document's new content, or its removal.
struct Change
{
    QString path;        ///< the document
    QByteArray content;  ///< its new text (ignored when remove is true)
    bool remove = false; ///< true: the document is removed from the new version
};

/// What a document was in one version and is in another (absent: std::nullopt).
struct DocumentDiff
{
    QString path;                     ///< the document
    std::optional<QByteArray> before; ///< its content in the older version, if present there
    std::optional<QByteArray> after;  ///< its content in the newer version, if present there
};

/// A name of a version.
struct Tag
{
    QString name;        ///< e.g. "physics-2026"
    quint64 version = 0; ///< the version it names
    QString author;      ///< who set it
    qint64 timeMs = 0;   ///< when
};

/// A line diff of @p before and @p after in the unified format ("--- a/PATH", "+++ b/PATH", hunks
/// with three lines of context); empty when they are equal.
QString unifiedDiff(const QString &path, const QByteArray &before, const QByteArray &after);

class ConfigClientPrivate;

/// Reads and changes the configuration database through requests to its dialog-configdb
/// (service CONFIG.\<database\>). Every call answers exactly once, through its callback, in the
/// thread of the Client, unless the ConfigClient is destroyed first. A reference ("ref") names a
/// version: its number ("41"), a tag ("physics-2026"), or "head" / empty (the newest).
/// Failures: NotFound (unknown document, version or tag), InvalidObject (a document fails its
/// validation), AlreadyExists (a commit on a stale base: the message says who changed what since),
/// BadRequest, StorageError (the database refused; nothing was written), Timeout / NotConnected /
/// ProviderLost (dialog-configdb unreachable).
class ConfigClient : public QObject
{
    Q_OBJECT
public:
    /// A client of the database served as "CONFIG." + @p database through @p client (which must
    /// outlive it and live in this thread).
    explicit ConfigClient(Client *client, const QString &database = defaultDatabase(),
                          QObject *parent = nullptr);
    ~ConfigClient() override;

    /// $DIALOG_CONFIGDB, else "configdb".
    static QString defaultDatabase();
    /// "CONFIG." + @p database: the service dialog-configdb answers on.
    static QString serviceName(const QString &database);
    /// The database this client talks to.
    QString database() const;
    /// How long a call waits for dialog-configdb (default 10000 ms).
    void setTimeoutMs(int ms);

    /// The version @p ref names.
    void resolve(const QString &ref, std::function<void(const Status &, quint64 version)> done);
    /// Document @p path as of @p ref, and the version @p ref resolved to.
    void get(const QString &path, const QString &ref,
             std::function<void(const Status &, const Document &, quint64 version)> done);
    /// The documents under @p prefix (empty: all) as of @p ref, sorted by path; with their content
    /// when @p withContent.
    void list(const QString &prefix, const QString &ref, bool withContent,
              std::function<void(const Status &, const QList<Document> &, quint64 version)> done);
    /// Commits @p changes on top of version @p base (optimistic locking: refused with
    /// AlreadyExists unless @p base is still the newest version). All or nothing.
    void commit(quint64 base, const QList<Change> &changes, const QString &message,
                std::function<void(const Status &, const Commit &)> done);
    /// The newest commits first (of document @p path only when not empty), at most @p limit.
    void log(const QString &path, int limit, std::function<void(const Status &, const QList<Commit> &)> done);
    /// The documents that differ between @p from and @p to, sorted by path.
    void diff(const QString &from, const QString &to,
              std::function<void(const Status &, const QList<DocumentDiff> &)> done);
    /// Names the version @p ref @p name (a tag is never moved: an existing name is refused).
    void tag(const QString &name, const QString &ref, std::function<void(const Status &, const Tag &)> done);
    /// Every tag, the newest first.
    void tags(std::function<void(const Status &, const QList<Tag> &)> done);

    /// Sends a raw request @p request (a JSON object with "op"), for the run registry and tools;
    /// @p done gets the answer object when the status is Ok.
    void call(const QJsonObject &request, std::function<void(const Status &, const QJsonObject &)> done);

private:
    std::unique_ptr<ConfigClientPrivate> const d;
};

} // namespace config
} // namespace dialog
