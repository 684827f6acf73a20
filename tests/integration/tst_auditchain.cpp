// The audit trail is tamper-evident: each daemon chains its records (each holds the keyed hash of the
// one before), and `dialogctl audit` says which records it verified. A record altered, removed,
// inserted or back-dated in an audit file breaks the chain (exit code 5, the break named); a record
// reported to the message log by any other process (`dialogctl log report --category dialog.audit`)
// is listed as unverified, or as broken when it copies a chain's fields. Real daemons on loopback,
// with a shared secret.
#include "processfixture.h"

#include "dialog/audit.h"
#include "dialog/client.h"

#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {
QList<QByteArray> readLines(const QString &path)
{
    QFile f(path);
    QList<QByteArray> lines;
    if (f.open(QIODevice::ReadOnly))
        for (const QByteArray &l : f.readAll().split('\n'))
            if (!l.trimmed().isEmpty())
                lines.append(l);
    return lines;
}

bool writeLines(const QString &path, const QList<QByteArray> &lines)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(lines.join('\n') + '\n') > 0;
}

QByteArray withField(const QByteArray &line, const QString &key, const QJsonValue &value)
{
    QJsonObject o = QJsonDocument::fromJson(line).object();
    o.insert(key, value);
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}
} // namespace

class tst_AuditChain : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void recordsOfADaemonAreVerified();
    void tamperedFileBreaksTheChain_data();
    void tamperedFileBreaksTheChain();
    void recordsReportedByAnyProcessAreNotVerified();

private:
    ClientOptions options(const QString &name) const
    {
        ClientOptions o = m_fx->clientOptions(name);
        o.secretFile = qEnvironmentVariable("DIALOG_SECRET_FILE");
        return o;
    }
    /// Three commands relayed (and audited) by the Control Server.
    void sendThreeCommands();
    /// `dialogctl audit ARGS --json`: exit code, records, stderr.
    int audit(const QStringList &args, QList<QJsonObject> *records, QByteArray *err)
    {
        QByteArray out;
        const int rc =
            m_fx->run(QStringLiteral("dialogctl"),
                      QStringList{QStringLiteral("audit"), QStringLiteral("--json")} + args, &out, err);
        *records = jsonLines(out);
        return rc;
    }

    std::unique_ptr<ProcessFixture> m_fx;
    QTemporaryDir m_dir;
    QString m_file;
};

void tst_AuditChain::initTestCase()
{
    QVERIFY(m_dir.isValid());
    const QString secret = m_dir.filePath(QStringLiteral("secret"));
    QFile f(secret);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("the audit test's secret, 32 bytes\n");
    f.close();
    qputenv("DIALOG_SECRET_FILE", secret.toLocal8Bit()); // every program started, and dialogctl
}

void tst_AuditChain::init()
{
    m_fx = std::make_unique<ProcessFixture>();
    m_file = m_dir.filePath(QStringLiteral("audit/controlserver.audit"));
    QFile::remove(m_file);
    QVERIFY(m_fx->startControlServer({QStringLiteral("--audit-file"), m_file}));
}

void tst_AuditChain::cleanup()
{
    m_fx.reset();
}

void tst_AuditChain::sendThreeCommands()
{
    Client slave(options(QStringLiteral("Slave1")));
    slave.registerCommand(QStringLiteral("RunCtrl.Slave1.Command"));
    QSignalSpy received(&slave, &Client::commandReceived);
    QVERIFY(slave.start());
    Client master(options(QStringLiteral("Master")));
    QVERIFY(master.start());
    QTRY_VERIFY_WITH_TIMEOUT(master.state() == Client::State::Connected &&
                                 !m_fx->processEntry(QStringLiteral("Slave1"))
                                      .value(QLatin1String("commands"))
                                      .toArray()
                                      .isEmpty(),
                             10000);
    for (const char *c : {"configure", "start", "stop"})
        QVERIFY(master.sendCommand(QStringLiteral("RunCtrl.Slave1.Command"), c));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 3, 10000);
    QVERIFY(waitUntil([this] { return readLines(m_file).size() == 3; }, 10000));
}

void tst_AuditChain::recordsOfADaemonAreVerified()
{
    sendThreeCommands();
    QList<QJsonObject> records;
    QByteArray err;
    QCOMPARE(audit({QStringLiteral("--file"), m_file}, &records, &err), 0);
    QCOMPARE(records.size(), 3);
    for (const QJsonObject &r : std::as_const(records)) {
        QCOMPARE(r.value(QLatin1String("verified")).toString(), QStringLiteral("verified"));
        QVERIFY(r.value(QLatin1String("keyed")).toBool());
    }
    QVERIFY2(err.contains("3 records verified"), err.constData());
}

void tst_AuditChain::tamperedFileBreaksTheChain_data()
{
    QTest::addColumn<QString>("tampering");
    QTest::newRow("outcome altered") << "altered";
    QTest::newRow("record removed") << "removed";
    QTest::newRow("back-dated record inserted") << "inserted";
    QTest::newRow("forged with an unkeyed hash") << "unkeyed";
}

