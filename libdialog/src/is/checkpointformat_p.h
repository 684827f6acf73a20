// The byte format of IS checkpoint files, apart from their file handling: encode() and decode()
// take and return bytes, so they are tested and fuzzed without a disk.
#pragma once

#include "dialog/is/evolution.h"
#include "dialog/is/repository.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

namespace dialog::is {
class TypeRegistry;
}

namespace dialog::is::checkpointformat {

enum class Problem
{
    None,
    Corrupt,     // damaged file: a fallback to .previous may help
    Unsupported, // intact but unusable by this build or repository (version, server, types)
    Io,          // cannot read
};

struct Parsed
{
    Problem problem = Problem::None;
    QString error;
};

/// The bytes of a checkpoint of server @p serverName holding @p objects (format in checkpoint.h).
/// Empty with @p error if compression fails.
QByteArray encode(const QString &serverName, const QList<StoredObject> &objects, QString *error);

/// Checks header and payload checksums, magic, version and sizes of a checkpoint file's bytes
/// without decompressing them.
Parsed checkIntegrity(QByteArrayView bytes, const QString &path);

/// Decodes the bytes of a checkpoint file into @p out. @p path names the file in errors; the
/// checkpoint must be of server @p serverName and its objects of types known to @p registry.
/// Objects named in @p skip are left out unread (their values are not decoded). Objects of a type
/// whose layout changed are converted (Evolution, with @p conversions), and @p evolved, if given,
/// receives Evolution::changes().
Parsed decode(QByteArrayView bytes, const QString &path, const QString &serverName,
              const TypeRegistry &registry, QList<StoredObject> &out, const QStringList &skip = {},
              const Conversions &conversions = {}, QStringList *evolved = nullptr);

} // namespace dialog::is::checkpointformat
