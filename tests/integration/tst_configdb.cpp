// dialog-configdb with the real daemon, dialogctl and libdialog's ConfigClient, on SQLite files and
// on a real PostgreSQL server (skipped, with the reason, when PostgreSQL or QPSQL is missing):
// documents validated by kind, commits, tags, diffs, two concurrent editors, bad input, a daemon
// killed in the middle of a commit, the run registry.
#include "postgres.h"
#include "processfixture.h"

#include "dialog/client.h"
#include "dialog/config.h"
#include "dialog/security.h"

#include <QJsonArray>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSysInfo>
#include <QTemporaryDir>

#include <pwd.h>
#include <unistd.h>

using namespace dialog::test;

class tst_ConfigDb : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<QTemporaryDir> m_dir;
    QProcess *m_configdb = nullptr;
    QString m_db; ///< --db of the daemons started; empty: SQLite in m_dir

    QStringList databaseArgs() const
    {
        return m_db.isEmpty()
                   ? QStringList{QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("data"))}
                   : QStringList{QStringLiteral("--db"), m_db};
    }

    /// Starts dialog-configdb and waits until it answers.
    bool startConfigDb(const QStringList &extra = {})
    {
        m_configdb = m_fx->start(QStringLiteral("dialog-configdb"), databaseArgs() + extra);
        return waitUntil(
            [&] {
                return ctl({QStringLiteral("config"), QStringLiteral("tag")}) == 0;
            },
            20000 * SanitizerTimeScale, 50);
    }

    int ctl(const QStringList &args, QByteArray *out = nullptr, QByteArray *err = nullptr)
    {
        return m_fx->run(QStringLiteral("dialogctl"), args, out, err);
    }

    QString file(const QString &name, const QByteArray &content)
    {
        const QString path = m_dir->filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
            qWarning() << "cannot write" << path;
        return path;
    }

    /// The commits as `dialogctl config log --json` prints them, newest first.
    QList<QJsonObject> log()
    {
        QByteArray out;
        ctl({QStringLiteral("config"), QStringLiteral("log"), QStringLiteral("--json"),
             QStringLiteral("--limit"), QStringLiteral("1000")},
            &out);
        QList<QJsonObject> commits;
        for (const QByteArray &line : out.split('\n'))
            if (!line.isEmpty())
                commits << QJsonDocument::fromJson(line).object();
        return commits;
    }

    void setUpSystem()
    {
        m_fx = std::make_unique<ProcessFixture>();
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_fx->startControlServer());
        QVERIFY(startConfigDb());
    }

    /// setUpSystem(), then resources/ imported as version 1.
    void setUpWithResources()
    {
        setUpSystem();
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("import"),
                      QStringLiteral(DIALOG_SOURCE_DIR "/resources")}),
                 0);
    }

    // The tests both back-ends run.
    void documentsAndVersions();
    void concurrentEditors();
    void badInput();
    void runRegistry();

private slots:
    void cleanup()
    {
        m_fx.reset();
        m_dir.reset();
    }

    void sqliteDocumentsAndVersions() { documentsAndVersions(); }
    void sqliteConcurrentEditors() { concurrentEditors(); }
    void sqliteBadInput() { badInput(); }
    void sqliteRunRegistry() { runRegistry(); }
    void killedMidCommitLeavesCommitsWholeOrAbsent();
    void editCommitsOnTheVersionRead();
    void fullDiskRefusesTheCommitWhole();
    void configClientApi();
    void authorsAreProvenOrClaimed();
    void postgresql();
};

