// Validation of a batch of IS type declarations (TypeRegistryPrivate::merge).
#include "evolution_p.h"
#include "typeregistry_p.h"

#include <QRegularExpression>
#include <QSet>

namespace dialog::is {

namespace {

bool isValidName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    return re.match(name).hasMatch();
}

QString where(const TypeDecl &decl, int attributeIndex = -1)
{
    if (decl.source.isEmpty())
        return {};
    const int line = attributeIndex >= 0 && attributeIndex < decl.attributeLines.size()
                         ? decl.attributeLines.at(attributeIndex)
                         : decl.line;
    return QStringLiteral("%1:%2: ").arg(decl.source).arg(line);
}

// A declaration the registry refuses: BadRequest, or UnknownType for a reference to a missing type.
Status fail(const QString &message, Status::Code code = Status::Code::BadRequest)
{
    return Status(code, message);
}

// The evolution attributes of attribute @p i: a valid former name that no attribute of the type
// has now, and a default that parses as the attribute's type.
Status checkEvolution(const TypeDecl &decl, int i)
{
    const QList<AttributeInfo> attrs = decl.info.attributes();
    const AttributeInfo &a = attrs.at(i);
    const QString type = decl.info.name();
    if (!a.formerName().isEmpty()) {
        if (!isValidName(a.formerName()))
            return fail(where(decl, i) + QStringLiteral("invalid former name '%1' of attribute '%2' in type '%3'")
                                             .arg(a.formerName(), a.name(), type));
        for (const AttributeInfo &other : attrs) {
            if (other.name() == a.formerName())
                return fail(where(decl, i) +
                            QStringLiteral("attribute '%1' of type '%2' was '%3', which the type still has")
                                .arg(a.name(), type, a.formerName()));
        }
    }
    if (!a.defaultText().isEmpty()) {
        Value v;
        QString why;
        if (!parseDefault(a, a.defaultText(), &v, &why))
            return fail(where(decl, i) + QStringLiteral("attribute '%1' of type '%2': %3").arg(a.name(), type, why));
    }
    return {};
}

// Checks names, duplicates and references of each declaration on its own.
Status checkDeclarations(QHash<QString, TypeInfo> &result, const QList<TypeDecl> &decls)
{
    for (const TypeDecl &decl : decls) {
        const QString name = decl.info.name();
        if (name.isEmpty())
            return fail(where(decl) + QStringLiteral("missing type name"));
        if (!isValidName(name) || basicTypeFromName(name))
            return fail(where(decl) + QStringLiteral("invalid type name '%1'").arg(name));
        if (result.contains(name))
            return fail(where(decl) + QStringLiteral("duplicate type '%1'").arg(name));
        const QList<AttributeInfo> attrs = decl.info.attributes();
        QSet<QString> seen;
        for (int i = 0; i < attrs.size(); ++i) {
            const QString a = attrs.at(i).name();
            if (!isValidName(a))
                return fail(where(decl, i) +
                                QStringLiteral("invalid attribute name '%1' in type '%2'").arg(a, name));
            if (seen.contains(a))
                return fail(where(decl, i) +
                                       QStringLiteral("duplicate attribute '%1' in type '%2'").arg(a, name));
            seen.insert(a);
            if (Status st = checkEvolution(decl, i); !st.isOk())
                return st;
        }
        result.insert(name, decl.info);
    }
    for (const TypeDecl &decl : decls) {
        const QString name = decl.info.name();
        const QString base = decl.info.baseName();
        if (!base.isEmpty() && !result.contains(base))
            return fail(where(decl) + QStringLiteral("unknown base type '%1' of type '%2'").arg(base, name),
                        Status::Code::UnknownType);
        const QList<AttributeInfo> attrs = decl.info.attributes();
        for (int i = 0; i < attrs.size(); ++i) {
            const AttributeInfo &a = attrs.at(i);
            if (a.type() == BasicType::Object && !result.contains(a.typeName()))
                return fail(where(decl, i) +
                                QStringLiteral("unknown attribute type '%1' in type '%2'").arg(a.typeName(), name),
                            Status::Code::UnknownType);
        }
    }
    return {};
}

Status checkInheritanceCycles(const QHash<QString, TypeInfo> &result, const QList<TypeDecl> &decls)
{
    for (const TypeDecl &decl : decls) {
        QStringList chain{decl.info.name()};
        QString base = decl.info.baseName();
        while (!base.isEmpty()) {
            if (chain.contains(base)) {
                chain.append(base);
                return fail(where(decl) +
                        QStringLiteral("inheritance cycle: %1").arg(chain.join(QLatin1String(" -> "))));
            }
            chain.append(base);
            base = result.value(base).baseName();
        }
    }
    return {};
}

// Depth-first search over non-vector nested attributes; @p path is the current chain.
bool findNestingCycle(const QHash<QString, TypeInfo> &result, const QString &type, QStringList &path,
                      QSet<QString> &done)
{
    if (done.contains(type))
        return false;
    if (path.contains(type)) {
        path.append(type);
        return true;
    }
    path.append(type);
    for (const AttributeInfo &a : result.value(type).allAttributes()) {
        if (a.type() == BasicType::Object && !a.isVector() &&
            findNestingCycle(result, a.typeName(), path, done))
            return true;
    }
    path.removeLast();
    done.insert(type);
    return false;
}

} // namespace

