// The alarms of dialog-alarmserver as IS objects (--is-server NAME): NAME.Alarm.<path with '/' as
// '.'> of type ActiveAlarm while the alarm is in the table and not disabled; removed when it goes.
#pragma once

#include "alarmtable.h"

#include "dialog/is/dictionary.h"

#include <QSet>

namespace dialog::alarm {

class IsExport : public QObject
{
    Q_OBJECT
public:
    /// @p dictionary and @p table must outlive it.
    IsExport(is::Dictionary *dictionary, AlarmTable *table, const QString &server, QObject *parent = nullptr);
    /// Declares the type on the server, then writes the alarms in the table (and again whenever
    /// the declaration had failed: the server may start later).
    void start();
    /// The IS object of the alarm at @p path.
    QString objectName(const QString &path) const;

private:
    void write(int i);
    void declare();

    is::Dictionary *m_dictionary;
    AlarmTable *m_table;
    QString m_server;
    bool m_declared = false, m_declaring = false, m_warned = false;
    QSet<int> m_written;
};

} // namespace dialog::alarm