void tst_ConfigDb::documentsAndVersions()
{
    setUpSystem();
    if (QTest::currentTestFailed())
        return;
    QByteArray out, err;
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("import"),
                  QStringLiteral(DIALOG_SOURCE_DIR "/resources")},
                 &out, &err),
             0);
    QVERIFY2(out.startsWith("version 1: "), out + err);
    // The demo's slave arguments became documents; the partition keeps the rest.
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("readout/RO1")}, &out), 0);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("threads")).toInt(), 10);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("partitions/demo")}, &out),
             0);
    QVERIFY(!out.contains("--threads"));
    // Importing the same again changes nothing.
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("import"),
                  QStringLiteral(DIALOG_SOURCE_DIR "/resources")},
                 &out),
             0);
    QVERIFY2(out.contains("nothing to import"), out);

    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("tag"), QStringLiteral("physics-2026")}), 0);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE1"),
                  file(QStringLiteral("fe1.json"), "{\"registers\": 48}\n"), QStringLiteral("--message"),
                  QStringLiteral("more registers")},
                 &out, &err),
             0);
    QVERIFY2(out.startsWith("version 2: slaves/FE1"), out + err);
    // Every version stays readable: by number, by tag, and the newest.
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/FE1@physics-2026")},
                 &out),
             0);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("registers")).toInt(), 32);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/FE1@1")}, &out), 0);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("registers")).toInt(), 32);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/FE1")}, &out), 0);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("registers")).toInt(), 48);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("diff"), QStringLiteral("physics-2026")}, &out),
             0);
    QVERIFY2(out.contains("--- a/slaves/FE1\n+++ b/slaves/FE1\n") &&
                 out.contains("-    \"registers\": 32\n") && out.contains("+{\"registers\": 48}\n"),
             out);
    QVERIFY2(!out.contains("FE2"), out);

    const QList<QJsonObject> commits = log();
    QCOMPARE(commits.size(), 2);
    QCOMPARE(commits.at(0).value(QStringLiteral("message")).toString(), QStringLiteral("more registers"));
    QCOMPARE(commits.at(0).value(QStringLiteral("parent")).toInt(), 1);
    QCOMPARE(commits.at(0).value(QStringLiteral("paths")).toArray(),
             QJsonArray{QStringLiteral("slaves/FE1")});
    QVERIFY(commits.at(0).value(QStringLiteral("author")).toString().contains(QLatin1Char('@')));

    // A tag is never moved; the export holds every document.
    QCOMPARE(
        ctl({QStringLiteral("config"), QStringLiteral("tag"), QStringLiteral("physics-2026")}, nullptr, &err),
        1);
    QVERIFY2(err.contains("already names version 1"), err);
    const QString exported = m_dir->filePath(QStringLiteral("export"));
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("export"), exported, QStringLiteral("--at"),
                  QStringLiteral("physics-2026")}),
             0);
    QFile fe1(exported + QStringLiteral("/slaves/FE1.json"));
    QVERIFY(fe1.open(QIODevice::ReadOnly));
    QCOMPARE(QJsonDocument::fromJson(fe1.readAll()).object().value(QStringLiteral("registers")).toInt(), 32);
    QVERIFY(QFile::exists(exported + QStringLiteral("/is-types/runcontrol.xml")));

    // The records survive a restart of the daemon.
    m_configdb->terminate();
    QVERIFY(m_configdb->waitForFinished(10000));
    QVERIFY(startConfigDb());
    QCOMPARE(log().size(), 2);
}

