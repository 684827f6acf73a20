// dialogctl config: the configuration database (dialog-configdb) — ls, get, put, edit, diff, log,
// tag, import, export, validate.
#include "configimport.h"
#include "configsetup.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>

namespace dialog::tool {

namespace {

const char *configUsage =
    "usage: dialogctl config <verb> [options]\n"
    "\n"
    "  ls [PREFIX]          the documents of a version (--at REF)\n"
    "  get PATH[@REF]       a document's text\n"
    "  put PATH FILE|-      commit a document (on --base V, else on the newest version)\n"
    "  rm PATH              commit a document's removal\n"
    "  edit PATH            edit a document in $EDITOR and commit it on the version read\n"
    "  diff REF [REF]       what changed between two versions (the second: the newest)\n"
    "  log [PATH]           the commits, newest first\n"
    "  tag [NAME [REF]]     name a version (without NAME: list the tags)\n"
    "  import FILE|DIR...   commit partition files, IS type files, a resources/ directory\n"
    "  export DIR           write every document of a version (--at REF) under DIR\n"
    "  validate FILE...     check documents without the database (--as PATH for one file)\n"
    "\n"
    "REF: a version number, a tag, or head (the newest).\n";

QString timeText(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

/// The table of a verb that talks to the database: its options, parsed; false (printed) on error.
struct Verb
{
    QString name;
    OptionTable table;
    QString database;
    qint64 timeoutMs = 10000;
    ConfigSession session;

    explicit Verb(const QString &verb) : name(verb), table(program(verb)) {}

    bool parse(const QStringList &args)
    {
        addConfigOptions(table, &database, &timeoutMs);
        return tool::parse(table, args);
    }
    QStringList positionals() const { return table.positionalArguments(); }
    bool open(QString *error) { return session.open(table, name, database, timeoutMs, error); }
    bool json() const { return table.isSet(QStringLiteral("json")); }
};

int configLs(const QStringList &args)
{
    Verb v(QStringLiteral("config ls"));
    v.table.setDescription(QStringLiteral("Lists the documents of a version, under PREFIX if given."));
    v.table.addPositional(QStringLiteral("prefix"), QStringLiteral("e.g. partitions/ (default: all)."),
                          QStringLiteral("[PREFIX]"));
    v.table.add({Option::text(QStringLiteral("at"), QStringLiteral("ref"),
                              QStringLiteral("The version (default head).")),
                 Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per document."))});
    if (!v.parse(args))
        return 1;
    if (v.positionals().size() > 1)
        return fail(v.name, QStringLiteral("one PREFIX at most"));
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    QList<config::Document> docs;
    quint64 version = 0;
    const Status st =
        v.session.list(v.positionals().value(0), v.table.value(QStringLiteral("at")), false, &docs, &version);
    if (!st.isOk())
        return fail(v.name, st.message());
    for (const config::Document &d : std::as_const(docs)) {
        if (v.json())
            print(QJsonDocument(QJsonObject{{QStringLiteral("path"), d.path},
                                            {QStringLiteral("changed"), qint64(d.changed)}})
                      .toJson(QJsonDocument::Compact) +
                  '\n');
        else
            print(QStringLiteral("%1  (version %2)\n").arg(d.path, -40).arg(d.changed).toUtf8());
    }
    if (!v.json())
        std::fprintf(stderr, "version %llu: %lld documents\n", qulonglong(version), qlonglong(docs.size()));
    return 0;
}

/// PATH@REF into its two parts (REF empty: the --at option's, else head).
void splitRef(const QString &arg, QString *path, QString *ref)
{
    const qsizetype at = arg.lastIndexOf(QLatin1Char('@'));
    *path = at < 0 ? arg : arg.left(at);
    if (at >= 0)
        *ref = arg.mid(at + 1);
}

int configGet(const QStringList &args)
{
    Verb v(QStringLiteral("config get"));
    v.table.setDescription(QStringLiteral("Prints a document as of a version."));
    v.table.addPositional(QStringLiteral("path"), QStringLiteral("PATH or PATH@REF."),
                          QStringLiteral("PATH[@REF]"));
    v.table.add(Option::text(QStringLiteral("at"), QStringLiteral("ref"),
                             QStringLiteral("The version (default head).")));
    if (!v.parse(args))
        return 1;
    if (v.positionals().size() != 1)
        return fail(v.name, QStringLiteral("expected one PATH"));
    QString path, ref = v.table.value(QStringLiteral("at"));
    splitRef(v.positionals().first(), &path, &ref);
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    config::Document doc;
    quint64 version = 0;
    if (const Status st = v.session.get(path, ref, &doc, &version); !st.isOk())
        return fail(v.name, st.message());
    print(doc.content);
    std::fprintf(stderr, "%s: version %llu (last changed in %llu)\n", qPrintable(path), qulonglong(version),
                 qulonglong(doc.changed));
    return 0;
}

/// Commits @p changes on @p base (0 with @p useHead: on the newest version, read first).
int commitChanges(Verb &v, QList<config::Change> changes, quint64 base, bool useHead, const QString &message)
{
    if (useHead) {
        if (const Status st = v.session.resolve(QStringLiteral("head"), &base); !st.isOk())
            return fail(v.name, st.message());
    }
    config::Commit made;
    const Status st = v.session.await([&](auto done) {
        v.session.config->commit(base, changes, message, [&, done](const Status &s, const config::Commit &c) {
            made = c;
            done(s);
        });
    });
    if (!st.isOk())
        return fail(v.name, st.message());
    std::printf("version %llu: %s\n", qulonglong(made.version),
                qPrintable(made.paths.join(QStringLiteral(", "))));
    return 0;
}

void addCommitOptions(Verb &v)
{
    v.table.add(
        {Option::text(QStringLiteral("message"), QStringLiteral("text"),
                      QStringLiteral("What the commit is for.")),
         Option::text(
             QStringLiteral("base"), QStringLiteral("version"),
             QStringLiteral("The version the change was made on; refused if the database has a newer one "
                            "(default: the newest)."))});
}

/// --base as a version, or "use the newest".
bool baseOf(const Verb &v, quint64 *base, bool *useHead)
{
    *useHead = !v.table.isSet(QStringLiteral("base"));
    bool ok = true;
    *base = *useHead ? 0 : v.table.value(QStringLiteral("base")).toULongLong(&ok);
    return ok;
}

int configPut(const QStringList &args, bool remove)
{
    Verb v(remove ? QStringLiteral("config rm") : QStringLiteral("config put"));
    v.table.setDescription(remove ? QStringLiteral("Commits the removal of a document.")
                                  : QStringLiteral("Validates a document and commits it."));
    v.table.addPositional(QStringLiteral("path"), QStringLiteral("The document, e.g. slaves/FE1."));
    if (!remove)
        v.table.addPositional(QStringLiteral("file"), QStringLiteral("Its content (- for standard input)."));
    addCommitOptions(v);
    if (!v.parse(args))
        return 1;
    if (v.positionals().size() != (remove ? 1 : 2))
        return fail(v.name, remove ? QStringLiteral("expected PATH") : QStringLiteral("expected PATH FILE"));
    quint64 base = 0;
    bool useHead = false;
    if (!baseOf(v, &base, &useHead))
        return fail(v.name, QStringLiteral("--base: expected a version number"));
    config::Change change{v.positionals().first(), {}, remove};
    if (!remove) {
        QFile f(v.positionals().at(1));
        const bool opened = f.fileName() == QLatin1String("-") ? f.open(stdin, QIODevice::ReadOnly)
                                                               : f.open(QIODevice::ReadOnly);
        if (!opened)
            return fail(v.name, QStringLiteral("cannot read %1: %2").arg(f.fileName(), f.errorString()));
        change.content = f.readAll();
        if (const Status st = config::validate(change.path, change.content); !st.isOk())
            return fail(v.name, st.message());
    }
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    return commitChanges(v, {change}, base, useHead, v.table.value(QStringLiteral("message")));
}

int configEdit(const QStringList &args)
{
    Verb v(QStringLiteral("config edit"));
    v.table.setDescription(
        QStringLiteral("Opens a document in $EDITOR (else vi) and commits what was saved, on the "
                       "version it was read from: refused if someone committed meanwhile."));
    v.table.addPositional(QStringLiteral("path"), QStringLiteral("The document (a new one starts empty)."));
    v.table.add(Option::text(QStringLiteral("message"), QStringLiteral("text"),
                             QStringLiteral("What the commit is for.")));
    if (!v.parse(args))
        return 1;
    if (v.positionals().size() != 1)
        return fail(v.name, QStringLiteral("expected PATH"));
    const QString path = v.positionals().first();
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    config::Document doc;
    quint64 version = 0;
    // A document not there yet starts empty, on the newest version.
    Status st = v.session.get(path, QStringLiteral("head"), &doc, &version);
    if (st.code() == Status::Code::NotFound)
        st = v.session.resolve(QStringLiteral("head"), &version);
    if (!st.isOk())
        return fail(v.name, st.message());
    QTemporaryDir dir;
    const QString file = dir.filePath(
        path.section(QLatin1Char('/'), -1) +
        (config::kindOf(path) == config::Kind::IsTypes ? QStringLiteral(".xml") : QStringLiteral(".json")));
    QFile f(file);
    if (!dir.isValid() || !f.open(QIODevice::WriteOnly) || f.write(doc.content) != doc.content.size())
        return fail(v.name, QStringLiteral("cannot write a temporary file"));
    f.close();
    QString editor = qEnvironmentVariable("VISUAL", qEnvironmentVariable("EDITOR"));
    if (editor.isEmpty())
        editor = QStringLiteral("vi");
    for (;;) {
        // The editor gets the terminal (sh -c: $EDITOR may carry options).
        const int rc = QProcess::execute(
            QStringLiteral("/bin/sh"),
            {QStringLiteral("-c"), editor + QStringLiteral(" \"$1\""), QStringLiteral("sh"), file});
        if (rc != 0)
            return fail(
                v.name,
                QStringLiteral("the editor '%1' failed (exit %2); nothing committed").arg(editor).arg(rc));
        if (!f.open(QIODevice::ReadOnly))
            return fail(v.name, QStringLiteral("cannot read back %1").arg(file));
        const QByteArray edited = f.readAll();
        f.close();
        if (edited == doc.content) {
            std::fprintf(stderr, "%s: unchanged, nothing committed\n", qPrintable(path));
            return 0;
        }
        st = config::validate(path, edited);
        if (st.isOk())
            return commitChanges(v, {config::Change{path, edited, false}}, version, false,
                                 v.table.value(QStringLiteral("message")));
        std::fprintf(stderr, "%s\nedit again? [Y/n] ", qPrintable(st.message()));
        char answer[16] = {};
        if (!std::fgets(answer, sizeof answer, stdin) || answer[0] == 'n' || answer[0] == 'N')
            return fail(v.name, QStringLiteral("nothing committed"));
    }
}

int configDiff(const QStringList &args)
{
    Verb v(QStringLiteral("config diff"));
    v.table.setDescription(QStringLiteral("Shows what changed between two versions, as a unified diff."));
    v.table.addPositional(QStringLiteral("from"), QStringLiteral("The older version (number or tag)."));
    v.table.addPositional(QStringLiteral("to"), QStringLiteral("The newer one (default head)."),
                          QStringLiteral("[TO]"));
    v.table.add(
        Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per changed document.")));
    if (!v.parse(args))
        return 1;
    if (v.positionals().isEmpty() || v.positionals().size() > 2)
        return fail(v.name, QStringLiteral("expected FROM [TO]"));
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    QList<config::DocumentDiff> diffs;
    const Status st = v.session.await([&](auto done) {
        v.session.config->diff(v.positionals().first(), v.positionals().value(1, QStringLiteral("head")),
                               [&, done](const Status &s, const QList<config::DocumentDiff> &d) {
                                   diffs = d;
                                   done(s);
                               });
    });
    if (!st.isOk())
        return fail(v.name, st.message());
    for (const config::DocumentDiff &d : std::as_const(diffs)) {
        if (v.json()) {
            const QString change = !d.before  ? QStringLiteral("added")
                                   : !d.after ? QStringLiteral("removed")
                                              : QStringLiteral("changed");
            print(QJsonDocument(
                      QJsonObject{{QStringLiteral("path"), d.path}, {QStringLiteral("change"), change}})
                      .toJson(QJsonDocument::Compact) +
                  '\n');
            continue;
        }
        print(config::unifiedDiff(d.path, d.before.value_or(QByteArray()), d.after.value_or(QByteArray()))
                  .toUtf8());
    }
    return 0;
}

int configLog(const QStringList &args)
{
    Verb v(QStringLiteral("config log"));
    v.table.setDescription(
        QStringLiteral("Lists the commits, newest first (those that changed PATH, if given)."));
    v.table.addPositional(QStringLiteral("path"), QStringLiteral("A document."), QStringLiteral("[PATH]"));
    qint64 limit = 20;
    v.table.add({Option::integer(QStringLiteral("limit"), QStringLiteral("n"),
                                 QStringLiteral("At most this many (default 20)."), &limit, 1, 100000),
                 Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per commit."))});
    if (!v.parse(args))
        return 1;
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    QList<config::Commit> commits;
    const Status st = v.session.await([&](auto done) {
        v.session.config->log(v.positionals().value(0), int(limit),
                              [&, done](const Status &s, const QList<config::Commit> &c) {
                                  commits = c;
                                  done(s);
                              });
    });
    if (!st.isOk())
        return fail(v.name, st.message());
    for (const config::Commit &c : std::as_const(commits)) {
        if (v.json()) {
            print(QJsonDocument(c.toJson()).toJson(QJsonDocument::Compact) + '\n');
            continue;
        }
        print(QStringLiteral("version %1  %2  %3%4\n    %5\n    %6\n")
                  .arg(c.version)
                  .arg(timeText(c.timeMs), c.author,
                       c.authorProven ? QString() : QStringLiteral(" (claimed)"),
                       c.message.isEmpty() ? QStringLiteral("(no message)") : c.message,
                       c.paths.join(QStringLiteral(", ")))
                  .toUtf8());
    }
    return 0;
}

int configTag(const QStringList &args)
{
    Verb v(QStringLiteral("config tag"));
    v.table.setDescription(
        QStringLiteral("Names a version (tags are never moved); without NAME lists the tags."));
    v.table.addPositional(QStringLiteral("name"), QStringLiteral("e.g. physics-2026."),
                          QStringLiteral("[NAME"));
    v.table.addPositional(QStringLiteral("ref"), QStringLiteral("The version (default head)."),
                          QStringLiteral("[REF]]"));
    v.table.add(Option::flag(QStringLiteral("json"), QStringLiteral("One JSON object per tag.")));
    if (!v.parse(args))
        return 1;
    if (v.positionals().size() > 2)
        return fail(v.name, QStringLiteral("expected [NAME [REF]]"));
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    QList<config::Tag> tags;
    const Status st = v.session.await([&](auto done) {
        auto keep = [&, done](const Status &s, const QList<config::Tag> &t) {
            tags = t;
            done(s);
        };
        if (v.positionals().isEmpty())
            v.session.config->tags(keep);
        else
            v.session.config->tag(v.positionals().first(), v.positionals().value(1, QStringLiteral("head")),
                                  [keep](const Status &s, const config::Tag &t) { keep(s, {t}); });
    });
    if (!st.isOk())
        return fail(v.name, st.message());
    for (const config::Tag &t : std::as_const(tags)) {
        if (v.json())
            print(QJsonDocument(QJsonObject{{QStringLiteral("name"), t.name},
                                            {QStringLiteral("version"), qint64(t.version)},
                                            {QStringLiteral("author"), t.author},
                                            {QStringLiteral("time"), t.timeMs}})
                      .toJson(QJsonDocument::Compact) +
                  '\n');
        else
            print(QStringLiteral("%1  version %2  %3  %4\n")
                      .arg(t.name, -20)
                      .arg(t.version)
                      .arg(timeText(t.timeMs), t.author)
                      .toUtf8());
    }
    return 0;
}

int configImport(const QStringList &args)
{
    Verb v(QStringLiteral("config import"));
    v.table.setDescription(QStringLiteral(
        "Commits partition files (partitions/NAME; the slaves' parameters in their args become "
        "slaves/NAME and readout/NAME documents), IS type files (is-types/NAME) and directories laid "
        "out as resources/ (partitions/*.json, is-types/*.xml, slaves/, readout/, segments/, access/), "
        "in one commit. Documents equal to the database's are left out."));
    v.table.addPositional(QStringLiteral("files"), QStringLiteral("Files and directories."),
                          QStringLiteral("FILE|DIR..."));
    addCommitOptions(v);
    if (!v.parse(args))
        return 1;
    if (v.positionals().isEmpty())
        return fail(v.name, QStringLiteral("expected FILE or DIR"));
    quint64 base = 0;
    bool useHead = false;
    if (!baseOf(v, &base, &useHead))
        return fail(v.name, QStringLiteral("--base: expected a version number"));
    QList<config::Change> changes;
    QString error;
    if (!importDocuments(v.positionals(), &changes, &error))
        return fail(v.name, error);
    if (!v.open(&error))
        return fail(v.name, error);
    // Only what differs from the database's newest version.
    QList<config::Document> current;
    quint64 newest = 0;
    Status st = v.session.list(QString(), QStringLiteral("head"), true, &current, &newest);
    if (useHead)
        base = newest;
    if (!st.isOk())
        return fail(v.name, st.message());
    QHash<QString, QByteArray> have;
    for (const config::Document &d : std::as_const(current))
        have.insert(d.path, d.content);
    changes.removeIf(
        [&](const config::Change &c) { return have.contains(c.path) && have.value(c.path) == c.content; });
    if (changes.isEmpty()) {
        std::printf("version %llu: nothing to import (every document is as in the database)\n",
                    qulonglong(base));
        return 0;
    }
    const QString message = v.table.isSet(QStringLiteral("message"))
                                ? v.table.value(QStringLiteral("message"))
                                : QStringLiteral("import");
    return commitChanges(v, changes, base, false, message);
}

int configExportAll(const QStringList &args)
{
    Verb v(QStringLiteral("config export"));
    v.table.setDescription(
        QStringLiteral("Writes every document of a version under DIR (DIR/PATH.json, .xml for "
                       "is-types/), to be read, archived or imported elsewhere."));
    v.table.addPositional(QStringLiteral("dir"), QStringLiteral("Where to write (created if missing)."));
    v.table.add(Option::text(QStringLiteral("at"), QStringLiteral("ref"),
                             QStringLiteral("The version (default head).")));
    if (!v.parse(args))
        return 1;
    if (v.positionals().size() != 1)
        return fail(v.name, QStringLiteral("expected DIR"));
    QString error;
    if (!v.open(&error))
        return fail(v.name, error);
    QList<config::Document> docs;
    quint64 version = 0;
    const Status st = v.session.list(QString(), v.table.value(QStringLiteral("at")), true, &docs, &version);
    if (!st.isOk())
        return fail(v.name, st.message());
    const QDir dir(v.positionals().first());
    for (const config::Document &d : std::as_const(docs)) {
        const QString file = dir.filePath(d.path + (config::kindOf(d.path) == config::Kind::IsTypes
                                                        ? QStringLiteral(".xml")
                                                        : QStringLiteral(".json")));
        QFile f(file);
        if (!QDir().mkpath(QFileInfo(file).absolutePath()) || !f.open(QIODevice::WriteOnly) ||
            f.write(d.content) != d.content.size())
            return fail(v.name, QStringLiteral("cannot write %1: %2").arg(file, f.errorString()));
    }
    std::printf("version %llu: %lld documents written under %s\n", qulonglong(version),
                qlonglong(docs.size()), qPrintable(dir.path()));
    return 0;
}

int configValidateFiles(const QStringList &args)
{
    const QString verb = QStringLiteral("config validate");
    OptionTable p(program(verb));
    p.setDescription(
        QStringLiteral("Checks files as configuration documents, without the database (references to "
                       "other documents are the database's check)."));
    p.addPositional(QStringLiteral("files"), QStringLiteral("Files and directories, as for import."),
                    QStringLiteral("FILE..."));
    p.add(Option::text(QStringLiteral("as"), QStringLiteral("path"),
                       QStringLiteral("The document path of a single FILE.")));
    p.allowPositionals();
    if (!p.process(args))
        return 1;
    const QStringList files = p.positionalArguments();
    if (files.isEmpty())
        return fail(verb, QStringLiteral("expected FILE"));
    QList<config::Change> docs;
    QString error;
    if (p.isSet(QStringLiteral("as"))) {
        if (files.size() != 1)
            return fail(verb, QStringLiteral("--as takes one FILE"));
        QFile f(files.first());
        if (!f.open(QIODevice::ReadOnly))
            return fail(verb, QStringLiteral("cannot read %1: %2").arg(f.fileName(), f.errorString()));
        docs.append(config::Change{p.value(QStringLiteral("as")), f.readAll(), false});
    } else if (!importDocuments(files, &docs, &error)) {
        return fail(verb, error);
    }
    int bad = 0;
    for (const config::Change &d : std::as_const(docs)) {
        const Status st = config::validate(d.path, d.content);
        if (!st.isOk()) {
            std::fprintf(stderr, "%s\n", qPrintable(st.message()));
            ++bad;
        }
    }
    QList<config::Document> all;
    for (const config::Change &d : std::as_const(docs))
        all.append(config::Document{d.path, d.content, 0});
    if (const Status st = config::validateTypes(all); !st.isOk() && !bad) {
        std::fprintf(stderr, "%s\n", qPrintable(st.message()));
        ++bad;
    }
    if (bad)
        return fail(verb, QStringLiteral("%1 of %2 documents are not valid").arg(bad).arg(docs.size()));
    std::printf("%lld documents valid\n", qlonglong(docs.size()));
    return 0;
}

} // namespace

int configVerb(const QStringList &args)
{
    if (args.size() < 2 || args.at(1) == QLatin1String("--help") || args.at(1) == QLatin1String("-h")) {
        std::fputs(configUsage, args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? 1 : 0;
    }
    const QString sub = args.at(1);
    QStringList rest = args;
    rest.removeAt(1);
    rest[0] = program(QStringLiteral("config ") + sub);
    if (sub == QLatin1String("ls"))
        return configLs(rest);
    if (sub == QLatin1String("get"))
        return configGet(rest);
    if (sub == QLatin1String("put"))
        return configPut(rest, false);
    if (sub == QLatin1String("rm"))
        return configPut(rest, true);
    if (sub == QLatin1String("edit"))
        return configEdit(rest);
    if (sub == QLatin1String("diff"))
        return configDiff(rest);
    if (sub == QLatin1String("log"))
        return configLog(rest);
    if (sub == QLatin1String("tag"))
        return configTag(rest);
    if (sub == QLatin1String("import"))
        return configImport(rest);
    if (sub == QLatin1String("export"))
        return configExportAll(rest);
    if (sub == QLatin1String("validate"))
        return configValidateFiles(rest);
    std::fprintf(stderr, "dialogctl config: unknown verb '%s'\n\n%s", qPrintable(sub), configUsage);
    return 1;
}

} // namespace dialog::tool
