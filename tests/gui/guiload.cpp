// Load generator for the GUI responsiveness tests: a separate process, so that everything the GUI
// under test does is caused by network input, not by work in its own thread.
//
//   guiload services PROCESSES SERVICES RATE   PROCESSES DIALOG clients in this process publish
//                                             SERVICES services between them (registered in
//                                             batches, so the directory changes many times), then
//                                             update them round robin, RATE updates/s in all,
//                                             and Load.Hot (on the first client) at RATE too
//   guiload objects SERVER COUNT RATE          creates COUNT ProcessStats objects SERVER.LoadNNNNN
//                                             in one burst, then updates them round robin,
//                                             RATE updates/s in all
//
// Prints "ready" on stdout once everything is registered / created. Stops on SIGTERM.
#include "dialog/application.h"
#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "waits.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>
#include <QTimer>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

using namespace dialog;

namespace {

int usage()
{
    std::fprintf(stderr,
                 "usage: guiload services PROCESSES SERVICES RATE | guiload objects SERVER COUNT RATE\n");
    return 2;
}

/// Calls @p step(n) every 10 ms with the number of updates due to keep @p rate per second.
void paced(QObject *context, int rate, std::function<void(int)> step)
{
    auto *timer = new QTimer(context);
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    auto done = std::make_shared<qint64>(0);
    QObject::connect(timer, &QTimer::timeout, context, [=] {
        const qint64 due = clock->elapsed() * rate / 1000 - *done;
        if (due > 0) {
            *done += due;
            step(int(due));
        }
    });
    timer->start(10);
}

int services(int processes, int count, int rate)
{
    const ClientOptions base = ClientOptions::fromEnvironment(QStringLiteral("GuiLoad"));
    std::vector<std::unique_ptr<Client>> clients;
    std::vector<Service *> published;
    for (int p = 0; p < processes; ++p) {
        ClientOptions o = base;
        o.name = QStringLiteral("Load.P%1").arg(p, 2, 10, QLatin1Char('0'));
        clients.push_back(std::make_unique<Client>(o));
        clients.back()->start();
    }
    auto *app = QCoreApplication::instance();
    // Registrations in batches of 50 every 50 ms: the directory is republished many times.
    auto *batches = new QTimer(app);
    int next = 0;
    QObject::connect(batches, &QTimer::timeout, app, [&, batches] {
        for (int i = 0; i < 50 && next < count; ++i, ++next) {
            Client *c = clients.at(next % processes).get();
            published.push_back(
                c->publish(QStringLiteral("%1.S%2").arg(c->name()).arg(next, 4, 10, QLatin1Char('0'))));
        }
        if (next < count)
            return;
        batches->stop();
        // One more, updated as often as all the others together: something worth listening to.
        Service *hot = clients.front()->publish(QStringLiteral("Load.Hot"));
        std::printf("ready\n");
        std::fflush(stdout);
        quint64 sequence = 0;
        paced(app, rate, [&, hot, sequence](int n) mutable {
            for (int i = 0; i < n; ++i, ++sequence) {
                const QByteArray data = QByteArray::number(sequence).repeated(8);
                published.at(sequence % published.size())->update(data);
                hot->update(data);
            }
        });
    });
    batches->start(50);
    return app->exec();
}

int objects(const QString &server, int count, int rate)
{
    Client client(ClientOptions::fromEnvironment(QStringLiteral("GuiLoad.IS")));
    client.start();
    is::Dictionary dict(&client);
    QStringList servers;
    if (!dialog::test::pollUntil([&] { return dict.serversSync(&servers).isOk() && servers.contains(server); },
                                 20000, 50)) {
        std::fprintf(stderr, "guiload: IS server %s not found\n", qPrintable(server));
        return 1;
    }
    const is::Status types = dict.fetchTypesSync(server);
    if (!types.isOk()) {
        std::fprintf(stderr, "guiload: %s\n", qPrintable(types.toString()));
        return 1;
    }
    const auto name = [&](int i) {
        return QStringLiteral("%1.Load%2").arg(server).arg(i, 5, 10, QLatin1Char('0'));
    };
    is::Object o = is::Object::create(dict.types(), QStringLiteral("ProcessStats"));
    int answered = 0, failed = 0;
    for (int i = 0; i < count; ++i)
        dict.update(name(i), o, is::Dictionary::UpdateMode::CreateIfMissing, [&](const is::Status &s) {
            ++answered;
            if (!s.isOk() && ++failed == 1)
                std::fprintf(stderr, "guiload: %s\n", qPrintable(s.toString()));
            if (answered == count) {
                std::printf("ready %d failed\n", failed);
                std::fflush(stdout);
            }
        });
    quint64 sequence = 0;
    paced(&client, rate, [&](int n) {
        for (int i = 0; i < n; ++i, ++sequence)
            dict.update(name(int(sequence % quint64(count))), o, is::Dictionary::UpdateMode::CreateIfMissing);
    });
    return QCoreApplication::exec();
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    quitOnTerminationSignals();
    const QStringList a = app.arguments();
    bool ok1 = false, ok2 = false, ok3 = true;
    if (a.size() != 5)
        return usage();
    if (a.at(1) == QLatin1String("services")) {
        const int processes = a.at(2).toInt(&ok1), count = a.at(3).toInt(&ok2), rate = a.at(4).toInt(&ok3);
        if (!ok1 || !ok2 || !ok3 || processes < 1 || count < processes || rate < 0)
            return usage();
        return services(processes, count, rate);
    }
    if (a.at(1) == QLatin1String("objects")) {
        const int count = a.at(3).toInt(&ok2), rate = a.at(4).toInt(&ok3);
        if (!ok2 || !ok3 || count < 1 || rate < 0)
            return usage();
        return objects(a.at(2), count, rate);
    }
    return usage();
}
