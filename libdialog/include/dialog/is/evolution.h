// Type evolution: objects encoded with an older layout of their type (a checkpoint, a journal, a
// master IS server with other type files) decoded into the type as this process knows it now.
#pragma once

#include "dialog/is/object.h"
#include "dialog/status.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <memory>

namespace dialog::is {

class TypeRegistry;

/// The attribute layouts of IS types as some bytes were written with: for each type, its resolved
/// attributes (names, value types, nested type names), in encoding order. Stored with every
/// checkpoint and journal segment so that they can be read after the type files changed. A plain,
/// implicitly shared value class.
///
/// Binary form (little-endian): u32 type count | type*
///   type := u16 name length | UTF-8 name | u16 attribute count | attribute*
///   attribute := u8 tag (as in codec.h) | u16 name length | UTF-8 name | u16 length | nested type name
class Layouts
{
public:
    /// The layouts of every type of @p registry.
    static Layouts of(const TypeRegistry &registry);
    /// The layouts of @p types (declarations as typesFromJson() gives them, bases resolved among
    /// them and the built-in types) into @p out; the errors of TypeRegistry::declareTypes() if
    /// they do not form a valid set (@p out untouched then).
    static Status of(const QList<TypeInfo> &types, Layouts *out);

    /// Records the layout of @p object's type and of the nested objects it holds, unless known.
    /// The types recorded by this call are also added to @p added, if given.
    void add(const Object &object, Layouts *added = nullptr);
    /// Records @p attributes as the layout of @p type (replacing any).
    void add(const QString &type, const QList<AttributeInfo> &attributes);
    /// Adds every layout of @p other (replacing those of the same type).
    void merge(const Layouts &other);

    /// True when a layout of @p type is recorded.
    bool contains(const QString &type) const { return m_types.contains(type); }
    /// The layout of @p type; empty when unknown.
    QList<AttributeInfo> attributes(const QString &type) const { return m_types.value(type); }
    /// The types whose layouts are recorded (in no particular order).
    QStringList typeNames() const { return m_types.keys(); }
    /// True when no layout is recorded.
    bool isEmpty() const { return m_types.isEmpty(); }

    /// The binary form above.
    QByteArray encode() const;
    /// Parses the binary form; every length is bounded by the input. BadRequest on damage.
    static Status decode(QByteArrayView bytes, Layouts *out);

private:
    QHash<QString, QList<AttributeInfo>> m_types;
};

/// How `dialogctl is migrate` converts a value that type evolution refuses.
enum class Conversion
{
    Evolve,  ///< only what evolution accepts (widening, renames, added and dropped attributes)
    Default, ///< the stored value is discarded: the attribute's default
    Convert, ///< text <-> number, scalar -> one-element vector, vector -> its first element
};
/// Conversions by "Type.attribute".
using Conversions = QHash<QString, Conversion>;

/// Declares the @p types that @p registry does not know yet; a type it knows with another
/// definition keeps the registry's (its layout is converted by an Evolution instead) and is listed
/// in @p kept, if given. The errors of TypeRegistry::declareTypes().
Status declareNewTypes(TypeRegistry &registry, const QList<TypeInfo> &types, QStringList *kept = nullptr);

class EvolutionPrivate;

/// Decodes objects written with the layouts @p writtenWith into the types of @p current.
/// For each type whose layout differs from the current one, an attribute is matched by its name or
/// its former name (AttributeInfo::formerName()); an attribute new to the type takes its default, a
/// stored attribute the type no longer has is dropped, and a number is widened (an integer to a
/// wider integer of the same sign or to double, an unsigned one also to a wider signed one, s8/u8/
/// s16/u16 to float, float to double). Anything else (string -> int, a vector to a scalar, another
/// nested type) is refused, with the type, the attribute and the way out, unless @p conversions
/// names the attribute. Types whose layout did not change decode as with is::decode().
///
/// Immutable after construction: decode() may be called from several threads.
class Evolution
{
public:
    /// Prepares the conversions from the layouts @p writtenWith to the types of @p current (which
    /// must outlive it), converting what evolution refuses as @p conversions says.
    Evolution(const TypeRegistry &current, const Layouts &writtenWith, const Conversions &conversions = {});
    ~Evolution();
    Evolution(const Evolution &) = delete;
    Evolution &operator=(const Evolution &) = delete;

    /// Ok, or Status::Code::TypeMismatch for the first change that cannot be converted.
    Status status() const;
    /// One line per type whose layout changed, saying what is converted (for a log, once per type).
    QStringList changes() const;
    /// True when no type's layout differs (decode() is then is::decode()).
    bool isIdentity() const;

    /// is::decode() for bytes written with the old layouts. With status() not Ok, a refused
    /// type fails to decode (TypeMismatch).
    Status decode(QByteArrayView data, Object &out) const;
    /// Same; @p out keeps @p data (as is::decode() of a QByteArray) when nothing was converted.
    Status decode(const QByteArray &data, Object &out) const;

private:
    std::unique_ptr<EvolutionPrivate> d;
};

} // namespace dialog::is
