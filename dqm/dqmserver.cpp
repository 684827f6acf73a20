#include "dqmserver.h"

#include "dialog/is/typeinfo.h"
#include "dialog/is/typeregistry.h"
#include "dialog/request.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSaveFile>
#include <QScopeGuard>
#include <algorithm>

Q_LOGGING_CATEGORY(lcDqm, "dialog.dqm", QtInfoMsg)

namespace dialog::dqm {

namespace {

const QString ResultType = QStringLiteral("DQResult");

/// DQResult, from resources/is-types/dqm.xml (built into the daemon); invalid when it cannot be read.
is::TypeInfo resultType()
{
    static const is::TypeInfo type = [] {
        is::TypeRegistry types;
        if (const Status s = types.loadFile(QStringLiteral(":/dqm/is-types/dqm.xml")); !s.isOk())
            qCCritical(lcDqm).noquote() << "the DQResult type cannot be read:" << s.message();
        return types.type(ResultType);
    }();
    return type;
}

} // namespace

QString serverService()
{
    return QStringLiteral("DQM.Server");
}

DqmServer::DqmServer(Client *client, const ServerOptions &options, QObject *parent)
    : QObject(parent), m_client(client), m_options(options), m_dict(client)
{
    for (const Check &c : options.checks)
        m_states[c.name].check = c;
    m_timer.setInterval(options.periodMs);
    connect(&m_timer, &QTimer::timeout, this, &DqmServer::runChecks);
    connect(client, &Client::requestReceived, this, &DqmServer::onRequest);
}

void DqmServer::start()
{
    m_client->publish(serverService());
    declareType();
    m_timer.start();
    QString server, object;
    if (!m_options.runInfo.isEmpty() && is::Dictionary::splitName(m_options.runInfo, &server, &object)) {
        m_runReceiver = std::make_unique<is::Receiver>(&m_dict);
        m_runReceiver->setCallback([this](const is::Event &e) { onRunInfo(e); });
        // With its snapshot: the run that is going when dialog-dqm starts is known before it ends.
        m_runReceiver->subscribeWithSnapshot(server, is::Criteria::exactName(object));
    }
}

QString DqmServer::runDir(qint64 run) const
{
    return QDir(m_options.referenceDir).filePath(QStringLiteral("runs/%1").arg(run));
}

void DqmServer::onRunInfo(const is::Event &e)
{
    if (e.kind() != is::Event::Kind::Created && e.kind() != is::Event::Kind::Updated)
        return;
    is::Object o;
    if (const Status decoded = e.object(&o); decoded.code() == Status::Code::UnknownType) {
        // The run's type is the master's (RunInfo): learnt from its server, then the value read again.
        const QString server = e.server(), name = e.name();
        m_dict.fetchTypes(server, [this, name](const Status &fetched) {
            if (!fetched.isOk()) {
                qCWarning(lcDqm).noquote() << "the types of" << name << "cannot be read:" << fetched.toString();
                return;
            }
            m_dict.get(name, [this](const Status &s, const is::Entry &entry) {
                if (s.isOk())
                    onRunValue(entry.object);
            });
        });
        return;
    } else if (!decoded.isOk()) {
        return;
    }
    onRunValue(o);
}

void DqmServer::onRunValue(const is::Object &o)
{
    bool ok = false;
    const quint32 run = o.get<quint32>(QStringLiteral("runNumber"), &ok);
    const bool running = o.get<QString>(QStringLiteral("state")) == QLatin1String("Running");
    if (!ok)
        return;
    // The end of a run: it was running, and now it is not (or another run began).
    if (m_running && (!running || run != m_run) && m_run != 0)
        keepRun(m_run);
    m_run = run;
    m_running = running;
}

void DqmServer::keepRun(quint32 run)
{
    const QString dir = runDir(run);
    if (!QDir().mkpath(dir)) {
        qCWarning(lcDqm).noquote() << "cannot keep the histograms of run" << run << ": cannot make" << dir;
        return;
    }
    qCInfo(lcDqm).noquote() << "run" << run << "ended: its histograms are kept in" << dir;
    for (const auto &[name, st] : m_states) {
        const QString check = name, object = st.check.object;
        m_dict.get(object, [this, dir, check, object, run](const Status &s, const is::Entry &e) {
            Histogram h;
            const Status read = s.isOk() ? Histogram::fromObject(e.object, &h) : s;
            if (!read.isOk()) {
                qCWarning(lcDqm).noquote() << "run" << run << ": histogram of" << check << "not kept:" << object
                                           << read.message();
                return;
            }
            QJsonObject json = h.toJson();
            json.insert(QStringLiteral("from"), object);
            json.insert(QStringLiteral("time"), e.time.toString());
            json.insert(QStringLiteral("run"), qint64(run));
            QSaveFile f(QDir(dir).filePath(check + QStringLiteral(".json")));
            if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(json).toJson()) < 0 || !f.commit())
                qCWarning(lcDqm).noquote() << "run" << run << ": cannot write" << f.fileName() << f.errorString();
        });
    }
    // The oldest runs beyond --keep-runs go.
    QList<qint64> runs;
    const QDir all(QDir(m_options.referenceDir).filePath(QStringLiteral("runs")));
    for (const QString &entry : all.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        bool isNumber = false;
        const qint64 n = entry.toLongLong(&isNumber);
        if (isNumber)
            runs.append(n);
    }
    std::sort(runs.begin(), runs.end());
    for (qsizetype i = 0; i + m_options.keepRuns < runs.size(); ++i)
        QDir(runDir(runs.at(i))).removeRecursively();
}

