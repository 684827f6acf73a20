#include "archiver.h"

#include "dialog/handoff.h"
#include "dialog/is/object.h"
#include "dialog/is/protocol.h"

#include <QDir>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcArchiver, "dialog.archiver", QtInfoMsg)

namespace dialog::archiver {

using is::Status;

namespace {
/// The value of a scalar numeric attribute as a double; false for any other value.
bool numeric(const is::Value *v, double *out)
{
    if (!v)
        return false;
    return std::visit(
        [out](const auto &x) -> bool {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, bool>) {
                *out = x ? 1 : 0;
                return true;
            } else if constexpr (std::is_arithmetic_v<T>) {
                *out = double(x);
                return true;
            } else {
                return false;
            }
        },
        v->storage());
}
} // namespace

Archiver::Archiver(const ArchiverOptions &options, QObject *parent) : QObject(parent), m_options(options) {}

Archiver::~Archiver()
{
    m_receiver.reset();
    m_dictionary.reset();
    m_client.reset();
    stop();
}

void Archiver::stop()
{
    if (!m_store || !m_storeThread.isRunning())
        return;
    handoff::callBlocking(m_store.get(), [store = m_store.get()] { store->flushAll(); });
    m_storeThread.quit();
    m_storeThread.wait();
    m_store.reset();
}

bool Archiver::start(QString *error)
{
    if (!Client::isValidName(is::protocol::archiveService(m_options.server)) ||
        m_options.server.contains(QLatin1Char('.'))) {
        *error = QStringLiteral("invalid IS server name '%1'").arg(m_options.server);
        return false;
    }
    const is::Criteria criteria(m_options.criteria);
    if (!criteria.isValid()) {
        *error =
            QStringLiteral("invalid --criteria '%1': %2").arg(m_options.criteria, criteria.errorString());
        return false;
    }
    if (!QDir().mkpath(m_options.dataDir)) {
        *error = QStringLiteral("cannot create the data directory %1").arg(m_options.dataDir);
        return false;
    }
    m_options.store.path =
        QDir(m_options.dataDir).filePath(m_options.server + QStringLiteral(".archive.sqlite"));
    QList<SeriesName> known;
    QString why;
    if (!ArchiveStore::readSeries(m_options.store.path, &known, &why)) {
        *error = QStringLiteral("cannot open the archive %1: %2").arg(m_options.store.path, why);
        return false;
    }
    for (const SeriesName &s : std::as_const(known)) {
        m_series.insert(s.object + QLatin1Char('\n') + s.attribute, s.id);
        m_nextId = qMax(m_nextId, s.id + 1);
    }
    m_store = std::make_unique<ArchiveStore>(m_options.store);
    m_store->moveToThread(&m_storeThread);
    m_storeThread.setObjectName(QStringLiteral("archive store"));
    handoff::startThread(m_storeThread);
    handoff::post(m_store.get(), [store = m_store.get()] { store->open(); });

    m_client = std::make_unique<Client>(m_options.client);
    connect(m_client.get(), &Client::requestReceived, this, &Archiver::onRequest);
    if (!m_client->start()) {
        *error = m_client->errorString();
        return false;
    }
    m_client->publish(is::protocol::archiveService(m_options.server));
    m_dictionary = std::make_unique<is::Dictionary>(m_client.get());
    m_receiver = std::make_unique<is::Receiver>(m_dictionary.get());
    m_receiver->setArchiveService(is::protocol::archiveService(m_options.server));
    m_receiver->setCallback([this](const is::Event &e) { onEvent(e); });
    connect(m_receiver.get(), &is::Receiver::subscriptionChanged, this,
            [this](int, const is::Status &status) {
                if (status.isOk())
                    qCInfo(lcArchiver).noquote() << "archiving IS server" << m_options.server;
                else
                    qCWarning(lcArchiver).noquote()
                        << "IS server" << m_options.server << "not reachable:" << status.toString();
            });
    m_receiver->subscribe(m_options.server, criteria, true);
    return true;
}

