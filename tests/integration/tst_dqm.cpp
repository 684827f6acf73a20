// dialog-dqm with the real binaries: readout slaves sampled by dialog-monitor into IS histograms,
// checked by dialog-dqm. Every algorithm's verdict, the Undefined cases with their reasons, a
// reference taken with dialogctl, and a dead channel injected into one front-end (reconfigured
// for a new run) turning its check Bad.
#include "isfixture.h"
#include "readouts.h"

#include <QJsonArray>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

class tst_Dqm : public QObject, public IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(setUpIs(QStringLiteral("dqm-test"))); }
    void cleanup() { tearDownIs(); }

    void checksJudgeHistogramsAndADeadChannelTurnsBad();
    void badChecksFilesAreRefused();
    void referenceFromAnEndedRunAndAlarmsOnBad();

private:
    Status transition(const QString &readout, const QByteArray &request);
    void startReadout(const QString &name);
    QString status(const QString &check, QString *details = nullptr);
    QString writeChecks(const QTemporaryDir &dir, const QJsonArray &checks);
};

Status tst_Dqm::transition(const QString &readout, const QByteArray &request)
{
    return rcTransition(*m_client, readout, request);
}

void tst_Dqm::startReadout(const QString &name)
{
    QVERIFY(dialog::test::startReadout(*m_fx, *m_client, name));
}

QString tst_Dqm::status(const QString &check, QString *details)
{
    is::Entry e;
    // DQResult is declared by dialog-dqm at run time: this process learns it from the server.
    if (!m_dict->types().contains(QStringLiteral("DQResult")))
        m_dict->fetchTypesSync(QStringLiteral("DQM"));
    if (const Status s = m_dict->getSync(QStringLiteral("DQM.") + check, &e); !s.isOk()) {
        qDebug() << check << s.toString();
        return QString();
    }
    if (details)
        *details = e.object.get<QString>(QStringLiteral("details"));
    return e.object.get<QString>(QStringLiteral("status"));
}

QString tst_Dqm::writeChecks(const QTemporaryDir &dir, const QJsonArray &checks)
{
    const QString path = dir.filePath(QStringLiteral("checks.json"));
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(QJsonDocument(QJsonObject{{QStringLiteral("checks"), checks}}).toJson());
    return path;
}

static QJsonObject check(const char *name, const char *histogram, const char *algorithm, QJsonObject extra = {})
{
    extra.insert(QStringLiteral("name"), QString::fromLatin1(name));
    extra.insert(QStringLiteral("histogram"), QString::fromLatin1(histogram));
    extra.insert(QStringLiteral("algorithm"), QString::fromLatin1(algorithm));
    return extra;
}