void tst_ConfigDb::concurrentEditors()
{
    setUpWithResources();
    if (QTest::currentTestFailed())
        return;
    // Two editors read version 1 and both commit on it, at the same time: one is refused, naming
    // what the other changed.
    QProcess *a =
        m_fx->start(QStringLiteral("dialogctl"),
                    {QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE1"),
                     file(QStringLiteral("a.json"), "{\"registers\": 100}"), QStringLiteral("--base"),
                     QStringLiteral("1"), QStringLiteral("--name"), QStringLiteral("editorA")});
    QProcess *b =
        m_fx->start(QStringLiteral("dialogctl"),
                    {QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE2"),
                     file(QStringLiteral("b.json"), "{\"registers\": 200}"), QStringLiteral("--base"),
                     QStringLiteral("1"), QStringLiteral("--name"), QStringLiteral("editorB")});
    QVERIFY(waitUntil(
        [&] { return a->state() == QProcess::NotRunning && b->state() == QProcess::NotRunning; }, 20000));
    QCOMPARE(a->exitCode() + b->exitCode(), 1);
    QProcess *refused = a->exitCode() ? a : b;
    const QString winner = a->exitCode() ? QStringLiteral("slaves/FE2") : QStringLiteral("slaves/FE1");
    const QByteArray err = refused->readAllStandardError();
    QVERIFY2(err.contains("configuration changed since version 1: " + winner.toUtf8() + " by ") &&
                 err.contains("read again and re-apply"),
             err);
    QCOMPARE(log().size(), 2);
    QCOMPARE(log().first().value(QStringLiteral("paths")).toArray(), QJsonArray{winner});
}

void tst_ConfigDb::badInput()
{
    setUpWithResources();
    if (QTest::currentTestFailed())
        return;
    struct Case
    {
        const char *path;
        QByteArray content;
        const char *expected;
    };
    const Case cases[] = {
        {"slaves/FE1", "{\n  \"registers\": 4,\n  \"check_ms\": }\n",
         "slaves/FE1: line 3, column 15: invalid JSON"},
        {"slaves/FE1", "{\"registers\": 0}",
         "slaves/FE1: registers: 0 is out of range (an integer 1..65536)"},
        {"readout/RO1", "{\"thread\": 4}",
         "readout/RO1: thread: unknown parameter (known: description, threads"},
        {"is-types/x", "<is-types>\n  <type name='A'>\n</is-types>\n", "is-types/x: line 3, column"},
        {"is-types/x", "<is-types><type name='A' base='Missing'/></is-types>", "unknown base type 'Missing'"},
        {"partitions/demo", "{\"name\": \"demo\", \"slaves\": []}",
         "partitions/demo: control_server: missing"},
        {"partitions/other", "{\"name\": \"demo\"}", "partitions/other: control_server: missing"},
        {"segments/tracker", "{\"members\": [\"slaves/FE9\"]}",
         "segments/tracker refers to slaves/FE9, which is not in"},
        {"nothing/x", "{}", "nothing/x: not a document path"},
    };
    for (const Case &c : cases) {
        QByteArray err;
        // Checked by the daemon: dialogctl's own check is skipped by sending the change raw.
        dialog::Client client(m_fx->clientOptions(QStringLiteral("badInput")));
        QVERIFY(client.start());
        dialog::config::ConfigClient config(&client);
        std::optional<dialog::Status> answer;
        config.commit(1, {dialog::config::Change{QLatin1String(c.path), c.content, false}}, QString(),
                      [&](const dialog::Status &st, const dialog::config::Commit &) { answer = st; });
        QVERIFY(waitUntil([&] { return answer.has_value(); }, 15000));
        QVERIFY2(answer->message().contains(QLatin1String(c.expected)),
                 qPrintable(answer->message() + QStringLiteral(" / expected: ") + QLatin1String(c.expected)));
        QVERIFY(answer->code() == dialog::Status::Code::InvalidObject ||
                answer->code() == dialog::Status::Code::InvalidName);
    }
    QByteArray err;
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/FE1@no-such-tag")},
                 nullptr, &err),
             1);
    QVERIFY2(err.contains("unknown tag 'no-such-tag'"), err);
    QCOMPARE(
        ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/FE1@7")}, nullptr, &err),
        1);
    QVERIFY2(err.contains("unknown version 7 (the newest is 1)"), err);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("rm"), QStringLiteral("slaves/FE1")}), 0);
    QCOMPARE(
        ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/FE1")}, nullptr, &err),
        1);
    QVERIFY2(err.contains("no document slaves/FE1 in version 2"), err);
    // Nothing of the refused commits was written.
    QCOMPARE(log().size(), 2);
}

