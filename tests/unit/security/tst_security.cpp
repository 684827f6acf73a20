// The security settings of a process: the options and environment that name them, the secret file's
// checks and the TLS files' loading. (Their use on connections is tested by the integration tests.)
#include "../../shared/tlsfiles.h"

#include "dialog/clientoptions.h"
#include "dialog/security.h"

#include <QCommandLineParser>
#include <QMessageAuthenticationCode>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslSocket>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;

class tst_Security : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void optionsAndEnvironmentNameTheFiles();
    void secretFileChecked_data();
    void secretFileChecked();
    void tlsFilesLoaded();
    void tlsFilesRefusedWithAReason();
    void proofsMatchTheDocumentedExample();
    void proofsCompareEveryByte();
    void processKeys();
    void weakSecretsTold_data();
    void weakSecretsTold();

private:
    QString writeFile(const QString &name, const QByteArray &content)
    {
        const QString path = m_dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write(content);
        return path;
    }
    QTemporaryDir m_dir{QDir::currentPath() + QStringLiteral("/tst_security-XXXXXX")};
};

void tst_Security::optionsAndEnvironmentNameTheFiles()
{
    qputenv("DIALOG_SECRET_FILE", "/env/secret");
    qputenv("DIALOG_TLS_CERT", "/env/cert.pem");
    qputenv("DIALOG_TLS_KEY", "/env/key.pem");
    qputenv("DIALOG_TLS_CA", "/env/ca.pem");
    ClientOptions fromEnv = ClientOptions::fromEnvironment();
    QCOMPARE(fromEnv.secretFile, QStringLiteral("/env/secret"));
    QCOMPARE(fromEnv.tlsCert, QStringLiteral("/env/cert.pem"));
    QCOMPARE(fromEnv.tlsKey, QStringLiteral("/env/key.pem"));
    QCOMPARE(fromEnv.tlsCa, QStringLiteral("/env/ca.pem"));

    // The light scan and the parser both let the command line win over the environment.
    const QStringList args{QStringLiteral("prog"), QStringLiteral("--secret-file=/cli/secret"),
                           QStringLiteral("--tls-cert"), QStringLiteral("/cli/cert.pem"),
                           QStringLiteral("--tls-ca=/cli/ca.pem")};
    const ClientOptions scanned = ClientOptions::fromArguments(args);
    QCOMPARE(scanned.secretFile, QStringLiteral("/cli/secret"));
    QCOMPARE(scanned.tlsCert, QStringLiteral("/cli/cert.pem"));
    QCOMPARE(scanned.tlsKey, QStringLiteral("/env/key.pem"));
    QCOMPARE(scanned.tlsCa, QStringLiteral("/cli/ca.pem"));

    QCommandLineParser p;
    ClientOptions::addParserOptions(p);
    QVERIFY(p.parse(args));
    ClientOptions parsed = ClientOptions::fromEnvironment();
    const dialog::Status st = parsed.applyParser(p);
    QVERIFY2(st.isOk(), qPrintable(st.toString()));
    QCOMPARE(parsed.secretFile, scanned.secretFile);
    QCOMPARE(parsed.tlsCert, scanned.tlsCert);
    QCOMPARE(parsed.tlsKey, scanned.tlsKey);
    QCOMPARE(parsed.tlsCa, scanned.tlsCa);

    for (const char *v : {"DIALOG_SECRET_FILE", "DIALOG_TLS_CERT", "DIALOG_TLS_KEY", "DIALOG_TLS_CA"})
        qunsetenv(v);
    const ClientOptions none = ClientOptions::fromEnvironment();
    QVERIFY(none.secretFile.isEmpty() && none.tlsCert.isEmpty() && none.tlsKey.isEmpty() &&
            none.tlsCa.isEmpty());
}

void tst_Security::secretFileChecked_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QByteArray>("secret"); // empty: refused
    QTest::addColumn<QString>("errorPart");
    QTest::newRow("base64-line") << QByteArray("c2VjcmV0LXNlY3JldC1zZWNyZXQ=\n")
                                 << QByteArray("c2VjcmV0LXNlY3JldC1zZWNyZXQ=") << QString();
    QTest::newRow("binary")
        << QByteArray("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11", 17)
        << QByteArray("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11", 17)
        << QString();
    QTest::newRow("short") << QByteArray("  too short \n") << QByteArray() << QStringLiteral("at least 16");
    QTest::newRow("empty") << QByteArray() << QByteArray() << QStringLiteral("at least 16");
    QTest::newRow("large") << QByteArray(security::MaxSecretFileBytes + 1, 'x') << QByteArray()
                           << QStringLiteral("larger than");
}

