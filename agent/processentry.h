// The process table's entry of one process, shared by processtable.cpp and processtablestate.cpp.
#pragma once

#include "processtable.h"

#include <QTimer>

namespace dialog::agent {

struct ProcessTable::Entry
{
    std::unique_ptr<ManagedProcess> process;
    RestartTracker tracker;
    QString state = QStringLiteral("starting");
    ExitInfo last;
    bool hasExited = false;
    qint64 startedMs = 0;
    QTimer restartTimer;
    QList<Done> stopWaiters;
    QString startError;
    bool yielding = false; ///< stopped because another copy holds its name: standby when it ended
};

} // namespace dialog::agent
