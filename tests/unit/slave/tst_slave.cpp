// dialog::rc::Slave without a network: the hooks a transition runs, a hook's failure and its reason,
// the time-out of a hook that never completes, and the parameters from the configuration database.
#include "dialog/rc/slave.h"
#include "statuscheck.h"
#include "waits.h"

#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

using namespace dialog;
using namespace dialog::rc;

namespace {

struct Config
{
    int channels = 8;
    double voltage = 1500;
};

void addOptions(OptionTable &t, Config &c)
{
    t.add({Option::integer(QStringLiteral("channels"), QStringLiteral("n"), QStringLiteral("Channels."),
                           &c.channels, 1, 64),
           Option::number(QStringLiteral("voltage"), QStringLiteral("V"), QStringLiteral("Voltage."),
                          &c.voltage, 0, 5000)});
}

SlaveOptions options(const QString &name)
{
    SlaveOptions o;
    o.client.name = name;
    o.client.controlServers = {QStringLiteral("127.0.0.1:1")}; // never started
    o.kind = QStringLiteral("test");
    o.publishToIs = false;
    return o;
}

/// Records the hooks it runs; configure() fails with m_failWith when set; a configure with
/// m_async keeps its completion for the test to call (or never).
class TestSlave : public Slave
{
public:
    using Slave::Slave;
    QStringList hooks;
    QString failWith;
    bool async = false;
    Done pending;
    Config config;

protected:
    void perform(Transition t, const TransitionRequest &request, Done done) override
    {
        if (async && t == Transition::Configure) {
            hooks << QStringLiteral("configure(async)");
            pending = done;
            return;
        }
        Slave::perform(t, request, done);
    }
    Status configure(const TransitionRequest &request) override
    {
        hooks << QStringLiteral("configure");
        if (const Status s = applyParameters(request.parameters, &config, addOptions); !s.isOk())
            return s;
        if (!failWith.isEmpty())
            return Status(Status::Code::Failed, failWith);
        return {};
    }
    Status start(const TransitionRequest &request) override
    {
        hooks << QStringLiteral("start %1").arg(request.runNumber);
        return {};
    }
    Status pause() override { return record(QStringLiteral("pause")); }
    Status resume() override { return record(QStringLiteral("resume")); }
    Status stop() override { return record(QStringLiteral("stop")); }
    Status unconfigure() override { return record(QStringLiteral("unconfigure")); }
    Status reset() override { return record(QStringLiteral("reset")); }

private:
    Status record(const QString &hook)
    {
        hooks << hook;
        return {};
    }
};

TransitionRequest ask(Transition t, quint32 run = 0)
{
    TransitionRequest r;
    r.transition = t;
    r.runNumber = run;
    return r;
}

} // namespace

class tst_Slave : public QObject
{
    Q_OBJECT
private slots:
    void hooksFollowTheRunCycle();
    void hookFailureGivesItsReason();
    void refusedTransitionRunsNoHook();
    void hookPastItsTimeoutFails();
    void parametersFromTheDatabase_data();
    void parametersFromTheDatabase();
};

void tst_Slave::hooksFollowTheRunCycle()
{
    TestSlave s(options(QStringLiteral("T1")));
    QSignalSpy changed(&s, &Slave::stateChanged);
    for (const TransitionRequest &r : {ask(Transition::Configure), ask(Transition::Start, 42),
                                       ask(Transition::Pause), ask(Transition::Resume), ask(Transition::Stop),
                                       ask(Transition::Unconfigure), ask(Transition::Reset)}) {
        bool outcome = false;
        QVERIFY_OK(s.requestTransition(r, [&](const Status &st) { outcome = st.isOk(); }));
        QVERIFY2(outcome, qPrintable(s.machine().error()));
        if (r.transition == Transition::Start) {
            QCOMPARE(s.machine().state(), State::Running);
            QCOMPARE(s.runNumber(), 42u);
        }
    }
    QCOMPARE(s.hooks,
             (QStringList{"configure", "start 42", "pause", "resume", "stop", "unconfigure", "reset"}));
    QCOMPARE(s.machine().state(), State::Initial);
    QVERIFY(changed.size() >= 14); // busy, then done, for each
}

