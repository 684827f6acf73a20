// dialogctl dqm: the results of dialog-dqm's checks, and their reference histograms.
#include "clientsetup.h"

#include "dialog/request.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>
#include <optional>

namespace dialog::tool {

namespace {

const QString Service = QStringLiteral("DQM.Server");

/// Asks dialog-dqm @p request and waits: the answer, or the exit code of a failure (printed).
std::optional<QJsonObject> ask(const QString &verb, const OptionTable &p, const QJsonObject &request, int *rc)
{
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client) {
        *rc = fail(verb, error);
        return std::nullopt;
    }
    std::optional<Reply> reply;
    client->request(Service, QJsonDocument(request).toJson(QJsonDocument::Compact), 10000, client.get(),
                    [&](const Reply &r) {
                        reply = r;
                        QCoreApplication::quit();
                    });
    QCoreApplication::exec();
    if (!reply->isOk()) {
        *rc = fail(verb, reply->status().code() == Status::Code::Timeout
                             ? QStringLiteral("no answer from dialog-dqm (%1)").arg(Service)
                             : reply->status().message());
        if (reply->status().code() != Status::Code::Failed)
            *rc = 3;
        return std::nullopt;
    }
    return QJsonDocument::fromJson(reply->data()).object();
}

} // namespace

int dqmVerb(const QStringList &args)
{
    const QString verb = QStringLiteral("dqm");
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "dialog-dqm's checks.\n"
        "  ls                                 every check: its histogram, algorithm, status and details\n"
        "  reference set CHECK --from-current the histogram CHECK looks at now becomes its reference\n"
        "  reference set CHECK --from-run N   the histogram CHECK looked at when run N ended"));
    p.addPositional(QStringLiteral("what"), QStringLiteral("ls, or reference set CHECK."));
    qint64 fromRun = 0;
    p.add({Option::flag(QStringLiteral("from-current"),
                        QStringLiteral("reference set: take the current value of the check's histogram.")),
           Option::integer(QStringLiteral("from-run"), QStringLiteral("N"),
                           QStringLiteral("reference set: take the check's histogram as it was at the end of run N "
                                          "(kept by dialog-dqm, --keep-runs)."),
                           &fromRun, 1, 4294967295LL),
           Option::flag(QStringLiteral("json"), QStringLiteral("ls: one JSON object per check."))});
    if (!parse(p, args))
        return 1;
    const QStringList what = p.positionalArguments();
    int rc = 0;
    if (what == QStringList{QStringLiteral("ls")}) {
        const auto answer = ask(verb, p, {{QStringLiteral("op"), QStringLiteral("results")}}, &rc);
        if (!answer)
            return rc;
        if (!p.isSet(QStringLiteral("json"))) {
            const qint64 roundUs = answer->value(QStringLiteral("last_round_us")).toInteger(-1);
            std::printf("%lld checks; %s\n", qint64(answer->value(QStringLiteral("checks")).toArray().size()),
                        roundUs < 0 ? "no round of every check completed yet"
                                    : qPrintable(QStringLiteral("last round of every check %1 ms (%2 rounds)")
                                                     .arg(double(roundUs) / 1000.0, 0, 'f', 1)
                                                     .arg(answer->value(QStringLiteral("rounds")).toInteger())));
        }
        for (const QJsonValue &v : answer->value(QStringLiteral("checks")).toArray()) {
            const QJsonObject c = v.toObject();
            const QByteArray line =
                p.isSet(QStringLiteral("json"))
                    ? QJsonDocument(c).toJson(QJsonDocument::Compact)
                    : QStringLiteral("%1  %2  %3 (%4): %5")
                          .arg(c.value(QStringLiteral("status")).toString(), -9)
                          .arg(c.value(QStringLiteral("check")).toString(), c.value(QStringLiteral("histogram")).toString(),
                               c.value(QStringLiteral("algorithm")).toString(), c.value(QStringLiteral("details")).toString())
                          .toUtf8();
            std::printf("%s\n", line.constData());
        }
        return 0;
    }
    if (what.size() == 3 && what.at(0) == QLatin1String("reference") && what.at(1) == QLatin1String("set")) {
        const bool current = p.isSet(QStringLiteral("from-current")), run = p.isSet(QStringLiteral("from-run"));
        if (current == run)
            return fail(verb, QStringLiteral("reference set needs one of --from-current and --from-run N"));
        QJsonObject request{{QStringLiteral("op"), QStringLiteral("set-reference")}, {QStringLiteral("check"), what.at(2)}};
        if (run)
            request.insert(QStringLiteral("run"), fromRun);
        const auto answer = ask(verb, p, request, &rc);
        if (!answer)
            return rc == 1 ? 2 : rc;
        std::printf("reference of %s: %lld entries%s, %s\n", qPrintable(what.at(2)),
                    answer->value(QStringLiteral("entries")).toInteger(),
                    run ? qPrintable(QStringLiteral(" from run %1").arg(fromRun)) : "",
                    qPrintable(answer->value(QStringLiteral("file")).toString()));
        return 0;
    }
    return fail(verb, QStringLiteral("expected ls, or reference set CHECK --from-current|--from-run N (see --help)"));
}

} // namespace dialog::tool
