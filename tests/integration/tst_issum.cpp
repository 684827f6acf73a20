// dialog-isserver --sum REGEX --into NAME: histograms and numeric attributes summed over 50
// providers; removed objects and lost providers leave the sum; incompatible binning is refused.
#include "isweb.h"

#include "dialog/is/dictionary.h"

#include <QElapsedTimer>
#include <QScopeGuard>
#include <QtTest>
#include <csignal>
#include <cstdio>

using namespace dialog;
using namespace dialog::test;

namespace {
constexpr int Providers = 50;
constexpr int Bins = 100;

is::Object histogram(const is::TypeRegistry &types, double content, quint32 bins = Bins, double high = 1000)
{
    is::Object h = is::Object::create(types, QStringLiteral("Histogram1D"));
    h.set(QStringLiteral("title"), QStringLiteral("event size"));
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), high);
    h.set(QStringLiteral("bins"), bins);
    h.set(QStringLiteral("contents"), QList<double>(bins, content));
    h.set(QStringLiteral("entries"), quint64(content * bins));
    return h;
}

/// The provider mode of this executable (DIALOG_SUM_PROVIDER=Server.Object): writes one
/// histogram of content 1000 and stays until killed.
int provider(const QString &name)
{
    ClientOptions o = ClientOptions::fromEnvironment(QStringLiteral("sum-provider"));
    Client client(o);
    if (!client.start())
        return 2;
    is::Dictionary dict(&client);
    const is::Status s = dict.updateSync(name, histogram(dict.types(), 1000));
    std::printf("written %s\n", qPrintable(s.toString()));
    std::fflush(stdout);
    return QCoreApplication::exec();
}
} // namespace

class tst_IsSum : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(setUpIs(QStringLiteral("sum-test"))); }
    void cleanup() { tearDownIs(); }
    void fiftyProvidersSummedBinWise();
    void numericAttributesSummed();
    void badRulesAreRefused();

private:
    /// The sum's contents[0] and entries, or -1 while there is none.
    QPair<double, qint64> sumOf(const QString &name)
    {
        is::Entry e;
        if (!m_dict->getSync(name, &e).isOk())
            return {-1, -1};
        const QList<double> c = e.object.get<QList<double>>(QStringLiteral("contents"));
        return {c.isEmpty() ? -1 : c.first(), qint64(e.object.get<quint64>(QStringLiteral("entries")))};
    }
};

