// Type evolution (dialog/is/evolution.h): the stored layouts of types, the plan that turns an
// object of an older layout into one of the current type, and the value conversions it uses.
#include "dialog/is/evolution.h"

#include "dialog/is/codec.h"
#include "dialog/is/typeregistry.h"
#include "evolution_p.h"
#include "object_p.h"

#include <QDateTime>
#include <QtEndian>
#include <limits>

namespace dialog::is {

namespace {

constexpr quint8 VectorFlag = 0x80;

template <typename T> void put(QByteArray &out, T v)
{
    char b[sizeof(T)];
    qToLittleEndian(v, b);
    out.append(b, sizeof(T));
}

void putString(QByteArray &out, const QString &s)
{
    const QByteArray utf8 = s.toUtf8().left(std::numeric_limits<quint16>::max());
    put(out, quint16(utf8.size()));
    out.append(utf8);
}

class Reader
{
public:
    explicit Reader(QByteArrayView data) : m_data(data) {}
    template <typename T> bool get(T &v)
    {
        if (m_data.size() - m_pos < qsizetype(sizeof(T)))
            return false;
        v = qFromLittleEndian<T>(m_data.data() + m_pos);
        m_pos += sizeof(T);
        return true;
    }
    bool string(QString &s)
    {
        quint16 n = 0;
        if (!get(n) || m_data.size() - m_pos < n)
            return false;
        s = QString::fromUtf8(m_data.data() + m_pos, n);
        m_pos += n;
        return true;
    }
    qsizetype left() const { return m_data.size() - m_pos; }

private:
    QByteArrayView m_data;
    qsizetype m_pos = 0;
};

bool isInteger(BasicType t)
{
    return t >= BasicType::S8 && t <= BasicType::U64;
}
bool isSigned(BasicType t)
{
    return t == BasicType::S8 || t == BasicType::S16 || t == BasicType::S32 || t == BasicType::S64;
}
int byteSize(BasicType t)
{
    switch (t) {
    case BasicType::S8:
    case BasicType::U8:
        return 1;
    case BasicType::S16:
    case BasicType::U16:
        return 2;
    case BasicType::S32:
    case BasicType::U32:
    case BasicType::Float:
        return 4;
    default:
        return 8;
    }
}

// Whether every value of @p from is a value of @p to (up to the precision of double for 64-bit
// integers, which "long -> double" accepts knowingly).
bool widens(BasicType from, BasicType to)
{
    if (from == to)
        return true;
    if (isInteger(from) && isInteger(to)) {
        if (isSigned(from) == isSigned(to))
            return byteSize(to) > byteSize(from);
        return !isSigned(from) && byteSize(to) > byteSize(from); // unsigned into a wider signed
    }
    if (isInteger(from) && to == BasicType::Double)
        return true;
    if (isInteger(from) && to == BasicType::Float)
        return byteSize(from) <= 2;
    return from == BasicType::Float && to == BasicType::Double;
}

bool sameLayout(const QList<AttributeInfo> &a, const QList<AttributeInfo> &b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i) {
        if (a[i].name() != b[i].name() || a[i].type() != b[i].type() || a[i].isVector() != b[i].isVector() ||
            a[i].typeName() != b[i].typeName())
            return false;
    }
    return true;
}

qsizetype indexOf(const QList<AttributeInfo> &attrs, const QString &name)
{
    for (qsizetype i = 0; i < attrs.size(); ++i) {
        if (attrs[i].name() == name)
            return i;
    }
    return -1;
}

// --- value conversion ---------------------------------------------------------------------------

template <typename T> constexpr bool isNumber = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
template <typename T> struct ListOf : std::false_type
{
};
template <typename T> struct ListOf<QList<T>> : std::true_type
{
    using Element = T;
};

template <typename T> QString toText(const T &v)
{
    if constexpr (std::is_same_v<T, QString>)
        return v;
    else if constexpr (std::is_same_v<T, bool>)
        return v ? QStringLiteral("true") : QStringLiteral("false");
    else if constexpr (std::is_floating_point_v<T>)
        return QString::number(double(v), 'g', std::is_same_v<T, float> ? 9 : 17);
    else if constexpr (isNumber<T>)
        return QString::number(v);
    else if constexpr (std::is_same_v<T, Time>)
        return v.toString();
    else
        return {};
}

// Scalar to scalar: numbers cast (after the plan checked it is a widening, or `Convert` asked for
// it), text parsed or formatted. False when it cannot be done; @p to keeps its zero then.
template <typename T, typename S> bool assignScalar(T &to, const S &from)
{
    if constexpr (std::is_same_v<T, S>) {
        to = from;
        return true;
    } else if constexpr (isNumber<T> && (isNumber<S> || std::is_same_v<S, bool>)) {
        to = T(from);
        return true;
    } else if constexpr (isNumber<T> && std::is_same_v<S, QString>) {
        bool ok = false;
        const double d = from.trimmed().toDouble(&ok);
        if (ok && std::is_integral_v<T>) {
            if (!(d >= double(std::numeric_limits<T>::lowest()) && d <= double(std::numeric_limits<T>::max())))
                return false;
        }
        if (ok)
            to = T(d);
        return ok;
    } else if constexpr (std::is_same_v<T, QString>) {
        to = toText(from);
        return !to.isEmpty() || std::is_same_v<S, QString>;
    } else {
        return false;
    }
}

struct Converter
{
    template <typename T, typename S> void operator()(T &to, const S &from) const
    {
        if constexpr (std::is_same_v<T, std::monostate> || std::is_same_v<S, std::monostate>) {
            return;
        } else if constexpr (ListOf<T>::value && ListOf<S>::value) {
            to.reserve(from.size());
            for (const auto &e : from) {
                typename ListOf<T>::Element x{};
                assignScalar(x, e);
                to.append(std::move(x));
            }
        } else if constexpr (ListOf<T>::value) { // a scalar becomes a one-element vector
            typename ListOf<T>::Element x{};
            if (assignScalar(x, from))
                to.append(std::move(x));
        } else if constexpr (ListOf<S>::value) { // a vector becomes its first element
            if (!from.isEmpty())
                assignScalar(to, from.first());
        } else {
            assignScalar(to, from);
        }
    }
};

} // namespace