void DqmServer::declareType()
{
    m_dict.declareTypes(m_options.isServer, {resultType()}, [this](const Status &s) {
        m_typeDeclared = s.isOk();
        if (!s.isOk())
            qCWarning(lcDqm).noquote() << "cannot declare" << ResultType << "on" << m_options.isServer << s.toString();
    });
}

QString DqmServer::referencePath(const QString &check) const
{
    return QDir(m_options.referenceDir).filePath(check + QStringLiteral(".json"));
}

Status DqmServer::loadReference(const QString &check, Histogram *out) const
{
    QFile f(referencePath(check));
    if (!f.exists())
        return Status(Status::Code::NotFound, QStringLiteral("no reference"));
    if (!f.open(QIODevice::ReadOnly))
        return Status(Status::Code::StorageError, QStringLiteral("%1: %2").arg(f.fileName(), f.errorString()));
    const Status s = Histogram::fromJson(QJsonDocument::fromJson(f.readAll()).object(), out);
    return s.isOk() ? s : Status(Status::Code::StorageError, QStringLiteral("reference %1: %2").arg(f.fileName(), s.message()));
}

void DqmServer::runChecks()
{
    if (!m_typeDeclared)
        declareType();
    if (m_cycleOutstanding > 0)
        return; // the last round is not over: this period is skipped rather than piled up
    m_cycle.start();
    for (auto &[name, s] : m_states) {
        if (s.pending)
            continue; // its last read has not come back yet
        s.pending = true;
        ++m_cycleOutstanding;
        m_dict.get(s.check.object, [this, &s](const Status &st, const is::Entry &e) {
            s.pending = false;
            const auto roundDone = qScopeGuard([this] {
                if (--m_cycleOutstanding == 0) {
                    m_lastCycleUs = m_cycle.nsecsElapsed() / 1000;
                    ++m_cycles;
                }
            });
            s.entries = 0;
            if (!st.isOk())
                return finish(s, {Quality::Undefined, 0, QStringLiteral("%1: %2").arg(s.check.object, st.toString())});
            Histogram h;
            if (const Status bad = Histogram::fromObject(e.object, &h); !bad.isOk())
                return finish(s, {Quality::Undefined, 0, QStringLiteral("%1 %2").arg(s.check.object, bad.message())});
            Histogram reference;
            const Status loaded = s.check.needsReference() ? loadReference(s.check.name, &reference) : Status();
            if (!loaded.isOk() && loaded.code() != Status::Code::NotFound)
                return finish(s, {Quality::Undefined, 0, loaded.message()});
            s.entries = h.entries;
            finish(s, evaluate(s.check, h, loaded.isOk() && s.check.needsReference() ? &reference : nullptr));
        });
    }
}

void DqmServer::finish(State &s, const Result &r)
{
    if (r.quality != s.result.quality)
        qCInfo(lcDqm).noquote() << s.check.name << qualityName(s.result.quality) << "->" << qualityName(r.quality) << r.details;
    s.result = r;
    if (!m_typeDeclared)
        return;
    is::Object o = is::Object::create(m_dict.types(), ResultType);
    o.set(QStringLiteral("status"), qualityName(r.quality));
    o.set(QStringLiteral("value"), r.value);
    o.set(QStringLiteral("details"), r.details);
    o.set(QStringLiteral("histogram"), s.check.object);
    o.set(QStringLiteral("algorithm"), s.check.algorithm);
    o.set(QStringLiteral("entries"), s.entries);
    const QString name = m_options.isServer + QLatin1Char('.') + s.check.name;
    m_dict.update(name, o, is::Dictionary::UpdateMode::CreateIfMissing, [name](const Status &st) {
        if (!st.isOk())
            qCWarning(lcDqm).noquote() << "cannot write" << name << st.toString();
    });
}

