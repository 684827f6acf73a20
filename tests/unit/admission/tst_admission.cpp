// The Control Server's admission (controlserver/admission.cpp) alone: which address a process may
// claim to listen on, given where its connection comes from.
#include "admission.h"

#include <QtTest>

using dialog::cs::Admission;

class tst_Admission : public QObject
{
    Q_OBJECT

private slots:
    void claim_data();
    void claim();
};

void tst_Admission::claim_data()
{
    QTest::addColumn<QString>("claimed");
    QTest::addColumn<QList<QHostAddress>>("addresses");
    QTest::addColumn<QString>("source");
    QTest::addColumn<QList<QHostAddress>>("local");
    QTest::addColumn<QString>("error"); // a part of the error, or empty when allowed

    const QList<QHostAddress> local{QHostAddress(QStringLiteral("192.0.2.10")),
                                    QHostAddress(QStringLiteral("::1"))};
    QTest::newRow("the source itself") << "198.51.100.7" << QList<QHostAddress>{QHostAddress("198.51.100.7")}
                                       << "198.51.100.7" << local << QString();
    QTest::newRow("IPv4 seen as mapped IPv6")
        << "198.51.100.7" << QList<QHostAddress>{QHostAddress("198.51.100.7")} << "::ffff:198.51.100.7"
        << local << QString();
    QTest::newRow("another host") << "198.51.100.8" << QList<QHostAddress>{QHostAddress("198.51.100.8")}
                                  << "198.51.100.7" << local
                                  << "advertises 198.51.100.8 but connected from 198.51.100.7";
    QTest::newRow("loopback claims this host's address")
        << "192.0.2.10" << QList<QHostAddress>{QHostAddress("192.0.2.10")} << "127.0.0.1" << local
        << QString();
    QTest::newRow("loopback claims 127.0.0.2")
        << "127.0.0.2" << QList<QHostAddress>{QHostAddress("127.0.0.2")} << "127.0.0.1" << local << QString();
    QTest::newRow("loopback claims another host")
        << "198.51.100.8" << QList<QHostAddress>{QHostAddress("198.51.100.8")} << "127.0.0.1" << local
        << "--advertise 127.0.0.1";
    QTest::newRow("a remote host claims loopback")
        << "127.0.0.1" << QList<QHostAddress>{QHostAddress("127.0.0.1")} << "198.51.100.7" << local
        << "advertises 127.0.0.1 but connected from 198.51.100.7";
    QTest::newRow("one of several resolved addresses")
        << "daq-host" << QList<QHostAddress>{QHostAddress("198.51.100.9"), QHostAddress("198.51.100.7")}
        << "198.51.100.7" << local << QString();
    QTest::newRow("a name that did not resolve")
        << "nowhere.invalid" << QList<QHostAddress>{} << "198.51.100.7" << local
        << "cannot resolve the advertised host 'nowhere.invalid'";
    QTest::newRow("not an address, not resolved")
        << "nowhere.invalid" << QList<QHostAddress>{QHostAddress()} << "198.51.100.7" << local
        << "cannot resolve the advertised host";
}

void tst_Admission::claim()
{
    QFETCH(QString, claimed);
    QFETCH(QList<QHostAddress>, addresses);
    QFETCH(QString, source);
    QFETCH(QList<QHostAddress>, local);
    QFETCH(QString, error);
    const QString got = Admission::claimError(claimed, addresses, QHostAddress(source), local);
    if (error.isEmpty())
        QVERIFY2(got.isEmpty(), qPrintable(got));
    else
        QVERIFY2(got.contains(error), qPrintable(got));
}

QTEST_GUILESS_MAIN(tst_Admission)
#include "tst_admission.moc"
