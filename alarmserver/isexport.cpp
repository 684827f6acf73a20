#include "isexport.h"

#include <QLoggingCategory>
#include <QTimer>

using namespace Qt::StringLiterals;

Q_LOGGING_CATEGORY(lcIsExport, "dialog.alarm.is", QtInfoMsg)

namespace dialog::alarm {

namespace {

is::TypeInfo activeAlarmType()
{
    using is::AttributeInfo;
    using is::BasicType;
    is::TypeInfo t(u"ActiveAlarm"_s, u"An alarm of dialog-alarmserver's table"_s);
    t.setAttributes({
        AttributeInfo(u"path"_s, BasicType::String, u"Its place in the alarm tree"_s),
        AttributeInfo(u"severity"_s, BasicType::String, u"minor, major or invalid"_s),
        AttributeInfo(u"state"_s, BasicType::String, u"active, acknowledged or latched"_s),
        AttributeInfo(u"shelved"_s, BasicType::Bool, u"Silenced by an operator until a time"_s),
        AttributeInfo(u"value"_s, BasicType::String, u"What made the condition hold"_s),
        AttributeInfo(u"description"_s, BasicType::String, u"What the alarm means"_s),
        AttributeInfo(u"guidance"_s, BasicType::String, u"What to do"_s),
        AttributeInfo(u"raised"_s, BasicType::Time, u"When it was raised"_s),
        AttributeInfo(u"acknowledgedBy"_s, BasicType::String, u"Who acknowledged it (empty: nobody)"_s),
    });
    return t;
}

} // namespace

IsExport::IsExport(is::Dictionary *dictionary, AlarmTable *table, const QString &server, QObject *parent)
    : QObject(parent), m_dictionary(dictionary), m_table(table), m_server(server)
{
    connect(m_table, &AlarmTable::changed, this, [this](const AlarmEvent &e) { write(e.alarm); });
}

void IsExport::start()
{
    declare();
}

void IsExport::declare()
{
    if (m_declaring)
        return;
    m_declaring = true;
    m_dictionary->declareTypes(m_server, {activeAlarmType()}, [this](const is::Status &st) {
        m_declaring = false;
        if (!st.isOk()) {
            if (!m_warned) {
                m_warned = true;
                qCWarning(lcIsExport).noquote() << "cannot declare the type ActiveAlarm on" << m_server
                                                << "(tried "
                                                   "again every 2 s):"
                                                << st.toString();
            }
            QTimer::singleShot(2000, this, &IsExport::declare);
            return;
        }
        m_declared = true;
        for (int i = 0; i < m_table->size(); ++i)
            if (m_table->state(i).listed())
                write(i);
    });
}

QString IsExport::objectName(const QString &path) const
{
    return u"%1.Alarm.%2"_s.arg(m_server, QString(path).replace(u'/', u'.'));
}

void IsExport::write(int i)
{
    if (!m_declared)
        return;
    const AlarmState &s = m_table->state(i);
    const Rule &r = m_table->rules().rules.at(i);
    const QString name = objectName(r.path);
    if (s.state == State::Normal || s.disabled) {
        if (m_written.remove(i))
            m_dictionary->remove(name, [name](const is::Status &st) {
                if (!st.isOk() && st.code() != Status::Code::NotFound)
                    qCWarning(lcIsExport).noquote() << "cannot remove" << name << ":" << st.toString();
            });
        return;
    }
    is::Object o;
    if (const Status created = is::Object::create(m_dictionary->types(), u"ActiveAlarm"_s, &o); !created.isOk()) {
        qCWarning(lcIsExport).noquote() << "cannot write" << name << ":" << created.toString();
        return;
    }
    o.set(u"path"_s, r.path);
    o.set(u"severity"_s, severityName(r.severity));
    o.set(u"state"_s, stateName(s.state));
    o.set(u"shelved"_s, s.shelved);
    o.set(u"value"_s, s.value);
    o.set(u"description"_s, r.description);
    o.set(u"guidance"_s, r.guidance);
    o.set(u"raised"_s, is::Time(s.raisedMs * 1000));
    o.set(u"acknowledgedBy"_s, s.ackBy);
    m_written.insert(i);
    m_dictionary->update(name, o, is::Dictionary::UpdateMode::CreateIfMissing, [name](const is::Status &st) {
        if (!st.isOk())
            qCWarning(lcIsExport).noquote() << "cannot write" << name << ":" << st.toString();
    });
}

} // namespace dialog::alarm
