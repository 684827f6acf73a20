#include "configimport.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace dialog::tool {

namespace {

bool readFile(const QString &file, QByteArray *out, QString *error)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read %1: %2").arg(file, f.errorString());
        return false;
    }
    *out = f.readAll();
    return true;
}

/// A slave entry's args split into parameters (known keys of its kind, each with its value) and the
/// rest.
QJsonObject takeParameters(QJsonObject &slave)
{
    const QStringList keys = config::slaveParameterKeys(slave.value(QStringLiteral("kind")).toString());
    const QJsonArray args = slave.value(QStringLiteral("args")).toArray();
    QJsonObject params;
    QJsonArray rest;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString a = args.at(i).toString();
        const QString key = a.mid(2).replace(QLatin1Char('-'), QLatin1Char('_'));
        if (a.startsWith(QLatin1String("--")) && keys.contains(key) && i + 1 < args.size()) {
            const QString value = args.at(++i).toString();
            bool number = false;
            const double x = value.toDouble(&number);
            params.insert(key,
                          number && key != QLatin1String("output_dir") ? QJsonValue(x) : QJsonValue(value));
        } else {
            rest.append(args.at(i));
        }
    }
    if (rest.isEmpty())
        slave.remove(QStringLiteral("args"));
    else
        slave.insert(QStringLiteral("args"), rest);
    return params;
}

/// A partition file as partitions/NAME and its slaves' parameter documents.
bool importPartition(const QString &file, const QByteArray &content, QList<config::Change> *out,
                     QString *error)
{
    QJsonParseError pe;
    QJsonObject root = QJsonDocument::fromJson(content, &pe).object();
    if (pe.error != QJsonParseError::NoError || root.isEmpty()) {
        // validate() says where.
        *error =
            config::validate(QStringLiteral("partitions/") + QFileInfo(file).baseName(), content).message();
        if (error->isEmpty())
            *error = QStringLiteral("%1: not a partition").arg(file);
        return false;
    }
    root.remove(QStringLiteral("is_types_dir"));
    QJsonArray slaves = root.value(QStringLiteral("slaves")).toArray();
    for (qsizetype i = 0; i < slaves.size(); ++i) {
        QJsonObject s = slaves.at(i).toObject();
        const QJsonObject params = takeParameters(s);
        slaves[i] = s;
        const QString path = config::slaveDocumentPath(s.value(QStringLiteral("kind")).toString(),
                                                       s.value(QStringLiteral("name")).toString());
        out->append(config::Change{path, QJsonDocument(params).toJson(QJsonDocument::Indented), false});
    }
    root.insert(QStringLiteral("slaves"), slaves);
    const QString name = root.value(QStringLiteral("name")).toString(QFileInfo(file).baseName());
    out->append(config::Change{QStringLiteral("partitions/") + name,
                               QJsonDocument(root).toJson(QJsonDocument::Indented), false});
    return true;
}

bool importFile(const QString &file, const QString &prefix, QList<config::Change> *out, QString *error)
{
    QByteArray content;
    if (!readFile(file, &content, error))
        return false;
    const QFileInfo info(file);
    QString kind = prefix;
    if (kind.isEmpty())
        kind = info.suffix() == QLatin1String("xml") ? QStringLiteral("is-types") : info.dir().dirName();
    if (kind == QLatin1String("partitions") ||
        (kind != QLatin1String("is-types") && !config::kindOf(kind + QStringLiteral("/x"))))
        return importPartition(file, content, out, error);
    out->append(config::Change{kind + QLatin1Char('/') + info.completeBaseName(), content, false});
    return true;
}

} // namespace

bool importDocuments(const QStringList &paths, QList<config::Change> *out, QString *error)
{
    QList<config::Change> docs;
    for (const QString &path : paths) {
        const QFileInfo info(path);
        if (!info.isDir()) {
            if (!importFile(path, QString(), &docs, error))
                return false;
            continue;
        }
        bool any = false;
        for (const QString &prefix : config::knownPrefixes()) {
            const QString kind = prefix.chopped(1);
            const QDir sub(QDir(path).filePath(kind));
            const QDir dir = info.fileName() == kind ? QDir(path) : sub;
            if (!dir.exists())
                continue;
            for (const QString &f : dir.entryList({QStringLiteral("*.json"), QStringLiteral("*.xml")},
                                                  QDir::Files, QDir::Name)) {
                if (!importFile(dir.filePath(f), kind, &docs, error))
                    return false;
                any = true;
            }
        }
        if (!any) {
            *error = QStringLiteral(
                         "%1: no documents (expected partitions/, is-types/, slaves/, readout/, segments/ or "
                         "access/ in it)")
                         .arg(path);
            return false;
        }
    }
    // A document given explicitly wins over one made from a partition's slave args.
    QHash<QString, qsizetype> last;
    for (qsizetype i = 0; i < docs.size(); ++i)
        last.insert(docs.at(i).path, i);
    for (qsizetype i = 0; i < docs.size(); ++i)
        if (last.value(docs.at(i).path) == i)
            out->append(docs.at(i));
    return true;
}

} // namespace dialog::tool
