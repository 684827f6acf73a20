#include "runbook.h"

#include "dialog/logrecord.h"
#include "dialog/rc/protocol.h"
#include "dialog/version.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcRunBook, "dialog.daq.runbook", QtInfoMsg)

namespace dialog::daq {

RunBook::RunBook(Client *client, const rc::Partition &partition, const QString &database, const QString &ref,
                 bool recordsRuns, QObject *parent)
    : QObject(parent), m_client(client), m_partition(partition), m_config(client, database), m_ref(ref)
{
    if (!recordsRuns)
        return;
    // The hosts and PIDs a run records are the directory's at its start.
    m_client->subscribe(directoryServiceName(), this, [this](const Message &m) {
        if (std::optional<DirectorySnapshot> snapshot;
            m_assembler.add(m.data(), &snapshot).isOk() && snapshot)
            m_directory = std::move(*snapshot);
    });
    // The events and bytes a run records are its readout slaves' counts at its end.
    for (const rc::ProcessSpec &s : partition.slaves) {
        if (s.kind != QLatin1String("readout"))
            continue;
        const QString name = s.name;
        m_client->subscribe(rc::statusService(name), this, [this, name](const Message &m) {
            const QJsonObject o = QJsonDocument::fromJson(m.data()).object();
            m_counted[name] = Counted{quint32(o.value(QStringLiteral("run_number")).toInteger()),
                                      o.value(QStringLiteral("events")).toInteger(),
                                      o.value(QStringLiteral("bytes")).toInteger()};
        });
    }
}

void RunBook::configure(std::function<void(const Status &, const Parameters &)> done)
{
    m_config.resolve(m_ref, [this, done](const Status &st, quint64 version) {
        if (!st.isOk())
            return done(Status(st.code(), QStringLiteral("configuration database: %1").arg(st.message())),
                        {});
        readSlaves(version, done);
    });
}

void RunBook::readSlaves(quint64 version, std::function<void(const Status &, const Parameters &)> done)
{
    // One listing of each kind's documents, not a request per slave: a large partition's
    // configuration is read in two answers.
    auto params = std::make_shared<Parameters>();
    auto left = std::make_shared<int>(2);
    auto failed = std::make_shared<Status>();
    const QString v = QString::number(version);
    for (const QString &prefix : {QStringLiteral("slaves/"), QStringLiteral("readout/")}) {
        m_config.list(
            prefix, v, true,
            [this, prefix, params, left, failed, version,
             done](const Status &st, const QList<config::Document> &docs, quint64) {
                if (!st.isOk() && failed->isOk())
                    *failed =
                        Status(st.code(), QStringLiteral("configuration database: %1").arg(st.message()));
                const QString kind = prefix == QLatin1String("readout/") ? QStringLiteral("readout")
                                                                         : QStringLiteral("control");
                for (const config::Document &d : docs) {
                    const QString name = d.path.mid(prefix.size());
                    const rc::ProcessSpec *s = m_partition.slave(name);
                    if (s && s->kind == kind)
                        params->insert(name, QJsonDocument::fromJson(d.content).object());
                }
                if (--*left > 0)
                    return;
                if (failed->isOk()) {
                    m_version = version;
                    qCInfo(lcRunBook).noquote() << "configuration version" << version << "(" << m_ref
                                                << "):" << params->size() << "slave documents";
                }
                done(*failed, *params);
            });
    }
}

QStringList RunBook::processNames(const QString &node) const
{
    if (!node.isEmpty()) {
        QStringList names{node};
        for (const QString &child : m_partition.childrenOf(node))
            names += processNames(child);
        return names;
    }
    // As the directory and the message log name them (an IS server registers as IS.Server.<name>).
    QStringList names{m_partition.master.name};
    for (const rc::ProcessSpec &s : m_partition.isServers)
        names << QStringLiteral("IS.Server.") + s.name;
    for (const QList<rc::ProcessSpec> &group :
         {m_partition.slaves, m_partition.loggers, m_partition.configDbs, m_partition.services})
        for (const rc::ProcessSpec &s : group)
            names << s.name;
    return names;
}

QJsonArray RunBook::processes(const QString &node) const
{
    const QStringList names = processNames(node);
    QJsonArray out;
    for (const QString &n : std::as_const(names)) {
        QJsonObject p{{QStringLiteral("name"), n}};
        // The software version is the one of its HELLO, as the directory has it ("unknown": an older
        // process that does not say); the master's own is known here.
        if (n == m_partition.master.name)
            p.insert(QStringLiteral("version"), QLatin1String(dialog::version()));
        if (const ProcessEntry *e = m_directory.process(n)) {
            p.insert(QStringLiteral("host"), e->host);
            p.insert(QStringLiteral("pid"), e->pid);
            if (!p.contains(QStringLiteral("version")))
                p.insert(QStringLiteral("version"),
                         e->version.isEmpty() ? QStringLiteral("unknown") : e->version);
        }
        out.append(p);
    }
    return out;
}

void RunBook::startRun(const QString &runType, const QString &operatorName, const QJsonArray &out,
                       std::function<void(const Status &, quint32)> done, const QString &node)
{
    QJsonObject run{{QStringLiteral("partition"),
                     node.isEmpty() ? m_partition.name : m_partition.name + QLatin1Char('/') + node},
                    {QStringLiteral("run_type"), runType},
                    {QStringLiteral("config_version"), qint64(m_version)},
                    {QStringLiteral("config_tag"), m_ref == QLatin1String("head") ? QString() : m_ref},
                    {QStringLiteral("operator"), operatorName},
                    {QStringLiteral("master"), node.isEmpty() ? m_partition.master.name : node},
                    {QStringLiteral("processes"), processes(node)}};
    if (!out.isEmpty())
        run.insert(QStringLiteral("out"), out);
    m_config.call({{QStringLiteral("op"), QStringLiteral("run-start")}, {QStringLiteral("run"), run}},
                  [this, done, node](const Status &st, const QJsonObject &a) {
                      if (!st.isOk())
                          return done(Status(st.code(), QStringLiteral("run registry: %1").arg(st.message())),
                                      0);
                      const auto number = quint32(a.value(QStringLiteral("number")).toInteger());
                      m_open.insert(number, {a.value(QStringLiteral("start_time")).toInteger(), node});
                      done(st, number);
                  });
}

void RunBook::endRun(quint32 number, const QString &reason, const QString &message, const QJsonArray &out)
{
    // The warnings and errors of the run: what the message log holds from the partition's processes
    // since the run started (messages still on their way to it are not counted).
    const Open open = m_open.take(number);
    LogQuery query;
    query.sinceMs = open.startMs;
    query.minSeverity = Severity::Warning;
    query.limit = 10000;
    m_client->request(logservice::service(), QByteArray(1, logservice::QueryKind) + query.encode(), 3000,
                      this, [this, number, reason, message, out, node = open.node](const Reply &r) {
                          QJsonObject messages;
                          LogPage page; // no logger or a bad answer: no counts
                          if (r.isOk())
                              (void)LogPage::decode(r.data(), &page);
                          const QStringList names = processNames(node);
                          for (const LogRecord &rec : page.records) {
                              if (!names.contains(rec.process))
                                  continue;
                              QJsonObject counts = messages.value(rec.process).toObject();
                              const QString sev = severityName(rec.severity);
                              counts.insert(sev, counts.value(sev).toInteger() + 1);
                              messages.insert(rec.process, counts);
                          }
                          recordEnd(number, reason, message, messages, out);
                      });
}

void RunBook::recordEnd(quint32 number, const QString &reason, const QString &message,
                        const QJsonObject &messages, const QJsonArray &out)
{
    qint64 events = 0, bytes = 0;
    for (const Counted &c : std::as_const(m_counted))
        if (c.run == number) {
            events += c.events;
            bytes += c.bytes;
        }
    m_config.call({{QStringLiteral("op"), QStringLiteral("run-end")},
                   {QStringLiteral("number"), qint64(number)},
                   {QStringLiteral("reason"), reason},
                   {QStringLiteral("message"), message},
                   {QStringLiteral("events"), events},
                   {QStringLiteral("bytes"), bytes},
                   {QStringLiteral("messages"), messages},
                   {QStringLiteral("out"), out}},
                  [number](const Status &st, const QJsonObject &) {
                      // The run is over either way; a record that stays open is ended as "master
                      // lost" by the partition's next run.
                      if (!st.isOk())
                          qCWarning(lcRunBook).noquote()
                              << "run" << number << "end not recorded:" << st.toString();
                  });
}

} // namespace dialog::daq