void tst_Dqm::checksJudgeHistogramsAndADeadChannelTurnsBad()
{
    QTemporaryDir dir;
    const QString refs = dir.filePath(QStringLiteral("references"));
    QDir().mkpath(refs);
    { // a reference of another binning
        QFile f(refs + QStringLiteral("/rebinned.json"));
        f.open(QIODevice::WriteOnly);
        f.write(R"({"type":"Histogram1D","xLow":0,"xHigh":4096,"xBins":10,"yBins":1,"entries":10,"contents":[1,1,1,1,1,1,1,1,1,1]})");
    }
    const QJsonObject manyEntries{{QStringLiteral("min_entries"), 20000}};
    const QString checks = writeChecks(
        dir, {check("ro1.dead", "Monitor.RO1.occupancy", "dead_bins", manyEntries),
              check("ro2.dead", "Monitor.RO2.occupancy", "dead_bins", manyEntries),
              check("ro2.noisy", "Monitor.RO2.occupancy", "noisy_bins", manyEntries),
              check("ro1.mean", "Monitor.RO1.eventSize", "mean",
                    {{QStringLiteral("min"), 950}, {QStringLiteral("max"), 1100}}),
              check("ro1.rms", "Monitor.RO1.eventSize", "rms",
                    {{QStringLiteral("min"), 1}, {QStringLiteral("max"), 50}, {QStringLiteral("warning_max"), 100}}),
              check("ro1.shape", "Monitor.RO1.eventSize", "chi2",
                    {{QStringLiteral("warning"), 5}, {QStringLiteral("bad"), 20}}),
              check("ro2.ks", "Monitor.RO2.occupancy", "ks",
                    {{QStringLiteral("warning"), 0.02}, {QStringLiteral("bad"), 0.05}, {QStringLiteral("min_entries"), 20000}}),
              check("missing", "Monitor.Nothing.occupancy", "dead_bins"),
              check("notahistogram", "Monitor.Statistics", "dead_bins"),
              check("rebinned", "Monitor.RO1.eventSize", "chi2", {{QStringLiteral("warning"), 5}}),
              check("toofew", "Monitor.RO1.eventSize", "mean",
                    {{QStringLiteral("min"), 0}, {QStringLiteral("max"), 1}, {QStringLiteral("min_entries"), 1000000000}})});
    startServer(QStringLiteral("Monitor"));
    startServer(QStringLiteral("DQM"));
    QVERIFY(waitForServer(QStringLiteral("Monitor")));
    QVERIFY(waitForServer(QStringLiteral("DQM")));
    m_fx->start(QStringLiteral("dialog-monitor"),
                {QStringLiteral("--readout"), QStringLiteral("RO1,RO2"), QStringLiteral("--criteria"),
                 QStringLiteral("every=2"), QStringLiteral("--publish-ms"), QStringLiteral("200")})
        ->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    const int periodMs = 300;
    QProcess *dqm = m_fx->start(QStringLiteral("dialog-dqm"), {QStringLiteral("--checks"), checks, QStringLiteral("--references"), refs,
                                               QStringLiteral("--period-ms"), QString::number(periodMs)});
    startReadout(QStringLiteral("RO1"));
    startReadout(QStringLiteral("RO2"));

    QString details;
    QTRY_VERIFY2_WITH_TIMEOUT(!status(QStringLiteral("missing")).isEmpty() || dqm->state() != QProcess::Running, dqm->readAllStandardError().constData(), 10000);
    QVERIFY2(dqm->state() == QProcess::Running, dqm->readAllStandardError().constData());
    QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("ro1.dead")), QStringLiteral("Good"), 20000);
    QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("ro2.dead")), QStringLiteral("Good"), 20000);
    QCOMPARE(status(QStringLiteral("ro2.noisy"), &details), QStringLiteral("Good"));
    QCOMPARE(details, QStringLiteral("no noisy bin"));
    QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("ro1.mean"), &details), QStringLiteral("Good"), 10000);
    QVERIFY2(details.startsWith(QLatin1String("mean 10")), qPrintable(details));
    // Sizes spread evenly over +-25 % of 1024: an RMS of ~148, past the warning range too.
    QCOMPARE(status(QStringLiteral("ro1.rms"), &details), QStringLiteral("Bad"));
    QVERIFY2(details.contains(QLatin1String("RMS 14")), qPrintable(details));
    QCOMPARE(status(QStringLiteral("ro1.shape"), &details), QStringLiteral("Undefined"));
    QVERIFY2(details.contains(QLatin1String("no reference")), qPrintable(details));
    QCOMPARE(status(QStringLiteral("missing"), &details), QStringLiteral("Undefined"));
    QVERIFY2(details.contains(QLatin1String("not found")), qPrintable(details));
    QCOMPARE(status(QStringLiteral("notahistogram"), &details), QStringLiteral("Undefined"));
    QVERIFY2(details.contains(QLatin1String("not a histogram")), qPrintable(details));
    QCOMPARE(status(QStringLiteral("rebinned"), &details), QStringLiteral("Undefined"));
    QVERIFY2(details.contains(QLatin1String("another binning")), qPrintable(details));
    QCOMPARE(status(QStringLiteral("toofew"), &details), QStringLiteral("Undefined"));
    QVERIFY2(details.contains(QLatin1String("fewer than")), qPrintable(details));

    // References taken from the current histograms: the same shapes are Good against them.
    QByteArray out, err;
    for (const char *c : {"ro1.shape", "ro2.ks"}) {
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("dqm"), QStringLiteral("reference"),
                                                         QStringLiteral("set"), QString::fromLatin1(c),
                                                         QStringLiteral("--from-current")},
                           &out, &err),
                 0);
        QVERIFY2(out.contains("entries"), out.constData());
        QVERIFY(QFile::exists(refs + QLatin1Char('/') + QString::fromLatin1(c) + QStringLiteral(".json")));
    }
    QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("ro1.shape")), QStringLiteral("Good"), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("ro2.ks")), QStringLiteral("Good"), 10000);
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("dqm"), QStringLiteral("reference"),
                                                     QStringLiteral("set"), QStringLiteral("nosuch"),
                                                     QStringLiteral("--from-current")},
                       &out, &err),
             2);
    QVERIFY2(err.contains("no check 'nosuch'"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("dqm"), QStringLiteral("ls"), QStringLiteral("--json")},
                       &out, &err),
             0);
    QCOMPARE(jsonLines(out).size(), 11);

    // A dead channel in RO2's front-end, from its next run on.
    QVERIFY(transition(QStringLiteral("RO2"), "stop").isOk());
    QVERIFY(transition(QStringLiteral("RO2"), "unconfigure").isOk());
    QVERIFY(transition(QStringLiteral("RO2"), R"({"transition":"configure","parameters":{"dead_channels":"17"}})").isOk());
    QVERIFY(transition(QStringLiteral("RO2"), "start").isOk());
    QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("ro2.dead"), &details), QStringLiteral("Bad"), 20000);
    QCOMPARE(details, QStringLiteral("1 dead bin(s): 17"));
    QCOMPARE(status(QStringLiteral("ro1.dead")), QStringLiteral("Good"));
}

