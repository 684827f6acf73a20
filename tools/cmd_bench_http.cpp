// `dialogctl bench is-http`: HTTP GET throughput of one object of the web IS (dialog-isserver
// --http-port). Starts a Control Server and an IS server with the web IS, puts one object, then
// keeps N keep-alive connections busy (one request in flight each) for a fixed time.
#include "benchsupport.h"

#include "dialog/is/dictionary.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

namespace dialog::tool {

namespace {

struct Connection
{
    std::unique_ptr<QTcpSocket> socket;
    QByteArray buffer;
    qint64 sentNs = 0;
};

/// Removes one complete answer from the front of @p buffer; its status in @p status. False if incomplete.
bool takeAnswer(QByteArray &buffer, int *status)
{
    const qsizetype end = buffer.indexOf("\r\n\r\n");
    if (end < 0)
        return false;
    const qsizetype cl = buffer.indexOf("Content-Length: ");
    if (cl < 0 || cl > end)
        return false;
    const qsizetype eol = buffer.indexOf("\r\n", cl);
    const qsizetype length = buffer.mid(cl + 16, eol - cl - 16).toLongLong();
    if (buffer.size() < end + 4 + length)
        return false;
    *status = buffer.mid(9, 3).toInt();
    buffer.remove(0, end + 4 + length);
    return true;
}

} // namespace

int benchIsHttp(const QStringList &args)
{
    const QString verb = QStringLiteral("bench is-http");
    qint64 connections = 8, seconds = 5;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "HTTP GET throughput of one IS object from the web IS: --connections keep-alive connections, one "
        "request in flight on each, for --seconds (after a one-second warm-up)."));
    p.add(Option::integer(QStringLiteral("connections"), QStringLiteral("n"),
                          QStringLiteral("Keep-alive connections (default 8)."), &connections, 1, 1000));
    p.add(Option::duration(QStringLiteral("seconds"), QStringLiteral("s"),
                           QStringLiteral("Measured duration (default 5)."), &seconds, OptionUnit::Seconds, 1,
                           3600));
    p.add(Option::text(QStringLiteral("format"), QStringLiteral("format"),
                       QStringLiteral("xml or json (default xml).")));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print one JSON line.")));
    if (!parse(p, args))
        return 1;
    const QString format = p.value(QStringLiteral("format")).isEmpty() ? QStringLiteral("xml")
                                                                       : p.value(QStringLiteral("format"));
    if (format != QLatin1String("xml") && format != QLatin1String("json"))
        return fail(verb, QStringLiteral("--format must be xml or json"));

    QString error;
    Environment env;
    if (!env.startControlServer(&error))
        return fail(verb, error);
    const quint16 http = ChildProcesses::freePort();
    env.children.start(ChildProcesses::binary(QStringLiteral("dialog-isserver")),
                       {QStringLiteral("--name"), QStringLiteral("RunParams"),
                        QStringLiteral("--control-server"), env.address, QStringLiteral("--http-port"),
                        QString::number(http), QStringLiteral("--http-max-requests"),
                        QString::number(connections + 8)});
    if (!ChildProcesses::waitForPort(http, 10000))
        return fail(verb, QStringLiteral("the IS server did not open its web port %1").arg(http));
    ClientOptions o = ClientOptions::fromEnvironment(QStringLiteral("bench-is-http"));
    o.exitOnRefusal = true;
    o.controlServers = {env.address};
    Client client(o);
    if (!client.start())
        return fail(verb, client.errorString());
    is::Dictionary dict(&client);
    // The IS paper's example object: RunParams.RunInfo with its activeTime.
    is::TypeInfo t(QStringLiteral("RunInfo"), QStringLiteral("Parameters of the current run"));
    t.setAttributes(
        {is::AttributeInfo(QStringLiteral("runNumber"), is::BasicType::U32, QStringLiteral("Run number")),
         is::AttributeInfo(QStringLiteral("runType"), is::BasicType::String, QStringLiteral("Run type")),
         is::AttributeInfo(QStringLiteral("startTime"), is::BasicType::Time, QStringLiteral("Start of run")),
         is::AttributeInfo(QStringLiteral("activeTime"), is::BasicType::U32,
                           QStringLiteral("Integral time the run is active"))});
    is::Status s = dict.declareTypesSync(QStringLiteral("RunParams"), {t});
    is::Object run = is::Object::create(dict.types(), QStringLiteral("RunInfo"));
    run.set<quint32>(QStringLiteral("runNumber"), 372541);
    run.set(QStringLiteral("runType"), QStringLiteral("Physics"));
    run.set(QStringLiteral("startTime"), is::Time::currentTime());
    run.set<quint32>(QStringLiteral("activeTime"), 22317);
    if (s.isOk())
        s = dict.insertSync(QStringLiteral("RunParams.RunInfo"), run);
    if (!s.isOk())
        return fail(verb, s.toString());

    const QByteArray request = "GET /is/RunParams/RunParams.RunInfo" +
                               QByteArray(format == QLatin1String("json") ? "?format=json" : "") +
                               " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    std::vector<Connection> conns(static_cast<size_t>(connections));
    QElapsedTimer clock;
    clock.start();
    bool measuring = false;
    qint64 answered = 0, failures = 0;
    std::vector<qint64> latenciesNs;
    latenciesNs.reserve(1 << 20);
    for (Connection &c : conns) {
        c.socket = std::make_unique<QTcpSocket>();
        c.socket->connectToHost(QHostAddress::LocalHost, http);
        if (!c.socket->waitForConnected(5000))
            return fail(verb,
                        QStringLiteral("cannot connect to the web IS: %1").arg(c.socket->errorString()));
        c.socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        QTcpSocket *sock = c.socket.get();
        Connection *cp = &c;
        QObject::connect(sock, &QTcpSocket::readyRead, sock, [&, cp, sock] {
            const QByteArray data = sock->readAll();
            cp->buffer += data;
            int status = 0;
            while (takeAnswer(cp->buffer, &status)) {
                if (measuring) {
                    ++answered;
                    failures += status != 200;
                    latenciesNs.push_back(clock.nsecsElapsed() - cp->sentNs);
                }
                cp->sentNs = clock.nsecsElapsed();
                sock->write(request);
            }
        });
        c.sentNs = clock.nsecsElapsed();
        sock->write(request);
    }
    runFor(1000); // warm-up
    measuring = true;
    const qint64 start = clock.nsecsElapsed();
    runFor(int(seconds * 1000));
    measuring = false;
    const double elapsedS = (clock.nsecsElapsed() - start) / 1e9;
    for (Connection &c : conns)
        c.socket->abort();
    env.children.stopAll();
    if (answered == 0)
        return fail(verb, QStringLiteral("no answer in %1 s").arg(elapsedS));
    std::sort(latenciesNs.begin(), latenciesNs.end());
    auto pct = [&](double q) { return latenciesNs[size_t(q * double(latenciesNs.size() - 1))] / 1000.0; };
    const double rate = answered / elapsedS;
    if (p.isSet(QStringLiteral("json"))) {
        const QJsonObject j{{QStringLiteral("test"), QStringLiteral("is-http")},
                            {QStringLiteral("connections"), connections},
                            {QStringLiteral("format"), format},
                            {QStringLiteral("requests"), answered},
                            {QStringLiteral("failures"), failures},
                            {QStringLiteral("requests_per_s"), qRound64(rate)},
                            {QStringLiteral("p50_us"), qRound64(pct(0.5))},
                            {QStringLiteral("p99_us"), qRound64(pct(0.99))}};
        std::printf("%s\n", QJsonDocument(j).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("is-http: GET /is/RunParams/RunParams.RunInfo (%s), %lld keep-alive connections, %.1f s: "
                    "%.0f requests/s, latency p50 %.0f us, p99 %.0f us, %lld not 200\n",
                    qPrintable(format), connections, elapsedS, rate, pct(0.5), pct(0.99), failures);
    }
    std::fflush(stdout);
    return failures ? 1 : 0;
}

} // namespace dialog::tool
