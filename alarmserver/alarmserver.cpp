#include "alarmserver.h"

#include "alarmservice.h"
#include "alarmtable.h"
#include "alarmweb.h"
#include "evaluator.h"
#include "historystore.h"
#include "isexport.h"

#include "dialog/is/dictionary.h"

#include <QLoggingCategory>

using namespace Qt::StringLiterals;

Q_LOGGING_CATEGORY(lcAlarmServer, "dialog.alarm.server", QtInfoMsg)

namespace dialog::alarm {

AlarmServer::AlarmServer(Client *client, const RuleSet &rules, const ServerOptions &options, QObject *parent)
    : QObject(parent), m_client(client), m_options(options),
      m_dictionary(std::make_unique<is::Dictionary>(client)), m_table(std::make_unique<AlarmTable>(rules)),
      m_history(std::make_unique<HistoryStore>(options.database))
{
}

AlarmServer::~AlarmServer()
{
    // What is queued is written before the parts that produce it go.
    m_web.reset();
    m_evaluator.reset();
    m_hooks.reset();
    m_isExport.reset();
    m_service.reset();
    m_history.reset();
}

bool AlarmServer::start(QString *error)
{
    if (!m_history->open(error))
        return false;
    const QHash<QString, QJsonObject> kept = m_history->loadStates();
    int restored = 0;
    for (auto it = kept.cbegin(); it != kept.cend(); ++it)
        if (const int i = m_table->indexOf(it.key()); i >= 0) {
            m_table->restore(i, it.value());
            restored += m_table->state(i).listed() ? 1 : 0;
        }
    if (restored)
        qCInfo(lcAlarmServer).noquote() << restored
                                        << "alarms kept from the previous run (acknowledged, "
                                           "shelved, latched or disabled)";
    m_service = std::make_unique<AlarmService>(m_client, m_table.get(), m_history.get(), m_options.access);
    m_hooks = std::make_unique<HookRunner>(m_table.get(), m_options.hooks);
    m_service->addFigures(u"hooks"_s, [hooks = m_hooks.get()] { return hooks->figures(); });
    connect(m_hooks.get(), &HookRunner::countersChanged, m_service.get(), &AlarmService::figuresChanged);
    if (!m_service->start(m_options.secret, error))
        return false;
    if (!m_options.isServer.isEmpty()) {
        m_isExport = std::make_unique<IsExport>(m_dictionary.get(), m_table.get(), m_options.isServer);
        m_isExport->start();
    }
    m_evaluator =
        std::make_unique<Evaluator>(m_client, m_dictionary.get(), m_table.get(), m_options.stalePollMs);
    m_evaluator->start();
    if (m_options.httpPort >= 0) {
        m_web = std::make_unique<AlarmWeb>(m_service.get(), m_table.get(), m_history.get());
        m_web->setToken(m_options.httpToken);
        m_web->addMetrics([hooks = m_hooks.get()] { return hooks->metrics(); });
        if (const Status st = m_web->listen(m_options.httpBind, quint16(m_options.httpPort)); !st.isOk()) {
            *error = st.message();
            return false;
        }
    }
    return true;
}

quint16 AlarmServer::webPort() const
{
    return m_web ? m_web->port() : 0;
}

} // namespace dialog::alarm
