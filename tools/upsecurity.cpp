// dialogctl up: the partition's secret, made when it names none, and the identities of its processes.
#include "upsecurity.h"

#include "launcher.h"
#include "secretfile.h"

#include "dialog/rc/protocol.h"
#include "dialog/security.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QRegularExpression>
#include <cstdio>

namespace dialog::tool {

/// Secure by default: a partition that starts its own Control Server and names neither a
/// "secret_file" nor "secret": "none" gets the secret of $DIALOG_SECRET_FILE (the one this shell's
/// dialogctl and GUIs use), else <run-dir>/secret. One that uses a Control Server started elsewhere
/// runs with whatever secret its processes inherit ($DIALOG_SECRET_FILE), as before.
bool secureByDefault(rc::Partition &p, const QString &runDir)
{
    bool chosen = false;
    if (p.secretFile.isEmpty() && !p.noSecret && p.startControlServer) {
        const QString shell = qEnvironmentVariable("DIALOG_SECRET_FILE");
        p.secretFile = shell.isEmpty() ? QDir(runDir).filePath(QStringLiteral("secret"))
                                       : QFileInfo(shell).absoluteFilePath();
        chosen = true;
    }
    // With a secret and a Control Server of its own, names are proven too (ensureIdentities()).
    if (!p.secretFile.isEmpty() && p.startControlServer)
        p.identityFile = QDir(runDir).filePath(QStringLiteral("identity"));
    return chosen;
}

/// The partition's identity secret (<run-dir>/identity, made 0600 on the first `up`, on this host
/// and beside any standby Control Server) and one key per process, derived from it, in
/// <run-dir>/keys/NAME.key on the process's host (over the ssh command for another host): each
/// process holds its own key only, the Control Server checks every name with the secret. Empty, or
/// why not.
QString ensureIdentities(rc::Partition &p, const Launcher &launcher)
{
    if (p.identityFile.isEmpty())
        return {};
    QString why;
    QByteArray identity;
    if (!QFileInfo::exists(p.identityFile) && (!QDir().mkpath(QFileInfo(p.identityFile).absolutePath()) ||
                                               !writeSecretFile(p.identityFile, security::generateSecret(), false, &why)))
        return QStringLiteral("cannot make the partition's identity secret: %1").arg(why);
    if (const Status st = security::readSecretFile(p.identityFile, &identity); !st.isOk())
        return st.message();
    for (const rc::ProcessSpec &s : p.processes()) {
        Launched l;
        l.spec = s;
        const QString file = launcher.processKeyFile(s);
        const bool remote = !s.isLocal();
        if (s.role == rc::ProcessSpec::Role::ControlServer && remote &&
            !launcher.copySecret(s.host, p.identityFile, identity, &why))
            return QStringLiteral("cannot give %1 the partition's identity secret: %2").arg(s.host, why);
        if (s.role == rc::ProcessSpec::Role::ConfigDb && remote &&
            !launcher.copySecret(s.host, p.identityFile, identity, &why)) {
            // Not fatal: it runs without checking names (commits by user@host, as before identities).
            std::fprintf(stderr,
                         "dialogctl up: warning: cannot give %s on %s the partition's identity secret (%s): "
                         "its commits are not authored by proven names\n",
                         qPrintable(l.dialogName()), qPrintable(s.host), qPrintable(why));
            p.unprovenNames << l.dialogName();
            continue;
        }
        if (file.isEmpty())
            continue;
        const QByteArray key =
            security::processKeyFileContent(l.dialogName(), security::processKey(identity, l.dialogName()));
        if (remote && !launcher.copySecret(s.host, file, key, &why)) {
            // Not fatal: it runs, with the name it claims (as before identities).
            std::fprintf(stderr, "dialogctl up: warning: cannot give %s its process key on %s (%s): its name is "
                                 "not proven\n",
                         qPrintable(l.dialogName()), qPrintable(s.host), qPrintable(why));
            p.unprovenNames << l.dialogName();
            continue;
        }
        if (!remote && (!QDir().mkpath(QFileInfo(file).absolutePath()) ||
                        !writeSecretFile(file, key.trimmed(), true, &why)))
            return QStringLiteral("cannot give %1 its process key: %2").arg(l.dialogName(), why);
    }
    return {};
}

/// @p s as one word of a shell command line: as it is when it needs no quotes, else quoted.
bool addControllerRules(rc::Partition &p, const QString &runDir, QString *error)
{
    if (p.accessFile.isEmpty() || p.tree.isEmpty())
        return true;
    // The Control Server, the IS servers and every controller read the list where they run.
    rc::ProcessSpec controlServer;
    controlServer.host = p.controlServerHost.isEmpty() ? QStringLiteral("localhost") : p.controlServerHost;
    QList<const rc::ProcessSpec *> readers{&controlServer, &p.master};
    for (const rc::ProcessSpec &s : p.isServers)
        readers << &s;
    for (const rc::Segment &s : p.tree)
        readers << &s.controller;
    for (const rc::ProcessSpec *r : std::as_const(readers))
        if (!r->host.isEmpty() && !r->isLocal()) {
            std::fprintf(stderr,
                         "dialogctl: warning: %s is read on %s too: the rules that let the controllers reset "
                         "a lost segment's children are not added (write them, docs/rctree.md)\n",
                         qPrintable(p.accessFile), qPrintable(r->host));
            return true;
        }
    QFile in(p.accessFile);
    if (!in.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: %2").arg(p.accessFile, in.errorString());
        return false;
    }
    QJsonObject list = QJsonDocument::fromJson(in.readAll()).object(); // checked by Partition::load
    QJsonArray rules;
    for (const rc::Segment &s : p.tree)
        for (const QString &child : p.childrenOf(s.name))
            rules.append(QJsonObject{
                {QStringLiteral("allow"), QStringLiteral("command")},
                {QStringLiteral("name"), rc::commandName(child)},
                {QStringLiteral("process"), p.parentOf(s.name)},
                {QStringLiteral("comment"),
                 QStringLiteral("dialogctl up: %1 resets %2 when %3, its controller, is lost")
                     .arg(p.parentOf(s.name), child, s.name)}});
    for (const QJsonValue &r : list.value(QStringLiteral("rules")).toArray())
        rules.append(r);
    list.insert(QStringLiteral("rules"), rules);
    const QString path = QDir(runDir).filePath(QStringLiteral("access.json"));
    QDir().mkpath(runDir);
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(QJsonDocument(list).toJson()) < 0 || !out.commit()) {
        *error = QStringLiteral("%1: %2").arg(path, out.errorString());
        return false;
    }
    p.accessFile = path;
    return true;
}

