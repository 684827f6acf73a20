// The IS wire protocol on top of DIALOG: requests/replies (protobuf, is.proto) to the service
// "IS.<Server>", and notification records pushed to subscribers on a DIALOG stream.
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"

#include "is.pb.h"

#include <QByteArray>
#include <QByteArrayView>

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

/// HISTORY replies: the series of @p history into @p out (type, oldest and series), and back.
void toProto(const History &history, isproto::Reply *out);
History historyFromProto(const isproto::Reply &reply);

enum RecordKind : quint8
{
    Created = 0,
    Updated = 1,
    Removed = 2,
    /// The server dropped this many notifications for the subscription (count in the time field).
    Dropped = 0x80,
    /// Frame the current content sent first to a subscription made with a snapshot (its records
    /// are Created records); the receiver drops what it holds and was not in the snapshot.
    SnapshotBegin = 0x81,
    SnapshotEnd = 0x82,
    /// Sent first to a subscription made with a history span: one per matching object, the value
    /// is a serialised isproto::Reply holding the object's history (its time: the oldest value).
    HistoryRecord = 0x83,
};

/// record := u8 kind | u16 nameLen | object name (UTF-8, no server prefix) | u16 typeLen | type name
///           | s64 time (µs since the epoch) | u32 valueLen | dialog::is::encode() of the value
/// A stream message is one or more records.
constexpr qsizetype RecordOverhead = 1 + 2 + 2 + 8 + 4;
void appendRecord(QByteArray &out, quint8 kind, QByteArrayView name, QByteArrayView type, qint64 timeUs,
                  QByteArrayView value);

struct RecordView
{
    quint8 kind = 0;
    qint32 nameOffset = 0, typeOffset = 0, valueOffset = 0;
    quint16 nameLength = 0, typeLength = 0;
    qint32 valueLength = 0;
    qint64 timeUs = 0;
};
/// Reads the record at @p pos and advances it. False at the end (pos == size) or on a malformed
/// record (then @p error is set).
bool nextRecord(QByteArrayView batch, qsizetype &pos, RecordView &out, QString *error);

Status statusFromReply(const isproto::Reply &reply);

void toProto(const Criteria &criteria, isproto::Criteria *out);
Criteria fromProto(const isproto::Criteria &criteria);

QByteArray serialize(const google::protobuf::MessageLite &message);

} // namespace dialog::is::protocol
