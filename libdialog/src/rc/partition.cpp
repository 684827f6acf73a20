#include "dialog/rc/partition.h"

#include "dialog/access.h"
#include "partition_p.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QHostAddress>
#include <QHostInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkInterface>
#include <QSet>

#include <algorithm>

namespace dialog::rc {

namespace {

class Reader
{
public:
    explicit Reader(const QString &file) : m_file(QFileInfo(file).fileName()) {}

    bool failed() const { return !m_error.isEmpty(); }
    QString error() const { return m_error; }

    void fail(const QString &field, const QString &why)
    {
        if (m_error.isEmpty())
            m_error = QStringLiteral("%1: %2: %3").arg(m_file, field, why);
    }

    /// Fails on keys not in @p allowed (a typo must not be silently ignored).
    void checkKeys(const QJsonObject &o, const QString &field, const QStringList &allowed)
    {
        for (auto it = o.begin(); it != o.end(); ++it)
            if (!allowed.contains(it.key()))
                fail(field.isEmpty() ? it.key() : field + QLatin1Char('.') + it.key(),
                     QStringLiteral("unknown field (known: %1)").arg(allowed.join(QStringLiteral(", "))));
    }

    QString string(const QJsonObject &o, const QString &field, const QString &key, bool required,
                   const QString &def = {})
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined()) {
            if (required)
                fail(path(field, key), QStringLiteral("missing (a string is required)"));
            return def;
        }
        if (!v.isString() || v.toString().trimmed().isEmpty()) {
            fail(path(field, key), QStringLiteral("expected a non-empty string"));
            return def;
        }
        return v.toString().trimmed();
    }

    qint64 integer(const QJsonObject &o, const QString &field, const QString &key, qint64 min, qint64 max,
                   qint64 def)
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            return def;
        const double d = v.toDouble(-1e300);
        // Range first: converting a double outside qint64 (1e74) to an integer is undefined.
        if (!v.isDouble() || d < double(min) || d > double(max) || d >= 0x1p63 || d != double(qint64(d))) {
            fail(path(field, key), QStringLiteral("expected an integer in %1..%2").arg(min).arg(max));
            return def;
        }
        return qint64(d);
    }

    bool boolean(const QJsonObject &o, const QString &field, const QString &key, bool def)
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            return def;
        if (!v.isBool())
            fail(path(field, key), QStringLiteral("expected true or false"));
        return v.toBool(def);
    }

    QStringList strings(const QJsonObject &o, const QString &field, const QString &key)
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            return {};
        QStringList out;
        if (!v.isArray()) {
            fail(path(field, key), QStringLiteral("expected an array of strings"));
            return out;
        }
        const QJsonArray a = v.toArray();
        for (int i = 0; i < a.size(); ++i) {
            if (!a.at(i).isString())
                fail(QStringLiteral("%1[%2]").arg(path(field, key)).arg(i),
                     QStringLiteral("expected a string"));
            out << a.at(i).toString();
        }
        return out;
    }

    QJsonObject object(const QJsonObject &o, const QString &field, const QString &key, bool required)
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined()) {
            if (required)
                fail(path(field, key), QStringLiteral("missing (an object is required)"));
            return {};
        }
        if (!v.isObject())
            fail(path(field, key), QStringLiteral("expected an object"));
        return v.toObject();
    }

    static QString path(const QString &field, const QString &key)
    {
        return field.isEmpty() ? key : field + QLatin1Char('.') + key;
    }

private:
    QString m_file;
    QString m_error;
};

bool validName(const QString &name)
{
    if (name.isEmpty() || name.size() > 200)
        return false;
    for (QChar c : name)
        if (!(c.isLetterOrNumber() || c == QLatin1Char('_') || c == QLatin1Char('-')))
            return false;
    return true;
}

QString resolve(const QString &base, const QString &p)
{
    if (p.isEmpty())
        return p;
    return QDir::cleanPath(QDir(base).absoluteFilePath(p));
}

/// The IS types of the installation: share/dialog/is-types beside the running program's bin/ (an
/// installed tree may be moved as a whole), else where the build was configured to install them.
QString installedIsTypesDir()
{
    if (QCoreApplication::instance()) {
        const QString beside = QDir::cleanPath(QCoreApplication::applicationDirPath() +
                                               QLatin1String("/../share/dialog/is-types"));
        if (QFileInfo(beside).isDir())
            return beside;
    }
    return QStringLiteral(DIALOG_INSTALLED_DATADIR "/is-types");
}