void DqmServer::onRequest(const Request &request)
{
    if (request.service() != serverService())
        return;
    const QJsonObject o = QJsonDocument::fromJson(request.data()).object();
    const QString op = o.value(QStringLiteral("op")).toString();
    if (op == QLatin1String("results")) {
        QJsonArray list;
        for (const auto &[name, s] : m_states)
            list.append(QJsonObject{{QStringLiteral("check"), name},
                                    {QStringLiteral("histogram"), s.check.object},
                                    {QStringLiteral("algorithm"), s.check.algorithm},
                                    {QStringLiteral("status"), qualityName(s.result.quality)},
                                    {QStringLiteral("value"), s.result.value},
                                    {QStringLiteral("details"), s.result.details}});
        // The last complete round of every check: from its first read to its last result.
        m_client->reply(request, QJsonDocument(QJsonObject{{QStringLiteral("checks"), list},
                                                           {QStringLiteral("rounds"), qint64(m_cycles)},
                                                           {QStringLiteral("last_round_us"), m_lastCycleUs},
                                                           {QStringLiteral("run"), qint64(m_run)},
                                                           {QStringLiteral("running"), m_running}})
                                     .toJson(QJsonDocument::Compact));
    } else if (op == QLatin1String("set-reference")) {
        if (o.contains(QStringLiteral("run")))
            setReferenceFromRun(request, o.value(QStringLiteral("check")).toString(),
                                o.value(QStringLiteral("run")).toInteger(-1));
        else
            setReference(request, o.value(QStringLiteral("check")).toString());
    } else {
        m_client->replyError(request, QStringLiteral("unknown request '%1' (results, set-reference)").arg(op));
    }
}

void DqmServer::setReference(const Request &request, const QString &check)
{
    const auto it = m_states.find(check);
    if (it == m_states.end())
        return void(m_client->replyError(request, QStringLiteral("no check '%1'").arg(check)));
    const QString object = it->second.check.object;
    m_dict.get(object, [this, request, check, object](const Status &st, const is::Entry &e) {
        Histogram h;
        Status s = st.isOk() ? Histogram::fromObject(e.object, &h) : st;
        if (!s.isOk())
            return void(m_client->replyError(request, QStringLiteral("%1: %2").arg(object, s.message())));
        QDir().mkpath(m_options.referenceDir);
        QSaveFile f(referencePath(check));
        QJsonObject json = h.toJson();
        json.insert(QStringLiteral("from"), object);
        json.insert(QStringLiteral("time"), e.time.toString());
        if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(json).toJson()) < 0 || !f.commit())
            return void(m_client->replyError(request, QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString())));
        qCInfo(lcDqm).noquote() << "reference of" << check << "taken from" << object << "(" << h.entries << "entries ) by" << request.origin();
        m_client->reply(request, QJsonDocument(QJsonObject{{QStringLiteral("file"), f.fileName()},
                                                           {QStringLiteral("entries"), qint64(h.entries)}})
                                     .toJson(QJsonDocument::Compact));
    });
}

void DqmServer::setReferenceFromRun(const Request &request, const QString &check, qint64 run)
{
    if (m_states.find(check) == m_states.end())
        return void(m_client->replyError(request, QStringLiteral("no check '%1'").arg(check)));
    if (run <= 0)
        return void(m_client->replyError(request, QStringLiteral("a run number is a positive integer")));
    QFile kept(QDir(runDir(run)).filePath(check + QStringLiteral(".json")));
    if (!kept.open(QIODevice::ReadOnly))
        return void(m_client->replyError(
            request, QStringLiteral("no histogram of run %1 is kept for '%2' (dialog-dqm keeps the checked "
                                    "histograms of the last %3 runs it saw end, in %4)")
                         .arg(run)
                         .arg(check)
                         .arg(m_options.keepRuns)
                         .arg(QDir(m_options.referenceDir).filePath(QStringLiteral("runs")))));
    const QByteArray bytes = kept.readAll();
    Histogram h;
    if (const Status s = Histogram::fromJson(QJsonDocument::fromJson(bytes).object(), &h); !s.isOk())
        return void(m_client->replyError(request, QStringLiteral("%1: %2").arg(kept.fileName(), s.message())));
    QSaveFile f(referencePath(check));
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) < 0 || !f.commit())
        return void(m_client->replyError(request, QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString())));
    qCInfo(lcDqm).noquote() << "reference of" << check << "taken from run" << run << "(" << h.entries << "entries ) by"
                            << request.origin();
    m_client->reply(request, QJsonDocument(QJsonObject{{QStringLiteral("file"), f.fileName()},
                                                       {QStringLiteral("entries"), qint64(h.entries)},
                                                       {QStringLiteral("run"), run}})
                                 .toJson(QJsonDocument::Compact));
}

} // namespace dialog::dqm
