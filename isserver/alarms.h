// Alarm rules of dialog-isserver (--alarms FILE): conditions on numeric attributes, raised and
// cleared as IS objects of the type Alarm.
#pragma once

#include "dialog/is/alarmrule.h"
#include "dialog/is/object.h"
#include "dialog/logrecord.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QRegularExpression>

class QTimer;

namespace dialog::is {
class Repository;
class TypeRegistry;
struct Change;
} // namespace dialog::is

namespace dialog::isd {

/// The rules' parser lives in libdialog (dialog/is/alarmrule.h): the OMD reads the same file for
/// its threshold lines.
using AlarmRule = is::AlarmRule;

/// Evaluates the rules against this server's objects: on every change of a matching object and
/// every 200 ms for the durations. An alarm is raised when a rule's condition has held on an object
/// for the rule's duration: the IS object "Alarm.<line>.<Object>" of type Alarm is created (and a
/// message reported with dialog::report, which reaches dialog-logger when reporting is started);
/// it is removed when the condition no longer holds or the object is removed (cleared, reported at
/// Info). Lives in the IS server's main thread.
class AlarmEvaluator : public QObject
{
    Q_OBJECT
public:
    /// Declares the type Alarm in @p types if missing. @p repository must outlive this object.
    AlarmEvaluator(is::Repository &repository, const QList<AlarmRule> &rules, QObject *parent = nullptr);
    ~AlarmEvaluator() override;

    static QString typeName();
    static Status declareType(is::TypeRegistry &types);
    void start();

private:
    struct State
    {
        qint64 sinceMs = -1; ///< when the condition started to hold; -1 while it does not
        double value = 0;
        bool raised = false;
    };
    void onChange(const is::Change &change);
    void evaluate(int rule, const QString &object, const is::Object *value);
    void tick();
    void raise(int rule, const QString &object, State &state);
    void clear(int rule, const QString &object, State &state);
    QString alarmName(int rule, const QString &object) const;

    is::Repository &m_repository;
    QList<AlarmRule> m_rules;
    QHash<QPair<int, QString>, State> m_states;
    QElapsedTimer m_clock;
    QTimer *m_timer = nullptr;
    int m_listener = 0;
};

} // namespace dialog::isd
