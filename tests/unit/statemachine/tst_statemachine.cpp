// The run-control state machine: legal and illegal transitions, busy refusal, error and reset.
#include "dialog/rc/statemachine.h"

#include <QtTest>

using namespace dialog::rc;

class tst_StateMachine : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void transitions_data();
    void transitions();
    void refusedTransitionChangesNothing();
    void busyRefusesAnotherTransitionButResetAbandonsIt();
    void failEntersErrorAndOnlyResetLeavesIt();
    void restoreOnlyFromError();
    void names();
    void paths_data();
    void paths();
};

void tst_StateMachine::transitions_data()
{
    QTest::addColumn<State>("from");
    QTest::addColumn<Transition>("transition");
    QTest::addColumn<bool>("legal");
    QTest::addColumn<State>("to");

    const QList<State> states{State::Initial, State::Configured, State::Running, State::Paused, State::Error};
    const QList<Transition> all{Transition::Configure, Transition::Start, Transition::Pause,
                                Transition::Resume,    Transition::Stop,  Transition::Unconfigure,
                                Transition::Reset};
    // The expected table, written out independently of the implementation.
    const QHash<QPair<int, int>, State> legal{
        {{int(State::Initial), int(Transition::Configure)}, State::Configured},
        {{int(State::Configured), int(Transition::Start)}, State::Running},
        {{int(State::Configured), int(Transition::Unconfigure)}, State::Initial},
        {{int(State::Running), int(Transition::Pause)}, State::Paused},
        {{int(State::Running), int(Transition::Stop)}, State::Configured},
        {{int(State::Paused), int(Transition::Resume)}, State::Running},
        {{int(State::Paused), int(Transition::Stop)}, State::Configured},
    };
    for (State s : states)
        for (Transition t : all) {
            const auto key = qMakePair(int(s), int(t));
            const bool ok = t == Transition::Reset || legal.contains(key);
            const State to = t == Transition::Reset ? State::Initial : legal.value(key, s);
            QTest::addRow("%s-%s", qPrintable(stateName(s)), qPrintable(transitionName(t)))
                << s << t << ok << to;
        }
}

static StateMachine machineIn(State s)
{
    StateMachine m;
    for (Transition t : pathFromInitial(s)) {
        m.begin(t);
        m.finish();
    }
    if (s == State::Error)
        m.fail(QStringLiteral("test"));
    return m;
}

void tst_StateMachine::transitions()
{
    QFETCH(State, from);
    QFETCH(Transition, transition);
    QFETCH(bool, legal);
    QFETCH(State, to);
    StateMachine m = machineIn(from);
    QCOMPARE(m.state(), from);
    const dialog::Status begun = m.begin(transition);
    const QString reason = begun.message();
    QCOMPARE(begun.isOk(), legal);
    QCOMPARE(target(from, transition).isOk(), legal);
    if (!legal) {
        QCOMPARE(begun.code(), dialog::Status::Code::BadRequest);
        QVERIFY2(reason.contains(QStringLiteral("illegal transition '%1' in state %2")
                                     .arg(transitionName(transition), stateName(from))),
                 qPrintable(reason));
        QCOMPARE(m.state(), from);
        QVERIFY(!m.busy());
        QVERIFY(!legalTransitions(from).contains(transition));
        return;
    }
    QVERIFY(m.busy());
    QCOMPARE(*m.pending(), transition);
    QCOMPARE(m.state(), from); // nothing applied before finish()
    QVERIFY(m.finish());
    QCOMPARE(m.state(), to);
    QVERIFY(!m.busy());
    QCOMPARE(*m.lastTransition(), transition);
    QVERIFY(m.error().isEmpty());
    QVERIFY(legalTransitions(from).contains(transition));
}