QString shellWord(const QString &s)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./+:@%,=-]+$"));
    return plain.match(s).hasMatch() ? s : shellQuote(s);
}

/// The partition's secret file, made if it does not exist yet (32 random bytes, 0600: `dialogctl
/// secret generate`). A secret file the partition names must be on every host already (not ours to
/// copy): with a process elsewhere a missing one is refused. The secret dialogctl up chose
/// (secureByDefault()) is copied to every other host over the ssh command. Empty, or why not.
QString ensureSecret(const rc::Partition &p, bool chosen, const Launcher &launcher)
{
    if (p.secretFile.isEmpty())
        return {};
    QStringList remoteHosts;
    QString remoteName; // the first process on another host
    for (const rc::ProcessSpec &s : p.processes())
        if (!s.isLocal() && !remoteHosts.contains(s.host)) {
            remoteHosts << s.host;
            remoteName = remoteName.isEmpty() ? s.name : remoteName;
        }
    if (!QFileInfo::exists(p.secretFile)) {
        if (!chosen && !remoteHosts.isEmpty())
            return QStringLiteral("the partition's secret file %1 does not exist, and %2 runs on %3: make it "
                                  "with 'dialogctl secret generate %1' and copy it to every host of the "
                                  "partition")
                .arg(p.secretFile, remoteName, remoteHosts.first());
        QString why;
        if (!QDir().mkpath(QFileInfo(p.secretFile).absolutePath()) ||
            !writeSecretFile(p.secretFile, security::generateSecret(), false, &why))
            return QStringLiteral("cannot make the partition's secret file: %1").arg(why);
        std::fprintf(stderr,
                     chosen
                         ? "dialogctl up: the partition names no secret_file: made its secret %s (0600); every "
                           "process of the partition reads it, and so must dialogctl and the GUIs "
                           "(DIALOG_SECRET_FILE, printed below; \"secret\": \"none\" in the partition runs "
                           "without, insecure)\n"
                         : "dialogctl up: made the partition's secret %s (0600); every process of the partition "
                           "reads it, and so must dialogctl and the GUIs (DIALOG_SECRET_FILE)\n",
                     qPrintable(p.secretFile));
    }
    if (!chosen)
        return {};
    QByteArray secret;
    if (const Status st = security::readSecretFile(p.secretFile, &secret); !st.isOk())
        return st.message();
    for (const QString &host : std::as_const(remoteHosts))
        if (QString why; !launcher.copySecret(host, p.secretFile, secret, &why))
            return QStringLiteral("cannot give %1 the partition's secret: %2; name a \"secret_file\" that every "
                                  "host holds, or \"secret\": \"none\" to run without one (insecure)")
                .arg(host, why);
    return {};
}

} // namespace dialog::tool
