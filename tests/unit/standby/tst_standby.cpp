// The Control Server's standby and fencing parts (controlserver/standby.cpp, fencing.cpp) alone:
// the command line a server that steps down executes to become the standby of the server that took
// over, and which of two servers gives way.
#include "fencing.h"
#include "standby.h"

#include <QtTest>

using dialog::cs::Fencing;
using dialog::cs::Standby;

class tst_Standby : public QObject
{
    Q_OBJECT

private slots:
    void stepDownArguments_data();
    void stepDownArguments();
    void stepDownArgumentsKeepTheTerm();
    void higherTermOutranks_data();
    void higherTermOutranks();
};

void tst_Standby::stepDownArguments_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("expected");

    const QStringList tail{"--port", "3425", "--standby-of", "pc2:3425"};
    QTest::newRow("a primary") << QStringList{"--bind", "0.0.0.0"} << QStringList{"--bind", "0.0.0.0"} + tail;
    QTest::newRow("its own port replaced") << QStringList{"--port", "4000", "--heartbeat-ms", "200"}
                                           << QStringList{"--heartbeat-ms", "200"} + tail;
    QTest::newRow("--port=N and --standby-of=X")
        << QStringList{"--port=0", "--standby-of=pc3:3425", "--trust-advertised"}
        << QStringList{"--trust-advertised"} + tail;
    QTest::newRow("a former standby") << QStringList{"--standby-of", "pc1:3425", "--port", "3425"} << tail;
}

void tst_Standby::stepDownArgumentsKeepTheTerm()
{
    // The server that steps down knew term 7: the standby it becomes takes over above it.
    QCOMPARE(Standby::standbyArguments({"--term", "2", "--heartbeat-ms", "200"}, 3425, QStringLiteral("pc2:3425"), 7),
             (QStringList{"--heartbeat-ms", "200", "--port", "3425", "--standby-of", "pc2:3425", "--term", "7"}));
}

void tst_Standby::stepDownArguments()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, expected);
    QCOMPARE(Standby::standbyArguments(arguments, 3425, QStringLiteral("pc2:3425")), expected);
}

void tst_Standby::higherTermOutranks_data()
{
    QTest::addColumn<quint64>("term");
    QTest::addColumn<quint64>("own");
    QTest::addColumn<bool>("outranks");
    QTest::newRow("higher term") << quint64(3) << quint64(2) << true;
    QTest::newRow("lower term") << quint64(1) << quint64(2) << false;
    // A tie never makes a server step down: a process's CONNECT names this very server by an address
    // it does not call itself (10.0.0.1:3425 for vm:3425), which a tie-break by address took for
    // another and stepped down for.
    QTest::newRow("tie") << quint64(2) << quint64(2) << false;
}

void tst_Standby::higherTermOutranks()
{
    QFETCH(quint64, term);
    QFETCH(quint64, own);
    QFETCH(bool, outranks);
    QCOMPARE(Fencing::outranks(term, own), outranks);
    if (term != own) // of the two servers of a pair, one gives way
        QCOMPARE(Fencing::outranks(own, term), !outranks);
}

QTEST_GUILESS_MAIN(tst_Standby)
#include "tst_standby.moc"
