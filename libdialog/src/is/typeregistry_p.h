// Internals of dialog::is::TypeRegistry: type declarations with their source location, the XML
// reader and the validation that merges a batch of declarations into the registry.
#pragma once

#include "dialog/is/typeinfo.h"

#include <QByteArrayView>
#include <QHash>
#include <QReadWriteLock>

namespace dialog::is {

/// A type as declared, with where it was declared (for error messages).
struct TypeDecl
{
    TypeInfo info;
    QString source; ///< file name; empty for run-time declarations
    int line = 0;
    QList<int> attributeLines; ///< parallel to info.attributes(); may be empty
};

/// Parses an `<is-types>` document. False with "source:line: reason" in @p error.
bool parseTypesXml(QByteArrayView xml, const QString &source, QList<TypeDecl> &out, QString *error);

class TypeRegistryPrivate
{
public:
    /// Validates @p decls against @p types and each other and, if all is well, adds them to
    /// @p types with their attribute lists resolved. On error @p types is unchanged.
    static bool merge(QHash<QString, TypeInfo> &types, const QList<TypeDecl> &decls, QString *error);
    /// Called with lock held for writing.
    bool mergeLocked(const QList<TypeDecl> &decls, QString *error);

    mutable QReadWriteLock lock;
    QHash<QString, TypeInfo> types; // guarded by lock

private:
    static void setResolved(TypeInfo &type, const QList<AttributeInfo> &all);
};

} // namespace dialog::is
