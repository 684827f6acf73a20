// Where the tests save their screenshots: ${CMAKE_BINARY_DIR}/screenshots, never the source tree.
// `./run.sh screenshots` copies them over docs/*.png on purpose.
#pragma once

#include <QDir>
#include <QString>

namespace dialog::test {

/// The path of screenshot @p file (e.g. "inspector.png"); the directory is created if missing.
inline QString screenshotPath(const QString &file)
{
    const QString dir = QStringLiteral(DIALOG_SCREENSHOT_DIR);
    QDir().mkpath(dir);
    return dir + QLatin1Char('/') + file;
}

} // namespace dialog::test
