#include "pages.h"

#include "dialog/is/dictionary.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

namespace dialog::presenter {

namespace {

QString unknownKey(const QJsonObject &o, const QSet<QString> &known)
{
    for (auto it = o.begin(); it != o.end(); ++it)
        if (!known.contains(it.key()))
            return it.key();
    return {};
}

bool isFullName(const QString &name)
{
    QString server, object;
    return is::Dictionary::splitName(name, &server, &object);
}

QString parseEntry(const QJsonObject &e, const QString &baseDir, const QString &referencesDir, PageEntry *out)
{
    static const QSet<QString> known{QStringLiteral("histogram"), QStringLiteral("check"),
                                     QStringLiteral("reference"), QStringLiteral("reference_check"),
                                     QStringLiteral("title"),     QStringLiteral("log_x"),
                                     QStringLiteral("log_y"),     QStringLiteral("log_z")};
    if (const QString k = unknownKey(e, known); !k.isEmpty())
        return QStringLiteral("unknown key \"%1\"").arg(k);
    PageEntry x;
    x.histogram = e.value(QStringLiteral("histogram")).toString();
    if (!isFullName(x.histogram))
        return QStringLiteral("\"histogram\" must name an IS object as Server.Object");
    x.check = e.value(QStringLiteral("check")).toString();
    if (e.contains(QStringLiteral("check")) && !isFullName(x.check))
        return QStringLiteral("\"check\" must name the DQResult object as Server.Check");
    for (const char *flag : {"log_x", "log_y", "log_z"}) {
        const QJsonValue v = e.value(QLatin1String(flag));
        if (!v.isUndefined() && !v.isBool())
            return QStringLiteral("\"%1\" must be true or false").arg(QLatin1String(flag));
    }
    x.logX = e.value(QStringLiteral("log_x")).toBool();
    x.logY = e.value(QStringLiteral("log_y")).toBool();
    x.logZ = e.value(QStringLiteral("log_z")).toBool();
    x.title = e.value(QStringLiteral("title")).toString();
    if (e.contains(QStringLiteral("reference")) && e.contains(QStringLiteral("reference_check")))
        return QStringLiteral("\"reference\" and \"reference_check\" exclude each other");
    if (e.contains(QStringLiteral("reference"))) {
        const QString file = e.value(QStringLiteral("reference")).toString();
        if (file.isEmpty())
            return QStringLiteral("\"reference\" must be a file name");
        x.referenceFile = QDir(baseDir).absoluteFilePath(file);
    } else if (e.contains(QStringLiteral("reference_check"))) {
        const QString check = e.value(QStringLiteral("reference_check")).toString();
        if (check.isEmpty() || check.contains(QLatin1Char('/')))
            return QStringLiteral("\"reference_check\" must be a check's name");
        if (referencesDir.isEmpty())
            return QStringLiteral(
                "\"reference_check\" needs --references (dialog-dqm's reference directory)");
        x.referenceFile = QDir(referencesDir).absoluteFilePath(check + QStringLiteral(".json"));
    } else if (!x.check.isEmpty() && !referencesDir.isEmpty()) {
        // dialog-dqm keeps a check's reference as <references>/<check>.json: shown when there is one.
        const QString check = x.check.mid(x.check.indexOf(QLatin1Char('.')) + 1);
        x.referenceFile = QDir(referencesDir).absoluteFilePath(check + QStringLiteral(".json"));
    }
    *out = x;
    return {};
}

} // namespace

QString PageSet::parse(const QByteArray &json, const QString &baseDir, const QString &referencesDir,
                       PageSet *out)
{
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError)
        return QStringLiteral("not JSON: %1 at offset %2").arg(pe.errorString()).arg(pe.offset);
    if (!doc.isObject() || !doc.object().value(QStringLiteral("pages")).isArray())
        return QStringLiteral("expected {\"pages\": [...]}");
    const QJsonArray pages = doc.object().value(QStringLiteral("pages")).toArray();
    if (pages.isEmpty())
        return QStringLiteral("no pages");
    static const QSet<QString> known{QStringLiteral("name"), QStringLiteral("subsystem"),
                                     QStringLiteral("columns"), QStringLiteral("histograms")};
    PageSet set;
    QSet<QString> labels;
    for (qsizetype i = 0; i < pages.size(); ++i) {
        const QJsonObject p = pages.at(i).toObject();
        Page page;
        page.name = p.value(QStringLiteral("name")).toString();
        const QString where = page.name.isEmpty() ? QStringLiteral("page %1").arg(i + 1)
                                                  : QStringLiteral("page \"%1\"").arg(page.name);
        if (!pages.at(i).isObject() || page.name.isEmpty())
            return QStringLiteral("%1: a page is an object with a \"name\"").arg(where);
        if (const QString k = unknownKey(p, known); !k.isEmpty())
            return QStringLiteral("%1: unknown key \"%2\"").arg(where, k);
        page.subsystem = p.value(QStringLiteral("subsystem")).toString();
        const QJsonValue columns = p.value(QStringLiteral("columns"));
        if (!columns.isUndefined()) {
            if (!columns.isDouble() || columns.toDouble() != int(columns.toDouble()) || columns.toInt() < 1 ||
                columns.toInt() > 8)
                return QStringLiteral("%1: \"columns\" must be an integer in [1, 8]").arg(where);
            page.columns = columns.toInt();
        }
        if (labels.contains(page.label()))
            return QStringLiteral("%1: a second page \"%2\"").arg(where, page.label());
        labels.insert(page.label());
        const QJsonArray entries = p.value(QStringLiteral("histograms")).toArray();
        if (entries.isEmpty())
            return QStringLiteral("%1: no \"histograms\"").arg(where);
        for (qsizetype k = 0; k < entries.size(); ++k) {
            PageEntry e;
            const QString error = entries.at(k).isObject()
                                      ? parseEntry(entries.at(k).toObject(), baseDir, referencesDir, &e)
                                      : QStringLiteral("not an object");
            if (!error.isEmpty())
                return QStringLiteral("%1, histogram %2: %3").arg(where).arg(k + 1).arg(error);
            page.entries.append(e);
        }
        set.pages.append(page);
    }
    *out = set;
    return {};
}

QString PageSet::load(const QString &path, const QString &referencesDir, PageSet *out)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return QStringLiteral("%1: %2").arg(path, f.errorString());
    const QString error = parse(f.readAll(), QFileInfo(path).absolutePath(), referencesDir, out);
    return error.isEmpty() ? error : QStringLiteral("%1: %2").arg(path, error);
}

} // namespace dialog::presenter
