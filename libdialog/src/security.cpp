#include "dialog/security.h"

#include <QFile>
#include <QLoggingCategory>
#include <QMessageAuthenticationCode>
#include <QRandomGenerator>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslSocket>

#include <cmath>

Q_LOGGING_CATEGORY(lcSecurity, "dialog.security", QtInfoMsg)

namespace dialog::security {

int estimatedSecretBits(const QByteArray &secret)
{
    int lower = 0, upper = 0, digits = 0, other = 0, binary = 0;
    for (const char ch : secret) {
        const auto c = uchar(ch);
        if (c >= 'a' && c <= 'z')
            ++lower;
        else if (c >= 'A' && c <= 'Z')
            ++upper;
        else if (c >= '0' && c <= '9')
            ++digits;
        else if (c >= 0x20 && c < 0x7f)
            ++other;
        else
            ++binary;
    }
    const double n = double(secret.size());
    if (binary > 0)
        return int(n * 8);
    const int pool = (lower ? 26 : 0) + (upper ? 26 : 0) + (digits ? 10 : 0) + (other ? 33 : 0);
    double bits = pool > 1 ? n * std::log2(double(pool)) : 0;
    // Text of one letter case is words, names and years, whose entropy is that of language.
    const int letters = lower + upper;
    if ((lower == 0 || upper == 0) && letters * 10 >= secret.size() * 6)
        bits = qMin(bits, n * 2.5);
    return int(bits);
}

QString secretWeakness(const QByteArray &secret)
{
    const int bits = estimatedSecretBits(secret);
    if (bits >= StrongSecretBits)
        return QString();
    return QStringLiteral("the secret looks weak (about %1 bits, %2 wanted: one recorded handshake lets "
                          "guesses be tested offline); make one with `dialogctl secret generate FILE`")
        .arg(bits)
        .arg(StrongSecretBits);
}

QByteArray generateSecret()
{
    QByteArray raw(32, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(raw.data()), raw.size() / 4);
    return raw.toBase64();
}

Status readSecretFile(const QString &path, QByteArray *secret)
{
    auto fail = [&](const QString &why) {
        return Status(Status::Code::SecurityError, QStringLiteral("secret file %1: %2").arg(path, why));
    };
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return fail(f.errorString());
    const QByteArray content = f.read(MaxSecretFileBytes + 1);
    if (content.size() > MaxSecretFileBytes)
        return fail(QStringLiteral("larger than %1 bytes").arg(MaxSecretFileBytes));
    const QByteArray trimmed = content.trimmed();
    if (trimmed.size() < MinSecretBytes)
        return fail(
            QStringLiteral("holds %1 bytes, at least %2 are needed").arg(trimmed.size()).arg(MinSecretBytes));
    if (const QString weak = secretWeakness(trimmed); !weak.isEmpty())
        qCWarning(lcSecurity).noquote() << QStringLiteral("secret file %1: %2").arg(path, weak);
    *secret = trimmed;
    return Status();
}

Status tlsConfiguration(const TlsFiles &files, QSslConfiguration *out)
{
    auto fail = [](const QString &why) { return Status(Status::Code::SecurityError, why); };
    if (files.cert.isEmpty() || files.key.isEmpty() || files.ca.isEmpty())
        return fail(QStringLiteral("TLS needs all of --tls-cert, --tls-key and --tls-ca"));
    auto readAll = [](const QString &path, QByteArray *data, QString *why) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) {
            *why = QStringLiteral("%1: %2").arg(path, f.errorString());
            return false;
        }
        *data = f.readAll();
        return true;
    };
    QString why;
    QByteArray certPem, keyPem, caPem;
    if (!readAll(files.cert, &certPem, &why) || !readAll(files.key, &keyPem, &why) ||
        !readAll(files.ca, &caPem, &why))
        return fail(why);
    const QList<QSslCertificate> certs = QSslCertificate::fromData(certPem, QSsl::Pem);
    if (certs.isEmpty() || certs.first().isNull())
        return fail(QStringLiteral("%1: no PEM certificate").arg(files.cert));
    QSslKey key(keyPem, QSsl::Rsa, QSsl::Pem, QSsl::PrivateKey);
    if (key.isNull())
        key = QSslKey(keyPem, QSsl::Ec, QSsl::Pem, QSsl::PrivateKey);
    if (key.isNull())
        return fail(QStringLiteral("%1: no unencrypted PEM private key (RSA or EC)").arg(files.key));
    const QList<QSslCertificate> ca = QSslCertificate::fromData(caPem, QSsl::Pem);
    if (ca.isEmpty())
        return fail(QStringLiteral("%1: no PEM certificate").arg(files.ca));
    QSslConfiguration c = QSslConfiguration::defaultConfiguration();
    c.setLocalCertificateChain(certs);
    c.setPrivateKey(key);
    c.setCaCertificates(ca);
    c.setPeerVerifyMode(QSslSocket::VerifyPeer);
    c.setProtocol(QSsl::TlsV1_2OrLater);
    *out = c;
    return Status();
}

