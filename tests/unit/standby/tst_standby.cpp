// The Control Server's standby part (controlserver/standby.cpp) alone: the command line a server
// that steps down executes to become the standby of the server that took over.
#include "standby.h"

#include <QtTest>

using dialog::cs::Standby;

class tst_Standby : public QObject
{
    Q_OBJECT

private slots:
    void stepDownArguments_data();
    void stepDownArguments();
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

void tst_Standby::stepDownArguments()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, expected);
    QCOMPARE(Standby::standbyArguments(arguments, 3425, QStringLiteral("pc2:3425")), expected);
}

QTEST_GUILESS_MAIN(tst_Standby)
#include "tst_standby.moc"
