// dialogctl bench is-evolve: the time to load a checkpoint written with an older layout of its
// type (every object converted: an attribute renamed and widened, one added in the middle with a
// default, one dropped, a vector widened) against the same checkpoint in the current layout.
// In-process, on the local disk: what an IS server does at start. Tested by tst_isevolution and
// tst_isevolve; the figures live here.
#include "commands.h"

#include "dialog/is/checkpoint.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>

namespace dialog::tool {

namespace {

const QString Server = QStringLiteral("Bench");

const char OldTypes[] = R"(<is-types><type name="RunInfo">
  <attribute name="runNumber" type="u32"/><attribute name="runType" type="string"/>
  <attribute name="startTime" type="time"/><attribute name="activeTime" type="u32"/>
  <attribute name="state" type="string"/><attribute name="rates" type="float" vector="true"/>
</type></is-types>)";
const char NewTypes[] = R"(<is-types><type name="RunInfo">
  <attribute name="run" type="u64" was="runNumber"/><attribute name="shifter" type="string" default="nobody"/>
  <attribute name="runType" type="string"/><attribute name="startTime" type="time"/>
  <attribute name="state" type="string"/><attribute name="rates" type="double" vector="true"/>
</type></is-types>)";

// Milliseconds of each of @p rounds loads of the checkpoint in @p dir against @p types, sorted.
QList<double> loadTimes(const is::TypeRegistry &types, const QString &dir, int rounds, QString *error)
{
    QList<double> ms;
    for (int r = 0; r < rounds; ++r) {
        is::Repository repo(Server, types);
        QElapsedTimer t;
        t.start();
        if (Status st = is::Checkpoint::load(repo, dir); !st.isOk()) {
            *error = st.message();
            return {};
        }
        ms << double(t.nsecsElapsed()) / 1e6;
    }
    std::sort(ms.begin(), ms.end());
    return ms;
}

} // namespace

int benchIsEvolve(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-evolve");
    qint64 objects = 100000, rounds = 5;
    bool json = false;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Loads a checkpoint of --objects RunInfo objects written with an older layout of the type, and the "
        "same objects written with the current layout, --rounds times each; prints the medians."));
    p.add(Option::integer(QStringLiteral("objects"), QStringLiteral("n"),
                          QStringLiteral("Objects in the checkpoint (default 100000)."), &objects, 1, 10000000));
    p.add(Option::integer(QStringLiteral("rounds"), QStringLiteral("n"),
                          QStringLiteral("Loads of each checkpoint (default 5)."), &rounds, 1, 100));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line."), &json));
    if (!p.process(args))
        return 1;
    // Each load of the older layout says what it converts; once is enough, and it is known here.
    QLoggingCategory::setFilterRules(QStringLiteral("dialog.is.checkpoint.info=false"));

    is::TypeRegistry oldTypes, newTypes;
    if (Status st = oldTypes.loadXml(OldTypes, QStringLiteral("old.xml")); !st.isOk())
        return fail(verb, st.message());
    if (Status st = newTypes.loadXml(NewTypes, QStringLiteral("new.xml")); !st.isOk())
        return fail(verb, st.message());
    QTemporaryDir tmp;
    const QString oldDir = tmp.filePath(QStringLiteral("old")), newDir = tmp.filePath(QStringLiteral("new"));
    QDir().mkpath(oldDir);
    QDir().mkpath(newDir);
    {
        is::Repository repo(Server, oldTypes);
        is::Object o = is::Object::create(oldTypes, QStringLiteral("RunInfo"));
        for (qint64 i = 0; i < objects; ++i) {
            (void)o.set(QStringLiteral("runNumber"), quint32(i));
            (void)o.set(QStringLiteral("runType"), QStringLiteral("physics"));
            (void)o.set(QStringLiteral("startTime"), is::Time(1764633600000000 + i));
            (void)o.set(QStringLiteral("state"), QStringLiteral("Running"));
            (void)o.set(QStringLiteral("rates"), QList<float>{1.f, 2.f, float(i)});
            if (Status st = repo.upsert(QStringLiteral("run%1").arg(i), o); !st.isOk())
                return fail(verb, st.message());
        }
        if (Status st = is::Checkpoint::save(repo, oldDir); !st.isOk())
            return fail(verb, st.message());
        // The same objects, converted once, saved in the current layout.
        is::Repository now(Server, newTypes);
        if (Status st = is::Checkpoint::load(now, oldDir); !st.isOk())
            return fail(verb, st.message());
        if (Status st = is::Checkpoint::save(now, newDir); !st.isOk())
            return fail(verb, st.message());
    }
    QString error;
    const QList<double> current = loadTimes(newTypes, newDir, int(rounds), &error);
    const QList<double> older = current.isEmpty() ? current : loadTimes(newTypes, oldDir, int(rounds), &error);
    if (older.isEmpty())
        return fail(verb, error);
    const double currentMs = current.at(current.size() / 2), olderMs = older.at(older.size() / 2);
    const double ratio = olderMs / currentMs;
    const qint64 bytes = QFileInfo(is::Checkpoint::filePath(oldDir, Server)).size();
    if (json) {
        std::printf("%s\n", QJsonDocument(QJsonObject{{QStringLiteral("objects"), objects},
                                                      {QStringLiteral("checkpointBytes"), bytes},
                                                      {QStringLiteral("currentLayoutMs"), currentMs},
                                                      {QStringLiteral("olderLayoutMs"), olderMs},
                                                      {QStringLiteral("ratio"), ratio}})
                                .toJson(QJsonDocument::Compact)
                                .constData());
        return 0;
    }
    std::printf("checkpoint of %lld objects (%.1f MB): current layout %.0f ms, older layout %.0f ms "
                "(%.2fx, median of %lld loads each)\n",
                qlonglong(objects), double(bytes) / 1e6, currentMs, olderMs, ratio, qlonglong(rounds));
    return 0;
}

} // namespace dialog::tool