QByteArray newNonce()
{
    QByteArray n(NonceBytes, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(n.data()), NonceBytes / 4);
    return n;
}

QByteArray proof(const QByteArray &secret, Role role, const QByteArray &connectorNonce,
                 const QByteArray &acceptorNonce, const QByteArray &hello)
{
    QMessageAuthenticationCode mac(QCryptographicHash::Sha256, secret);
    static const char acceptor[] = "DIALOG-AUTH-1 acceptor\n";
    static const char connector[] = "DIALOG-AUTH-1 connector\n";
    if (role == Role::Acceptor)
        mac.addData(acceptor, sizeof acceptor - 1);
    else
        mac.addData(connector, sizeof connector - 1);
    mac.addData(connectorNonce);
    mac.addData(acceptorNonce);
    mac.addData(hello);
    return mac.result();
}

QByteArray processKey(const QByteArray &identitySecret, const QString &name)
{
    QMessageAuthenticationCode mac(QCryptographicHash::Sha256, identitySecret);
    static const char label[] = "DIALOG-PROCESS-KEY-1\n";
    mac.addData(label, sizeof label - 1);
    mac.addData(name.toUtf8());
    return mac.result();
}

QByteArray identityProof(const QByteArray &key, const QByteArray &connectorNonce,
                         const QByteArray &acceptorNonce, const QByteArray &hello)
{
    QMessageAuthenticationCode mac(QCryptographicHash::Sha256, key);
    static const char label[] = "DIALOG-IDENTITY-1\n";
    mac.addData(label, sizeof label - 1);
    mac.addData(connectorNonce);
    mac.addData(acceptorNonce);
    mac.addData(hello);
    return mac.result();
}

QByteArray processKeyFileContent(const QString &name, const QByteArray &key)
{
    return name.toUtf8() + '\n' + key.toBase64() + '\n';
}

Status readProcessKeyFile(const QString &path, QString *name, QByteArray *key)
{
    auto fail = [&](const QString &why) {
        return Status(Status::Code::SecurityError, QStringLiteral("process key file %1: %2").arg(path, why));
    };
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return fail(f.errorString());
    const QList<QByteArray> lines = f.read(MaxSecretFileBytes + 1).trimmed().split('\n');
    const QByteArray decoded = lines.size() == 2 ? QByteArray::fromBase64(lines.at(1).trimmed()) : QByteArray();
    if (lines.size() != 2 || lines.at(0).trimmed().isEmpty() || decoded.size() != 32)
        return fail(QStringLiteral("expected a process name and its 32-byte key in base64 (dialogctl up makes it)"));
    *name = QString::fromUtf8(lines.at(0).trimmed());
    *key = decoded;
    return Status();
}

bool proofsEqual(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a.at(i) ^ b.at(i));
    return diff == 0;
}

} // namespace dialog::security
