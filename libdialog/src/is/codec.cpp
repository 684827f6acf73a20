// Binary encoding of IS objects; the layout is documented in dialog/is/codec.h.
#include "dialog/is/codec.h"

#include "dialog/is/typeregistry.h"
#include "evolution_p.h"
#include "object_p.h"

#include <QtEndian>
#include <cstring>

namespace dialog::is {

namespace {

constexpr quint8 VectorFlag = 0x80;

quint8 tagOf(const AttributeInfo &a)
{
    return quint8(quint8(a.type()) | (a.isVector() ? VectorFlag : 0));
}

class Writer
{
public:
    explicit Writer(QByteArray &out) : m_out(out) {}

    template <typename T> std::enable_if_t<std::is_arithmetic_v<T>> put(T v)
    {
        if constexpr (std::is_same_v<T, bool>) {
            m_out.append(char(v ? 1 : 0));
        } else if constexpr (std::is_floating_point_v<T>) {
            using Bits = std::conditional_t<sizeof(T) == 4, quint32, quint64>;
            Bits bits;
            std::memcpy(&bits, &v, sizeof bits);
            put(bits);
        } else {
            char b[sizeof(T)];
            qToLittleEndian(v, b);
            m_out.append(b, sizeof(T));
        }
    }
    void put(const QString &s)
    {
        const QByteArray utf8 = s.toUtf8();
        put(quint32(utf8.size()));
        m_out.append(utf8);
    }
    void put(Time t) { put(t.microsecondsSinceEpoch()); }
    void put(const Object &o) { putObject(o); }
    template <typename T> void put(const QList<T> &list)
    {
        put(quint32(list.size()));
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
                      Q_BYTE_ORDER == Q_LITTLE_ENDIAN) {
            // Numbers are stored little-endian: the list's memory is the encoding.
            m_out.append(reinterpret_cast<const char *>(list.constData()),
                         list.size() * qsizetype(sizeof(T)));
        } else {
            for (const T &e : list)
                put(e);
        }
    }
    void put(std::monostate) {} // never held by a valid object

    void putObject(const Object &o)
    {
        const QByteArray name = o.typeName().toUtf8();
        put(quint16(name.size()));
        m_out.append(name);
        const QList<AttributeInfo> attrs = o.attributes();
        put(quint16(attrs.size()));
        for (int i = 0; i < attrs.size(); ++i) {
            put(tagOf(attrs.at(i)));
            std::visit([this](const auto &x) { put(x); }, o.valueAt(i)->storage());
        }
    }

private:
    QByteArray &m_out;
};

// Smallest encoded size of one vector element, to bound a vector's length by the input left.
template <typename T> constexpr qsizetype minEncodedSize()
{
    if constexpr (std::is_arithmetic_v<T>)
        return sizeof(T);
    else if constexpr (std::is_same_v<T, Time>)
        return 8;
    else
        return 4; // string: u32 length; object: u16 name length + u16 attribute count
}

class Reader
{
public:
    Reader(QByteArrayView data, const TypeRegistry &registry, const EvolvedTypes *evolved = nullptr)
        : m_data(data), m_registry(registry), m_evolved(evolved)
    {
    }
    bool converted() const { return m_converted; }

    bool fail(const QString &message, Status::Code code = Status::Code::InvalidObject)
    {
        m_error = Status(code, QStringLiteral("%1 at offset %2").arg(message).arg(m_pos));
        return false;
    }
    bool need(qsizetype n) { return m_data.size() - m_pos >= n || fail(QStringLiteral("truncated input")); }
    qsizetype left() const { return m_data.size() - m_pos; }
    qsizetype pos() const { return m_pos; }
    Status error() const { return m_error; }

    template <typename T>
    std::enable_if_t<std::is_arithmetic_v<T>, bool> read(T &v, const AttributeInfo & = {}, int = 0)
    {
        if (!need(sizeof(T)))
            return false;
        const char *p = m_data.data() + m_pos;
        if constexpr (std::is_same_v<T, bool>) {
            if (quint8(*p) > 1)
                return fail(QStringLiteral("invalid bool %1").arg(quint8(*p)));
            v = *p == 1;
        } else if constexpr (std::is_floating_point_v<T>) {
            using Bits = std::conditional_t<sizeof(T) == 4, quint32, quint64>;
            const Bits bits = qFromLittleEndian<Bits>(p);
            std::memcpy(&v, &bits, sizeof v);
        } else {
            v = qFromLittleEndian<T>(p);
        }
        m_pos += sizeof(T);
        return true;
    }
    bool read(QString &s, const AttributeInfo & = {}, int = 0)
    {
        quint32 len = 0;
        if (!read(len) || !need(len))
            return false;
        s = QString::fromUtf8(m_data.data() + m_pos, qsizetype(len));
        m_pos += len;
        return true;
    }
    bool read(Time &t, const AttributeInfo & = {}, int = 0)
    {
        qint64 us = 0;
        if (!read(us))
            return false;
        t = Time(us);
        return true;
    }
    bool read(Object &o, const AttributeInfo &a, int depth) { return readObject(o, a.typeName(), depth + 1); }
    template <typename T> bool read(QList<T> &list, const AttributeInfo &a, int depth)
    {
        quint32 count = 0;
        if (!read(count))
            return false;
        if (qsizetype(count) > left() / minEncodedSize<T>())
            return fail(QStringLiteral("vector length %1 exceeds the input").arg(count));
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
                      Q_BYTE_ORDER == Q_LITTLE_ENDIAN) {
            const qsizetype bytes = qsizetype(count) * qsizetype(sizeof(T));
            if (!need(bytes))
                return false;
            list.resize(count);
            if (bytes > 0) // an empty list has no data() to copy into (memcpy(nullptr, ..., 0) is UB)
                std::memcpy(list.data(), m_data.data() + m_pos, size_t(bytes));
            m_pos += bytes;
            return true;
        }
        list.reserve(count);
        for (quint32 i = 0; i < count; ++i) {
            T e{};
            if (!read(e, a, depth))
                return false;
            list.append(std::move(e));
        }
        return true;
    }
    bool read(std::monostate &, const AttributeInfo &, int) { return fail(QStringLiteral("empty value")); }

