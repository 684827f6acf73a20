#include "dialog/is/typeregistry.h"

#include "../rwlock_p.h"
#include "typeregistry_p.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace dialog::is {

namespace {

QList<TypeDecl> builtinTypes()
{
    const auto d = [](const char *name, BasicType type, const char *description, bool vector = false) {
        return AttributeInfo(QString::fromLatin1(name), type, QString::fromLatin1(description), vector);
    };
    TypeInfo h1(QStringLiteral("Histogram1D"),
                QStringLiteral("One-dimensional histogram with fixed-width bins"));
    h1.setAttributes(
        {d("title", BasicType::String, "Title"), d("xLow", BasicType::Double, "Lower edge of the first bin"),
         d("xHigh", BasicType::Double, "Upper edge of the last bin"),
         d("bins", BasicType::U32, "Number of bins"), d("contents", BasicType::Double, "Bin contents", true),
         d("entries", BasicType::U64, "Number of entries")});
    TypeInfo h2(QStringLiteral("Histogram2D"),
                QStringLiteral("Two-dimensional histogram with fixed-width bins"));
    h2.setAttributes(
        {d("title", BasicType::String, "Title"), d("xLow", BasicType::Double, "Lower x edge"),
         d("xHigh", BasicType::Double, "Upper x edge"), d("xBins", BasicType::U32, "Number of x bins"),
         d("yLow", BasicType::Double, "Lower y edge"), d("yHigh", BasicType::Double, "Upper y edge"),
         d("yBins", BasicType::U32, "Number of y bins"),
         d("contents", BasicType::Double, "Bin contents, row-major (x varies fastest)", true),
         d("entries", BasicType::U64, "Number of entries")});
    return {TypeDecl{h1, {}, 0, {}}, TypeDecl{h2, {}, 0, {}}};
}

Status readFile(const QString &path, QList<TypeDecl> &decls)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Status(Status::Code::StorageError, QStringLiteral("%1: cannot read: %2").arg(path, file.errorString()));
    return parseTypesXml(file.readAll(), QFileInfo(path).fileName(), decls);
}

} // namespace

TypeRegistry::TypeRegistry() : d(new TypeRegistryPrivate)
{
    const Status merged = TypeRegistryPrivate::merge(d->types, builtinTypes());
    Q_ASSERT_X(merged.isOk(), "TypeRegistry", qPrintable(merged.message()));
    Q_UNUSED(merged);
}

TypeRegistry::~TypeRegistry() = default;

Status TypeRegistry::loadFile(const QString &path)
{
    QList<TypeDecl> decls;
    if (Status st = readFile(path, decls); !st.isOk())
        return st;
    WriteLocker locker(&d->lock);
    return d->mergeLocked(decls);
}

Status TypeRegistry::loadDirectory(const QString &path)
{
    const QDir dir(path);
    if (!dir.exists())
        return Status(Status::Code::StorageError, QStringLiteral("%1: no such directory").arg(path));
    QList<TypeDecl> decls;
    const QStringList files = dir.entryList({QStringLiteral("*.xml")}, QDir::Files, QDir::Name);
    for (const QString &file : files) {
        if (Status st = readFile(dir.filePath(file), decls); !st.isOk())
            return st;
    }
    WriteLocker locker(&d->lock);
    return d->mergeLocked(decls);
}

Status TypeRegistry::loadXml(QByteArrayView xml, const QString &sourceName)
{
    QList<TypeDecl> decls;
    if (Status st = parseTypesXml(xml, sourceName, decls); !st.isOk())
        return st;
    WriteLocker locker(&d->lock);
    return d->mergeLocked(decls);
}

Status TypeRegistry::declareType(const TypeInfo &type)
{
    return declareTypes({type});
}

Status TypeRegistry::declareTypes(const QList<TypeInfo> &types)
{
    QList<TypeDecl> decls;
    for (const TypeInfo &t : types)
        decls.append(TypeDecl{t, {}, 0, {}});
    WriteLocker locker(&d->lock);
    return d->mergeLocked(decls);
}

bool TypeRegistry::contains(const QString &name) const
{
    ReadLocker locker(&d->lock);
    return d->types.contains(name);
}

TypeInfo TypeRegistry::type(const QString &name) const
{
    ReadLocker locker(&d->lock);
    return d->types.value(name);
}

QStringList TypeRegistry::typeNames() const
{
    ReadLocker locker(&d->lock);
    QStringList names = d->types.keys();
    locker.unlock();
    names.sort();
    return names;
}

bool TypeRegistry::isSameOrDerived(const QString &type, const QString &base) const
{
    ReadLocker locker(&d->lock);
    if (!d->types.contains(base))
        return false;
    // Cycles are rejected on declaration, so every chain ends.
    for (QString t = type; !t.isEmpty(); t = d->types.value(t).baseName()) {
        if (t == base)
            return true;
    }
    return false;
}

QStringList TypeRegistry::subtypesOf(const QString &base) const
{
    ReadLocker locker(&d->lock);
    QStringList out;
    for (auto it = d->types.cbegin(); it != d->types.cend(); ++it) {
        for (QString t = it->baseName(); !t.isEmpty(); t = d->types.value(t).baseName()) {
            if (t == base) {
                out.append(it.key());
                break;
            }
        }
    }
    locker.unlock();
    out.sort();
    return out;
}

double TypeRegistry::expectedIntervalS(const QString &type) const
{
    ReadLocker locker(&d->lock);
    // Cycles are rejected on declaration, so every chain ends.
    for (QString t = type; !t.isEmpty();) {
        const auto it = d->types.constFind(t);
        if (it == d->types.cend())
            return 0;
        if (it->expectedIntervalS() > 0)
            return it->expectedIntervalS();
        t = it->baseName();
    }
    return 0;
}

} // namespace dialog::is