ProcessSpec readProcess(Reader &r, const QJsonObject &o, const QString &field, ProcessSpec::Role role,
                        const QStringList &keys)
{
    r.checkKeys(o, field,
                keys + QStringList{QStringLiteral("restart"), QStringLiteral("restart_limit"),
                                   QStringLiteral("restart_delay_ms"), QStringLiteral("hosts"),
                                   QStringLiteral("migrate"), QStringLiteral("loss_interval_ms")});
    ProcessSpec s;
    s.role = role;
    s.name = r.string(o, field, QStringLiteral("name"), true);
    if (!r.failed() && !validName(s.name))
        r.fail(field + QStringLiteral(".name"),
               QStringLiteral("'%1' is not a valid process name (letters, digits, '_' and '-')").arg(s.name));
    s.host = r.string(o, field, QStringLiteral("host"), false, QStringLiteral("localhost"));
    s.hosts = r.strings(o, field, QStringLiteral("hosts"));
    if (o.contains(QStringLiteral("hosts"))) {
        if (o.contains(QStringLiteral("host")))
            r.fail(field, QStringLiteral("\"host\" and \"hosts\" exclude each other: give one"));
        else if (s.hosts.isEmpty() || s.hosts.contains(QString()) || s.hosts.removeDuplicates() > 0)
            r.fail(field + QStringLiteral(".hosts"), QStringLiteral("expected different non-empty host names"));
        else
            s.host = s.hosts.first();
    }
    s.migrate = r.boolean(o, field, QStringLiteral("migrate"), false);
    if (s.migrate && s.hosts.size() < 2 && !r.failed())
        r.fail(field + QStringLiteral(".migrate"), QStringLiteral("needs \"hosts\" with a fallback host"));
    s.lossIntervalMs = int(r.integer(o, field, QStringLiteral("loss_interval_ms"), 200, 600000, s.lossIntervalMs));
    s.args = r.strings(o, field, QStringLiteral("args"));
    const QString restart = r.string(o, field, QStringLiteral("restart"), false, QStringLiteral("no"));
    if (restart == QLatin1String("on-failure"))
        s.restart = ProcessSpec::Restart::OnFailure;
    else if (restart != QLatin1String("no"))
        r.fail(field + QStringLiteral(".restart"),
               QStringLiteral("'%1': expected \"no\" or \"on-failure\"").arg(restart));
    s.restartLimit = int(r.integer(o, field, QStringLiteral("restart_limit"), 1, 1000, s.restartLimit));
    s.restartDelayMs =
        int(r.integer(o, field, QStringLiteral("restart_delay_ms"), 0, 30000, s.restartDelayMs));
    return s;
}

/// "removable" and "recover" of a tree node.
void readTreePolicy(Reader &r, const QJsonObject &o, const QString &field, ProcessSpec *s)
{
    s->removable = r.boolean(o, field, QStringLiteral("removable"), false);
    const QString recover = r.string(o, field, QStringLiteral("recover"), false, QStringLiteral("manual"));
    if (recover != QLatin1String("manual") && recover != QLatin1String("auto"))
        r.fail(field + QStringLiteral(".recover"),
               QStringLiteral("'%1': expected \"manual\" or \"auto\"").arg(recover));
    s->autoRecover = recover == QLatin1String("auto");
}

// Partition::parse() without its Status: false with the one-line reason.
bool parseInto(const QByteArray &json, const QString &path, Partition *out, QString *error);

} // namespace

QString ProcessSpec::program() const
{
    switch (role) {
    case Role::ControlServer:
        return QStringLiteral("dialog-controlserver");
    case Role::IsServer:
        return QStringLiteral("dialog-isserver");
    case Role::Master:
        return QStringLiteral("dialog-master");
    case Role::Slave:
        return executable.isEmpty() ? QStringLiteral("dialog-slave") : executable;
    case Role::Logger:
        return QStringLiteral("dialog-logger");
    case Role::ConfigDb:
        return QStringLiteral("dialog-configdb");
    case Role::Service:
        return executable;
    }
    return {};
}

