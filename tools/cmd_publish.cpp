#include "clientsetup.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTimer>
#include <algorithm>
#include <cstdio>

namespace dialog::tool {

int publish(const QStringList &args)
{
    const QString verb = QStringLiteral("publish");
    qint64 rate = 1, size = -1, count = 0, waitSubs = 0, threshold = 64 * 1024, blockMs = 1000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral("A test publisher: updates a service at a given rate."));
    p.addPositional(QStringLiteral("service"), QStringLiteral("Service name."));
    p.add(Option::integer(QStringLiteral("rate"), QStringLiteral("hz"),
                          QStringLiteral("Updates per second, 0 = as fast as flow control allows "
                                         "(default 1)."),
                          &rate, 0, 10000000));
    p.add(Option::size(QStringLiteral("size"), QStringLiteral("bytes"),
                       QStringLiteral("Data size in bytes (default: a short text with the "
                                      "update number)."),
                       &size, 0, 64 * 1024 * 1024));
    p.add(Option::text(QStringLiteral("data"), QStringLiteral("text"), QStringLiteral("Publish this text.")));
    p.add(Option::integer(QStringLiteral("count"), QStringLiteral("n"),
                          QStringLiteral("Exit after N updates."), &count, 1, qint64(1) << 62));
    p.add(Option::flag(QStringLiteral("random"),
                       QStringLiteral("Random (incompressible) data of --size bytes.")));
    p.add(Option::text(QStringLiteral("flow"), QStringLiteral("mode"),
                       QStringLiteral("Flow control towards a slow subscriber: drop (default) or "
                                      "block."))
              .defaultValue(QStringLiteral("drop")));
    p.add(Option::duration(QStringLiteral("block-ms"), QStringLiteral("ms"),
                           QStringLiteral("With --flow block: longest wait for room before an update "
                                          "is dropped (default 1000)."),
                           &blockMs, OptionUnit::Milliseconds, 1, 3600000));
    p.add(Option::integer(QStringLiteral("wait-subscribers"), QStringLiteral("n"),
                          QStringLiteral("Start publishing once N subscribers are there."), &waitSubs, 0,
                          100000));
    p.add(Option::integer(
        QStringLiteral("compress-threshold"), QStringLiteral("bytes"),
        QStringLiteral("Compress data of at least this many bytes (0 = never; default 65536)."), &threshold,
        0, 1 << 30));
    if (!parse(p, args))
        return 1;
    if (p.positionalArguments().size() != 1)
        return fail(verb, QStringLiteral("expected exactly one service name (see --help)"));
    const QString flow = p.value(QStringLiteral("flow"));
    if (flow != QLatin1String("drop") && flow != QLatin1String("block"))
        return fail(verb, QStringLiteral("invalid --flow '%1' (drop or block)").arg(flow));

    ClientOptions o = ClientOptions::fromEnvironment(processName(p, verb));
    o.exitOnRefusal = true;
    QString error;
    if (const Status st = o.applyParser(p.parser()); !st.isOk())
        return fail(verb, st.message());
    o.compressionThreshold = int(threshold);
    Client client(o);
    const QString name = p.positionalArguments().first();
    Service *service = client.publish(name);
    if (!service)
        return fail(verb, client.errorString());
    service->setFlowControl(flow == QLatin1String("block") ? Service::FlowControl::Block
                                                           : Service::FlowControl::Drop,
                            int(blockMs));
    if (!client.start())
        return fail(verb, client.errorString());