// --- Layouts ------------------------------------------------------------------------------------

Layouts Layouts::of(const TypeRegistry &registry)
{
    Layouts out;
    for (const QString &name : registry.typeNames())
        out.m_types.insert(name, registry.type(name).allAttributes());
    return out;
}

Status Layouts::of(const QList<TypeInfo> &types, Layouts *out)
{
    TypeRegistry theirs;
    QList<TypeInfo> declared;
    for (const TypeInfo &t : types) {
        if (!theirs.contains(t.name())) // the built-in types
            declared << t;
    }
    if (const Status st = theirs.declareTypes(declared); !st.isOk())
        return st;
    *out = of(theirs);
    return {};
}

Status declareNewTypes(TypeRegistry &registry, const QList<TypeInfo> &types, QStringList *kept)
{
    QList<TypeInfo> fresh;
    for (const TypeInfo &t : types) {
        if (!registry.contains(t.name()))
            fresh << t;
        else if (kept) {
            const TypeInfo known = registry.type(t.name());
            if (known.baseName() != t.baseName() || known.attributes() != t.attributes())
                *kept << t.name();
        }
    }
    return fresh.isEmpty() ? Status() : registry.declareTypes(fresh);
}

void Layouts::add(const Object &object, Layouts *added)
{
    if (!object.isValid() || m_types.contains(object.typeName()))
        return;
    const QList<AttributeInfo> attrs = object.attributes();
    m_types.insert(object.typeName(), attrs);
    if (added)
        added->m_types.insert(object.typeName(), attrs);
    for (int i = 0; i < attrs.size(); ++i) {
        if (attrs.at(i).type() != BasicType::Object)
            continue;
        const Value *v = object.valueAt(i);
        if (const Object *o = v->getIf<Object>())
            add(*o, added);
        else if (const QList<Object> *list = v->getIf<QList<Object>>()) {
            for (const Object &e : *list)
                add(e, added);
        }
    }
}

void Layouts::add(const QString &type, const QList<AttributeInfo> &attributes)
{
    m_types.insert(type, attributes);
}

void Layouts::merge(const Layouts &other)
{
    for (auto it = other.m_types.cbegin(); it != other.m_types.cend(); ++it)
        m_types.insert(it.key(), it.value());
}

QByteArray Layouts::encode() const
{
    QByteArray out;
    QStringList names = m_types.keys();
    names.sort(); // the same layouts give the same bytes
    put(out, quint32(names.size()));
    for (const QString &name : std::as_const(names)) {
        const QList<AttributeInfo> &attrs = m_types[name];
        putString(out, name);
        put(out, quint16(attrs.size()));
        for (const AttributeInfo &a : attrs) {
            put(out, quint8(quint8(a.type()) | (a.isVector() ? VectorFlag : 0)));
            putString(out, a.name());
            putString(out, a.type() == BasicType::Object ? a.typeName() : QString());
        }
    }
    return out;
}

