// The real master and slaves configured from dialog-configdb: each slave gets its parameters at
// configure from the version configured, a change in the database takes effect at the next
// configure, every run is recorded with the version it ran with, an unreachable database fails the
// configure with the reason, and a run whose master was lost says so.
#include "processfixture.h"

#include "dialog/client.h"
#include "dialog/config.h"
#include "dialog/rc/protocol.h"
#include "dialog/subscription.h"
#include "dialog/version.h"

#include <QJsonArray>
#include <QTemporaryDir>

using namespace dialog::test;
using dialog::Reply;

class tst_ConfigRun : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<dialog::Client> m_client;
    QProcess *m_configdb = nullptr;
    QString m_partition;
    QHash<QString, dialog::Subscription *> m_status;
    QHash<QString, int> m_eventful; ///< status updates with events counted, per slave

    QProcess *startConfigDb()
    {
        return m_fx->start(QStringLiteral("dialog-configdb"),
                           {QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("data"))});
    }

    QProcess *startSlave(const QString &kind, const QString &name)
    {
        return m_fx->start(QStringLiteral("dialog-slave"),
                           {QStringLiteral("--kind"), kind, QStringLiteral("--name"), name,
                            QStringLiteral("--no-is"), QStringLiteral("--heartbeat-ms"),
                            QStringLiteral("200")});
    }

    QProcess *startMaster()
    {
        return m_fx->start(QStringLiteral("dialog-master"),
                           {QStringLiteral("--config"), m_partition, QStringLiteral("--no-is"),
                            QStringLiteral("--configdb"), QStringLiteral("configdb")});
    }

    /// Commits @p docs (path → JSON object) on the newest version; the version made, 0 on failure.
    quint64 commit(const QHash<QString, QJsonObject> &docs)
    {
        dialog::config::ConfigClient config(m_client.get());
        std::optional<quint64> head;
        config.resolve(QStringLiteral("head"),
                       [&](const dialog::Status &st, quint64 v) { head = st.isOk() ? v : 0; });
        if (!waitUntil([&] { return head.has_value(); }, 15000))
            return 0;
        QList<dialog::config::Change> changes;
        for (auto it = docs.cbegin(); it != docs.cend(); ++it)
            changes.append({it.key(), QJsonDocument(it.value()).toJson(), false});
        std::optional<quint64> made;
        config.commit(*head, changes, QStringLiteral("test"),
                      [&](const dialog::Status &st, const dialog::config::Commit &c) {
                          if (!st.isOk())
                              qWarning() << st.toString();
                          made = st.isOk() ? c.version : 0;
                      });
        return waitUntil([&] { return made.has_value(); }, 15000) ? *made : 0;
    }

    Reply transition(const QString &t)
    {
        Reply out;
        bool done = false;
        m_client->request(QStringLiteral("RunCtrl.Master.State"), t.toUtf8(), 20000, this,
                          [&](const Reply &r) {
                              out = r;
                              done = true;
                          });
        waitUntil([&done] { return done; }, 22000, 5);
        return out;
    }

    /// The newest status of @p slave's RunCtrl.<slave>.Status service (subscribed on first use).
    QJsonObject status(const QString &slave)
    {
        const QString service = dialog::rc::statusService(slave);
        if (!m_status.contains(service)) {
            dialog::Subscription *sub = m_client->subscribe(service);
            m_status.insert(service, sub);
            connect(sub, &dialog::Subscription::messageReceived, this,
                    [this, slave](const dialog::Message &m) {
                        if (QJsonDocument::fromJson(m.data())
                                .object()
                                .value(QStringLiteral("events"))
                                .toInteger() > 0)
                            ++m_eventful[slave];
                    });
        }
        return QJsonDocument::fromJson(m_status.value(service)->lastMessage().data()).object();
    }

    QJsonObject run(int number)
    {
        QByteArray out;
        m_fx->run(QStringLiteral("dialogctl"),
                  {QStringLiteral("runs"), QStringLiteral("show"), QString::number(number),
                   QStringLiteral("--json")},
                  &out);
        return QJsonDocument::fromJson(out).object();
    }

    /// Until the master (the one running now: a fresh subscription) sees every slave of the
    /// partition present.
    bool waitForSlaves()
    {
        return waitUntil(
            [&] {
                QByteArray out;
                m_fx->run(QStringLiteral("dialogctl"),
                          {QStringLiteral("get"), QStringLiteral("RunCtrl.Master.State"),
                           QStringLiteral("--count"), QStringLiteral("1"), QStringLiteral("--json"),
                           QStringLiteral("--timeout-ms"), QStringLiteral("3000")},
                          &out);
                const QJsonObject state = QJsonDocument::fromJson(QJsonDocument::fromJson(out.trimmed())
                                                                      .object()
                                                                      .value(QStringLiteral("data"))
                                                                      .toString()
                                                                      .toUtf8())
                                              .object();
                const QJsonArray slaves = state.value(QStringLiteral("slaves")).toArray();
                return slaves.size() == 2 &&
                       std::all_of(slaves.begin(), slaves.end(), [](const QJsonValue &v) {
                           return v.toObject().value(QStringLiteral("present")).toBool();
                       });
            },
            20000, 100);
    }