void tst_ConfigDb::runRegistry()
{
    setUpSystem();
    if (QTest::currentTestFailed())
        return;
    dialog::Client client(m_fx->clientOptions(QStringLiteral("runRegistry")));
    QVERIFY(client.start());
    dialog::config::ConfigClient config(&client);
    auto call = [&](const QJsonObject &request, QJsonObject *answer) {
        std::optional<dialog::Status> st;
        config.call(request, [&](const dialog::Status &s, const QJsonObject &a) {
            st = s;
            *answer = a;
        });
        if (!waitUntil([&] { return st.has_value(); }, 15000))
            return dialog::Status(dialog::Status::Code::Timeout);
        return *st;
    };
    auto process = [](const QString &name, const QString &host, const QString &version) {
        QJsonObject p{
            {QStringLiteral("name"), name}, {QStringLiteral("host"), host}, {QStringLiteral("pid"), 42}};
        if (!version.isEmpty())
            p.insert(QStringLiteral("version"), version);
        return p;
    };
    QJsonArray processes{process(QStringLiteral("FE1"), QStringLiteral("daq-fe1"), QStringLiteral("0.1.0")),
                         process(QStringLiteral("RO1"), QStringLiteral("daq-ro1"), QStringLiteral("0.1.0"))};
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE1"),
                  file(QStringLiteral("fe1.json"), "{\"registers\": 8}")}),
             0);
    auto startRun = [&](const QString &partition, QJsonObject *answer) {
        return call({{QStringLiteral("op"), QStringLiteral("run-start")},
                     {QStringLiteral("run"),
                      QJsonObject{{QStringLiteral("partition"), partition},
                                  {QStringLiteral("run_type"), QStringLiteral("Physics")},
                                  {QStringLiteral("config_version"), 1},
                                  {QStringLiteral("operator"), QStringLiteral("shifter@cr-03")},
                                  {QStringLiteral("master"), QStringLiteral("Master")},
                                  {QStringLiteral("processes"), processes}}}},
                    answer);
    };
    QJsonObject a, b, c;
    const dialog::Status first = startRun(QStringLiteral("east"), &a);
    QVERIFY2(first.isOk(), qPrintable(first.toString()));
    QVERIFY(startRun(QStringLiteral("west"), &b).isOk());
    QCOMPARE(a.value(QStringLiteral("number")).toInt(), 1);
    QCOMPARE(b.value(QStringLiteral("number")).toInt(), 2);
    QJsonObject ended;
    QVERIFY(call({{QStringLiteral("op"), QStringLiteral("run-end")},
                  {QStringLiteral("number"), 2},
                  {QStringLiteral("reason"), QStringLiteral("error")},
                  {QStringLiteral("message"), QStringLiteral("RO1 failed")},
                  {QStringLiteral("events"), 1234}},
                 &ended)
                .isOk());
    QCOMPARE(ended.value(QStringLiteral("end_reason")).toString(), QStringLiteral("error"));
    QCOMPARE(call({{QStringLiteral("op"), QStringLiteral("run-end")},
                   {QStringLiteral("number"), 2},
                   {QStringLiteral("reason"), QStringLiteral("normal")}},
                  &ended)
                 .code(),
             dialog::Status::Code::AlreadyExists);
    QCOMPARE(
        call({{QStringLiteral("op"), QStringLiteral("run")}, {QStringLiteral("number"), 99}}, &ended).code(),
        dialog::Status::Code::NotFound);
    // A new run of "east" while run 1 never ended: run 1's master was lost. FE1 runs another
    // version of the software now, and RO1 an older one that does not say its version.
    processes = {process(QStringLiteral("FE1"), QStringLiteral("daq-fe1"), QStringLiteral("0.2.0")),
                 process(QStringLiteral("RO1"), QStringLiteral("daq-ro2"), QString())};
    QVERIFY(startRun(QStringLiteral("east"), &c).isOk());
    QCOMPARE(c.value(QStringLiteral("number")).toInt(), 3);
    QByteArray out;
    QCOMPARE(
        ctl({QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--json")},
            &out),
        0);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("end_reason")).toString(),
             QStringLiteral("master lost"));
    QCOMPARE(ctl({QStringLiteral("runs"), QStringLiteral("ls")}, &out), 0);
    QVERIFY2(out.contains("error: RO1 failed") && out.contains("master lost") && out.contains("running"),
             out);
    QCOMPARE(ctl({QStringLiteral("runs"), QStringLiteral("ls"), QStringLiteral("--partition"),
                  QStringLiteral("west"), QStringLiteral("--json")},
                 &out),
             0);
    QCOMPARE(out.count('\n'), 1);
    QCOMPARE(ctl({QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("3")}, &out), 0);
    QVERIFY2(out.contains("FE1") && out.contains("daq-fe1 pid 42 0.2.0") &&
                 out.contains("daq-ro2 pid 42 unknown"),
             out);
    QCOMPARE(
        ctl({QStringLiteral("runs"), QStringLiteral("diff"), QStringLiteral("1"), QStringLiteral("3")}, &out),
        0);
    QVERIFY2(out.contains("software of FE1: 0.1.0 -> 0.2.0\n") &&
                 out.contains("software of RO1: 0.1.0 -> unknown\n") &&
                 out.contains("host of RO1: daq-ro1 -> daq-ro2\n") && !out.contains("host of FE1"),
             out);
}

