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
        "  reference set CHECK --from-current the histogram CHECK looks at now becomes its reference"));
    p.addPositional(QStringLiteral("what"), QStringLiteral("ls, or reference set CHECK."));
    p.add({Option::flag(QStringLiteral("from-current"),
                        QStringLiteral("reference set: take the current value of the check's histogram.")),
           Option::flag(QStringLiteral("json"), QStringLiteral("ls: one JSON object per check."))});
    if (!parse(p, args))
        return 1;
    const QStringList what = p.positionalArguments();
    int rc = 0;
    if (what == QStringList{QStringLiteral("ls")}) {
        const auto answer = ask(verb, p, {{QStringLiteral("op"), QStringLiteral("results")}}, &rc);
        if (!answer)
            return rc;
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
        if (!p.isSet(QStringLiteral("from-current")))
            return fail(verb, QStringLiteral("reference set needs --from-current (a run's histogram is not kept yet)"));
        const auto answer = ask(verb, p,
                                {{QStringLiteral("op"), QStringLiteral("set-reference")}, {QStringLiteral("check"), what.at(2)}},
                                &rc);
        if (!answer)
            return rc == 1 ? 2 : rc;
        std::printf("reference of %s: %lld entries, %s\n", qPrintable(what.at(2)),
                    answer->value(QStringLiteral("entries")).toInteger(),
                    qPrintable(answer->value(QStringLiteral("file")).toString()));
        return 0;
    }
    return fail(verb, QStringLiteral("expected ls, or reference set CHECK --from-current (see --help)"));
}

} // namespace dialog::tool