void tst_Dqm::badChecksFilesAreRefused()
{
    QTemporaryDir dir;
    const auto refused = [&](const QJsonArray &checks, const char *reason) {
        QByteArray err;
        const int rc = m_fx->run(QStringLiteral("dialog-dqm"), {QStringLiteral("--checks"), writeChecks(dir, checks),
                                                                QStringLiteral("--references"), dir.path()},
                                 nullptr, &err);
        if (rc != 1 || !err.contains(reason))
            qWarning() << rc << err;
        return rc == 1 && err.contains(reason);
    };
    QVERIFY(refused({check("a", "M.h", "median")}, "check 'a': unknown algorithm 'median'"));
    QVERIFY(refused({check("a", "nodot", "dead_bins")}, "must name an IS object"));
    QVERIFY(refused({check("a", "M.h", "mean")}, "mean needs \"min\" and \"max\""));
    QVERIFY(refused({check("a", "M.h", "chi2")}, "chi2 needs \"warning\""));
    QVERIFY(refused({check("a", "M.h", "dead_bins"), check("a", "M.g", "dead_bins")}, "check 'a' twice"));
    QVERIFY(refused({}, "no \"checks\""));
}

namespace {
is::Object shape(const is::TypeRegistry &types, const QList<double> &contents)
{
    is::Object h = is::Object::create(types, QStringLiteral("Histogram1D"));
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), double(contents.size()));
    h.set(QStringLiteral("bins"), quint32(contents.size()));
    h.set(QStringLiteral("contents"), contents);
    double sum = 0;
    for (double c : contents)
        sum += c;
    h.set(QStringLiteral("entries"), quint64(sum));
    return h;
}

is::Object runInfo(const is::TypeRegistry &types, quint32 run, const char *state)
{
    is::Object o = is::Object::create(types, QStringLiteral("RunInfo"));
    o.set(QStringLiteral("runNumber"), run);
    o.set(QStringLiteral("state"), QString::fromLatin1(state));
    return o;
}
} // namespace

