// Cases that run a program as an unprivileged user (65534, by setpriv) when the test runs as root:
// that user must reach the build tree, which a clone in root's home (/root, mode 0700) is not.
#pragma once

#include <QFile>
#include <QFileInfo>
#include <QString>

/// True when user 65534 can reach @p path: every directory above it lets others search it.
inline bool reachableByOthers(const QString &path)
{
    for (QFileInfo dir(QFileInfo(path).absolutePath());; dir = QFileInfo(dir.absolutePath())) {
        if (!(dir.permissions() & QFile::ExeOther))
            return false;
        if (dir.isRoot())
            return true;
    }
}