bool ProcessSpec::isLocal() const
{
    if (host == QLatin1String("localhost") ||
        host.compare(QHostInfo::localHostName(), Qt::CaseInsensitive) == 0)
        return true;
    // An address of this host (any interface, loopback included) is this host, not one to ssh to.
    const QHostAddress address(host);
    if (address.isNull())
        return false;
    if (address.isLoopback())
        return true;
    const QList<QHostAddress> own = QNetworkInterface::allAddresses();
    return std::any_of(own.cbegin(), own.cend(), [&](const QHostAddress &a) {
        return a.isEqual(address, QHostAddress::TolerantConversion);
    });
}

QStringList ProcessSpec::arguments(const Partition &p) const
{
    QStringList a;
    switch (role) {
    case Role::ControlServer:
        a << QStringLiteral("--port") << QString::number(port ? port : p.controlServerPort);
        if (!standbyOf.isEmpty())
            a << QStringLiteral("--standby-of") << standbyOf;
        if (p.heartbeatMs > 0)
            a << QStringLiteral("--heartbeat-ms") << QString::number(p.heartbeatMs);
        a << p.accessArguments(QStringLiteral("controlserver"));
        break;
    case Role::IsServer:
        a << QStringLiteral("--name") << name << QStringLiteral("--types") << p.isTypesDir;
        a << p.accessArguments(QStringLiteral("is-") + name);
        break;
    case Role::Master:
        a << QStringLiteral("--config") << p.file;
        if (name != p.master.name) {
            // A segment controller reads its slaves' parameters from the master's version.
            a << QStringLiteral("--segment") << name << p.accessArguments(QStringLiteral("segment-") + name);
            if (!p.configDb.isEmpty())
                a << QStringLiteral("--configdb") << p.configDb << QStringLiteral("--config-ref")
                  << p.configRef;
            break;
        }
        if (!p.configDb.isEmpty())
            a << QStringLiteral("--configdb") << p.configDb << QStringLiteral("--config-ref") << p.configRef;
        a << p.accessArguments(QStringLiteral("master"));
        break;
    case Role::Slave:
        if (executable.isEmpty())
            a << QStringLiteral("--kind") << kind;
        a << QStringLiteral("--name") << name
          << QStringLiteral("--run-params-server") << p.runParamsServer << QStringLiteral("--daq-server")
          << p.daqServer << QStringLiteral("--is-types") << p.isTypesDir << QStringLiteral("--master")
          << p.parentOf(name);
        break;
    case Role::Logger:
    case Role::ConfigDb:
    case Role::Service:
        a << QStringLiteral("--name") << name;
        break;
    }
    if (role != Role::ControlServer && p.heartbeatMs > 0)
        a << QStringLiteral("--heartbeat-ms") << QString::number(p.heartbeatMs);
    for (auto [option, value] :
         {std::pair{"--secret-file", &p.secretFile}, std::pair{"--tls-cert", &p.tlsCert},
          std::pair{"--tls-key", &p.tlsKey}, std::pair{"--tls-ca", &p.tlsCa}})
        if (!value->isEmpty())
            a << QLatin1String(option) << *value;
    return a + args;
}

QStringList Partition::accessArguments(const QString &auditName) const
{
    QStringList a;
    if (!accessFile.isEmpty())
        a << QStringLiteral("--access") << accessFile;
    if (!auditDir.isEmpty())
        a << QStringLiteral("--audit-file") << QDir(auditDir).filePath(auditName + QStringLiteral(".audit"));
    return a;
}

namespace {
QString serverAddress(const QString &host, quint16 port)
{
    return QStringLiteral("%1:%2")
        .arg(host == QLatin1String("localhost") ? QStringLiteral("127.0.0.1") : host)
        .arg(port);
}
} // namespace

QString Partition::controlServerAddress() const
{
    return serverAddress(controlServerHost, controlServerPort);
}

QStringList Partition::controlServerAddresses() const
{
    QStringList out{controlServerAddress()};
    for (const ProcessSpec &s : standbyControlServers)
        out << serverAddress(s.host, s.port);
    return out;
}

QList<ProcessSpec> Partition::processes() const
{
    QList<ProcessSpec> out;
    if (startControlServer) {
        ProcessSpec cs;
        cs.role = ProcessSpec::Role::ControlServer;
        cs.name = QStringLiteral("ControlServer");
        cs.host = controlServerHost;
        cs.args = controlServerArgs;
        out << cs << standbyControlServers;
    }
    // The logger first: what the others report while starting is stored.
    out << loggers << configDbs << isServers << services << master;
    for (const Segment &s : tree)
        out << s.controller;
    out << slaves;
    return out;
}