    // @p expectedType is empty for the top-level object.
    bool readObject(Object &out, const QString &expectedType, int depth)
    {
        if (depth > MaxNestingDepth)
            return fail(QStringLiteral("objects nested deeper than %1").arg(MaxNestingDepth));
        quint16 nameLen = 0;
        if (!read(nameLen) || !need(nameLen))
            return false;
        const QString name = QString::fromUtf8(m_data.data() + m_pos, nameLen);
        m_pos += nameLen;
        if (!expectedType.isEmpty() && name != expectedType)
            return fail(
                QStringLiteral("nested object of type '%1' where '%2' is expected").arg(name, expectedType));
        if (m_evolved) {
            if (const auto it = m_evolved->constFind(name); it != m_evolved->cend())
                return readEvolved(out, name, *it, depth);
        }
        const TypeInfo type = m_registry.type(name);
        if (!type.isValid())
            return fail(QStringLiteral("unknown type '%1'").arg(name), Status::Code::UnknownType);
        const QList<AttributeInfo> attrs = type.allAttributes();
        quint16 count = 0;
        if (!read(count))
            return false;
        if (count != attrs.size())
            return fail(QStringLiteral("type '%1' has %2 attributes, the input %3")
                            .arg(name)
                            .arg(attrs.size())
                            .arg(count));
        QList<Value> values;
        values.reserve(count);
        for (const AttributeInfo &a : attrs) {
            Value v;
            if (!readAttribute(a, name, depth, v))
                return false;
            values.append(std::move(v));
        }
        out = ObjectBuilder::make(name, attrs, values);
        return true;
    }

private:
    bool readAttribute(const AttributeInfo &a, const QString &typeName, int depth, Value &v)
    {
        quint8 tag = 0;
        if (!read(tag))
            return false;
        if (tag != tagOf(a))
            return fail(QStringLiteral("tag 0x%1 for attribute '%2' of type '%3' (%4)")
                            .arg(tag, 2, 16, QLatin1Char('0'))
                            .arg(a.name(), typeName, describe(a)));
        v.storage() = defaultStorage(storageIndex(a));
        return std::visit([&](auto &x) { return read(x, a, depth); }, v.storage());
    }

    // An object of a type whose stored layout differs: read as stored, then converted.
    bool readEvolved(Object &out, const QString &name, const EvolvedType &e, int depth)
    {
        if (!e.refusal.isOk())
            return fail(e.refusal.message(), Status::Code::TypeMismatch);
        quint16 count = 0;
        if (!read(count))
            return false;
        if (count != e.source.size())
            return fail(QStringLiteral("type '%1' has %2 attributes in its stored layout, the input %3")
                            .arg(name)
                            .arg(e.source.size())
                            .arg(count));
        QList<Value> stored(count);
        for (int i = 0; i < count; ++i) {
            if (!readAttribute(e.source.at(i), name, depth, stored[i]))
                return false;
        }
        QList<Value> values;
        values.reserve(e.target.size());
        for (int i = 0; i < e.target.size(); ++i) {
            const int from = e.from.at(i);
            values.append(from < 0 ? e.defaults.at(i) : convertValue(stored.at(from), e.target.at(i), e.how.at(i)));
        }
        m_converted = true;
        out = ObjectBuilder::make(name, e.target, values);
        return true;
    }

    QByteArrayView m_data;
    const TypeRegistry &m_registry;
    const EvolvedTypes *m_evolved;
    bool m_converted = false;
    qsizetype m_pos = 0;
    Status m_error;
};

} // namespace

QByteArray encode(const Object &object)
{
    if (const QByteArray &known = ObjectBuilder::encoded(object); !known.isEmpty())
        return known;
    QByteArray out;
    Writer w(out);
    w.put(EncodingVersion);
    w.putObject(object);
    return out;
}

Status decode(QByteArrayView data, const TypeRegistry &registry, Object &out)
{
    return decodeEvolving(data, registry, nullptr, out, nullptr);
}

Status decodeEvolving(QByteArrayView data, const TypeRegistry &registry, const EvolvedTypes *evolved,
                      Object &out, bool *converted)
{
    Reader r(data, registry, evolved);
    quint8 version = 0;
    Object result;
    bool ok = r.read(version);
    if (ok && version != EncodingVersion)
        ok = r.fail(QStringLiteral("unsupported encoding version %1").arg(version));
    ok = ok && r.readObject(result, QString(), 0);
    if (ok && r.left() > 0)
        ok = r.fail(QStringLiteral("%1 trailing bytes").arg(r.left()));
    if (!ok)
        return r.error();
    out = result;
    if (converted)
        *converted = r.converted();
    return Status();
}

Status decode(const QByteArray &data, const TypeRegistry &registry, Object &out)
{
    const Status decoded = decode(QByteArrayView(data), registry, out);
    if (decoded.isOk())
        ObjectBuilder::setEncoded(out, data);
    return decoded;
}

} // namespace dialog::is
