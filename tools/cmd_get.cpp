#include "clientsetup.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaEnum>
#include <QTextStream>
#include <QTimer>

namespace dialog::tool {

namespace {
bool isText(const QByteArray &d)
{
    if (d.isEmpty())
        return true;
    for (char c : d)
        if ((uchar(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f)
            return false;
    return QString::fromUtf8(d).toUtf8() == d;
}
} // namespace

int get(const QStringList &args)
{
    const QString verb = QStringLiteral("get");
    qint64 count = 0, timeout = 0;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral("Subscribes to a service and prints its updates."));
    p.addPositional(QStringLiteral("service"), QStringLiteral("Service name."));
    p.add(Option::integer(QStringLiteral("count"), QStringLiteral("n"),
                          QStringLiteral("Exit after N updates (default: run until interrupted)."), &count, 1,
                          qint64(1) << 62));
    p.add(Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                           QStringLiteral("Fail if the updates did not arrive within this time."), &timeout,
                           OptionUnit::Milliseconds, 1, 86400000));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per update.")));
    if (!parse(p, args))
        return 1;
    if (p.positionalArguments().size() != 1)
        return fail(verb, QStringLiteral("expected exactly one service name (see --help)"));
    const QString service = p.positionalArguments().first();
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    const bool json = p.isSet(QStringLiteral("json"));
    qint64 received = 0;
    int rc = 0;
    Subscription *sub = client->subscribe(service);
    if (!sub)
        return fail(verb, client->errorString());
    QObject::connect(sub, &Subscription::messageReceived, client.get(), [&](const Message &m) {
        const QByteArray d = m.data();
        const bool text = isText(d);
        QByteArray line;
        if (json) {
            QJsonObject o{
                {QStringLiteral("service"), service},
                {QStringLiteral("sequence"), qint64(m.sequence())},
                {QStringLiteral("size"), d.size()},
                {QStringLiteral("time_ms"), QDateTime::currentMSecsSinceEpoch()},
                {QStringLiteral("encoding"), text ? QStringLiteral("utf8") : QStringLiteral("base64")},
                {QStringLiteral("data"), text ? QString::fromUtf8(d) : QString::fromLatin1(d.toBase64())}};
            line = QJsonDocument(o).toJson(QJsonDocument::Compact);
        } else {
            line = QStringLiteral("%1 %2 #%3 (%4 bytes): ")
                       .arg(QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss.zzz")), service)
                       .arg(m.sequence())
                       .arg(d.size())
                       .toUtf8();
            line += text ? d.left(4096) : d.left(256).toHex(' ');
            if (d.size() > (text ? 4096 : 256))
                line += " …";
        }
        line += '\n';
        std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
        std::fflush(stdout);
        if (count > 0 && ++received >= count)
            QCoreApplication::quit();
    });
    if (timeout > 0)
        QTimer::singleShot(int(timeout), client.get(), [&] {
            rc = fail(verb,
                      QStringLiteral("%1 of %2 update(s) of '%3' received within %4 ms (subscription %5)")
                          .arg(received)
                          .arg(count > 0 ? QString::number(count) : QStringLiteral("the"))
                          .arg(service)
                          .arg(timeout)
                          .arg(QString::fromLatin1(
                                   QMetaEnum::fromType<Subscription::State>().valueToKey(int(sub->state())))
                                   .toLower()));
            QCoreApplication::quit();
        });
    QCoreApplication::exec();
    return rc;
}

} // namespace dialog::tool