const ProcessSpec *Partition::slave(const QString &name) const
{
    for (const ProcessSpec &s : slaves)
        if (s.name == name)
            return &s;
    return nullptr;
}

Status Partition::load(const QString &path, Partition *out)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return Status(Status::Code::StorageError,
                      QStringLiteral("cannot read partition file %1: %2").arg(path, f.errorString()));
    return parse(f.readAll(), path, out);
}

Status Partition::parse(const QByteArray &json, const QString &path, Partition *out)
{
    QString error;
    if (!parseInto(json, path, out, &error))
        return Status(Status::Code::InvalidObject, error);
    return {};
}

namespace {
bool parseInto(const QByteArray &json, const QString &path, Partition *out, QString *error)
{
    Reader r(path);
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError) {
        // Report the line, which an editor shows, rather than a byte offset.
        const int line = int(json.left(pe.offset).count('\n')) + 1;
        *error = QStringLiteral("%1: line %2: invalid JSON: %3")
                     .arg(QFileInfo(path).fileName())
                     .arg(line)
                     .arg(pe.errorString());
        return false;
    }
    if (!doc.isObject()) {
        *error = QStringLiteral("%1: the partition must be a JSON object").arg(QFileInfo(path).fileName());
        return false;
    }
    const QJsonObject root = doc.object();
    const QString base = QFileInfo(path).absolutePath();
    Partition p;
    p.file = QFileInfo(path).absoluteFilePath();
    r.checkKeys(root, {},
                {QStringLiteral("name"), QStringLiteral("description"), QStringLiteral("control_server"),
                 QStringLiteral("ssh_command"), QStringLiteral("bin_dir"), QStringLiteral("is_types_dir"),
                 QStringLiteral("heartbeat_ms"), QStringLiteral("is_servers"), QStringLiteral("master"),
                 QStringLiteral("slaves"), QStringLiteral("logger"), QStringLiteral("access"),
                 QStringLiteral("audit_dir"), QStringLiteral("secret_file"), QStringLiteral("secret"),
                 QStringLiteral("tls_cert"),
                 QStringLiteral("tls_key"), QStringLiteral("tls_ca"), QStringLiteral("segments"),
                 QStringLiteral("configdb"), QStringLiteral("services")});
    p.name = r.string(root, {}, QStringLiteral("name"), true);
    if (!r.failed() && !validName(p.name))
        r.fail(QStringLiteral("name"), QStringLiteral("'%1' is not a valid partition name").arg(p.name));

    // One Control Server (an object), or a list: the primary first, then its standbys.
    const QJsonValue servers = root.value(QStringLiteral("control_server"));
    QJsonArray list;
    if (servers.isArray()) {
        list = servers.toArray();
        if (list.isEmpty())
            r.fail(QStringLiteral("control_server"), QStringLiteral("the list names no Control Server"));
    } else {
        list.append(r.object(root, {}, QStringLiteral("control_server"), true));
    }
    for (qsizetype i = 0; i < list.size() && !r.failed(); ++i) {
        const QString field = servers.isArray() ? QStringLiteral("control_server[%1]").arg(i)
                                                : QStringLiteral("control_server");
        if (!list.at(i).isObject()) {
            r.fail(field, QStringLiteral("expected an object (host, port, args)"));
            break;
        }
        const QJsonObject cs = list.at(i).toObject();
        QStringList keys{QStringLiteral("host"), QStringLiteral("port"), QStringLiteral("args")};
        if (i == 0)
            keys << QStringLiteral("start"); // all of them or none
        r.checkKeys(cs, field, keys);
        const QString host = r.string(cs, field, QStringLiteral("host"), false, QStringLiteral("localhost"));
        const auto port = quint16(r.integer(cs, field, QStringLiteral("port"), 1, 65535, 3425));
        const QStringList args = r.strings(cs, field, QStringLiteral("args"));
        if (i == 0) {
            p.controlServerHost = host;
            p.controlServerPort = port;
            p.startControlServer = r.boolean(cs, field, QStringLiteral("start"), true);
            p.controlServerArgs = args;
            continue;
        }
        ProcessSpec standby;
        standby.role = ProcessSpec::Role::ControlServer;
        standby.name = i == 1 ? QStringLiteral("Standby") : QStringLiteral("Standby%1").arg(i);
        standby.host = host;
        standby.port = port;
        standby.args = args;
        standby.standbyOf = p.controlServerAddress();
        p.standbyControlServers << standby;
        const QStringList known = p.controlServerAddresses();
        if (known.indexOf(known.last()) != known.size() - 1)
            r.fail(field, QStringLiteral("%1 is already a Control Server of the partition").arg(known.last()));
    }