void tst_Security::secretFileChecked()
{
    QFETCH(QByteArray, content);
    QFETCH(QByteArray, secret);
    QFETCH(QString, errorPart);
    const QString path = writeFile(QString::fromLatin1(QTest::currentDataTag()), content);
    QVERIFY(!path.isEmpty());
    QByteArray read;
    const Status st = security::readSecretFile(path, &read);
    QCOMPARE(st.isOk(), !secret.isEmpty());
    if (secret.isEmpty()) {
        QCOMPARE(st.code(), Status::Code::SecurityError);
        QVERIFY2(st.message().contains(errorPart) && st.message().contains(path), qPrintable(st.message()));
        QVERIFY(read.isEmpty()); // untouched
    } else {
        QCOMPARE(read, secret);
    }
    const Status missing = security::readSecretFile(m_dir.filePath(QStringLiteral("missing")), &read);
    QCOMPARE(missing.code(), Status::Code::SecurityError);
    QVERIFY2(missing.message().contains(QStringLiteral("missing")), qPrintable(missing.message()));
}

void tst_Security::tlsFilesLoaded()
{
    if (!QSslSocket::supportsSsl())
        QSKIP("this Qt has no TLS backend");
    test::TlsFiles files;
    QString error;
    QVERIFY2(
        test::makeTlsFiles(m_dir.filePath(QStringLiteral("pki")), QStringLiteral("proc"), &files, &error),
        qPrintable(error));
    QSslConfiguration c;
    const Status st = security::tlsConfiguration({files.cert, files.key, files.ca}, &c);
    QVERIFY2(st.isOk(), qPrintable(st.message()));
    QCOMPARE(c.peerVerifyMode(), QSslSocket::VerifyPeer);
    QCOMPARE(c.caCertificates().size(), 1);
    QCOMPARE(c.localCertificate().subjectInfo(QSslCertificate::CommonName),
             QStringList{QStringLiteral("proc")});
    QVERIFY(!c.privateKey().isNull());
}

void tst_Security::tlsFilesRefusedWithAReason()
{
    test::TlsFiles files;
    QString error;
    QVERIFY2(
        test::makeTlsFiles(m_dir.filePath(QStringLiteral("pki2")), QStringLiteral("proc"), &files, &error),
        qPrintable(error));
    QSslConfiguration c;
    const QString junk = writeFile(QStringLiteral("junk.pem"), "not a certificate\n");
    const struct
    {
        security::TlsFiles files;
        QString reason;
    } bad[] = {{{files.cert, files.key, QString()}, QStringLiteral("--tls-ca")},
               {{files.cert, m_dir.filePath(QStringLiteral("nokey")), files.ca}, QStringLiteral("nokey")},
               {{junk, files.key, files.ca}, QStringLiteral("no PEM certificate")},
               {{files.cert, junk, files.ca}, QStringLiteral("private key")}};
    for (const auto &b : bad) {
        const Status st = security::tlsConfiguration(b.files, &c);
        QCOMPARE(st.code(), Status::Code::SecurityError);
        QVERIFY2(st.message().contains(b.reason), qPrintable(st.message()));
    }
}

void tst_Security::proofsMatchTheDocumentedExample()
{
    // docs/protocol.md §3.1.1: the HELLO payload of the example, both nonces, the two proofs.
    const QByteArray payload = QByteArray::fromHex("0a0852656164"
                                                   "6f75743112093132372e302e302e3118c1b80220"
                                                   "922128ef9baf8589cf959a125220") +
                               QByteArray(32, '\x01');
    const QByteArray secret("an example secret of the partition");
    const QByteArray nc(32, '\x01'), na(32, '\x02');
    QCOMPARE(security::proof(secret, security::Role::Acceptor, nc, na, payload).toHex(),
             QByteArray("27e467ffe6ec821a451da82c394feae98c2e0e72bf8e59bf60ebba26dcab8783"));
    QCOMPARE(security::proof(secret, security::Role::Connector, nc, na, payload).toHex(),
             QByteArray("66f40b02c5c2f69a7ff149bedfab4bb9ea9212dd877acb7948ac525a7c6b775c"));
    QCOMPARE(security::newNonce().size(), security::NonceBytes);
    QVERIFY(security::newNonce() != security::newNonce());
}