void tst_AuditChain::tamperedFileBreaksTheChain()
{
    QFETCH(QString, tampering);
    sendThreeCommands();
    QList<QByteArray> lines = readLines(m_file);
    QCOMPARE(lines.size(), 3);
    QByteArray expected;
    if (tampering == QLatin1String("altered")) {
        lines[1] = withField(lines[1], QStringLiteral("outcome"), QStringLiteral("refused"));
        expected = "record 2: its hash does not match";
    } else if (tampering == QLatin1String("removed")) {
        lines.removeAt(1);
        expected = "record 3: records 2 to 2 are missing";
    } else if (tampering == QLatin1String("inserted")) {
        // A copy of the first record, 30 minutes earlier and by someone else, slipped in before it.
        const QJsonObject first = QJsonDocument::fromJson(lines[0]).object();
        const qint64 t = first.value(QLatin1String("timeMs")).toVariant().toLongLong() - 30 * 60000;
        lines.prepend(withField(withField(lines[0], QStringLiteral("timeMs"), t), QStringLiteral("process"),
                                QStringLiteral("RunControl")));
        expected = "record 1: its hash does not match";
    } else {
        // Without the secret, a forger can only make an unkeyed hash.
        AuditRecord forged = *AuditRecord::fromJson(QJsonDocument::fromJson(lines[2]).object());
        forged.origin.process = QStringLiteral("RunControl");
        forged.keyed = false;
        forged.hash = forged.chainHash(QByteArray());
        lines[2] = QJsonDocument(forged.toJson()).toJson(QJsonDocument::Compact);
        expected = "record 3: its hash is not keyed";
    }
    const QString tampered = m_dir.filePath(QStringLiteral("tampered.audit"));
    QVERIFY(writeLines(tampered, lines));
    QList<QJsonObject> records;
    QByteArray err;
    QCOMPARE(audit({QStringLiteral("--file"), tampered}, &records, &err), 5);
    QVERIFY2(err.contains("chain broken") && err.contains(expected), err.constData());
    QVERIFY(std::any_of(records.cbegin(), records.cend(), [](const QJsonObject &r) {
        return r.value(QLatin1String("verified")).toString() == QLatin1String("broken");
    }));
}

void tst_AuditChain::recordsReportedByAnyProcessAreNotVerified()
{
    m_fx->start(QStringLiteral("dialog-logger"), {QStringLiteral("--data-dir"), m_dir.path()});
    sendThreeCommands();
    const QJsonObject genuine = QJsonDocument::fromJson(readLines(m_file).at(0)).object();
    const auto report = [this](const QStringList &values) {
        QStringList args{QStringLiteral("log"),        QStringLiteral("report"),
                         QStringLiteral("--category"), QStringLiteral("dialog.audit"),
                         QStringLiteral("--time"),     QStringLiteral("30m")};
        for (const QString &v : values)
            args << QStringLiteral("--value") << v;
        QByteArray err;
        const int rc = m_fx->run(QStringLiteral("dialogctl"), args + QStringList{QStringLiteral("forged")},
                                 nullptr, &err);
        if (rc != 0)
            qWarning("dialogctl log report: %s", err.constData());
        return rc;
    };
    const QStringList forged{QStringLiteral("kind=command"),
                             QStringLiteral("outcome=allowed"),
                             QStringLiteral("name=RunCtrl.Master.Command"),
                             QStringLiteral("operation=send"),
                             QStringLiteral("process=RunControl"),
                             QStringLiteral("daemon=") + genuine.value(QLatin1String("daemon")).toString()};
    QCOMPARE(report(forged), 0);

    QList<QJsonObject> records;
    QByteArray err;
    QVERIFY(waitUntil(
        [&] {
            return audit({QStringLiteral("--since"), QStringLiteral("1h"), QStringLiteral("--timeout-ms"),
                          QStringLiteral("2000")},
                         &records, &err) == 0 &&
                   records.size() == 4;
        },
        20000, 250));
    QCOMPARE(records.first().value(QLatin1String("process")).toString(), QStringLiteral("RunControl"));
    QCOMPARE(records.first().value(QLatin1String("verified")).toString(), QStringLiteral("unverified"));
    for (qsizetype i = 1; i < records.size(); ++i)
        QCOMPARE(records.at(i).value(QLatin1String("verified")).toString(), QStringLiteral("verified"));

    // The same with the chain fields of a genuine record copied: its hash gives it away.
    QStringList copied = forged;
    for (const char *k : {"chain", "seq", "prev", "hash"})
        copied << QStringLiteral("%1=%2").arg(QLatin1String(k), genuine.value(QLatin1String(k)).toString());
    copied << QStringLiteral("keyed=true")
           << QStringLiteral("decidedMs=%1")
                  .arg(genuine.value(QLatin1String("timeMs")).toVariant().toLongLong());
    QCOMPARE(report(copied), 0);
    int rc = 0;
    QVERIFY(waitUntil(
        [&] {
            rc = audit({QStringLiteral("--since"), QStringLiteral("1h"), QStringLiteral("--timeout-ms"),
                        QStringLiteral("2000")},
                       &records, &err);
            return records.size() == 5;
        },
        20000, 250));
    QCOMPARE(rc, 5);
    QVERIFY2(err.contains("record 1: its hash does not match"), err.constData());
}

QTEST_GUILESS_MAIN(tst_AuditChain)
#include "tst_auditchain.moc"
