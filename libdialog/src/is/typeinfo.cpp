#include "dialog/is/typeinfo.h"

namespace dialog::is {

namespace {

// Indexed by BasicType.
const char *const PrimitiveNames[BasicTypeCount] = {"bool", "s8",  "u8",    "s16",    "u16",    "s32",  "u32",
                                                    "s64",  "u64", "float", "double", "string", "time", ""};

} // namespace

QString basicTypeName(BasicType type)
{
    const int i = int(type);
    return i >= 0 && i < BasicTypeCount ? QString::fromLatin1(PrimitiveNames[i]) : QString();
}

std::optional<BasicType> basicTypeFromName(QStringView name)
{
    for (int i = 0; i < int(BasicType::Object); ++i) {
        if (name == QLatin1String(PrimitiveNames[i]))
            return BasicType(i);
    }
    return std::nullopt;
}

AttributeInfo::AttributeInfo(const QString &name, BasicType type, const QString &description, bool vector)
    : m_name(name), m_description(description), m_type(type), m_vector(vector)
{
}

AttributeInfo AttributeInfo::nested(const QString &name, const QString &typeName, const QString &description,
                                    bool vector)
{
    AttributeInfo a(name, BasicType::Object, description, vector);
    a.m_nestedType = typeName;
    return a;
}

QString AttributeInfo::typeName() const
{
    return m_type == BasicType::Object ? m_nestedType : basicTypeName(m_type);
}

bool operator==(const AttributeInfo &a, const AttributeInfo &b)
{
    return a.m_name == b.m_name && a.m_description == b.m_description && a.m_type == b.m_type &&
           a.m_vector == b.m_vector && a.m_nestedType == b.m_nestedType && a.m_formerName == b.m_formerName &&
           a.m_defaultText == b.m_defaultText;
}

TypeInfo::TypeInfo(const QString &name, const QString &description, const QString &baseName)
    : m_name(name), m_description(description), m_base(baseName)
{
}

QList<AttributeInfo> TypeInfo::allAttributes() const
{
    if (m_resolved)
        return m_all;
    return m_base.isEmpty() ? m_attributes : QList<AttributeInfo>();
}

} // namespace dialog::is
