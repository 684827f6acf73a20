// What the config and runs verbs share: the --configdb option, a ConfigClient, waiting for its answer.
#pragma once

#include "clientsetup.h"

#include "dialog/config.h"

#include <QEventLoop>
#include <cstdio>

namespace dialog::tool {

/// Adds --configdb and --timeout-ms, written to @p database and @p timeoutMs.
inline void addConfigOptions(OptionTable &p, QString *database, qint64 *timeoutMs)
{
    *database = config::ConfigClient::defaultDatabase();
    p.add({Option::text(QStringLiteral("configdb"), QStringLiteral("name"),
                        QStringLiteral(
                            "The configuration database: the dialog-configdb serving CONFIG.<name> (default "
                            "$DIALOG_CONFIGDB, else configdb)."),
                        database),
           Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                            QStringLiteral("Wait this long for dialog-configdb (default 10000)."), timeoutMs,
                            OptionUnit::Milliseconds, 1, 3600000)});
}

/// A DIALOG client and a ConfigClient on it.
struct ConfigSession
{
    std::unique_ptr<Client> client;
    std::unique_ptr<config::ConfigClient> config;

    /// Starts the client; false with @p error.
    bool open(const OptionTable &p, const QString &verb, const QString &database, qint64 timeoutMs,
              QString *error)
    {
        client = makeClient(p, verb, error);
        if (!client)
            return false;
        config = std::make_unique<config::ConfigClient>(client.get(), database);
        config->setTimeoutMs(int(timeoutMs));
        return true;
    }

    /// Runs @p call (which is given the function to call with its Status when done) and waits for it.
    template <typename Call> Status await(Call call)
    {
        Status result(Status::Code::Cancelled);
        QEventLoop loop;
        call([&](const Status &st) {
            result = st;
            loop.quit();
        });
        loop.exec();
        return result;
    }

    /// The version @p ref names, waited for.
    Status resolve(const QString &ref, quint64 *version)
    {
        return await([&](auto done) {
            config->resolve(ref, [&, done](const Status &s, quint64 v) {
                *version = v;
                done(s);
            });
        });
    }
    /// Document @p path as of @p ref (and the version @p ref is), waited for.
    Status get(const QString &path, const QString &ref, config::Document *doc, quint64 *version)
    {
        return await([&](auto done) {
            config->get(path, ref, [&, done](const Status &s, const config::Document &d, quint64 v) {
                *doc = d;
                *version = v;
                done(s);
            });
        });
    }
    /// The documents under @p prefix as of @p ref (and the version @p ref is), waited for.
    Status list(const QString &prefix, const QString &ref, bool withContent, QList<config::Document> *docs,
                quint64 *version)
    {
        return await([&](auto done) {
            config->list(prefix, ref, withContent,
                         [&, done](const Status &s, const QList<config::Document> &d, quint64 v) {
                             *docs = d;
                             *version = v;
                             done(s);
                         });
        });
    }
};

/// Writes @p text to stdout as it is.
inline void print(const QByteArray &text)
{
    std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
}

} // namespace dialog::tool
