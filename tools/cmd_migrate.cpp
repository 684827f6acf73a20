// dialogctl is migrate: rewrites the checkpoint of a stopped IS server in the layout of the type
// files given, with stated conversions for the changes type evolution refuses (string -> int, a
// vector to a scalar). The journal is replayed into it first and then removed, so that the server
// starts from one file of the current layout.
#include "commands.h"

#include "dialog/is/checkpoint.h"
#include "dialog/is/evolution.h"
#include "dialog/is/journal.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <cstdio>

namespace dialog::tool {

namespace {

const QString Verb = QStringLiteral("is migrate");

// "Type.attribute=convert|default" into @p out.
Status readConversion(const QString &text, is::Conversions *out)
{
    const qsizetype eq = text.indexOf(QLatin1Char('='));
    const QString target = text.left(eq), how = eq < 0 ? QString() : text.mid(eq + 1);
    if (eq < 0 || !target.contains(QLatin1Char('.')) || target.startsWith(QLatin1Char('.')) ||
        target.endsWith(QLatin1Char('.')))
        return Option::refuse(QStringLiteral("Type.attribute=convert or Type.attribute=default"));
    if (how == QLatin1String("convert"))
        out->insert(target, is::Conversion::Convert);
    else if (how == QLatin1String("default"))
        out->insert(target, is::Conversion::Default);
    else
        return Option::refuse(QStringLiteral("the conversion is 'convert' or 'default', not '%1'").arg(how));
    return {};
}

// The types the server declared at run time (kept beside its checkpoint), where the files lack them.
Status loadDeclaredTypes(is::TypeRegistry &types, const QString &dataDir, const QString &server)
{
    QFile f(QDir(dataDir).filePath(server + QStringLiteral(".types.json")));
    if (!f.exists())
        return {};
    QList<is::TypeInfo> declared;
    const QJsonDocument doc = f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()) : QJsonDocument();
    if (!doc.isArray())
        return Status(Status::Code::StorageError, QStringLiteral("%1: not a JSON array").arg(f.fileName()));
    if (Status st = is::typesFromJson(doc.array(), &declared); !st.isOk())
        return st;
    return is::declareNewTypes(types, declared);
}

} // namespace

int isMigrate(const QStringList &args)
{
    QString dataDir, server, typesDir;
    bool dryRun = false;
    is::Conversions conversions;
    OptionTable p(program(Verb));
    p.setDescription(QStringLiteral(
        "Rewrites the checkpoint of the stopped IS server --server in --data-dir in the layout of the "
        "type files in --types: added attributes take their defaults, dropped ones are dropped, renamed "
        "(was=) and widened ones are converted, and every --convert states what to do with a change "
        "that evolution refuses. The journal is replayed into the checkpoint and then removed."));
    p.add(Option::text(QStringLiteral("data-dir"), QStringLiteral("dir"),
                       QStringLiteral("The server's data directory (required)."), &dataDir));
    p.add(Option::text(QStringLiteral("server"), QStringLiteral("name"),
                       QStringLiteral("The IS server's name (required)."), &server));
    p.add(Option::text(QStringLiteral("types"), QStringLiteral("dir"),
                       QStringLiteral("The type files the server will start with (required)."), &typesDir));
    p.add(Option::custom(QStringLiteral("convert"), QStringLiteral("Type.attribute=convert|default"),
                         QStringLiteral("convert: text <-> number, a scalar into a one-element vector, a vector "
                                        "into its first element; default: the attribute's default. Repeatable."),
                         [&](const QString &v) { return readConversion(v, &conversions); }));
    p.add(Option::flag(QStringLiteral("dry-run"), QStringLiteral("Say what would change; write nothing."),
                       &dryRun));
    if (!p.process(args))
        return 1;
    if (dataDir.isEmpty() || server.isEmpty() || typesDir.isEmpty())
        return fail(Verb, QStringLiteral("--data-dir, --server and --types are required"));

    is::TypeRegistry types;
    if (Status st = types.loadDirectory(typesDir); !st.isOk())
        return fail(Verb, st.message());
    if (Status st = loadDeclaredTypes(types, dataDir, server); !st.isOk())
        return fail(Verb, st.message());
    is::Repository repo(server, types);
    is::Checkpoint::LoadOptions lo;
    lo.conversions = conversions;
    lo.skipObjects = {QStringLiteral("Statistics")}; // the server makes its own afresh
    is::Checkpoint::LoadResult lr;
    if (Status st = is::Checkpoint::load(repo, dataDir, lo, &lr); !st.isOk())
        return fail(Verb, st.message());
    const is::Journal::ReplayResult rr = is::Journal::replay(repo, dataDir, conversions);
    for (const QString &line : lr.evolved)
        std::printf("%s\n", qPrintable(line));
    std::printf("%lld objects from %s, %lld of %lld journal records applied\n", qlonglong(lr.objects),
                lr.file.isEmpty() ? "no checkpoint" : qPrintable(lr.file), qlonglong(rr.applied),
                qlonglong(rr.records));
    if (!rr.problems.isEmpty())
        return fail(Verb, QStringLiteral("the journal cannot be taken whole (nothing written): %1")
                              .arg(rr.problems.join(QLatin1String("; "))));
    if (dryRun)
        return 0;
    if (Status st = is::Checkpoint::save(repo, dataDir); !st.isOk())
        return fail(Verb, st.message());
    // Everything the journal held is in the checkpoint now.
    for (quint64 n : is::Journal::segments(dataDir, server)) {
        const QString path = is::Journal::segmentPath(dataDir, server, n);
        if (!QFile::remove(path))
            return fail(Verb, QStringLiteral("%1: cannot remove (the checkpoint is written; remove it by hand "
                                             "before the server starts)")
                                  .arg(path));
    }
    std::printf("%s: %lld objects written in the current layout\n",
                qPrintable(is::Checkpoint::filePath(dataDir, server)), qlonglong(repo.size()));
    return 0;
}

} // namespace dialog::tool
