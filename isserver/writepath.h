// The write path of an IS server: a written value is checked (name, access list, quota) and
// decoded once; the change it makes carries the validated bytes to every consumer.
#pragma once

#include "quota.h"
#include "serveroptions.h"

#include "dialog/audit.h"
#include "dialog/is/typeinfo.h"
#include "dialog/status.h"

#include <QObject>
#include <memory>

namespace dialog {
class Client;
class Request;
} // namespace dialog
namespace dialog::is {
class HistoryStore;
class Object;
class Repository;
class TypeRegistry;
} // namespace dialog::is

namespace dialog::isd {

class Persistence;
class WriterTracker;

/// Applies the writes of clients (insert, update, upsert, remove, declare types) to the repository
/// and answers them. A value is decoded once against the registry (is::decode keeps its bytes), so
/// the journal, the subscribers and the push mirrors get the bytes the writer sent, not a new
/// encoding. With a journal, a write is answered once its record is durable.
///
/// Main thread: the writes of a server are applied in one thread, in the order they arrive.
class WritePath : public QObject
{
    Q_OBJECT
public:
    /// What a write request asks. The same numbers as the IS protocol's operations.
    enum class Op
    {
        Insert = 1,
        Update = 2,
        Upsert = 3,
        Remove = 4,
    };

    /// Every reference must outlive this object; @p persistence may be null (no data directory).
    WritePath(const ServerOptions &options, is::Repository &repository, is::TypeRegistry &types,
              Client &client, WriterTracker &writers, Persistence *persistence, QObject *parent = nullptr);
    ~WritePath() override;

    /// Opens the audit trail (ServerOptions::access) and counts what the repository already holds
    /// (a checkpoint) to the server's quota, owned by nobody. False with a reason.
    bool start(QString *error);

    /// Applies one write of @p value (encoded; empty for Remove) to @p name and answers @p request.
    void write(const Request &request, Op op, const QString &name, const QByteArray &value);
    /// The history ring (null: none): what it holds for an object counts against its owner's quota.
    void setHistory(const is::HistoryStore *history) { m_history = history; }
    /// Declares the types of @p typesJson (a JSON array) and answers @p request. The types new to
    /// the server are saved and announced by typesDeclared().
    void declareTypes(const Request &request, const QByteArray &typesJson);

    quint64 accessRefused() const { return m_accessRefused; }
    quint64 quotaRefused() const { return m_quota.refused(); }

signals:
    /// Emitted once per DECLARE_TYPES request that added types, with the new ones.
    void typesDeclared(const QList<dialog::is::TypeInfo> &types);

private:
    /// Checks a write against the access list and audits it; false (and the request answered
    /// PermissionDenied, logged, counted) when refused.
    bool permitWrite(const Request &request, Op op, const QString &name);
    /// Applies a checked write of @p obj (@p bytes encoded) by the process @p origin.
    Status::Code apply(const QString &origin, const QString &address, Op op, const QString &name,
                       const is::Object &obj, qint64 bytes, QString *error);
    void acknowledge(const Request &request, Status::Code code, const QString &error);
    QString quotaKey(const QString &name) const;

    const ServerOptions &m_options;
    is::Repository &m_repository;
    is::TypeRegistry &m_types;
    Client &m_client;
    WriterTracker &m_writers;
    Persistence *m_persistence;
    Quota m_quota;
    const is::HistoryStore *m_history = nullptr;
    std::unique_ptr<AuditTrail> m_audit; // with --audit / --audit-file
    quint64 m_accessRefused = 0;
};

} // namespace dialog::isd
