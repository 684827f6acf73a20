#pragma once

#include <QList>
#include <QString>
#include <optional>

namespace dialog::is {

/// The type of an IS attribute value (or of each element, for a vector attribute). The numeric
/// values are part of the binary encoding (see codec.h): never renumber them.
enum class BasicType : quint8
{
    Bool = 0,
    S8,
    U8,
    S16,
    U16,
    S32,
    U32,
    S64,
    U64,
    Float,
    Double,
    String,
    Time,   ///< UTC timestamp, microsecond resolution (dialog::is::Time)
    Object, ///< another IS type, named by AttributeInfo::typeName()
};
constexpr int BasicTypeCount = 14;

/// The XML spelling of a primitive type ("bool", "u32", "time", ...); empty for Object.
QString basicTypeName(BasicType type);
/// The primitive type spelled @p name in XML; std::nullopt if it is not a primitive type name.
std::optional<BasicType> basicTypeFromName(QStringView name);

/// One attribute of an IS type: name, description and value type (a primitive, a vector of
/// primitives, another IS type or a vector of another IS type). A plain value class.
class AttributeInfo
{
public:
    AttributeInfo() = default;
    /// A primitive attribute (or vector of primitives). @p type must not be BasicType::Object.
    AttributeInfo(const QString &name, BasicType type, const QString &description = {}, bool vector = false);
    /// An attribute holding an object (or vector of objects) of the IS type @p typeName.
    static AttributeInfo nested(const QString &name, const QString &typeName, const QString &description = {},
                                bool vector = false);

    /// The attribute's name.
    QString name() const { return m_name; }
    /// What the attribute means.
    QString description() const { return m_description; }
    /// Its primitive type, or BasicType::Object for a nested object.
    BasicType type() const { return m_type; }
    /// True for a vector of values.
    bool isVector() const { return m_vector; }
    /// For BasicType::Object the nested IS type's name, otherwise the primitive's XML name.
    QString typeName() const;
    /// The attribute's former name (XML `was`): a value written under that name, by an older
    /// layout of the type, loads into this attribute. Empty when it was never renamed.
    QString formerName() const { return m_formerName; }
    /// Sets formerName().
    void setFormerName(const QString &name) { m_formerName = name; }
    /// The text of the attribute's default value (XML `default`, primitive scalars only): what a new
    /// object holds, and what an object written before the attribute existed loads with. Empty:
    /// zero, false, the empty string, the epoch.
    QString defaultText() const { return m_defaultText; }
    /// Sets defaultText(); TypeRegistry checks it parses as the attribute's type.
    void setDefaultText(const QString &text) { m_defaultText = text; }

    /// Equal when name, description, type, vector-ness, former name and default are.
    friend bool operator==(const AttributeInfo &a, const AttributeInfo &b);
    /// Not equal when any of them differs.
    friend bool operator!=(const AttributeInfo &a, const AttributeInfo &b) { return !(a == b); }

private:
    QString m_name;
    QString m_description;
    QString m_nestedType;
    QString m_formerName;
    QString m_defaultText;
    BasicType m_type = BasicType::Bool;
    bool m_vector = false;
};

/// An IS type: name, description, optional base type and its own ordered attributes.
/// A plain value class. allAttributes() is complete (base attributes first, then the type's own)
/// for a TypeInfo obtained from a TypeRegistry; for one built by hand it is attributes() when the
/// type has no base, and empty otherwise.
class TypeInfo
{
public:
    TypeInfo() = default;
    /// A type named @p name, with @p description, derived from @p baseName (empty: no base).
    explicit TypeInfo(const QString &name, const QString &description = {}, const QString &baseName = {});

    /// False for the TypeInfo returned for an unknown type name.
    bool isValid() const { return !m_name.isEmpty(); }
    /// The type's name.
    QString name() const { return m_name; }
    /// What the type means.
    QString description() const { return m_description; }
    /// Empty when the type has no base.
    QString baseName() const { return m_base; }
    /// The type's own attributes, in declaration order (without the inherited ones).
    QList<AttributeInfo> attributes() const { return m_attributes; }
    /// Inherited attributes (outermost base first), then the type's own.
    QList<AttributeInfo> allAttributes() const;
    /// How often an object of this type is expected to be written, in seconds, as declared by the
    /// type itself (XML `expected_interval_s`); 0 when it declares none. An object not written
    /// within it is stale. TypeRegistry::expectedIntervalS() gives the one that applies, inherited
    /// from the nearest base that declares one.
    double expectedIntervalS() const { return m_expectedIntervalS; }
    /// Sets expectedIntervalS() (a non-positive @p seconds: none).
    void setExpectedIntervalS(double seconds) { m_expectedIntervalS = seconds > 0 ? seconds : 0; }

    /// Sets description().
    void setDescription(const QString &description) { m_description = description; }
    /// Sets baseName().
    void setBaseName(const QString &baseName) { m_base = baseName; }
    /// Appends @p attribute to the type's own attributes.
    void addAttribute(const AttributeInfo &attribute) { m_attributes.append(attribute); }
    /// Replaces the type's own attributes.
    void setAttributes(const QList<AttributeInfo> &attributes) { m_attributes = attributes; }

private:
    friend class TypeRegistryPrivate;
    QString m_name;
    QString m_description;
    QString m_base;
    QList<AttributeInfo> m_attributes;
    QList<AttributeInfo> m_all;
    double m_expectedIntervalS = 0;
    bool m_resolved = false;
};

} // namespace dialog::is
