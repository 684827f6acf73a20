// The Control Server's registry (controlserver/registry.cpp) alone: its context's transport on
// 127.0.0.1 and processes that are only transports, put in the directory directly, so that what the
// registry answers them (REFUSED, INFO_SERVICE) is read as it arrives.
#include "../wireprocess.h"
#include "commandrelay.h"
#include "directorypublisher.h"
#include "registry.h"

#include <QtTest>

using namespace dialog;
using namespace dialog::cs;
using namespace dialog::net;
using namespace dialog::wire_format;

namespace {

constexpr int Timeout = 20000;

/// A process as the registry sees it, with what it was told.
struct Process : test::WireProcess
{
    ProcessRecord record() const
    {
        ProcessRecord p;
        p.name = transport.identity().name;
        p.host = QStringLiteral("127.0.0.1");
        p.port = transport.serverPort();
        p.incarnation = transport.identity().incarnation;
        return p;
    }
    /// The reasons of the REFUSED frames received so far.
    QStringList refusals() const
    {
        QStringList out;
        for (const Inbound &in : control) {
            wire::Refused r;
            if (in.type == Type::Refused && parseControl(in.data, r))
                out.append(qs(r.reason()));
        }
        return out;
    }
    /// The INFO_SERVICE frames for @p service received so far, oldest first.
    QList<wire::InfoService> infos(const QString &service) const
    {
        QList<wire::InfoService> out;
        for (const Inbound &in : control) {
            wire::InfoService info;
            if (in.type == Type::InfoService && parseControl(in.data, info) && qs(info.name()) == service)
                out.append(info);
        }
        return out;
    }
};

/// The registry with what it needs around it: the context (with a transport that only sends) and
/// the publisher that knows the Control Server's own services.
struct Fixture
{
    ServerContext ctx;
    Transport transport{TransportOptions()};
    CommandRelay relay{ctx};
    DirectoryPublisher publisher{ctx, relay};
    Registry registry{ctx, publisher};

    explicit Fixture(const ServerOptions &o) : ctx(o)
    {
        ctx.transport = &transport;
        ctx.self.name = QStringLiteral("DIALOG.ControlServer");
        ctx.self.endpoint = Endpoint{QStringLiteral("127.0.0.1"), 1};
        ctx.self.incarnation = 3;
        transport.setIdentity(ctx.self);
        publisher.start();
    }
    /// Starts @p p as @p name and puts it in the directory as connected; false if either fails.
    bool join(Process &p, const QString &name)
    {
        QString why;
        return p.start(name, 1) &&
               ctx.directory.connectProcess(p.record(), &why) == Directory::ConnectResult::Accepted;
    }
};

} // namespace

class tst_Registry : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void servicesBeyondTheLimitAreRefused();
    void ownServiceNamesAreRefused();
    void requestAnsweredWhenTheServiceAppears();
    void namesBeyondTheLimitAreRefused();
    void reservedNames_data();
    void reservedNames();
};

void tst_Registry::servicesBeyondTheLimitAreRefused()
{
    ServerOptions o;
    o.maxServicesPerProcess = 2;
    Fixture f(o);
    Process reader;
    QVERIFY(f.join(reader, QStringLiteral("Reader")));
    for (const char *s : {"Reader.A", "Reader.B", "Reader.C"})
        f.registry.registerService(QStringLiteral("Reader"), QString::fromLatin1(s));
    QTRY_COMPARE_WITH_TIMEOUT(reader.refusals().size(), 1, Timeout);
    QCOMPARE(reader.refusals().first(),
             QStringLiteral("Reader provides 2 services, the most one process may"));
    QCOMPARE(f.ctx.directory.serviceCount(), 2);
    QVERIFY(!f.ctx.directory.provider(QStringLiteral("Reader.C")));
    // One it has already is no new one.
    f.registry.registerService(QStringLiteral("Reader"), QStringLiteral("Reader.A"));
    QCOMPARE(f.ctx.directory.provider(QStringLiteral("Reader.A"))->name, QStringLiteral("Reader"));
}

void tst_Registry::ownServiceNamesAreRefused()
{
    Fixture f{ServerOptions()};
    Process rogue;
    QVERIFY(f.join(rogue, QStringLiteral("Rogue")));
    f.registry.registerService(QStringLiteral("Rogue"), directoryServiceName());
    QTRY_COMPARE_WITH_TIMEOUT(rogue.refusals().size(), 1, Timeout);
    QCOMPARE(rogue.refusals().first(),
             QStringLiteral("service '%1' is already provided by DIALOG.ControlServer")
                 .arg(directoryServiceName()));
    QCOMPARE(f.ctx.directory.serviceCount(), 0);
}