void TypeRegistryPrivate::setResolved(TypeInfo &type, const QList<AttributeInfo> &all)
{
    type.m_all = all;
    type.m_resolved = true;
}

Status TypeRegistryPrivate::merge(QHash<QString, TypeInfo> &types, const QList<TypeDecl> &decls)
{
    QHash<QString, TypeInfo> result = types;
    if (Status st = checkDeclarations(result, decls); !st.isOk())
        return st;
    if (Status st = checkInheritanceCycles(result, decls); !st.isOk())
        return st;

    // Resolve attribute lists, bases first; no cycles remain, so the chain walk ends.
    QHash<QString, const TypeDecl *> declOf;
    for (const TypeDecl &decl : decls)
        declOf.insert(decl.info.name(), &decl);
    for (const TypeDecl &decl : decls) {
        QStringList chain;
        for (QString t = decl.info.name(); !t.isEmpty() && declOf.contains(t); t = result.value(t).baseName())
            chain.prepend(t);
        for (const QString &t : std::as_const(chain)) {
            TypeInfo &info = result[t];
            if (info.m_resolved)
                continue;
            const TypeDecl &d = *declOf.value(t);
            QList<AttributeInfo> all =
                info.m_base.isEmpty() ? QList<AttributeInfo>() : result[info.m_base].m_all;
            for (int i = 0; i < info.m_attributes.size(); ++i) {
                const QString a = info.m_attributes.at(i).name();
                for (const AttributeInfo &inherited : std::as_const(all)) {
                    if (inherited.name() == a)
                        return fail(where(d, i) +
                                        QStringLiteral("duplicate attribute '%1' in type '%2' (already in "
                                                       "base type '%3')")
                                            .arg(a, t, info.m_base));
                }
            }
            all += info.m_attributes;
            setResolved(info, all);
        }
    }

    QSet<QString> done;
    for (const TypeDecl &decl : decls) {
        QStringList path;
        if (findNestingCycle(result, decl.info.name(), path, done)) {
            path = path.mid(path.indexOf(path.last())); // drop the way into the cycle
            return fail(where(decl) +
                            QStringLiteral("nested type cycle: %1").arg(path.join(QLatin1String(" -> "))));
        }
    }
    types = result;
    return {};
}

Status TypeRegistryPrivate::mergeLocked(const QList<TypeDecl> &decls)
{
    return merge(types, decls);
}

} // namespace dialog::is