void tst_ConfigDb::killedMidCommitLeavesCommitsWholeOrAbsent()
{
    setUpWithResources();
    if (QTest::currentTestFailed())
        return;
    // A directory of 40 slave documents, committed again and again with other values; the daemon
    // kills itself after writing some of them, at another point each time.
    const QString dir = m_dir->filePath(QStringLiteral("bulk/slaves"));
    QVERIFY(QDir().mkpath(dir));
    auto writeBulk = [&](int value) {
        for (int i = 0; i < 40; ++i)
            file(QStringLiteral("bulk/slaves/S%1.json").arg(i),
                 QStringLiteral("{\"registers\": %1}").arg(value).toUtf8());
    };
    int committed = 1;
    for (int crashAt : {1, 17, 39, 40}) {
        m_configdb->terminate();
        QVERIFY(m_configdb->waitForFinished(10000));
        QVERIFY(startConfigDb({QStringLiteral("--crash-after-rows"), QString::number(crashAt)}));
        writeBulk(crashAt);
        QByteArray err;
        QVERIFY(
            ctl({QStringLiteral("config"), QStringLiteral("import"), m_dir->filePath(QStringLiteral("bulk"))},
                nullptr, &err) != 0);
        QVERIFY(waitUntil([&] { return m_configdb->state() == QProcess::NotRunning; }, 10000));
        QCOMPARE(m_configdb->exitStatus(), QProcess::CrashExit);
        QVERIFY(startConfigDb());
        // The killed commit is absent: no version, no document of it.
        QCOMPARE(log().size(), committed);
        QByteArray out;
        QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("ls"), QStringLiteral("slaves/S")}, &out), 0);
        QCOMPARE(out.count('\n'), committed == 1 ? 0 : 40);
        // The next one, uninterrupted, is there whole.
        writeBulk(1000 + crashAt);
        QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("import"),
                      m_dir->filePath(QStringLiteral("bulk"))}),
                 0);
        ++committed;
        const QList<QJsonObject> commits = log();
        QCOMPARE(commits.size(), committed);
        QCOMPARE(commits.first().value(QStringLiteral("paths")).toArray().size(), 40);
        QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/S39")}, &out),
                 0);
        QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("registers")).toInt(),
                 1000 + crashAt);
    }
}

