// A partition's shared secret written to a file (dialogctl secret generate, dialogctl up).
#pragma once

#include <QByteArray>
#include <QString>

namespace dialog::tool {

/// Writes @p secret to @p path, created readable by its owner only (0600). Without @p force an
/// existing file is left alone (false, "exists"): it is a partition's secret, and replacing it
/// locks every process out. False with @p why.
bool writeSecretFile(const QString &path, const QByteArray &secret, bool force, QString *why);

} // namespace dialog::tool
