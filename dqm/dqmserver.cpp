#include "dqmserver.h"

#include "dialog/is/typeinfo.h"
#include "dialog/request.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSaveFile>

Q_LOGGING_CATEGORY(lcDqm, "dialog.dqm", QtInfoMsg)

namespace dialog::dqm {

namespace {

const QString ResultType = QStringLiteral("DQResult");

is::TypeInfo resultType()
{
    using is::AttributeInfo;
    using is::BasicType;
    is::TypeInfo t(ResultType, QStringLiteral("The result of a data-quality check"));
    t.setAttributes({AttributeInfo(QStringLiteral("status"), BasicType::String, QStringLiteral("Good, Warning, Bad or Undefined")),
                     AttributeInfo(QStringLiteral("value"), BasicType::Double, QStringLiteral("What the thresholds were applied to")),
                     AttributeInfo(QStringLiteral("details"), BasicType::String, QStringLiteral("Why")),
                     AttributeInfo(QStringLiteral("histogram"), BasicType::String, QStringLiteral("The IS histogram checked")),
                     AttributeInfo(QStringLiteral("algorithm"), BasicType::String, QStringLiteral("chi2, ks, mean, rms, dead_bins, noisy_bins")),
                     AttributeInfo(QStringLiteral("entries"), BasicType::U64, QStringLiteral("Entries of the histogram checked"))});
    return t;
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
    for (auto &[name, s] : m_states) {
        if (s.pending)
            continue; // its last read has not come back yet
        s.pending = true;
        m_dict.get(s.check.object, [this, &s](const Status &st, const is::Entry &e) {
            s.pending = false;
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
        m_client->reply(request, QJsonDocument(QJsonObject{{QStringLiteral("checks"), list}}).toJson(QJsonDocument::Compact));
    } else if (op == QLatin1String("set-reference")) {
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

} // namespace dialog::dqm