void tst_ConfigDb::editCommitsOnTheVersionRead()
{
    setUpWithResources();
    if (QTest::currentTestFailed())
        return;
    // The editor: a shell function of $EDITOR, given the file.
    auto edit = [&](const QByteArray &editor, QByteArray *out, QByteArray *err) {
        qunsetenv("VISUAL"); // it would come first
        qputenv("EDITOR", editor);
        const int rc = ctl({QStringLiteral("config"), QStringLiteral("edit"), QStringLiteral("slaves/FE1"),
                            QStringLiteral("--message"), QStringLiteral("edited")},
                           out, err);
        qunsetenv("EDITOR");
        return rc;
    };
    QByteArray out, err;
    QCOMPARE(edit("sed -i s/32/33/", &out, &err), 0);
    QVERIFY2(out.startsWith("version 2: slaves/FE1"), out + err);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/FE1")}, &out), 0);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("registers")).toInt(), 33);
    // Someone commits while the editor is open: the edit is refused, naming that change.
    const QString other = file(QStringLiteral("fe2.json"), "{\"registers\": 7}");
    const QByteArray meanwhile = "f() { " + QFile::encodeName(bin(QStringLiteral("dialogctl"))) +
                                 " config put slaves/FE2 " + QFile::encodeName(other) +
                                 " && sed -i s/33/34/ \"$1\"; }; f";
    QCOMPARE(edit(meanwhile, &out, &err), 1);
    QVERIFY2(err.contains("configuration changed since version 2: slaves/FE2 by "), err);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/FE1")}, &out), 0);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("registers")).toInt(), 33);
    // Saved unchanged: nothing committed.
    QCOMPARE(edit("true", &out, &err), 0);
    QVERIFY2(err.contains("unchanged, nothing committed"), err);
    QCOMPARE(log().size(), 3);
}

void tst_ConfigDb::fullDiskRefusesTheCommitWhole()
{
    m_fx = std::make_unique<ProcessFixture>();
    m_dir = std::make_unique<QTemporaryDir>();
    const QString data = m_dir->filePath(QStringLiteral("data"));
    QVERIFY(QDir().mkpath(data));
    if (!ProcessFixture::mountTmpfs(data, QStringLiteral("1m")))
        QSKIP("cannot mount a tmpfs here (not root, or no capability)");
    auto unmount = qScopeGuard([&] {
        m_fx->stopAll();
        QProcess::execute(QStringLiteral("umount"), {data});
    });
    QVERIFY(m_fx->startControlServer());
    QVERIFY(startConfigDb());
    // Commits of 100 documents of 2 KiB each until the file system is full.
    const QByteArray filler(2000, 'x');
    int committed = 0;
    QByteArray err;
    for (int i = 0; i < 100; ++i) {
        const QString dir = m_dir->filePath(QStringLiteral("bulk%1/slaves").arg(i));
        QVERIFY(QDir().mkpath(dir));
        for (int d = 0; d < 100; ++d)
            file(QStringLiteral("bulk%1/slaves/S%2.json").arg(i).arg(d),
                 "{\"registers\": " + QByteArray::number(i + 1) + ", \"description\": \"" + filler + "\"}");
        if (ctl({QStringLiteral("config"), QStringLiteral("import"),
                 m_dir->filePath(QStringLiteral("bulk%1").arg(i))},
                nullptr, &err) != 0)
            break;
        ++committed;
    }
    QVERIFY2(committed > 0 && committed < 100, qPrintable(QString::number(committed)));
    QVERIFY2(err.contains("nothing was written: database or disk is full"), err);
    // Nothing of the refused commit: the versions and the documents are those committed.
    QCOMPARE(log().size(), committed);
    QByteArray out;
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("get"), QStringLiteral("slaves/S99")}, &out), 0);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("registers")).toInt(), committed);
    // Room again: the next commit goes in (the daemon opens its database again).
    QVERIFY(ProcessFixture::mountTmpfs(data, QStringLiteral("64m"), true));
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/S0"),
                  file(QStringLiteral("s0.json"), "{\"registers\": 4}")},
                 &out, &err),
             0);
    QCOMPARE(log().size(), committed + 1);
}