void tst_Dqm::referenceFromAnEndedRunAndAlarmsOnBad()
{
    QTemporaryDir dir;
    const QString refs = dir.filePath(QStringLiteral("references"));
    const QString checks = writeChecks(
        dir, {check("h.dead", "Monitor.H", "dead_bins"),
              check("h.shape", "Monitor.H", "chi2", {{QStringLiteral("warning"), 5}, {QStringLiteral("bad"), 20}})});
    startServer(QStringLiteral("Monitor"));
    startServer(QStringLiteral("DQM"));
    startServer(QStringLiteral("RunParams"));
    for (const char *s : {"Monitor", "DQM", "RunParams"})
        QVERIFY(waitForServer(QString::fromLatin1(s)));
    const QList<double> flat(20, 500), falling = [] {
        QList<double> c;
        for (int i = 0; i < 20; ++i)
            c.append(1000 - 45 * i);
        return c;
    }();
    QVERIFY(m_dict->insertSync(QStringLiteral("Monitor.H"), shape(m_dict->types(), falling)).isOk());
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RunInfo"), runInfo(m_dict->types(), 7, "Running")).isOk());

    // The alarm rules of the checks, for the alarm server.
    QByteArray rules, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-dqm"), {QStringLiteral("--checks"), checks, QStringLiteral("--print-alarm-rules")},
                       &rules, &err),
             0);
    const QString rulesFile = dir.filePath(QStringLiteral("alarms.json"));
    {
        QFile f(rulesFile);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(rules);
    }
    QCOMPARE(QJsonDocument::fromJson(rules).object().value(QStringLiteral("alarms")).toArray().size(), 4);
    m_fx->start(QStringLiteral("dialog-alarmserver"),
                {QStringLiteral("--rules"), rulesFile, QStringLiteral("--types"), isTypesDir(), QStringLiteral("--data-dir"),
                 dir.filePath(QStringLiteral("alarms"))})
        ->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QProcess *dqm = m_fx->start(QStringLiteral("dialog-dqm"), {QStringLiteral("--checks"), checks, QStringLiteral("--references"),
                                                               refs, QStringLiteral("--period-ms"), QStringLiteral("200")});
    const auto dqmLog = qScopeGuard([&] {
        if (QTest::currentTestFailed())
            qWarning().noquote() << "dialog-dqm:" << dqm->readAllStandardError();
    });
    QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("h.dead")), QStringLiteral("Good"), 20000);
    QCOMPARE(status(QStringLiteral("h.shape")), QStringLiteral("Undefined")); // no reference yet

    // dialog-dqm knows run 7 is going (its subscription's snapshot came) before the run ends.
    const auto dqmSees = [&](qint64 run) {
        std::optional<Reply> reply;
        m_client->request(QStringLiteral("DQM.Server"), R"({"op":"results"})", 5000, m_client.get(),
                          [&](const Reply &r) { reply = r; });
        if (!waitUntil([&] { return reply.has_value(); }, 6000) || !reply->isOk())
            return false;
        const QJsonObject o = QJsonDocument::fromJson(reply->data()).object();
        return o.value(QStringLiteral("run")).toInteger() == run && o.value(QStringLiteral("running")).toBool();
    };
    QTRY_VERIFY_WITH_TIMEOUT(dqmSees(7), 10000);
    // Run 7 ends: its histograms are kept; the next run's histogram is flat.
    QVERIFY(m_dict->updateSync(QStringLiteral("RunParams.RunInfo"), runInfo(m_dict->types(), 7, "Configured")).isOk());
    const QString kept = refs + QStringLiteral("/runs/7/h.shape.json");
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(kept), 10000);
    QVERIFY(m_dict->updateSync(QStringLiteral("Monitor.H"), shape(m_dict->types(), flat)).isOk());
    QVERIFY(m_dict->updateSync(QStringLiteral("RunParams.RunInfo"), runInfo(m_dict->types(), 8, "Running")).isOk());

    // The reference from run 7: today's flat histogram is Bad against it, and raises its alarm.
    QByteArray out;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("dqm"), QStringLiteral("reference"), QStringLiteral("set"),
                                                     QStringLiteral("h.shape"), QStringLiteral("--from-run"), QStringLiteral("7")},
                       &out, &err),
             0);
    QVERIFY2(out.contains("from run 7"), out + err);
    QString details;
    QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("h.shape"), &details), QStringLiteral("Bad"), 10000);
    const auto alarmState = [&](const QString &path) {
        QByteArray ls;
        m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("alarm"), QStringLiteral("ls"), QStringLiteral("--all"), QStringLiteral("--json")},
                  &ls);
        for (const QJsonObject &o : jsonLines(ls))
            if (o.value(QStringLiteral("path")).toString() == path)
                return o.value(QStringLiteral("state")).toString();
        return QString();
    };
    QTRY_COMPARE_WITH_TIMEOUT(alarmState(QStringLiteral("DQ/h.shape/bad")), QStringLiteral("active"), 15000);
    QCOMPARE(alarmState(QStringLiteral("DQ/h.dead/bad")), QStringLiteral("normal"));

    // The histogram of run 7 again: Good against run 7's reference; the alarm clears.
    QVERIFY(m_dict->updateSync(QStringLiteral("Monitor.H"), shape(m_dict->types(), falling)).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("h.shape")), QStringLiteral("Good"), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(alarmState(QStringLiteral("DQ/h.shape/bad")), QStringLiteral("normal"), 15000);

    // A run whose end was not seen, or a bad number, is refused with the reason.
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("dqm"), QStringLiteral("reference"), QStringLiteral("set"),
                                                     QStringLiteral("h.shape"), QStringLiteral("--from-run"), QStringLiteral("8")},
                       &out, &err),
             2);
    QVERIFY2(err.contains("no histogram of run 8 is kept for 'h.shape'"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("dqm"), QStringLiteral("reference"), QStringLiteral("set"),
                                                     QStringLiteral("h.shape"), QStringLiteral("--from-run"), QStringLiteral("7"),
                                                     QStringLiteral("--from-current")},
                       &out, &err),
             1);
    // dialog-dqm reports how long its last round of every check took.
    QByteArray ls;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("dqm"), QStringLiteral("ls")}, &ls, &err), 0);
    QVERIFY2(ls.startsWith("2 checks; last round of every check "), ls.constData());
}

QTEST_GUILESS_MAIN(tst_Dqm)
#include "tst_dqm.moc"