Status Layouts::decode(QByteArrayView bytes, Layouts *out)
{
    const auto bad = [](const QString &why) {
        return Status(Status::Code::BadRequest, QStringLiteral("damaged type layouts: %1").arg(why));
    };
    Reader r(bytes);
    quint32 count = 0;
    if (!r.get(count))
        return bad(QStringLiteral("truncated"));
    if (qsizetype(count) > r.left() / 4) // each type takes at least 4 bytes
        return bad(QStringLiteral("%1 types do not fit %2 bytes").arg(count).arg(r.left()));
    Layouts result;
    for (quint32 t = 0; t < count; ++t) {
        QString name;
        quint16 attrCount = 0;
        if (!r.string(name) || !r.get(attrCount) || name.isEmpty())
            return bad(QStringLiteral("type #%1 is truncated").arg(t));
        QList<AttributeInfo> attrs;
        for (quint16 i = 0; i < attrCount; ++i) {
            quint8 tag = 0;
            QString an, nested;
            if (!r.get(tag) || !r.string(an) || !r.string(nested))
                return bad(QStringLiteral("type '%1' is truncated").arg(name));
            const int basic = tag & ~VectorFlag;
            const bool vector = tag & VectorFlag;
            if (basic >= BasicTypeCount || (basic == int(BasicType::Object)) == nested.isEmpty())
                return bad(QStringLiteral("attribute '%1' of type '%2' has tag 0x%3")
                               .arg(an, name)
                               .arg(tag, 2, 16, QLatin1Char('0')));
            attrs.append(basic == int(BasicType::Object) ? AttributeInfo::nested(an, nested, {}, vector)
                                                         : AttributeInfo(an, BasicType(basic), {}, vector));
        }
        result.m_types.insert(name, attrs);
    }
    if (r.left() != 0)
        return bad(QStringLiteral("%1 trailing bytes").arg(r.left()));
    *out = result;
    return {};
}

// --- values -------------------------------------------------------------------------------------

Value convertValue(const Value &value, const AttributeInfo &target, Conversion how)
{
    Q_UNUSED(how); // the plan allowed this conversion; the rules are the same for every kind
    Value out;
    out.storage() = defaultStorage(storageIndex(target));
    if (value.storage().index() == out.storage().index())
        return value;
    std::visit([&](auto &to) { std::visit([&](const auto &from) { Converter{}(to, from); }, value.storage()); },
               out.storage());
    return out;
}

bool parseDefault(const AttributeInfo &attribute, const QString &text, Value *out, QString *why)
{
    if (attribute.isVector() || attribute.type() == BasicType::Object) {
        *why = QStringLiteral("a default is for a scalar of a primitive type");
        return false;
    }
    Value v;
    v.storage() = defaultStorage(storageIndex(attribute));
    const bool ok = std::visit(
        [&](auto &x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, bool>) {
                if (text == QLatin1String("true") || text == QLatin1String("1"))
                    return (x = true, true);
                return text == QLatin1String("false") || text == QLatin1String("0");
            } else if constexpr (std::is_integral_v<T>) {
                bool good = false;
                if constexpr (std::is_signed_v<T>) {
                    const qint64 n = text.toLongLong(&good);
                    good = good && n >= std::numeric_limits<T>::min() && n <= std::numeric_limits<T>::max();
                    x = T(n);
                } else {
                    const quint64 n = text.toULongLong(&good);
                    good = good && n <= std::numeric_limits<T>::max();
                    x = T(n);
                }
                return good;
            } else if constexpr (std::is_floating_point_v<T>) {
                bool good = false;
                x = T(text.toDouble(&good));
                return good;
            } else if constexpr (std::is_same_v<T, QString>) {
                return (x = text, true);
            } else if constexpr (std::is_same_v<T, Time>) {
                const QDateTime dt = QDateTime::fromString(text, Qt::ISODateWithMs);
                if (dt.isValid())
                    x = Time::fromDateTime(dt);
                return dt.isValid();
            } else {
                return false;
            }
        },
        v.storage());
    if (!ok) {
        *why = QStringLiteral("default '%1' is not a %2").arg(text, attribute.typeName());
        return false;
    }
    *out = v;
    return true;
}

Value defaultValue(const AttributeInfo &attribute, const TypeRegistry &registry)
{
    Value v;
    QString why;
    if (!attribute.defaultText().isEmpty() && parseDefault(attribute, attribute.defaultText(), &v, &why))
        return v;
    if (attribute.type() == BasicType::Object && !attribute.isVector())
        return Value(Object::create(registry, attribute.typeName()));
    v.storage() = defaultStorage(storageIndex(attribute));
    return v;
}

// --- Evolution ----------------------------------------------------------------------------------

class EvolutionPrivate
{
public:
    EvolutionPrivate(const TypeRegistry &current) : registry(current) {}