    if (root.contains(QStringLiteral("ssh_command"))) {
        p.sshCommand = r.strings(root, {}, QStringLiteral("ssh_command"));
        if (!r.failed() && p.sshCommand.isEmpty())
            r.fail(QStringLiteral("ssh_command"), QStringLiteral("must name a program"));
        if (!r.failed())
            p.sshCommand[0] =
                p.sshCommand[0].contains(QLatin1Char('/')) ? resolve(base, p.sshCommand[0]) : p.sshCommand[0];
    }
    p.binDir = resolve(base, r.string(root, {}, QStringLiteral("bin_dir"), false));
    if (root.contains(QStringLiteral("is_types_dir"))) {
        p.isTypesDir = resolve(base, r.string(root, {}, QStringLiteral("is_types_dir"), false));
    } else {
        // ../is-types beside the partition (the source tree's layout), else the installed types.
        const QString beside = resolve(base, QStringLiteral("../is-types"));
        p.isTypesDir = QFileInfo(beside).isDir() ? beside : installedIsTypesDir();
    }
    p.heartbeatMs = int(r.integer(root, {}, QStringLiteral("heartbeat_ms"), 0, 60000, 0));
    const QJsonArray segmentList = root.value(QStringLiteral("segments")).toArray();
    if (root.contains(QStringLiteral("segments")) && !root.value(QStringLiteral("segments")).isArray())
        r.fail(QStringLiteral("segments"), QStringLiteral("expected an array"));
    // Who may command what (an access list file, dialog/access.h), checked here so that a bad file
    // stops `dialogctl up` before anything starts; and where the audit files go.
    if (root.contains(QStringLiteral("access"))) {
        p.accessFile = resolve(base, r.string(root, {}, QStringLiteral("access"), true));
        AccessList list;
        if (!r.failed()) {
            if (const Status st = AccessList::load(p.accessFile, &list); !st.isOk())
                r.fail(QStringLiteral("access"), st.message());
        }
    }
    if (root.contains(QStringLiteral("audit_dir")))
        p.auditDir = resolve(base, r.string(root, {}, QStringLiteral("audit_dir"), true));
    for (auto [key, target] : {std::pair{"secret_file", &p.secretFile}, std::pair{"tls_cert", &p.tlsCert},
                               std::pair{"tls_key", &p.tlsKey}, std::pair{"tls_ca", &p.tlsCa}}) {
        const QString path = r.string(root, {}, QLatin1String(key), false);
        *target = path.isEmpty() ? QString() : resolve(base, path);
    }
    // "secret": "none" is the one way to run without a shared secret (dialogctl up makes one otherwise).
    if (root.contains(QStringLiteral("secret"))) {
        const QString secret = r.string(root, {}, QStringLiteral("secret"), true);
        if (!r.failed() && secret != QLatin1String("none"))
            r.fail(QStringLiteral("secret"),
                   QStringLiteral("'%1': the only value is \"none\" (no shared secret: insecure); a secret "
                                  "is named with \"secret_file\"")
                       .arg(secret));
        else if (!r.failed() && !p.secretFile.isEmpty())
            r.fail(QStringLiteral("secret"), QStringLiteral("\"none\" and a \"secret_file\" contradict each other"));
        p.noSecret = !r.failed();
    }
    const int tlsGiven = int(!p.tlsCert.isEmpty()) + int(!p.tlsKey.isEmpty()) + int(!p.tlsCa.isEmpty());
    if (!r.failed() && tlsGiven != 0 && tlsGiven != 3)
        r.fail(QStringLiteral("tls_cert"), QStringLiteral("TLS needs all of tls_cert, tls_key and tls_ca"));

