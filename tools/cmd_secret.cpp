// dialogctl secret: makes the shared secret of a partition (generate) and says whether an existing
// one is strong enough (check).
#include "commands.h"
#include "secretfile.h"

#include "dialog/security.h"

#include <QFile>
#include <cstdio>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dialog::tool {

bool writeSecretFile(const QString &path, const QByteArray &secret, bool force, QString *why)
{
    const QByteArray name = QFile::encodeName(path);
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
    const int fd = ::open(name.constData(), flags, 0600);
    if (fd < 0) {
        *why = errno == EEXIST ? QStringLiteral("%1 exists (--force replaces it)").arg(path)
                               : QStringLiteral("%1: %2").arg(path, QString::fromLocal8Bit(strerror(errno)));
        return false;
    }
    const QByteArray line = secret + '\n';
    const bool ok =
        ::fchmod(fd, 0600) == 0 && ::write(fd, line.constData(), size_t(line.size())) == line.size();
    if (!ok)
        *why = QStringLiteral("%1: %2").arg(path, QString::fromLocal8Bit(strerror(errno)));
    ::close(fd);
    if (!ok && !force)
        ::unlink(name.constData()); // no half-written secret left for the processes to read
    return ok;
}

namespace {

const char *secretUsage = "usage: dialogctl secret generate [FILE] [--force] | check FILE\n";

int generate(const QStringList &args)
{
    OptionTable p(
        program(QStringLiteral("secret generate")),
        QStringLiteral("Makes a shared secret for a partition: 32 random bytes in base64, written to "
                       "FILE (created 0600) or printed."));
    p.addPositional(QStringLiteral("file"), QStringLiteral("Where to write it (default: standard output)."),
                    QStringLiteral("[FILE]"));
    bool force = false;
    p.add(Option::flag(QStringLiteral("force"), QStringLiteral("Replace FILE if it exists."), &force));
    if (!p.process(args))
        return 1;
    const QStringList files = p.positionalArguments();
    if (files.size() > 1)
        return p.fail(QStringLiteral("one FILE at most"));
    const QByteArray secret = security::generateSecret();
    if (files.isEmpty()) {
        std::printf("%s\n", secret.constData());
        return 0;
    }
    QString why;
    return writeSecretFile(files.first(), secret, force, &why) ? 0 : p.fail(why);
}

int check(const QStringList &args)
{
    OptionTable p(program(QStringLiteral("secret check")),
                  QStringLiteral("Says whether the secret in FILE is accepted and strong enough (exit 0), or "
                                 "why not (exit 1: refused, 2: weak)."));
    p.addPositional(QStringLiteral("file"), QStringLiteral("The secret file."), QStringLiteral("FILE"));
    if (!p.process(args))
        return 1;
    if (p.positionalArguments().size() != 1)
        return p.fail(QStringLiteral("one FILE is needed"));
    const QString path = p.positionalArguments().first();
    QByteArray secret;
    if (const Status st = security::readSecretFile(path, &secret); !st.isOk())
        return p.fail(st.message());
    if (const QString weak = security::secretWeakness(secret); !weak.isEmpty()) {
        std::fprintf(stderr, "%s: %s: %s\n", qPrintable(p.program()), qPrintable(path), qPrintable(weak));
        return 2;
    }
    std::printf("%s: about %d bits: strong enough\n", qPrintable(path),
                security::estimatedSecretBits(secret));
    return 0;
}

} // namespace

int secret(const QStringList &args)
{
    const QString sub = args.value(1);
    QStringList rest = args;
    rest.removeAt(1);
    if (sub == QLatin1String("generate"))
        return generate(rest);
    if (sub == QLatin1String("check"))
        return check(rest);
    if (sub == QLatin1String("--help") || sub == QLatin1String("-h")) {
        std::fputs(secretUsage, stdout);
        return 0;
    }
    std::fputs(secretUsage, stderr);
    return 1;
}

} // namespace dialog::tool