void Archiver::onEvent(const is::Event &e)
{
    if (!e.hasValue())
        return;
    const is::Object o = e.object();
    if (!o.isValid())
        return;
    const QString object = QString::fromUtf8(e.objectNameUtf8());
    const qint64 t = e.time().microsecondsSinceEpoch();
    const QList<is::AttributeInfo> attrs = o.attributes();
    for (int i = 0; i < attrs.size(); ++i) {
        double v;
        if (attrs.at(i).isVector() || !numeric(o.valueAt(i), &v))
            continue;
        const QString key = object + QLatin1Char('\n') + attrs.at(i).name();
        auto it = m_series.constFind(key);
        if (it == m_series.cend()) {
            it = m_series.insert(key, m_nextId++);
            m_fresh.append(SeriesName{*it, object, attrs.at(i).name()});
        }
        // Values of one series in the same microsecond (the server stamps changes to the
        // millisecond) are kept apart, one microsecond later each.
        if (size_t(*it) >= m_lastTime.size())
            m_lastTime.resize(size_t(*it) + 1, 0);
        qint64 &last = m_lastTime[size_t(*it)];
        last = qMax(t, last + 1);
        m_batch.push_back(Sample{*it, last, v});
    }
    if (!m_flushScheduled) {
        m_flushScheduled = true;
        // After the events of this delivery: one hand-over to the store for all of them.
        QMetaObject::invokeMethod(
            this,
            [this] {
                m_flushScheduled = false;
                m_store->enqueue(std::exchange(m_fresh, {}), std::exchange(m_batch, {}));
            },
            Qt::QueuedConnection);
    }
}

void Archiver::onRequest(const Request &request)
{
    using is::protocol::ReplyMessage;
    using is::protocol::RequestMessage;
    RequestMessage r;
    ReplyMessage out;
    if (!is::protocol::parseRequest(request.data(), &r) || r.op != RequestMessage::Op::History) {
        out.code = Status::Code::BadRequest;
        out.error = QStringLiteral("the archiver answers HISTORY requests only");
        m_client->reply(request, is::protocol::serializeReply(out));
        return;
    }
    QString name = r.name;
    if (name.startsWith(m_options.server + QLatin1Char('.')))
        name = name.mid(m_options.server.size() + 1);
    const QString attribute = r.attribute;
    QList<QPair<QString, qint32>> wanted;
    const QString prefix = name + QLatin1Char('\n');
    for (auto it = m_series.cbegin(); it != m_series.cend(); ++it)
        if (it.key().startsWith(prefix) && (attribute.isEmpty() || it.key().mid(prefix.size()) == attribute))
            wanted.append({it.key().mid(prefix.size()), it.value()});
    std::sort(wanted.begin(), wanted.end(), [](const auto &a, const auto &b) { return a.second < b.second; });
    if (wanted.isEmpty()) {
        out.code = Status::Code::NotFound;
        out.error =
            QStringLiteral("no archived values of %1.%2%3")
                .arg(m_options.server, name, attribute.isEmpty() ? QString() : QLatin1Char(' ') + attribute);
        m_client->reply(request, is::protocol::serializeReply(out));
        return;
    }
    for (const auto &w : std::as_const(wanted)) {
        is::HistorySeries s;
        s.attribute = w.first;
        QString why;
        if (!ArchiveStore::query(m_options.store.path, QStringLiteral("archive-read"), w.second, r.fromUs,
                                 r.toUs, qsizetype(r.maxPoints), m_options.store, &s.points, &why)) {
            out.code = Status::Code::StorageError;
            out.error = QStringLiteral("archive query failed: %1").arg(why);
            out.history = {};
            m_client->reply(request, is::protocol::serializeReply(out));
            return;
        }
        out.history.series.append(s);
    }
    out.code = Status::Code::Ok;
    m_client->reply(request, is::protocol::serializeReply(out));
}

} // namespace dialog::archiver