void tst_StateMachine::refusedTransitionChangesNothing()
{
    StateMachine m = machineIn(State::Running);
    const dialog::Status refused = m.begin(Transition::Configure);
    QCOMPARE(refused.code(), dialog::Status::Code::BadRequest);
    QVERIFY(refused.message().contains(QLatin1String("legal: pause, stop, reset")));
    QCOMPARE(m.state(), State::Running);
    QCOMPARE(*m.lastTransition(), Transition::Start);
    QVERIFY(!m.finish()); // nothing pending
    QCOMPARE(m.state(), State::Running);
}

void tst_StateMachine::busyRefusesAnotherTransitionButResetAbandonsIt()
{
    StateMachine m;
    QVERIFY(m.begin(Transition::Configure).isOk());
    const dialog::Status refused = m.begin(Transition::Configure);
    QCOMPARE(refused.code(), dialog::Status::Code::BadRequest);
    QCOMPARE(refused.message(), QStringLiteral("busy: 'configure' is in progress"));
    QVERIFY(m.begin(Transition::Reset).isOk());
    QCOMPARE(*m.pending(), Transition::Reset);
    QVERIFY(m.finish());
    QCOMPARE(m.state(), State::Initial);
}

void tst_StateMachine::failEntersErrorAndOnlyResetLeavesIt()
{
    StateMachine m = machineIn(State::Configured);
    QVERIFY(m.begin(Transition::Start).isOk());
    m.fail(QStringLiteral("RO1: no answer"));
    QCOMPARE(m.state(), State::Error);
    QVERIFY(!m.busy());
    QCOMPARE(m.error(), QStringLiteral("RO1: no answer"));
    QCOMPARE(legalTransitions(State::Error), QList<Transition>{Transition::Reset});
    QVERIFY(!m.begin(Transition::Stop).isOk());
    QVERIFY(m.begin(Transition::Reset).isOk());
    QVERIFY(m.finish());
    QCOMPARE(m.state(), State::Initial);
    QVERIFY(m.error().isEmpty());
}

void tst_StateMachine::restoreOnlyFromError()
{
    StateMachine m = machineIn(State::Running);
    QVERIFY(!m.restore(State::Configured));
    m.fail(QStringLiteral("FE2 lost"));
    QVERIFY(!m.restore(State::Error));
    QVERIFY(m.restore(State::Running));
    QCOMPARE(m.state(), State::Running);
    QVERIFY(m.error().isEmpty());
}

void tst_StateMachine::names()
{
    for (const QString &n : allTransitionNames()) {
        const auto t = transitionFromName(n.toUpper());
        QVERIFY(t);
        QCOMPARE(transitionName(*t), n);
    }
    QVERIFY(!transitionFromName(QStringLiteral("launch")));
    QCOMPARE(*stateFromName(QStringLiteral("paused")), State::Paused);
    QVERIFY(!stateFromName(QStringLiteral("Busy")));
    QCOMPARE(transitionActivity(Transition::Stop), QStringLiteral("Stopping"));
}

void tst_StateMachine::paths_data()
{
    QTest::addColumn<State>("from");
    QTest::addColumn<State>("to");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("initial-running") << State::Initial << State::Running << QStringList{"configure", "start"};
    QTest::newRow("initial-paused") << State::Initial << State::Paused
                                    << QStringList{"configure", "start", "pause"};
    QTest::newRow("paused-initial") << State::Paused << State::Initial << QStringList{"stop", "unconfigure"};
    QTest::newRow("error-configured")
        << State::Error << State::Configured << QStringList{"reset", "configure"};
    QTest::newRow("same") << State::Running << State::Running << QStringList{};
    QTest::newRow("to-error") << State::Running << State::Error << QStringList{};
}

void tst_StateMachine::paths()
{
    QFETCH(State, from);
    QFETCH(State, to);
    QFETCH(QStringList, expected);
    QStringList got;
    for (Transition t : path(from, to))
        got << transitionName(t);
    QCOMPARE(got, expected);
}

QTEST_GUILESS_MAIN(tst_StateMachine)
#include "tst_statemachine.moc"
