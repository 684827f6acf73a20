// Internals of dialog::is::TypeRegistry: type declarations with their source location, the XML
// reader and the validation that merges a batch of declarations into the registry.
#pragma once

#include "dialog/is/typeinfo.h"
#include "dialog/status.h"

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

/// Parses an `<is-types>` document. BadRequest with "source:line: reason".
Status parseTypesXml(QByteArrayView xml, const QString &source, QList<TypeDecl> &out);

class TypeRegistryPrivate
{
public:
    /// Validates @p decls against @p types and each other and, if all is well, adds them to
    /// @p types with their attribute lists resolved. On error @p types is unchanged.
    /// BadRequest for an invalid declaration, UnknownType for a reference to an undeclared type.
    static Status merge(QHash<QString, TypeInfo> &types, const QList<TypeDecl> &decls);
    /// Called with lock held for writing.
    Status mergeLocked(const QList<TypeDecl> &decls);

    mutable QReadWriteLock lock;
    QHash<QString, TypeInfo> types; // guarded by lock

private:
    static void setResolved(TypeInfo &type, const QList<AttributeInfo> &all);
};

} // namespace dialog::is