private slots:
    void init()
    {
        m_fx = std::make_unique<ProcessFixture>();
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_fx->startControlServer());
        m_client = std::make_unique<dialog::Client>(m_fx->clientOptions(QStringLiteral("tst_configrun")));
        QVERIFY(m_client->start());
        const QJsonObject partition{
            {QStringLiteral("name"), QStringLiteral("cfgtest")},
            {QStringLiteral("control_server"),
             QJsonObject{{QStringLiteral("host"), QStringLiteral("localhost")},
                         {QStringLiteral("port"), m_fx->port()},
                         {QStringLiteral("start"), false}}},
            {QStringLiteral("heartbeat_ms"), 200},
            {QStringLiteral("master"),
             QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                         {QStringLiteral("run_number_file"), m_dir->filePath(QStringLiteral("runnumber"))}}},
            {QStringLiteral("slaves"),
             QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("FE1")},
                                    {QStringLiteral("kind"), QStringLiteral("control")}},
                        QJsonObject{{QStringLiteral("name"), QStringLiteral("RO1")},
                                    {QStringLiteral("kind"), QStringLiteral("readout")}}}}};
        m_partition = m_dir->filePath(QStringLiteral("cfgtest.json"));
        QFile f(m_partition);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(partition).toJson());
        f.close();
        m_configdb = startConfigDb();
        QVERIFY(waitUntil(
            [&] {
                return m_fx->run(QStringLiteral("dialogctl"),
                                 {QStringLiteral("config"), QStringLiteral("tag")}) == 0;
            },
            20000, 50));
        QCOMPARE(commit({{QStringLiteral("partitions/cfgtest"), partition},
                         {QStringLiteral("readout/RO1"),
                          QJsonObject{{QStringLiteral("threads"), 3}, {QStringLiteral("spill_s"), 1}}},
                         {QStringLiteral("slaves/FE1"), QJsonObject{{QStringLiteral("registers"), 8},
                                                                    {QStringLiteral("upset_every_s"), 0.05},
                                                                    {QStringLiteral("check_ms"), 20}}}}),
                 1u);
    }

    void cleanup()
    {
        m_status.clear();
        m_eventful.clear();
        m_client.reset();
        m_fx.reset();
        m_dir.reset();
    }

    void slaveParametersComeFromTheVersionConfigured()
    {
        m_fx->start(QStringLiteral("dialog-logger"),
                    {QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("log"))});
        startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
        startSlave(QStringLiteral("readout"), QStringLiteral("RO1"));
        startMaster();
        QVERIFY(waitForSlaves());
        Reply r = transition(QStringLiteral("configure"));
        QVERIFY2(r.isOk(), qPrintable(r.errorString()));
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("RO1")).value(QStringLiteral("threads")).toInt(), 3,
                                  15000);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("FE1")).value(QStringLiteral("registers")).toInt(), 8,
                                  15000);
        QVERIFY(transition(QStringLiteral("start")).isOk());
        // The run's events are the readout's: two status updates that counted some before the stop
        // (the master hears the same updates).
        QVERIFY(waitUntil([&] { return m_eventful.value(QStringLiteral("RO1")) >= 2; }, 20000));
        // A warning of FE1 stored by the logger during the run (its upsets): counted in the record.
        QVERIFY(waitUntil(
            [&] {
                QByteArray out;
                m_fx->run(QStringLiteral("dialogctl"),
                          {QStringLiteral("log"), QStringLiteral("search"), QStringLiteral("--process"),
                           QStringLiteral("FE1"), QStringLiteral("--severity"), QStringLiteral("warning"),
                           QStringLiteral("--json")},
                          &out);
                return out.contains("rewritten");
            },
            20000, 100));
        QVERIFY(transition(QStringLiteral("stop")).isOk());

        // A change in the database: the next configure takes it, the run before keeps its version.
        QCOMPARE(commit({{QStringLiteral("readout/RO1"), QJsonObject{{QStringLiteral("threads"), 5}}}}), 2u);
        QVERIFY(transition(QStringLiteral("unconfigure")).isOk());
        QVERIFY(transition(QStringLiteral("configure")).isOk());
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("RO1")).value(QStringLiteral("threads")).toInt(), 5,
                                  15000);
        QVERIFY(transition(QStringLiteral("start")).isOk());
        QVERIFY(transition(QStringLiteral("stop")).isOk());

        const QJsonObject first = run(1), second = run(2);
        QCOMPARE(first.value(QStringLiteral("config_version")).toInt(), 1);
        QCOMPARE(second.value(QStringLiteral("config_version")).toInt(), 2);
        QCOMPARE(first.value(QStringLiteral("end_reason")).toString(), QStringLiteral("normal"));
        QVERIFY2(first.value(QStringLiteral("messages"))
                         .toObject()
                         .value(QStringLiteral("FE1"))
                         .toObject()
                         .value(QStringLiteral("warning"))
                         .toInteger() >= 1,
                 QJsonDocument(first).toJson());
        QVERIFY2(first.value(QStringLiteral("events")).toInteger() > 0 &&
                     first.value(QStringLiteral("bytes")).toInteger() > 0,
                 QJsonDocument(first).toJson());
        QCOMPARE(first.value(QStringLiteral("partition")).toString(), QStringLiteral("cfgtest"));
        QVERIFY2(first.value(QStringLiteral("operator")).toString().contains(QLatin1Char('@')),
                 qPrintable(first.value(QStringLiteral("operator")).toString()));
        // Every process of the partition with its host, PID and software version (from its HELLO,
        // through the Control Server's directory).
        QStringList recorded;
        for (const QJsonValue &pv : first.value(QStringLiteral("processes")).toArray()) {
            const QJsonObject p = pv.toObject();
            QVERIFY2(p.value(QStringLiteral("pid")).toInteger() > 0 &&
                         !p.value(QStringLiteral("host")).toString().isEmpty() &&
                         p.value(QStringLiteral("version")).toString() == QLatin1String(dialog::version()),
                     QJsonDocument(p).toJson());
            recorded << p.value(QStringLiteral("name")).toString();
        }
        QVERIFY2(recorded.contains(QLatin1String("RO1")) && recorded.contains(QLatin1String("FE1")) &&
                     recorded.contains(QLatin1String("Master")),
                 QJsonDocument(first).toJson());
        QByteArray shown;
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("1")}, &shown),
                 0);
        QVERIFY2(shown.contains(QByteArray("pid ")) && shown.contains(QByteArray(" ") + dialog::version()),
                 shown);
        QByteArray out;
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("runs"), QStringLiteral("diff"), QStringLiteral("1"),
                            QStringLiteral("2")},
                           &out),
                 0);
        QVERIFY2(out.contains("--- a/readout/RO1") && out.contains("+    \"threads\": 5"), out);

        // The database gone: the configure fails and says why; nothing else is used instead.
        m_configdb->kill();
        QVERIFY(m_configdb->waitForFinished(5000));
        QVERIFY(transition(QStringLiteral("unconfigure")).isOk());
        r = transition(QStringLiteral("configure"));
        QVERIFY(!r.isOk());
        QVERIFY2(r.errorString().contains(QLatin1String("configuration database")) &&
                     r.errorString().contains(QLatin1String("CONFIG.configdb")),
                 qPrintable(r.errorString()));
    }

    void upFromTheDatabaseConfiguresFromTheTag()
    {
        // partitions/cfgtest as of the tag: its processes started by dialogctl up, its master
        // configuring from that tag while the newest version says otherwise.
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("config"), QStringLiteral("tag"), QStringLiteral("t1")}),
                 0);
        QCOMPARE(commit({{QStringLiteral("readout/RO1"), QJsonObject{{QStringLiteral("threads"), 7}}}}), 2u);
        const QString runDir = m_dir->filePath(QStringLiteral("run"));
        const QStringList where{QStringLiteral("partitions/cfgtest@t1"), QStringLiteral("--run-dir"), runDir};
        QByteArray out, err;
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), QStringList{QStringLiteral("up")} + where, &out, &err,
                           60000),
                 0);
        // The processes up started are stopped even when a check below fails.
        auto down = qScopeGuard([&] {
            m_fx->run(QStringLiteral("dialogctl"), QStringList{QStringLiteral("down")} + where, nullptr,
                      nullptr, 60000);
        });
        QVERIFY2(out.contains("Master") && out.contains("RO1"), out + err);
        QVERIFY(waitForSlaves());
        QVERIFY(transition(QStringLiteral("configure")).isOk());
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("RO1")).value(QStringLiteral("threads")).toInt(), 3,
                                  15000);
        down.dismiss();
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), QStringList{QStringLiteral("down")} + where, &out,
                           &err, 60000),
                 0);
        // Unknown tag: said so, nothing started.
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("up"), QStringLiteral("partitions/cfgtest@nope")}, &out, &err),
                 1);
        QVERIFY2(err.contains("unknown tag 'nope'"), err);
    }

    void runOfALostMasterSaysSo()
    {
        QProcess *fe1 = startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
        QProcess *ro1 = startSlave(QStringLiteral("readout"), QStringLiteral("RO1"));
        QProcess *master = startMaster();
        QVERIFY(waitForSlaves());
        QVERIFY(transition(QStringLiteral("configure")).isOk());
        QVERIFY(transition(QStringLiteral("start")).isOk());
        // The whole partition dies with its run going; the run record outlives it.
        for (QProcess *p : {master, fe1, ro1}) {
            p->kill();
            QVERIFY(p->waitForFinished(5000));
        }
        QVERIFY(!run(1).contains(QStringLiteral("end_reason")));
        startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
        startSlave(QStringLiteral("readout"), QStringLiteral("RO1"));
        startMaster();
        QVERIFY(waitForSlaves());
        QVERIFY(transition(QStringLiteral("configure")).isOk());
        QVERIFY(transition(QStringLiteral("start")).isOk());
        QCOMPARE(run(1).value(QStringLiteral("end_reason")).toString(), QStringLiteral("master lost"));
        QCOMPARE(run(2).value(QStringLiteral("number")).toInt(), 2);
        QVERIFY(!run(2).contains(QStringLiteral("end_reason")));
    }
};

QTEST_GUILESS_MAIN(tst_ConfigRun)
#include "tst_configrun.moc"