void tst_IsSum::fiftyProvidersSummedBinWise()
{
    QProcess *server =
        startServer(QStringLiteral("DAQ"), {QStringLiteral("--sum"), QStringLiteral("DAQ.RO.*\\.eventSize"),
                                            QStringLiteral("--into"), QStringLiteral("DAQ.All.eventSize"),
                                            QStringLiteral("--http-port"), QStringLiteral("0"),
                                            QStringLiteral("--metrics-criteria"), QStringLiteral("RO.*")});
    const quint16 http = httpPortOf(server);
    QVERIFY(http != 0);
    QVERIFY(waitForServer(QStringLiteral("DAQ")));

    // 50 light providers in this process, each a DIALOG process of its own writing its histogram.
    std::vector<std::unique_ptr<Client>> clients;
    std::vector<std::unique_ptr<is::Dictionary>> dicts;
    for (int i = 0; i < Providers; ++i) {
        ClientOptions o = m_fx->clientOptions(QStringLiteral("RO%1").arg(i));
        o.senderThreads = 1;
        o.readerThreads = 1;
        clients.push_back(std::make_unique<Client>(o));
        QVERIFY(clients.back()->start());
        dicts.push_back(std::make_unique<is::Dictionary>(clients.back().get()));
    }
    const auto name = [](int i) { return QStringLiteral("DAQ.RO%1.eventSize").arg(i); };
    for (int i = 0; i < Providers; ++i)
        QVERIFY(dicts[i]->updateSync(name(i), histogram(dicts[i]->types(), i + 1)).isOk());
    const double all = Providers * (Providers + 1) / 2.0; // 1 + 2 + ... + 50
    QTRY_COMPARE_WITH_TIMEOUT(sumOf(QStringLiteral("DAQ.All.eventSize")), qMakePair(all, qint64(all * Bins)),
                              10000);
    is::Entry sum;
    QVERIFY(m_dict->getSync(QStringLiteral("DAQ.All.eventSize"), &sum).isOk());
    QCOMPARE(sum.object.get<quint32>(QStringLiteral("bins")), quint32(Bins));
    QCOMPARE(sum.object.get<QList<double>>(QStringLiteral("contents")), QList<double>(Bins, all));

    // An update changes the sum by the difference; the latency is printed, not asserted.
    QElapsedTimer t;
    t.start();
    QVERIFY(dicts[0]->updateSync(name(0), histogram(dicts[0]->types(), 101)).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(sumOf(QStringLiteral("DAQ.All.eventSize")).first, all + 100, 10000);
    qInfo("sum of %d histograms seen updated after %lld ms", Providers, t.elapsed());

    // A removed object leaves the sum.
    QVERIFY(dicts[1]->removeSync(name(1)).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(sumOf(QStringLiteral("DAQ.All.eventSize")).first, all + 100 - 2, 10000);

    // Incompatible binning is refused, naming the object; the sum goes on without it.
    QVERIFY(dicts[2]->updateSync(name(2), histogram(dicts[2]->types(), 3, 50)).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(sumOf(QStringLiteral("DAQ.All.eventSize")).first, all + 100 - 2 - 3, 10000);
    server->setReadChannel(QProcess::StandardError);
    QTRY_VERIFY_WITH_TIMEOUT(
        server->peek(1 << 20).contains("--sum into All.eventSize: RO2.eventSize refused: has 50 bins in [0, "
                                       "1000), the sum has 100 bins in [0, 1000)"),
        5000);

    // A provider that is lost (killed) leaves the sum (one that disconnects cleanly would not).
    QProcess lostProvider;
    QByteArray said;
    QProcess *lost = &lostProvider;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("DIALOG_SUM_PROVIDER"), QStringLiteral("DAQ.ROlost.eventSize"));
    env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_fx->controlServer());
    lost->setProcessEnvironment(env);
    lost->start(QCoreApplication::applicationFilePath(), {});
    lost->setProcessChannelMode(QProcess::MergedChannels);
    QVERIFY(lost->waitForStarted(5000));
    auto reap = qScopeGuard([lost, &said] {
        if (QTest::currentTestFailed())
            qWarning() << "the provider said:" << said;
        lost->kill();
        lost->waitForFinished(3000);
    });
    QTRY_VERIFY_WITH_TIMEOUT((said += lost->readAll()).contains("written ok"), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(sumOf(QStringLiteral("DAQ.All.eventSize")).first, all + 100 - 5 + 1000, 10000);
    ::kill(pid_t(lost->processId()), SIGKILL);
    QTRY_COMPARE_WITH_TIMEOUT(sumOf(QStringLiteral("DAQ.All.eventSize")).first, all + 100 - 5, 15000);
    // The object itself stays (the IS keeps a lost provider's last value), marked stale.
    QVERIFY(m_dict->getSync(QStringLiteral("DAQ.ROlost.eventSize"), nullptr).isOk());
    const auto stale = [http](const QByteArray &object) {
        return QJsonDocument::fromJson(httpGet(http, "/is/DAQ/DAQ." + object + "?format=json").body)
            .object()
            .value(QLatin1String("stale"));
    };
    QCOMPARE(stale("ROlost.eventSize"), QJsonValue(true));
    QCOMPARE(stale("RO0.eventSize"), QJsonValue(false));
    const QByteArray metrics = httpGet(http, "/metrics").body;
    QVERIFY2(metrics.contains(
                 "dialog_is_stale{server=\"DAQ\",object=\"ROlost.eventSize\",type=\"Histogram1D\"} 1\n"),
             metrics.left(2000));
    QVERIFY(metrics.contains(
        "dialog_is_stale{server=\"DAQ\",object=\"RO0.eventSize\",type=\"Histogram1D\"} 0\n"));
}

void tst_IsSum::numericAttributesSummed()
{
    startServer(QStringLiteral("DAQ"), {QStringLiteral("--sum"), QStringLiteral("RO[0-9]+"),
                                        QStringLiteral("--into"), QStringLiteral("ROAll")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    for (int i = 1; i <= 3; ++i) {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
        o.set(QStringLiteral("events"), quint64(10 * i));
        o.set(QStringLiteral("rate"), 0.5 * i);
        o.set(QStringLiteral("host"), QStringLiteral("pc%1").arg(i));
        o.set(QStringLiteral("queueDepths"), QList<quint32>{quint32(i), 1});
        o.set(QStringLiteral("eventSize"), histogram(m_dict->types(), i, 10));
        QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.RO%1").arg(i), o).isOk());
    }
    // Of another type: refused.
    QVERIFY(m_dict
                ->updateSync(QStringLiteral("DAQ.RO9"),
                             is::Object::create(m_dict->types(), QStringLiteral("RunInfo")))
                .isOk());
    is::Entry e;
    QTRY_VERIFY_WITH_TIMEOUT(m_dict->getSync(QStringLiteral("DAQ.ROAll"), &e).isOk() &&
                                 e.object.get<quint64>(QStringLiteral("events")) == 60,
                             10000);
    QCOMPARE(e.typeName, QStringLiteral("ReadoutStats"));
    QCOMPARE(e.object.get<double>(QStringLiteral("rate")), 3.0);
    QCOMPARE(e.object.get<QString>(QStringLiteral("host")), QStringLiteral("pc1")); // the first part's
    QCOMPARE(e.object.get<QList<quint32>>(QStringLiteral("queueDepths")), (QList<quint32>{6, 3}));
    const is::Object h = e.object.get<is::Object>(QStringLiteral("eventSize"));
    QCOMPARE(h.get<QList<double>>(QStringLiteral("contents")), QList<double>(10, 6));
}

void tst_IsSum::badRulesAreRefused()
{
    const QStringList base{QStringLiteral("--name"), QStringLiteral("DAQ"), QStringLiteral("--types"),
                           isTypesDir()};
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       base + QStringList{QStringLiteral("--sum"), QStringLiteral("RO(")}, nullptr, &err),
             1);
    QVERIFY2(err.contains("each --sum needs one --into"), err);
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       base + QStringList{QStringLiteral("--sum"), QStringLiteral("RO("),
                                          QStringLiteral("--into"), QStringLiteral("All")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("invalid --sum 'RO('"), err);
    QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                       base + QStringList{QStringLiteral("--sum"), QStringLiteral("R.*"),
                                          QStringLiteral("--into"), QStringLiteral("ROAll")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("--into ROAll matches its own --sum 'R.*'"), err);
}

int main(int argc, char *argv[])
{
    const QString providerName = qEnvironmentVariable("DIALOG_SUM_PROVIDER");
    if (!providerName.isEmpty()) {
        QCoreApplication app(argc, argv);
        return provider(providerName);
    }
    QCoreApplication app(argc, argv);
    tst_IsSum tc;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&tc, argc, argv);
}

#include "tst_issum.moc"