void tst_Slave::hookFailureGivesItsReason()
{
    TestSlave s(options(QStringLiteral("T2")));
    s.failWith = QStringLiteral("no power on crate 3");
    bool called = false;
    Status outcome;
    QVERIFY_OK(s.requestTransition(ask(Transition::Configure), [&](const Status &st) {
        called = true;
        outcome = st;
    }));
    QVERIFY(called);
    QCOMPARE(outcome.code(), Status::Code::Failed); // the hook's own code
    const QString reason = outcome.message();
    QCOMPARE(reason, QStringLiteral("configure failed: no power on crate 3"));
    QCOMPARE(s.machine().state(), State::Error);
    QCOMPARE(s.machine().error(), reason);
    // Only a reset leaves Error; it runs the reset hook.
    QCOMPARE(s.requestTransition(ask(Transition::Start)).code(), Status::Code::BadRequest);
    QVERIFY_OK(s.requestTransition(ask(Transition::Reset)));
    QCOMPARE(s.machine().state(), State::Initial);
    QCOMPARE(s.hooks.last(), QStringLiteral("reset"));
}

void tst_Slave::refusedTransitionRunsNoHook()
{
    TestSlave s(options(QStringLiteral("T3")));
    bool called = false;
    const Status refused =
        s.requestTransition(ask(Transition::Start), [&](const Status &) { called = true; });
    QCOMPARE(refused.code(), Status::Code::BadRequest);
    QVERIFY2(refused.message().contains(QStringLiteral("Initial")), qPrintable(refused.message()));
    QVERIFY(!called);
    QVERIFY(s.hooks.isEmpty());
}

void tst_Slave::hookPastItsTimeoutFails()
{
    SlaveOptions o = options(QStringLiteral("T4"));
    o.timeoutMs.insert(Transition::Configure, 100);
    TestSlave s(o);
    s.async = true;
    bool called = false;
    Status outcome;
    QVERIFY_OK(s.requestTransition(ask(Transition::Configure), [&](const Status &st) {
        called = true;
        outcome = st;
    }));
    QVERIFY(s.machine().busy());
    QTRY_VERIFY_WITH_TIMEOUT(called, 5000);
    QCOMPARE(outcome.code(), Status::Code::Timeout);
    QCOMPARE(outcome.message(),
             QStringLiteral("configure failed: did not complete within 100 ms (its time-out)"));
    QCOMPARE(s.machine().state(), State::Error);
    // The hook's completion after its time-out changes nothing.
    s.pending(Status());
    QCOMPARE(s.machine().state(), State::Error);
    // Without a time-out the hook may take as long as it needs.
    QVERIFY_OK(s.requestTransition(ask(Transition::Reset)));
    TestSlave patient(options(QStringLiteral("T5")));
    patient.async = true;
    QVERIFY_OK(patient.requestTransition(ask(Transition::Configure)));
    QVERIFY(test::expectNothingFor(
        300, [&] { return !patient.machine().busy(); },
        "a configure without a time-out of its own ending by itself"));
    patient.pending(Status());
    QCOMPARE(patient.machine().state(), State::Configured);
}

void tst_Slave::parametersFromTheDatabase_data()
{
    QTest::addColumn<QByteArray>("parameters");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<int>("channels");
    QTest::addColumn<QString>("message");
    QTest::newRow("none") << QByteArray("{}") << true << 8 << QString();
    QTest::newRow("both") << QByteArray(R"({"channels": 4, "voltage": 900})") << true << 4 << QString();
    QTest::newRow("out-of-range") << QByteArray(R"({"channels": 99, "voltage": 900})") << false << 8
                                  << QStringLiteral("--channels");
    QTest::newRow("unknown") << QByteArray(R"({"gain": 2})") << false << 8 << QStringLiteral("gain");
}

void tst_Slave::parametersFromTheDatabase()
{
    QFETCH(QByteArray, parameters);
    QFETCH(bool, ok);
    QFETCH(int, channels);
    QFETCH(QString, message);
    TestSlave s(options(QStringLiteral("T6")));
    TransitionRequest r = ask(Transition::Configure);
    r.parameters = QJsonDocument::fromJson(parameters).object();
    QVERIFY_OK(s.requestTransition(r));
    QCOMPARE(s.machine().state() == State::Configured, ok);
    QCOMPARE(s.config.channels, channels); // untouched unless every parameter is good
    if (!ok)
        QVERIFY2(s.machine().error().contains(message), qPrintable(s.machine().error()));
}

QTEST_GUILESS_MAIN(tst_Slave)
#include "tst_slave.moc"