void tst_Security::proofsCompareEveryByte()
{
    const QByteArray a = security::proof("a secret of sixteen+", security::Role::Acceptor, "n", "m", "h");
    QVERIFY(security::proofsEqual(a, a));
    for (int i = 0; i < a.size(); ++i) {
        QByteArray b = a;
        b[i] = char(b[i] ^ 0x01);
        QVERIFY(!security::proofsEqual(a, b));
    }
    QVERIFY(!security::proofsEqual(a, a.left(31)));
    QVERIFY(!security::proofsEqual(a, QByteArray()));
}

void tst_Security::processKeys()
{
    // The key of a name and the proof of a name, as docs/protocol.md §3.1.1 writes them.
    const QByteArray identity("the identity secret of a partition");
    auto hmac = [](const QByteArray &key, const QByteArray &text) {
        return QMessageAuthenticationCode::hash(text, key, QCryptographicHash::Sha256);
    };
    const QByteArray fe1 = security::processKey(identity, QStringLiteral("FE1"));
    QCOMPARE(fe1, hmac(identity, "DIALOG-PROCESS-KEY-1\nFE1"));
    QCOMPARE(fe1.size(), 32);
    QVERIFY(fe1 != security::processKey(identity, QStringLiteral("FE2")));
    QVERIFY(fe1 != security::processKey("another identity secret", QStringLiteral("FE1")));
    const QByteArray nc(32, '\x01'), na(32, '\x02'), hello("hello");
    QCOMPARE(security::identityProof(fe1, nc, na, hello), hmac(fe1, "DIALOG-IDENTITY-1\n" + nc + na + hello));
    QVERIFY(security::identityProof(fe1, nc, na, hello) != security::identityProof(fe1, na, nc, hello));

    // The key file: a name and its key, read back; anything else refused with the reason.
    QString name;
    QByteArray key;
    const QString good = writeFile(QStringLiteral("FE1.key"), security::processKeyFileContent(QStringLiteral("FE1"), fe1));
    QVERIFY(security::readProcessKeyFile(good, &name, &key).isOk());
    QCOMPARE(name, QStringLiteral("FE1"));
    QCOMPARE(key, fe1);
    for (const QByteArray &bad : {QByteArray(""), QByteArray("FE1\n"), QByteArray("FE1\nc2hvcnQ=\n"),
                                  QByteArray("\n") + fe1.toBase64(), QByteArray("FE1\n") + fe1.toBase64() + "\nmore"}) {
        const Status st = security::readProcessKeyFile(writeFile(QStringLiteral("bad.key"), bad), &name, &key);
        QCOMPARE(st.code(), Status::Code::SecurityError);
        QVERIFY2(st.message().contains("expected a process name and its 32-byte key"), qPrintable(st.message()));
    }
    const Status missing = security::readProcessKeyFile(m_dir.filePath(QStringLiteral("none.key")), &name, &key);
    QCOMPARE(missing.code(), Status::Code::SecurityError);
    QVERIFY(missing.message().contains("none.key"));
}

// daqpartition2026 was recovered offline in 37 guesses from one handshake: secrets are estimated, and
// a weak one is told (with how to make a strong one) when it is read.
void tst_Security::weakSecretsTold_data()
{
    QTest::addColumn<QByteArray>("secret");
    QTest::addColumn<bool>("strong");
    QTest::newRow("name and year") << QByteArray("daqpartition2026") << false;
    QTest::newRow("sentence") << QByteArray("the partition's secret, 32 bytes") << false;
    QTest::newRow("upper-case words") << QByteArray("COMPASS-DAQ-PARTITION-2026") << false;
    QTest::newRow("short mixed") << QByteArray("aB3$eF6&hI9(kL2)") << false;
    QTest::newRow("generated") << security::generateSecret() << true;
    QTest::newRow("hex of 16 bytes") << QByteArray("3f9a0c27d4e8b1566a0fe2c9d37b8e41") << true;
    QTest::newRow("binary") << QByteArray::fromHex("00112233445566778899aabbccddeeff") << true;
}

void tst_Security::weakSecretsTold()
{
    QFETCH(QByteArray, secret);
    QFETCH(bool, strong);
    QCOMPARE(security::estimatedSecretBits(secret) >= security::StrongSecretBits, strong);
    const QString weakness = security::secretWeakness(secret);
    QCOMPARE(weakness.isEmpty(), strong);
    if (!strong)
        QVERIFY2(weakness.contains(QLatin1String("dialogctl secret generate")), qPrintable(weakness));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("secret"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(secret);
    f.close();
    if (!strong)
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("secret looks weak")));
    QByteArray read;
    QVERIFY(security::readSecretFile(path, &read).isOk()); // weak: told, not refused
    QCOMPARE(read, secret);
}

QTEST_GUILESS_MAIN(tst_Security)
#include "tst_security.moc"
