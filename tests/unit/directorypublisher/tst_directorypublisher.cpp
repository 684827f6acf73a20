// The Control Server's directory publisher (controlserver/directorypublisher.cpp) alone: its
// context's transport on 127.0.0.1 and a subscriber that is only a transport, so that the values of
// DIALOG.Directory and DIALOG.Statistics are read as they arrive.
#include "../wireprocess.h"
#include "statuscheck.h"
#include "commandrelay.h"
#include "directorypublisher.h"

#include "dialog/logrecord.h"

#include <QtTest>

using namespace dialog;
using namespace dialog::cs;
using namespace dialog::net;
using namespace dialog::wire_format;

namespace {

constexpr int Timeout = 20000;

/// A subscriber of the Control Server's services: keeps the values it is sent, per service.
struct Watcher : test::WireProcess
{
    QHash<QByteArray, QList<QByteArray>> values;

    bool start()
    {
        transport.setDataSink(&context, [this](InboundBatch &b) {
            for (const Inbound &in : std::as_const(b))
                if (in.type == Type::ServiceMessage)
                    values[in.name].append(in.dataCopy());
        });
        return WireProcess::start(QStringLiteral("Watcher"), 1);
    }
    /// The SUBSCRIBE_SERVICE frame of @p service as the publisher is handed it.
    Inbound subscription(const QString &service) const
    {
        wire::Subscribe s;
        s.set_name(ss(service));
        Inbound in;
        in.type = Type::SubscribeService;
        in.peer = std::make_shared<const PeerInfo>(transport.identity());
        in.data = QByteArray::fromStdString(s.SerializeAsString());
        return in;
    }
    QList<QByteArray> of(const QString &service) const { return values.value(service.toUtf8()); }
};

struct Fixture
{
    ServerContext ctx{ServerOptions()};
    Transport transport{TransportOptions()};
    CommandRelay relay{ctx};
    DirectoryPublisher publisher{ctx, relay};

    Fixture()
    {
        ctx.transport = &transport;
        ctx.self.name = QStringLiteral("DIALOG.ControlServer");
        transport.setIdentity(ctx.self);
        publisher.start();
    }
};

} // namespace

class tst_DirectoryPublisher : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void ownServices();
    void subscriberGetsTheDirectoryThenItsChanges();
    void statisticsGoToTheirSubscriber();
};

void tst_DirectoryPublisher::ownServices()
{
    Fixture f;
    QVERIFY(f.publisher.ownService(directoryServiceName()));
    QVERIFY(f.publisher.ownService(statisticsServiceName()));
    QVERIFY(f.publisher.ownService(commandServiceName()));
    // The message log is published by the daemon only (options.reportMessages).
    QVERIFY(!f.publisher.ownService(logservice::controlServer()));
    QVERIFY(!f.publisher.ownService(QStringLiteral("Reader.Rates")));
}

void tst_DirectoryPublisher::subscriberGetsTheDirectoryThenItsChanges()
{
    Fixture f;
    Watcher w;
    QVERIFY(w.start());
    f.publisher.onSubscribe(w.subscription(directoryServiceName()));
    // The current value at once: a directory without processes.
    QTRY_VERIFY_WITH_TIMEOUT(!w.of(directoryServiceName()).isEmpty(), Timeout);
    QString error;
    auto first = dialog::test::fromJson<DirectorySnapshot>(w.of(directoryServiceName()).first());
    QVERIFY(first);
    QVERIFY(first->processes.isEmpty());

    ProcessRecord p;
    p.name = QStringLiteral("Reader");
    p.host = QStringLiteral("127.0.0.1");
    p.port = 40001;
    QVERIFY(f.ctx.directory.connectProcess(p, &error) == Directory::ConnectResult::Accepted);
    f.publisher.directoryChanged();
    QTRY_COMPARE_WITH_TIMEOUT(w.of(directoryServiceName()).size(), 2, Timeout);
    auto second = dialog::test::fromJson<DirectorySnapshot>(w.of(directoryServiceName()).last());
    QVERIFY(second);
    QCOMPARE(second->processes.size(), 1);
    QCOMPARE(second->processes.first().name, QStringLiteral("Reader"));
}

void tst_DirectoryPublisher::statisticsGoToTheirSubscriber()
{
    Fixture f;
    Watcher w;
    QVERIFY(w.start());
    f.publisher.onSubscribe(w.subscription(statisticsServiceName()));
    // Its first snapshot within the statistics interval, with the relay's figure.
    QTRY_VERIFY_WITH_TIMEOUT(!w.of(statisticsServiceName()).isEmpty(), Timeout);
    QVERIFY(dialog::test::fromJson<StatisticsSnapshot>(w.of(statisticsServiceName()).first()));
    QVERIFY(w.of(statisticsServiceName()).first().contains("\"commandsRefused\":0"));
}

QTEST_GUILESS_MAIN(tst_DirectoryPublisher)
#include "tst_directorypublisher.moc"
