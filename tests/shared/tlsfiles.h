// Test TLS files made with the openssl command: a certificate authority and certificates signed by
// it, in a directory of the build tree. Two calls with different directories give two unrelated
// authorities (a "wrong CA").
#pragma once

#include <QDir>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace dialog::test {

struct TlsFiles
{
    QString cert, key, ca;
};

/// Runs openssl with @p args in @p dir; false with @p error on failure (bounded: 30 s).
inline bool runOpenssl(const QString &dir, const QStringList &args, QString *error)
{
    QProcess p;
    p.setWorkingDirectory(dir);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("openssl"), args);
    if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        p.kill();
        p.waitForFinished(1000);
        if (error)
            *error = QStringLiteral("openssl %1: %2")
                         .arg(args.join(QLatin1Char(' ')), QString::fromLocal8Bit(p.readAll()));
        return false;
    }
    return true;
}

/// Makes (once per directory) an authority `ca` and, signed by it, the certificate @p name
/// (CN = @p name, valid for 127.0.0.1 and localhost). EC P-256 keys: quick to make.
inline bool makeTlsFiles(const QString &dir, const QString &name, TlsFiles *out, QString *error)
{
    QDir().mkpath(dir);
    const QDir d(dir);
    if (!d.exists(QStringLiteral("ca.pem"))) {
        if (!runOpenssl(dir,
                        {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"),
                         QStringLiteral("ec"), QStringLiteral("-pkeyopt"),
                         QStringLiteral("ec_paramgen_curve:P-256"), QStringLiteral("-nodes"),
                         QStringLiteral("-keyout"), QStringLiteral("ca.key"), QStringLiteral("-out"),
                         QStringLiteral("ca.pem"), QStringLiteral("-days"), QStringLiteral("2"),
                         QStringLiteral("-subj"), QStringLiteral("/CN=DIALOG test CA")},
                        error))
            return false;
    }
    const QString key = name + QStringLiteral(".key"), csr = name + QStringLiteral(".csr"),
                  cert = name + QStringLiteral(".pem"), ext = name + QStringLiteral(".ext");
    QFile extFile(d.filePath(ext));
    if (!extFile.open(QIODevice::WriteOnly))
        return false;
    extFile.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    extFile.close();
    if (!runOpenssl(dir,
                    {QStringLiteral("req"), QStringLiteral("-newkey"), QStringLiteral("ec"),
                     QStringLiteral("-pkeyopt"), QStringLiteral("ec_paramgen_curve:P-256"),
                     QStringLiteral("-nodes"), QStringLiteral("-keyout"), key, QStringLiteral("-out"), csr,
                     QStringLiteral("-subj"), QStringLiteral("/CN=") + name},
                    error) ||
        !runOpenssl(dir,
                    {QStringLiteral("x509"), QStringLiteral("-req"), QStringLiteral("-in"), csr,
                     QStringLiteral("-CA"), QStringLiteral("ca.pem"), QStringLiteral("-CAkey"),
                     QStringLiteral("ca.key"), QStringLiteral("-CAcreateserial"), QStringLiteral("-out"),
                     cert, QStringLiteral("-days"), QStringLiteral("2"), QStringLiteral("-extfile"), ext},
                    error))
        return false;
    out->cert = d.filePath(cert);
    out->key = d.filePath(key);
    out->ca = d.filePath(QStringLiteral("ca.pem"));
    return true;
}

} // namespace dialog::test
