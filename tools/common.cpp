#include "commands.h"

#include "dialog/clientoptions.h"
#include "dialog/options.h"

#include <cstdio>

namespace dialog::tool {

QString program(const QString &verb)
{
    return QStringLiteral("dialogctl ") + verb;
}

int fail(const QString &verb, const QString &why)
{
    std::fprintf(stderr, "%s: %s\n", qPrintable(program(verb)), qPrintable(why));
    return 1;
}

namespace {

// --name and the client options, read by makeClient() (clientsetup.h).
void addCommon(OptionTable &t)
{
    t.add(Option::text(QStringLiteral("name"), QStringLiteral("name"),
                       QStringLiteral("Process name (default dialog-VERB-PID).")));
    ClientOptions::addParserOptions(t.parser());
}

} // namespace

bool parse(OptionTable &t, const QStringList &args)
{
    addCommon(t);
    t.allowPositionals();
    return t.process(args);
}

bool parseOptionsOnly(OptionTable &t, const QStringList &args)
{
    addCommon(t);
    return t.process(args);
}

} // namespace dialog::tool
