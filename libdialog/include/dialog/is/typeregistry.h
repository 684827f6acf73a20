#pragma once

#include "dialog/is/typeinfo.h"
#include "dialog/status.h"

#include <QByteArrayView>
#include <QJsonArray>
#include <QJsonObject>
#include <QStringList>
#include <memory>

namespace dialog::is {

class TypeRegistryPrivate;

/// The set of known IS types. Always holds the built-in types Histogram1D and Histogram2D.
///
/// Types are only ever added, never changed or removed, so a TypeInfo or Object obtained earlier
/// stays consistent with the registry.
///
/// Every load or declaration is all-or-nothing: it is validated as a whole (unknown attribute or
/// base types, duplicate types or attributes, inheritance and nesting cycles) and on any error the
/// registry is unchanged and @p error says why, as "file.xml:12: message" for XML input.
///
/// Thread safety: all const functions may be called concurrently from any thread (they take a
/// read lock and return copies); loads and declarations take the write lock and may run
/// concurrently with readers. Files are read and parsed before the lock is taken.
class TypeRegistry
{
public:
    TypeRegistry();
    ~TypeRegistry();
    TypeRegistry(const TypeRegistry &) = delete;
    TypeRegistry &operator=(const TypeRegistry &) = delete;

    /// Loads the types of one XML file, all-or-nothing (on failure the registry is unchanged).
    /// Status::Code::StorageError for a file that cannot be read, Status::Code::BadRequest for
    /// malformed XML or an invalid declaration (a bad or duplicate name, a cycle),
    /// Status::Code::UnknownType for a base or attribute type that is not declared; the message says
    /// where ("types.xml:12: …").
    Status loadFile(const QString &path);
    /// Loads every `*.xml` file of @p path, in file-name order, as one batch (a type may refer to
    /// a type of another file of the directory). Errors as loadFile() (StorageError also for a
    /// missing directory).
    Status loadDirectory(const QString &path);
    /// Loads types from XML text; @p sourceName is used in error messages. Errors as loadFile().
    Status loadXml(QByteArrayView xml, const QString &sourceName);
    /// Declares one type at run time, with the same validation (and codes) as XML.
    Status declareType(const TypeInfo &type);
    /// Declares several types at once (they may refer to each other), all-or-nothing; codes as
    /// declareType().
    Status declareTypes(const QList<TypeInfo> &types);

    /// True when a type named @p name is declared.
    bool contains(const QString &name) const;
    /// The type with allAttributes() resolved; an invalid TypeInfo for an unknown name.
    TypeInfo type(const QString &name) const;
    /// All type names, sorted.
    QStringList typeNames() const;
    /// True if @p type is @p base or (transitively) derives from it. False if either is unknown.
    bool isSameOrDerived(const QString &type, const QString &base) const;
    /// Every type that derives from @p base directly or indirectly (not @p base itself), sorted.
    QStringList subtypesOf(const QString &base) const;
    /// The expected update interval of objects of @p type in seconds: the type's own
    /// (TypeInfo::expectedIntervalS) or, when it declares none, that of its nearest base declaring
    /// one; 0 when none does (objects of the type are never stale for being old) or it is unknown.
    double expectedIntervalS(const QString &type) const;

private:
    std::unique_ptr<TypeRegistryPrivate> const d;
};

/// JSON form of a type: {"name", "description", "base", "attributes": [{"name", "description",
/// "type" (primitive XML name or IS type name), "vector": bool}]} (own attributes only).
QJsonObject typeToJson(const TypeInfo &type);
/// Every type of @p registry (built-in ones included), sorted by name.
QJsonArray typesToJson(const TypeRegistry &registry);
/// Reads typeToJson() objects into @p out (untouched on failure); Status::Code::BadRequest naming the
/// type on malformed input.
Status typesFromJson(const QJsonArray &json, QList<TypeInfo> *out);
/// Declares the types of @p types that @p registry does not have yet, as declareTypes() (its codes);
/// a known name must have the same definition, else Status::Code::TypeMismatch and the registry is
/// unchanged.
Status mergeTypes(TypeRegistry &registry, const QList<TypeInfo> &types);

} // namespace dialog::is