void tst_ConfigDb::authorsAreProvenOrClaimed()
{
    const passwd *pw = ::getpwuid(::geteuid());
    QVERIFY(pw);
    const QString me =
        QStringLiteral("%1@%2").arg(QString::fromLocal8Bit(pw->pw_name), QSysInfo::machineHostName());
    auto put = [&](const QString &name, int registers) {
        QByteArray out, err;
        const int rc = ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE1"),
                            file(name + QStringLiteral(".json"),
                                 QByteArray("{\"registers\": ") + QByteArray::number(registers) + "}"),
                            QStringLiteral("--name"), name},
                           &out, &err);
        if (rc != 0)
            qWarning() << out << err;
        return rc;
    };
    // No secret: the user and host the process says, marked as claimed.
    setUpSystem();
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(put(QStringLiteral("editorC"), 10), 0);
    QJsonObject newest = log().value(0);
    QCOMPARE(newest.value(QStringLiteral("author")).toString(), me);
    QCOMPARE(newest.value(QStringLiteral("proven")).toBool(), false);
    QByteArray out;
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("log")}, &out), 0);
    QVERIFY2(out.contains(me.toUtf8() + " (claimed)"), out);
    cleanup();

    // A secret, and the partition's identity secret given to the configdb: a process that proves
    // its name with its process key is the author by that name; one without a key is the user and
    // host it says, authenticated by the secret.
    m_dir = std::make_unique<QTemporaryDir>();
    const QString secret = file(QStringLiteral("secret"), dialog::security::generateSecret());
    const QString identity = file(QStringLiteral("identity"), dialog::security::generateSecret());
    QByteArray identitySecret;
    QVERIFY(dialog::security::readSecretFile(identity, &identitySecret).isOk());
    const QString key = file(QStringLiteral("editorP.key"),
                             dialog::security::processKeyFileContent(
                                 QStringLiteral("editorP"),
                                 dialog::security::processKey(identitySecret, QStringLiteral("editorP"))));
    for (const QString &f : {secret, identity, key})
        QFile::setPermissions(f, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    qputenv("DIALOG_SECRET_FILE", secret.toUtf8());
    auto unset = qScopeGuard([] {
        qunsetenv("DIALOG_SECRET_FILE");
        qunsetenv("DIALOG_PROCESS_KEY_FILE");
    });
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
    QVERIFY(startConfigDb({QStringLiteral("--identity-file"), identity}));
    qputenv("DIALOG_PROCESS_KEY_FILE", key.toUtf8());
    QCOMPARE(put(QStringLiteral("editorP"), 20), 0);
    newest = log().value(0);
    QCOMPARE(newest.value(QStringLiteral("author")).toString(), QStringLiteral("editorP (%1)").arg(me));
    QCOMPARE(newest.value(QStringLiteral("proven")).toBool(), true);
    qunsetenv("DIALOG_PROCESS_KEY_FILE");
    QCOMPARE(put(QStringLiteral("editorQ"), 30), 0);
    newest = log().value(0);
    QCOMPARE(newest.value(QStringLiteral("author")).toString(), me);
    QCOMPARE(newest.value(QStringLiteral("proven")).toBool(), true);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("log")}, &out), 0);
    QVERIFY2(out.contains("editorP (" + me.toUtf8() + ")") && !out.contains("(claimed)"), out);
}