    QByteArray fixed;
    if (p.isSet(QStringLiteral("data")))
        fixed = p.value(QStringLiteral("data")).toUtf8();
    else if (size >= 0) {
        fixed.resize(size);
        if (p.isSet(QStringLiteral("random")))
            QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(fixed.data()), int(size / 4));
        else
            for (qint64 i = 0; i < size; ++i)
                fixed[i] = char('a' + i % 26);
    }
    qint64 sent = 0;
    auto next = [&]() -> QByteArray {
        if (!fixed.isNull())
            return fixed;
        return QStringLiteral("%1 #%2").arg(name).arg(sent + 1).toUtf8();
    };
    auto done = [&] { return count > 0 && sent >= count; };

    QTimer pump;
    QElapsedTimer clock;
    if (rate == 0) {
        // As fast as flow control allows: bursts between event-loop turns.
        pump.setInterval(0);
        QObject::connect(&pump, &QTimer::timeout, &client, [&] {
            if (service->subscriberCount() < waitSubs)
                return pump.stop(); // no spinning: started again when enough subscribers are back
            clock.start();
            while (!done() && clock.elapsed() < 20) {
                for (int i = 0; i < 64 && !done(); ++i) {
                    service->update(next());
                    ++sent;
                }
            }
            if (done()) {
                client.flush(5000);
                QCoreApplication::quit();
            }
        });
    } else {
        const qint64 intervalMs = qMax<qint64>(1, 1000 / rate);
        const qint64 perTick = qMax<qint64>(1, rate * intervalMs / 1000);
        pump.setInterval(int(intervalMs));
        pump.setTimerType(Qt::PreciseTimer);
        // perTick by value: this block ends long before the timer fires.
        QObject::connect(&pump, &QTimer::timeout, &client, [&, perTick] {
            if (service->subscriberCount() < waitSubs)
                return pump.stop();
            for (qint64 i = 0; i < perTick && !done(); ++i) {
                service->update(next());
                ++sent;
            }
            if (done()) {
                client.flush(5000);
                QCoreApplication::quit();
            }
        });
    }
    // Wait for subscribers without spinning: the pump starts when enough of them are there.
    auto startWhenReady = [&] {
        if (!pump.isActive() && service->subscriberCount() >= waitSubs)
            pump.start();
    };
    QObject::connect(service, &Service::subscriberCountChanged, &client, startWhenReady);
    startWhenReady();
    const int rc = QCoreApplication::exec();
    if (service->droppedCount() > 0)
        std::fprintf(stderr, "dialogctl publish: %llu update(s) dropped for slow subscribers\n",
                     static_cast<unsigned long long>(service->droppedCount()));
    return rc;
}

int echo(const QStringList &args)
{
    const QString verb = QStringLiteral("echo");
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral("Registers a command, prints every command received and, with "
                                    "--service, publishes its data on that service; with --reply, "
                                    "answers every request to that service with its data."));
    p.add(Option::text(QStringLiteral("command"), QStringLiteral("name"),
                       QStringLiteral("Command to register (repeatable).")));
    p.add(Option::text(QStringLiteral("service"), QStringLiteral("name"),
                       QStringLiteral("Service to update with each command's data.")));
    p.add(
        Option::text(QStringLiteral("reply"), QStringLiteral("name"),
                     QStringLiteral("Service to provide whose requests are answered with their own data.")));
    p.add(Option::flag(QStringLiteral("quiet"), QStringLiteral("Do not print received commands.")));
    p.add(Option::flag(
        QStringLiteral("direct"),
        QStringLiteral("Take the commands and the requests in the reader thread that received them "
                       "(Client::registerCommandDirect, Client::setRequestHandlerDirect), not in "
                       "the main thread.")));
    if (!parse(p, args))
        return 1;
    if (!p.isSet(QStringLiteral("command")) && !p.isSet(QStringLiteral("reply")))
        return fail(verb, QStringLiteral("--command or --reply is required"));
    ClientOptions o = ClientOptions::fromEnvironment(processName(p, verb));
    o.exitOnRefusal = true;
    QString error;
    if (const Status st = o.applyParser(p.parser()); !st.isOk())
        return fail(verb, st.message());
    Client client(o);
    Service *service =
        p.isSet(QStringLiteral("service")) ? client.publish(p.value(QStringLiteral("service"))) : nullptr;
    if (p.isSet(QStringLiteral("service")) && !service)
        return fail(verb, client.errorString());
    if (p.isSet(QStringLiteral("reply"))) {
        if (!client.publish(p.value(QStringLiteral("reply"))))
            return fail(verb, client.errorString());
        if (p.isSet(QStringLiteral("direct")))
            client.setRequestHandlerDirect(p.value(QStringLiteral("reply")),
                                           [&client](const Request &r) { client.reply(r, r.data()); });
        else
            QObject::connect(&client, &Client::requestReceived, &client,
                             [&client](const Request &r) { client.reply(r, r.data()); });
    }
    const bool quiet = p.isSet(QStringLiteral("quiet"));
    const auto onCommand = [&](const Command &c) {
        if (service)
            service->update(c.data());
        if (!quiet) {
            const QByteArray d = c.data();
            const bool text = QString::fromUtf8(d).toUtf8() == d &&
                              std::all_of(d.cbegin(), d.cend(), [](char ch) { return uchar(ch) >= 0x20; });
            std::printf("%s from %s: %s\n", qPrintable(c.name()), qPrintable(c.origin()),
                        text ? d.constData() : ("hex:" + d.toHex()).constData());
            std::fflush(stdout);
        }
    };
    for (const QString &c : p.values(QStringLiteral("command"))) {
        if (p.isSet(QStringLiteral("direct")))
            client.registerCommandDirect(c, onCommand); // Service::update is thread-safe
        else
            client.registerCommand(c);
    }
    QObject::connect(&client, &Client::commandReceived, &client, onCommand);
    if (!client.start())
        return fail(verb, client.errorString());
    return QCoreApplication::exec();
}

} // namespace dialog::tool
