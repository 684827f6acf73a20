#include "commands.h"

#include "dialog/clientoptions.h"

#include <cstdio>

namespace dialog::tool {

int fail(const QString &verb, const QString &why)
{
    std::fprintf(stderr, "dialog %s: %s\n", qPrintable(verb), qPrintable(why));
    return 1;
}

bool parse(QCommandLineParser &p, const QStringList &args, const QString &verb)
{
    p.addHelpOption();
    p.addOption({QStringLiteral("name"), QStringLiteral("Process name (default dialog-VERB-PID)."),
                 QStringLiteral("name")});
    ClientOptions::addParserOptions(p);
    if (!p.parse(args)) {
        fail(verb, p.errorText());
        return false;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(p.helpText()), stdout);
        std::exit(0);
    }
    return true;
}

bool parseOptionsOnly(QCommandLineParser &p, const QStringList &args, const QString &verb)
{
    if (!parse(p, args, verb))
        return false;
    if (!p.positionalArguments().isEmpty()) {
        fail(verb,
             QStringLiteral("unexpected argument '%1' (see --help)").arg(p.positionalArguments().first()));
        return false;
    }
    return true;
}

bool intOption(const QCommandLineParser &p, const QString &verb, const QString &name, qint64 min, qint64 max,
               qint64 &out)
{
    if (!p.isSet(name))
        return true;
    bool ok = false;
    const qint64 v = p.value(name).toLongLong(&ok);
    if (!ok || v < min || v > max) {
        fail(
            verb,
            QStringLiteral("invalid --%1 '%2' (expected %3..%4)").arg(name, p.value(name)).arg(min).arg(max));
        return false;
    }
    out = v;
    return true;
}

} // namespace dialog::tool