void tst_ConfigDb::configClientApi()
{
    setUpSystem();
    if (QTest::currentTestFailed())
        return;
    dialog::Client client(m_fx->clientOptions(QStringLiteral("apiUser")));
    QVERIFY(client.start());
    dialog::config::ConfigClient config(&client);
    std::optional<dialog::Status> st;
    dialog::config::Commit made;
    config.commit(0, {{QStringLiteral("slaves/FE1"), "{\"registers\": 8}", false}}, QStringLiteral("first"),
                  [&](const dialog::Status &s, const dialog::config::Commit &c) {
                      st = s;
                      made = c;
                  });
    QVERIFY(waitUntil([&] { return st.has_value(); }, 15000));
    QVERIFY2(st->isOk(), qPrintable(st->toString()));
    QCOMPARE(made.version, 1u);
    st.reset();
    dialog::config::Document doc;
    config.get(QStringLiteral("slaves/FE1"), QStringLiteral("head"),
               [&](const dialog::Status &s, const dialog::config::Document &d, quint64) {
                   st = s;
                   doc = d;
               });
    QVERIFY(waitUntil([&] { return st.has_value(); }, 15000));
    QVERIFY(st->isOk());
    QCOMPARE(doc.content, QByteArray("{\"registers\": 8}"));
    // The same base again: refused.
    st.reset();
    config.commit(0, {{QStringLiteral("slaves/FE1"), "{\"registers\": 9}", false}}, QString(),
                  [&](const dialog::Status &s, const dialog::config::Commit &) { st = s; });
    QVERIFY(waitUntil([&] { return st.has_value(); }, 15000));
    QCOMPARE(st->code(), dialog::Status::Code::AlreadyExists);
    // No configdb of that name: the failure says so.
    dialog::config::ConfigClient missing(&client, QStringLiteral("nosuchdb"));
    missing.setTimeoutMs(500);
    st.reset();
    missing.resolve(QStringLiteral("head"), [&](const dialog::Status &s, quint64) { st = s; });
    QVERIFY(waitUntil([&] { return st.has_value(); }, 15000));
    QCOMPARE(st->code(), dialog::Status::Code::Timeout);
    QVERIFY2(st->message().contains(QLatin1String("CONFIG.nosuchdb")), qPrintable(st->message()));
}

void tst_ConfigDb::postgresql()
{
    const QString binDir = postgresBinDir();
    if (binDir.isEmpty())
        QSKIP("PostgreSQL is not installed (Debian: postgresql)");
    if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QPSQL")))
        QSKIP("Qt's QPSQL driver is not installed (Debian: libqt6sql6-psql)");
    PostgresServer pg;
    QString error;
    QVERIFY2(pg.create(binDir, &error, QStringLiteral("config")), qPrintable(error));
    m_db = pg.url();
    auto reset = qScopeGuard([&] { m_db.clear(); });
    documentsAndVersions();
    if (QTest::currentTestFailed())
        return;
    cleanup();
    // A fresh database for each.
    QVERIFY2(pg.createDatabase(QStringLiteral("config2"), &error), qPrintable(error));
    m_db = pg.url();
    concurrentEditors();
    if (QTest::currentTestFailed())
        return;
    cleanup();
    QVERIFY2(pg.createDatabase(QStringLiteral("config3"), &error), qPrintable(error));
    m_db = pg.url();
    runRegistry();
    if (QTest::currentTestFailed())
        return;
    // The server gone under a running configdb: the commit is refused with the reason; back, the
    // daemon connects again and nothing of the refused commit is there.
    const qsizetype commits = log().size(); // runRegistry()'s
    QCOMPARE(commits, 1);
    pg.stop();
    QByteArray err;
    const QString doc = file(QStringLiteral("pg.json"), "{\"registers\": 5}");
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE1"), doc},
                 nullptr, &err),
             1);
    QVERIFY2(err.contains("connection"), err); // libpq's words: the server closed it
    QVERIFY2(pg.start(&error), qPrintable(error));
    QVERIFY(waitUntil(
        [&] {
            return ctl({QStringLiteral("config"), QStringLiteral("tag")}) == 0;
        },
        20000, 100));
    QCOMPARE(log().size(), commits);
    QCOMPARE(ctl({QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE1"), doc},
                 nullptr, &err),
             0);
    QCOMPARE(log().size(), commits + 1);
}

QTEST_GUILESS_MAIN(tst_ConfigDb)
#include "tst_configdb.moc"
