// dialogctl bench dqm: how long dialog-dqm takes for one round of --checks checks on as many IS
// histograms of --bins bins (its own figure: from the first read of a round to its last result),
// and what the web IS's PNG route costs: a 100 x 100 Histogram2D drawn after each update, and the
// 304 of a conditional GET. The behaviour is tested by tst_dqm and tst_isweb_png; the figures live here.
#include "benchsupport.h"
#include "commands.h"

#include "dialog/histogram.h"
#include "dialog/is/dictionary.h"
#include "dialog/request.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <cstdio>
#include <optional>

namespace dialog::tool {

namespace {

const QString Server = QStringLiteral("BenchDQ");

/// One GET on @p socket (keep-alive) and its answer: the status and the ETag; 0 when none came.
int get(QTcpSocket &socket, const QByteArray &path, const QByteArray &headers, QByteArray *etag)
{
    socket.write("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n");
    QByteArray buffer;
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 10000) {
        if (!socket.waitForReadyRead(100) && socket.state() != QAbstractSocket::ConnectedState)
            return 0;
        buffer += socket.readAll();
        const qsizetype end = buffer.indexOf("\r\n\r\n");
        if (end < 0)
            continue;
        const QByteArray head = buffer.left(end).toLower();
        qsizetype length = 0;
        if (const qsizetype cl = head.indexOf("content-length: "); cl >= 0)
            length = head.mid(cl + 16, head.indexOf('\r', cl) - cl - 16).toLongLong();
        if (buffer.size() < end + 4 + length)
            continue;
        if (etag) {
            const qsizetype e = head.indexOf("etag: ");
            *etag = e < 0 ? QByteArray() : buffer.mid(e + 6, buffer.indexOf('\r', e) - e - 6);
        }
        return buffer.mid(9, 3).toInt();
    }
    return 0;
}

is::Object histogram1(const is::TypeRegistry &types, int bins, QRandomGenerator &rng)
{
    is::Object h = is::Object::create(types, QStringLiteral("Histogram1D"));
    QList<double> contents(bins);
    quint64 entries = 0;
    for (double &c : contents) {
        c = 900 + double(rng.bounded(200));
        entries += quint64(c);
    }
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), double(bins));
    h.set(QStringLiteral("bins"), quint32(bins));
    h.set(QStringLiteral("contents"), contents);
    h.set(QStringLiteral("entries"), entries);
    return h;
}

is::Object histogram2(const is::TypeRegistry &types, int update)
{
    is::Object h = is::Object::create(types, QStringLiteral("Histogram2D"));
    QList<double> contents;
    contents.reserve(100 * 100);
    for (int y = 0; y < 100; ++y)
        for (int x = 0; x < 100; ++x)
            contents.append(double((x * y + update * 37) % 1000));
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), 100.0);
    h.set(QStringLiteral("xBins"), quint32(100));
    h.set(QStringLiteral("yLow"), 0.0);
    h.set(QStringLiteral("yHigh"), 100.0);
    h.set(QStringLiteral("yBins"), quint32(100));
    h.set(QStringLiteral("contents"), contents);
    h.set(QStringLiteral("entries"), quint64(100 * 100));
    return h;
}

} // namespace