void tst_Registry::requestAnsweredWhenTheServiceAppears()
{
    Fixture f{ServerOptions()};
    Process monitor, provider;
    QVERIFY(f.join(monitor, QStringLiteral("Monitor")));
    QVERIFY(f.join(provider, QStringLiteral("Provider")));
    f.registry.request(QStringLiteral("Monitor"), QStringLiteral("Rates"));
    QTRY_COMPARE_WITH_TIMEOUT(monitor.infos(QStringLiteral("Rates")).size(), 1, Timeout);
    QVERIFY(!monitor.infos(QStringLiteral("Rates")).first().available());
    f.registry.registerService(QStringLiteral("Provider"), QStringLiteral("Rates"));
    QTRY_COMPARE_WITH_TIMEOUT(monitor.infos(QStringLiteral("Rates")).size(), 2, Timeout);
    const wire::InfoService info = monitor.infos(QStringLiteral("Rates")).last();
    QVERIFY(info.available());
    QCOMPARE(qs(info.provider()), QStringLiteral("Provider"));
    QCOMPARE(info.port(), quint32(provider.transport.serverPort()));
    // The Control Server's own services are answered with its own address.
    f.registry.request(QStringLiteral("Monitor"), directoryServiceName());
    QTRY_COMPARE_WITH_TIMEOUT(monitor.infos(directoryServiceName()).size(), 1, Timeout);
    QCOMPARE(qs(monitor.infos(directoryServiceName()).first().provider()), f.ctx.self.name);
}

void tst_Registry::namesBeyondTheLimitAreRefused()
{
    ServerOptions o;
    o.maxNamesPerProcess = 1;
    Fixture f(o);
    Process rc;
    QVERIFY(f.join(rc, QStringLiteral("RC")));
    f.registry.registerCommand(QStringLiteral("RC"), QStringLiteral("Start"));
    f.registry.registerCommand(QStringLiteral("RC"), QStringLiteral("Stop"));
    f.registry.registerCommand(QStringLiteral("RC"), QString(1025, QLatin1Char('x')));
    QTRY_COMPARE_WITH_TIMEOUT(rc.refusals().size(), 2, Timeout);
    QCOMPARE(rc.refusals().at(0), QStringLiteral("RC has 1 commands, the most one process may"));
    QCOMPARE(rc.refusals().at(1), QStringLiteral("invalid name (empty or over 1024 bytes)"));
    QCOMPARE(f.ctx.directory.commandTargets(QStringLiteral("Start")), QStringList{QStringLiteral("RC")});
    QVERIFY(f.ctx.directory.commandTargets(QStringLiteral("Stop")).isEmpty());
}

void tst_Registry::reservedNames_data()
{
    QTest::addColumn<QString>("process");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("owner"); // empty: allowed
    QTest::newRow("own state") << "Master"
                               << "RunCtrl.Master.State"
                               << "";
    QTest::newRow("another's state") << "Rogue"
                                     << "RunCtrl.Master.State"
                                     << "Master";
    QTest::newRow("another's command") << "Rogue"
                                       << "RunCtrl.RO1.Command"
                                       << "RO1";
    QTest::newRow("dotted process name") << "RunControl.GUI"
                                         << "RunCtrl.RunControl.GUI.State"
                                         << "";
    QTest::newRow("no process part") << "Rogue"
                                     << "RunCtrl.State"
                                     << "";
    QTest::newRow("IS server's own") << "IS.Server.RunParams"
                                     << "IS.RunParams"
                                     << "";
    QTest::newRow("IS server's, by another") << "Rogue"
                                             << "IS.RunParams"
                                             << "IS.Server.RunParams";
    QTest::newRow("IS stream channel") << "Gui"
                                       << "IS.sub/Gui/1"
                                       << "";
    QTest::newRow("the logger's") << "dialog-logger"
                                  << "DIALOG.Logger"
                                  << "";
    QTest::newRow("ordinary") << "Rogue"
                              << "Rogue.Rate"
                              << "";
}

void tst_Registry::reservedNames()
{
    QFETCH(QString, process);
    QFETCH(QString, name);
    QFETCH(QString, owner);
    const QString why = Registry::reservedNameError(process, name);
    if (owner.isEmpty())
        QVERIFY2(why.isEmpty(), qPrintable(why));
    else
        QCOMPARE(why, QStringLiteral("'%1' is reserved to %2").arg(name, owner));
}

QTEST_GUILESS_MAIN(tst_Registry)
#include "tst_registry.moc"