    void plan(const QString &type, const QList<AttributeInfo> &source, const Conversions &conversions);

    const TypeRegistry &registry;
    EvolvedTypes evolved;
    Status status;
    QStringList changes;
};

void EvolutionPrivate::plan(const QString &type, const QList<AttributeInfo> &source, const Conversions &conversions)
{
    const TypeInfo info = registry.type(type);
    if (!info.isValid())
        return; // decoding says "unknown type", as without evolution
    const QList<AttributeInfo> target = info.allAttributes();
    if (sameLayout(source, target))
        return;
    EvolvedType e;
    e.source = source;
    e.target = target;
    QStringList notes;
    QList<bool> used(source.size(), false);
    for (const AttributeInfo &t : target) {
        qsizetype from = indexOf(source, t.name());
        if (from < 0 && !t.formerName().isEmpty() && indexOf(target, t.formerName()) < 0) {
            from = indexOf(source, t.formerName());
            if (from >= 0)
                notes << QStringLiteral("'%1' renamed to '%2'").arg(t.formerName(), t.name());
        }
        const Conversion asked = conversions.value(type + QLatin1Char('.') + t.name(), Conversion::Evolve);
        Conversion how = asked;
        if (from >= 0) {
            used[from] = true;
            const AttributeInfo &s = source.at(from);
            const bool same = s.type() == t.type() && s.isVector() == t.isVector() && s.typeName() == t.typeName();
            const bool widening = !same && s.isVector() == t.isVector() && s.type() != BasicType::Object &&
                                  t.type() != BasicType::Object && widens(s.type(), t.type());
            if (widening)
                notes << QStringLiteral("'%1' widened from %2 to %3").arg(t.name(), describe(s), describe(t));
            if (!same && !widening && asked == Conversion::Evolve && e.refusal.isOk()) {
                e.refusal = Status(
                    Status::Code::TypeMismatch,
                    QStringLiteral("type '%1', attribute '%2': %3 in the stored data, %4 now, which is not a "
                                   "widening; convert it with 'dialogctl is migrate --convert %1.%2=convert' "
                                   "(or '=default' to drop the stored values)")
                        .arg(type, t.name(), describe(s), describe(t)));
            }
            if (!same && !widening && asked != Conversion::Evolve)
                notes << QStringLiteral("'%1' %2 from %3 to %4")
                             .arg(t.name(),
                                  asked == Conversion::Default ? QStringLiteral("reset") : QStringLiteral("converted"),
                                  describe(s), describe(t));
            if (asked == Conversion::Default)
                from = -1;
        } else {
            notes << QStringLiteral("'%1' added (%2)")
                         .arg(t.name(), t.defaultText().isEmpty() ? QStringLiteral("zero")
                                                                  : QStringLiteral("default ") + t.defaultText());
        }
        e.from.append(int(from));
        e.how.append(how);
        e.defaults.append(from < 0 ? defaultValue(t, registry) : Value());
    }
    for (qsizetype i = 0; i < source.size(); ++i) {
        if (!used.at(i))
            notes << QStringLiteral("'%1' dropped").arg(source.at(i).name());
    }
    if (notes.isEmpty()) // only the order changed
        notes << QStringLiteral("attributes reordered");
    changes << QStringLiteral("type '%1' evolved: %2").arg(type, notes.join(QLatin1String(", ")));
    if (!e.refusal.isOk() && status.isOk())
        status = e.refusal;
    evolved.insert(type, e);
}

Evolution::Evolution(const TypeRegistry &current, const Layouts &writtenWith, const Conversions &conversions)
    : d(new EvolutionPrivate(current))
{
    QStringList names = writtenWith.typeNames();
    names.sort();
    for (const QString &name : std::as_const(names))
        d->plan(name, writtenWith.attributes(name), conversions);
}

Evolution::~Evolution() = default;

Status Evolution::status() const
{
    return d->status;
}

QStringList Evolution::changes() const
{
    return d->changes;
}

bool Evolution::isIdentity() const
{
    return d->evolved.isEmpty();
}

Status Evolution::decode(QByteArrayView data, Object &out) const
{
    return decodeEvolving(data, d->registry, d->evolved.isEmpty() ? nullptr : &d->evolved, out, nullptr);
}

Status Evolution::decode(const QByteArray &data, Object &out) const
{
    if (d->evolved.isEmpty())
        return is::decode(data, d->registry, out);
    bool converted = false;
    const Status st = decodeEvolving(QByteArrayView(data), d->registry, &d->evolved, out, &converted);
    if (st.isOk() && !converted)
        ObjectBuilder::setEncoded(out, data);
    return st;
}

} // namespace dialog::is