    const QJsonValue isv = root.value(QStringLiteral("is_servers"));
    if (!isv.isUndefined() && !isv.isArray())
        r.fail(QStringLiteral("is_servers"), QStringLiteral("expected an array"));
    const QJsonArray isa = isv.toArray();
    for (int i = 0; i < isa.size(); ++i) {
        const QString field = QStringLiteral("is_servers[%1]").arg(i);
        if (!isa.at(i).isObject()) {
            r.fail(field, QStringLiteral("expected an object"));
            break;
        }
        ProcessSpec s = readProcess(r, isa.at(i).toObject(), field, ProcessSpec::Role::IsServer,
                                    {QStringLiteral("name"), QStringLiteral("host"), QStringLiteral("args")});
        p.isServers << s;
    }

    if (root.contains(QStringLiteral("logger"))) {
        const QJsonObject lo = r.object(root, {}, QStringLiteral("logger"), true);
        ProcessSpec s = readProcess(r, lo, QStringLiteral("logger"), ProcessSpec::Role::Logger,
                                    {QStringLiteral("name"), QStringLiteral("host"), QStringLiteral("args")});
        p.loggers << s;
    }

    if (root.contains(QStringLiteral("configdb"))) {
        const QString field = QStringLiteral("configdb");
        const QJsonObject co = r.object(root, {}, field, true);
        ProcessSpec s = readProcess(r, co, field, ProcessSpec::Role::ConfigDb,
                                    {QStringLiteral("name"), QStringLiteral("host"), QStringLiteral("args"),
                                     QStringLiteral("start"), QStringLiteral("ref")});
        p.configDb = s.name;
        p.configRef = r.string(co, field, QStringLiteral("ref"), false, p.configRef);
        if (r.boolean(co, field, QStringLiteral("start"), true))
            p.configDbs << s;
    }

    const QJsonValue servicesValue = root.value(QStringLiteral("services"));
    if (!servicesValue.isUndefined() && !servicesValue.isArray())
        r.fail(QStringLiteral("services"), QStringLiteral("expected an array"));
    const QJsonArray services = servicesValue.toArray();
    const QString partitionDir = QFileInfo(p.file).absolutePath();
    for (int i = 0; i < services.size() && !r.failed(); ++i) {
        const QString field = QStringLiteral("services[%1]").arg(i);
        if (!services.at(i).isObject()) {
            r.fail(field, QStringLiteral("expected an object"));
            break;
        }
        const QJsonObject o = services.at(i).toObject();
        ProcessSpec s = readProcess(r, o, field, ProcessSpec::Role::Service,
                                    {QStringLiteral("name"), QStringLiteral("program"), QStringLiteral("host"),
                                     QStringLiteral("args")});
        s.executable = r.string(o, field, QStringLiteral("program"), true);
        if (s.executable.contains(QLatin1Char('/'))) // a path: from the partition file's folder
            s.executable = resolve(base, s.executable);
        for (QString &a : s.args)
            a.replace(QStringLiteral("{partition_dir}"), partitionDir);
        p.services << s;
    }

    const QJsonObject m = r.object(root, {}, QStringLiteral("master"), true);
    p.master = readProcess(r, m, QStringLiteral("master"), ProcessSpec::Role::Master,
                           {QStringLiteral("name"), QStringLiteral("host"), QStringLiteral("args"),
                            QStringLiteral("transition_timeout_ms"), QStringLiteral("run_number_file"),
                            QStringLiteral("run_params_server"), QStringLiteral("daq_server")});
    p.transitionTimeoutMs = int(
        r.integer(m, QStringLiteral("master"), QStringLiteral("transition_timeout_ms"), 100, 3600000, 10000));
    p.runNumberFile =
        resolve(base, r.string(m, QStringLiteral("master"), QStringLiteral("run_number_file"), false));
    p.runParamsServer =
        r.string(m, QStringLiteral("master"), QStringLiteral("run_params_server"), false, p.runParamsServer);
    p.daqServer = r.string(m, QStringLiteral("master"), QStringLiteral("daq_server"), false, p.daqServer);