int benchDqm(const QStringList &args)
{
    const QString verb = QStringLiteral("bench dqm");
    qint64 checks = 1000, bins = 1000, rounds = 5, pngs = 50;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "dialog-dqm's round of --checks checks (dead bins, noisy bins, mean, chi2 against a reference, in "
        "turn) on as many Histogram1D of --bins bins, over --rounds rounds; then --pngs PNGs of a 100 x 100 "
        "Histogram2D from the web IS, each after an update, and as many 304s."));
    p.add({Option::integer(QStringLiteral("checks"), QStringLiteral("n"), QStringLiteral("Checks (default 1000)."),
                           &checks, 1, 100000),
           Option::integer(QStringLiteral("bins"), QStringLiteral("n"), QStringLiteral("Bins per histogram (default 1000)."),
                           &bins, 1, 1000000),
           Option::integer(QStringLiteral("rounds"), QStringLiteral("n"), QStringLiteral("Rounds measured (default 5)."),
                           &rounds, 1, 1000),
           Option::integer(QStringLiteral("pngs"), QStringLiteral("n"),
                           QStringLiteral("PNGs drawn and 304s (default 50; 0: none)."), &pngs, 0, 100000),
           Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line."))});
    if (!parse(p, args))
        return 1;
    QString error;
    Environment env;
    if (!env.startControlServer(&error))
        return fail(verb, error);
    QTemporaryDir dir;
    const quint16 http = ChildProcesses::freePort();
    env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")),
                       {QStringLiteral("--name"), Server, QStringLiteral("--control-server"), env.address,
                        QStringLiteral("--http-port"), QString::number(http), QStringLiteral("--quota-client-bytes"),
                        QString::number(qint64(1) << 34)});
    ClientOptions o = env.clientOptions(QStringLiteral("bench-dqm"));
    Client client(o);
    if (!client.start())
        return fail(verb, client.errorString());
    is::Dictionary dict(&client);
    if (!waitForIsServer(dict, Server))
        return fail(verb, QStringLiteral("the IS server did not answer within 30 s"));

    // The histograms, the checks and the references of the chi2 checks (the histogram itself).
    QRandomGenerator rng(7);
    QJsonArray list;
    const QString refs = dir.filePath(QStringLiteral("references"));
    QDir().mkpath(refs);
    for (int i = 0; i < checks; ++i) {
        const QString object = QStringLiteral("H%1").arg(i);
        const is::Object h = histogram1(dict.types(), int(bins), rng);
        if (const Status s = dict.updateSync(Server + QLatin1Char('.') + object, h); !s.isOk())
            return fail(verb, QStringLiteral("cannot write %1: %2").arg(object, s.toString()));
        const QString name = QStringLiteral("c%1").arg(i);
        QJsonObject c{{QStringLiteral("name"), name}, {QStringLiteral("histogram"), Server + QLatin1Char('.') + object}};
        switch (i % 4) {
        case 0:
            c.insert(QStringLiteral("algorithm"), QStringLiteral("dead_bins"));
            break;
        case 1:
            c.insert(QStringLiteral("algorithm"), QStringLiteral("noisy_bins"));
            break;
        case 2:
            c.insert(QStringLiteral("algorithm"), QStringLiteral("mean"));
            c.insert(QStringLiteral("min"), 0);
            c.insert(QStringLiteral("max"), double(bins));
            break;
        default: {
            c.insert(QStringLiteral("algorithm"), QStringLiteral("chi2"));
            c.insert(QStringLiteral("warning"), 5);
            c.insert(QStringLiteral("bad"), 20);
            Histogram ref;
            if (const Status s = Histogram::fromObject(h, &ref); !s.isOk())
                return fail(verb, s.message());
            QFile f(QDir(refs).filePath(name + QStringLiteral(".json")));
            if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(ref.toJson()).toJson(QJsonDocument::Compact)) < 0)
                return fail(verb, QStringLiteral("cannot write %1").arg(f.fileName()));
        }
        }
        list.append(c);
    }
    const QString checksFile = dir.filePath(QStringLiteral("checks.json"));
    {
        QFile f(checksFile);
        if (!f.open(QIODevice::WriteOnly) ||
            f.write(QJsonDocument(QJsonObject{{QStringLiteral("checks"), list}}).toJson(QJsonDocument::Compact)) < 0)
            return fail(verb, QStringLiteral("cannot write %1").arg(checksFile));
    }
    QProcess *dqm = env.children.start(
        ChildProcesses::binary(QStringLiteral("dialog-dqm")),
        {QStringLiteral("--checks"), checksFile, QStringLiteral("--references"), refs, QStringLiteral("--is-server"), Server,
         QStringLiteral("--period-ms"), QStringLiteral("1000"), QStringLiteral("--run-info"), QString(),
         QStringLiteral("--control-server"), env.address});

    // Its rounds, as dialog-dqm measures them: asked once a second until enough have passed.
    QList<double> roundMs;
    qint64 seenRound = 0;
    QElapsedTimer clock;
    clock.start();
    QJsonObject last;
    while (roundMs.size() < rounds && clock.elapsed() < 60000 + rounds * 3000) {
        if (dqm->state() == QProcess::NotRunning)
            return fail(verb, QStringLiteral("dialog-dqm exited: %1").arg(QString::fromLocal8Bit(dqm->readAllStandardError())));
        std::optional<Reply> reply;
        client.request(QStringLiteral("DQM.Server"), R"({"op":"results"})", 10000, &client,
                       [&](const Reply &r) { reply = r; });
        runUntil([&] { return reply.has_value(); }, 11000);
        if (reply && reply->isOk()) {
            last = QJsonDocument::fromJson(reply->data()).object();
            const qint64 done = last.value(QStringLiteral("rounds")).toInteger();
            // The first round also declares the type and meets every object for the first time.
            if (done >= 2 && done != seenRound) {
                seenRound = done;
                roundMs.append(double(last.value(QStringLiteral("last_round_us")).toInteger()) / 1000.0);
            }
        }
        runFor(500);
    }
    if (roundMs.size() < rounds)
        return fail(verb, QStringLiteral("dialog-dqm completed %1 measured rounds in time, not %2").arg(roundMs.size()).arg(rounds));
    QHash<QString, int> verdicts;
    for (const QJsonValue &v : last.value(QStringLiteral("checks")).toArray())
        ++verdicts[v.toObject().value(QStringLiteral("status")).toString()];
    const Spread round = spreadOf(roundMs);

    // The PNG route: each picture drawn anew (the object updated before), then the 304s.
    Spread drawn, notModified;
    int pngFailures = 0;
    if (pngs > 0) {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, http);
        if (!socket.waitForConnected(5000))
            return fail(verb, QStringLiteral("cannot connect to the web IS: %1").arg(socket.errorString()));
        socket.setSocketOption(QAbstractSocket::LowDelayOption, 1);
        const QByteArray path = "/is/" + Server.toUtf8() + '/' + Server.toUtf8() + ".Map.png?width=400&height=400";
        QList<double> drawMs, cachedMs;
        QByteArray etag;
        for (int i = 0; i <= pngs; ++i) {
            if (const Status s = dict.updateSync(Server + QStringLiteral(".Map"), histogram2(dict.types(), i)); !s.isOk())
                return fail(verb, s.toString());
            QElapsedTimer t;
            t.start();
            const int status = get(socket, path, {}, &etag);
            if (status != 200) {
                if (i == 0)
                    return fail(verb, QStringLiteral("GET %1: status %2 (is dialog-render beside dialog-isserver?)")
                                          .arg(QString::fromUtf8(path))
                                          .arg(status));
                ++pngFailures;
            }
            if (i > 0) // the first one starts the renderer
                drawMs.append(elapsedMs(t));
        }
        for (int i = 0; i < pngs; ++i) {
            QElapsedTimer t;
            t.start();
            pngFailures += get(socket, path, "If-None-Match: " + etag + "\r\n", nullptr) != 304;
            cachedMs.append(elapsedMs(t));
        }
        drawn = spreadOf(drawMs);
        notModified = spreadOf(cachedMs);
    }

    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject out{{QStringLiteral("test"), QStringLiteral("dqm")},
                              {QStringLiteral("checks"), checks},
                              {QStringLiteral("bins"), bins},
                              {QStringLiteral("rounds"), roundMs.size()},
                              {QStringLiteral("roundMsP50"), round.p50},
                              {QStringLiteral("roundMsMax"), round.max},
                              {QStringLiteral("good"), verdicts.value(QStringLiteral("Good"))},
                              {QStringLiteral("pngs"), pngs},
                              {QStringLiteral("pngMsP50"), drawn.p50},
                              {QStringLiteral("pngMsP99"), drawn.p99},
                              {QStringLiteral("notModifiedMsP50"), notModified.p50},
                              {QStringLiteral("notModifiedMsP99"), notModified.p99},
                              {QStringLiteral("pngFailures"), pngFailures}};
        std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
        return 0;
    }
    std::printf("dialog-dqm: %lld checks on %lld-bin histograms: a round of every check p50 %.1f ms, max %.1f ms "
                "(%lld rounds; %d Good, %d Warning, %d Bad, %d Undefined)\n",
                checks, bins, round.p50, round.max, qint64(roundMs.size()), verdicts.value(QStringLiteral("Good")),
                verdicts.value(QStringLiteral("Warning")), verdicts.value(QStringLiteral("Bad")),
                verdicts.value(QStringLiteral("Undefined")));
    if (pngs > 0)
        std::printf("web IS PNG of a 100 x 100 Histogram2D (400 x 400 pixels), drawn after each update: p50 %.2f ms, "
                    "p99 %.2f ms; 304 Not Modified: p50 %.3f ms, p99 %.3f ms (%lld each, %d failed)\n",
                    drawn.p50, drawn.p99, notModified.p50, notModified.p99, pngs, pngFailures);
    return 0;
}

} // namespace dialog::tool
