// The IS wire protocol on top of DIALOG, for the processes that serve it (an IS server, an
// archiver): the service names, the requests and replies carried by DIALOG REQUEST / REPLY frames
// to the service "IS.<Server>" (protobuf on the wire, libdialog/proto/is.proto) as value types,
// and the notification records pushed to subscribers on a DIALOG stream. The byte formats are
// written down in docs/protocol.md. Codecs only: nothing here touches a socket.
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/history.h"
#include "dialog/is/staleness.h"
#include "dialog/is/time.h"
#include "dialog/status.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

namespace dialog::is::protocol {

/// The DIALOG service an IS server provides (requests go to it; its value announces the server).
inline QString serviceName(const QString &server)
{
    return QStringLiteral("IS.") + server;
}
/// Prefix of serviceName(); every service starting with it is an IS server.
inline QString servicePrefix()
{
    return QStringLiteral("IS.");
}

/// The request service of the archiver of IS server @p server (dialog-archiver): it answers HISTORY
/// requests as the server does, from its SQLite archive.
inline QString archiveService(const QString &server)
{
    return QStringLiteral("ARCHIVE.") + server;
}

/// The kind of a notification record (its first byte).
enum RecordKind : quint8
{
    Created = 0, ///< the object was created (or is part of a snapshot)
    Updated = 1, ///< the object has a new value
    Removed = 2, ///< the object was removed (no value)
    /// The server dropped this many notifications for the subscription (count in the time field).
    Dropped = 0x80,
    /// Frame the current content sent first to a subscription made with a snapshot (its records
    /// are Created records); the receiver drops what it holds and was not in the snapshot.
    SnapshotBegin = 0x81,
    SnapshotEnd = 0x82, ///< the end of the snapshot: the changes since follow
    /// Sent first to a subscription made with a history span: one per matching object, the value
    /// is a serialised reply (serializeReply()) holding the object's history (its time: the
    /// oldest value).
    HistoryRecord = 0x83,
};

/// record := u8 kind | u16 nameLen | object name (UTF-8, no server prefix) | u16 typeLen | type name
///           | s64 time (µs since the epoch) | u32 valueLen | dialog::is::encode() of the value
/// A stream message is one or more records.
constexpr qsizetype RecordOverhead = 1 + 2 + 2 + 8 + 4;
/// Appends one record to @p out (a batch); @p name and @p type are UTF-8, @p value may be empty.
void appendRecord(QByteArray &out, quint8 kind, QByteArrayView name, QByteArrayView type, qint64 timeUs,
                  QByteArrayView value);

/// Where the parts of one record lie in its batch, as nextRecord() reads them (no copy is made).
struct RecordView
{
    quint8 kind = 0;                                        ///< a RecordKind
    qint32 nameOffset = 0;  ///< byte offset of the object name in the batch
    qint32 typeOffset = 0;  ///< byte offset of the type name in the batch
    qint32 valueOffset = 0; ///< byte offset of the encoded value in the batch
    quint16 nameLength = 0; ///< UTF-8 bytes of the object name
    quint16 typeLength = 0; ///< UTF-8 bytes of the type name
    qint32 valueLength = 0;                                 ///< bytes of the encoded value (0: none)
    qint64 timeUs = 0; ///< the change's time (µs since the epoch), or the count of a Dropped record
};
/// Reads the record at @p pos into @p out and advances @p pos past it; call while @p pos is less than
/// the batch's size. A malformed record (or @p pos at the end) is Status::Code::ProtocolError naming
/// the byte and what is wrong, and @p pos is set to the end.
Status nextRecord(QByteArrayView batch, qsizetype &pos, RecordView &out);

/// One request to an IS server (or, HISTORY only, to an archiver), as parseRequest() reads it.
struct RequestMessage
{
    /// The operation asked for; the numbers are those on the wire.
    enum class Op
    {
        None = 0,         ///< not set: a malformed request
        Insert = 1,       ///< create @ref name with @ref value
        Update = 2,       ///< replace the value of the existing @ref name
        Upsert = 3,       ///< update, create if missing
        Remove = 4,       ///< remove @ref name
        Get = 5,          ///< read @ref name (as @ref type when set)
        List = 6,         ///< the objects matching @ref criteria
        Types = 7,        ///< every type of the server
        DeclareTypes = 8, ///< declare the types of @ref typesJson
        Subscribe = 9,    ///< subscribe the stream @ref channel to @ref criteria
        Unsubscribe = 10, ///< end the subscription of @ref channel
        History = 11,     ///< the history of @ref name
    };
    Op op = Op::None;        ///< what is asked (None: the request could not be read)
    QString name;            ///< object name (full or bare): Insert to Get, History
    QString type;            ///< Get: read as this type
    QByteArray value;        ///< Insert, Update, Upsert: dialog::is::encode() of the object
    Criteria criteria;       ///< List, Subscribe (read for these operations only)
    bool withValues = false; ///< List, Subscribe: with the objects' values
    QString channel;         ///< Subscribe, Unsubscribe: the stream channel the requester attached
    QByteArray typesJson;    ///< DeclareTypes: JSON array of types
    bool snapshot = false;   ///< Subscribe: first the matching objects, framed by SnapshotBegin/End
    QString attribute;       ///< History: one numeric attribute (empty: every one)
    qint64 fromUs = 0;       ///< History: start of the interval, inclusive (µs since the epoch)
    qint64 toUs = 0;         ///< History: end of the interval, inclusive
    quint32 maxPoints = 0;   ///< History: per series, downsampled beyond (0: every point)
    QString archiveService;  ///< Subscribe: the subscriber archives and answers HISTORY on it
    qint64 historyUs = 0;    ///< Subscribe: first the last historyUs of each matching object's history
    bool staleOnly = false;  ///< List: only the stale objects
};

/// Reads @p bytes as an IS request into @p out. False, @p out untouched, if they are not one.
bool parseRequest(QByteArrayView bytes, RequestMessage *out);

/// One object of a Get or List reply.
struct EntryMessage
{
    QString name;            ///< object name, without the server prefix
    QString type;            ///< its type name
    Time time;               ///< its last update
    quint64 updateCount = 0; ///< 0 when created, +1 on every update
    QByteArray value;        ///< dialog::is::encode() of the object; empty in a list without values
    Staleness staleness;     ///< when the server answered
};

/// A reply of an IS server (or an archiver).
struct ReplyMessage
{
    Status::Code code = Status::Code::Ok; ///< the outcome (the library's one table of errors)
    QString error;                        ///< why, when code is not Ok
    QList<EntryMessage> entries;          ///< Get, List
    QByteArray typesJson;                 ///< Types: JSON array of every type of the server
    History history;                      ///< History: the object's type, oldest value held and series
    QString archiveService;               ///< History: where older values are archived (empty: not archived)
};

/// The bytes of @p reply on the wire.
QByteArray serializeReply(const ReplyMessage &reply);

} // namespace dialog::is::protocol