    const QJsonValue sv = root.value(QStringLiteral("slaves"));
    if (!sv.isArray())
        r.fail(QStringLiteral("slaves"), sv.isUndefined() ? QStringLiteral("missing (an array is required)")
                                                          : QStringLiteral("expected an array"));
    const QJsonArray sa = sv.toArray();
    if (!r.failed() && sa.isEmpty())
        r.fail(QStringLiteral("slaves"), QStringLiteral("a partition needs at least one slave"));
    for (int i = 0; i < sa.size() && !r.failed(); ++i) {
        const QString field = QStringLiteral("slaves[%1]").arg(i);
        if (!sa.at(i).isObject()) {
            r.fail(field, QStringLiteral("expected an object"));
            break;
        }
        const QJsonObject o = sa.at(i).toObject();
        ProcessSpec s =
            readProcess(r, o, field, ProcessSpec::Role::Slave,
                        {QStringLiteral("name"), QStringLiteral("kind"), QStringLiteral("program"),
                         QStringLiteral("host"), QStringLiteral("args"), QStringLiteral("removable"),
                         QStringLiteral("recover")});
        readTreePolicy(r, o, field, &s);
        // Either one of dialog-slave's kinds or a program of its own, never both or neither.
        const bool hasKind = o.contains(QStringLiteral("kind")), hasProgram = o.contains(QStringLiteral("program"));
        if (!r.failed() && hasKind == hasProgram)
            r.fail(field, hasKind ? QStringLiteral("\"kind\" and \"program\" exclude each other: give one")
                                  : QStringLiteral("needs \"kind\" (control or readout) or \"program\" (a slave "
                                                   "program of its own)"));
        if (hasProgram) {
            s.executable = r.string(o, field, QStringLiteral("program"), true);
            if (s.executable.contains(QLatin1Char('/'))) // a path: from the partition file's folder
                s.executable = resolve(base, s.executable);
        } else {
            s.kind = r.string(o, field, QStringLiteral("kind"), true);
            if (!r.failed() && s.kind != QLatin1String("control") && s.kind != QLatin1String("readout"))
                r.fail(field + QStringLiteral(".kind"),
                       QStringLiteral("'%1': expected \"control\" or \"readout\"").arg(s.kind));
        }
        p.slaves << s;
    }

    // "segments": a configuration database's segment documents (strings), or the run-control tree
    // (objects), after the slaves they refer to.
    for (qsizetype i = 0; i < segmentList.size() && !r.failed(); ++i) {
        const QString field = QStringLiteral("segments[%1]").arg(i);
        if (segmentList.at(i).isString()) {
            p.segments << segmentList.at(i).toString();
            continue;
        }
        if (!segmentList.at(i).isObject()) {
            r.fail(field, QStringLiteral("expected a document path (a string) or a segment (an object)"));
            break;
        }
        const QJsonObject o = segmentList.at(i).toObject();
        Segment seg;
        seg.controller = readProcess(r, o, field, ProcessSpec::Role::Master,
                                     {QStringLiteral("name"), QStringLiteral("host"), QStringLiteral("args"),
                                      QStringLiteral("slaves"), QStringLiteral("segments"),
                                      QStringLiteral("removable"), QStringLiteral("recover")});
        readTreePolicy(r, o, field, &seg.controller);
        seg.name = seg.controller.name;
        seg.slaves = r.strings(o, field, QStringLiteral("slaves"));
        seg.segments = r.strings(o, field, QStringLiteral("segments"));
        p.tree << seg;
    }
    if (!r.failed()) {
        QString field, why;
        if (!checkTree(&p, &field, &why))
            r.fail(field, why);
    }

    // Names are DIALOG process names: they must be unique in the partition.
    QSet<QString> seen;
    QList<ProcessSpec> all = QList<ProcessSpec>{p.master} + p.slaves + p.loggers + p.configDbs + p.services;
    for (const Segment &seg : std::as_const(p.tree))
        all << seg.controller;
    for (const ProcessSpec &s : all) {
        if (r.failed())
            break;
        if (seen.contains(s.name))
            r.fail(QStringLiteral("name"), QStringLiteral("'%1' is used twice").arg(s.name));
        seen.insert(s.name);
    }
    QSet<QString> isNames;
    for (const ProcessSpec &s : std::as_const(p.isServers)) {
        if (!r.failed() && isNames.contains(s.name))
            r.fail(QStringLiteral("is_servers"),
                   QStringLiteral("IS server '%1' is listed twice").arg(s.name));
        isNames.insert(s.name);
    }
    if (r.failed()) {
        *error = r.error();
        return false;
    }
    *out = p;
    return true;
}

} // namespace

} // namespace dialog::rc
