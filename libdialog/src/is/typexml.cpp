// Reader of the IS type XML format (resources/is-types/*.xml):
//   <is-types>
//     <type name="T" base="B" description="..." expected_interval_s="10">
//       <attribute name="a" type="u32|...|OtherType" vector="true|false" description="..."
//                  was="formerName" default="42"/>
//     </type>
//   </is-types>
#include "typeregistry_p.h"

#include <QXmlStreamReader>

namespace dialog::is {

namespace {

class XmlTypeReader
{
public:
    XmlTypeReader(QByteArrayView xml, const QString &source) : m_reader(xml.toByteArray()), m_source(source)
    {
    }

    Status read(QList<TypeDecl> &out)
    {
        if (!readDocument(out))
            return Status(Status::Code::BadRequest, m_error);
        return {};
    }

private:
    bool fail(const QString &message)
    {
        m_error = QStringLiteral("%1:%2: %3").arg(m_source).arg(m_reader.lineNumber()).arg(message);
        return false;
    }
    bool xmlError() { return fail(QStringLiteral("malformed XML: %1").arg(m_reader.errorString())); }

    bool readDocument(QList<TypeDecl> &out)
    {
        if (!m_reader.readNextStartElement())
            return m_reader.hasError() ? xmlError() : fail(QStringLiteral("no <is-types> element"));
        if (m_reader.name() != QLatin1String("is-types"))
            return fail(QStringLiteral("expected <is-types>, found <%1>").arg(m_reader.name()));
        while (m_reader.readNextStartElement()) {
            if (m_reader.name() != QLatin1String("type"))
                return fail(QStringLiteral("unexpected element <%1> in <is-types>").arg(m_reader.name()));
            TypeDecl decl;
            if (!readType(decl))
                return false;
            out.append(decl);
        }
        if (m_reader.hasError())
            return xmlError();
        // Anything after the root element (a second root, garbage) is an error too.
        while (!m_reader.atEnd())
            m_reader.readNext();
        return m_reader.hasError() ? xmlError() : true;
    }

    bool readType(TypeDecl &decl)
    {
        const QXmlStreamAttributes attrs = m_reader.attributes();
        const QString name = attrs.value(QLatin1String("name")).toString();
        if (name.isEmpty())
            return fail(QStringLiteral("missing 'name' in <type>"));
        decl.info = TypeInfo(name, attrs.value(QLatin1String("description")).toString(),
                             attrs.value(QLatin1String("base")).toString());
        decl.source = m_source;
        decl.line = int(m_reader.lineNumber());
        const QStringView interval = attrs.value(QLatin1String("expected_interval_s"));
        if (!interval.isNull()) {
            bool ok = false;
            const double seconds = interval.toDouble(&ok);
            // At most a year: a bigger figure is a typo (ms for s), and qint64 µs stay far away.
            if (!ok || !(seconds > 0) || seconds > 366.0 * 86400)
                return fail(QStringLiteral("invalid expected_interval_s '%1' in type '%2' (a number of "
                                           "seconds > 0, at most a year)")
                                .arg(interval.toString(), name));
            decl.info.setExpectedIntervalS(seconds);
        }
        while (m_reader.readNextStartElement()) {
            if (m_reader.name() != QLatin1String("attribute"))
                return fail(
                    QStringLiteral("unexpected element <%1> in type '%2'").arg(m_reader.name(), name));
            if (!readAttribute(decl))
                return false;
        }
        return !m_reader.hasError() || xmlError();
    }

    bool readAttribute(TypeDecl &decl)
    {
        const QString typeName = decl.info.name();
        const QXmlStreamAttributes attrs = m_reader.attributes();
        const QString name = attrs.value(QLatin1String("name")).toString();
        if (name.isEmpty())
            return fail(QStringLiteral("missing 'name' in attribute of type '%1'").arg(typeName));
        const QString type = attrs.value(QLatin1String("type")).toString();
        if (type.isEmpty())
            return fail(QStringLiteral("missing 'type' in attribute '%1' of type '%2'").arg(name, typeName));
        const QStringView vector = attrs.value(QLatin1String("vector"));
        bool isVector = false;
        if (vector == QLatin1String("true") || vector == QLatin1String("1"))
            isVector = true;
        else if (!vector.isEmpty() && vector != QLatin1String("false") && vector != QLatin1String("0"))
            return fail(QStringLiteral("invalid vector value '%1' in attribute '%2' of type '%3'")
                            .arg(vector.toString(), name, typeName));
        const QString description = attrs.value(QLatin1String("description")).toString();
        // Anything that is not a primitive is taken as a nested type; validation checks it exists.
        const std::optional<BasicType> basic = basicTypeFromName(type);
        AttributeInfo attribute = basic ? AttributeInfo(name, *basic, description, isVector)
                                        : AttributeInfo::nested(name, type, description, isVector);
        attribute.setFormerName(attrs.value(QLatin1String("was")).toString());
        attribute.setDefaultText(attrs.value(QLatin1String("default")).toString());
        decl.info.addAttribute(attribute);
        decl.attributeLines.append(int(m_reader.lineNumber()));
        m_reader.skipCurrentElement();
        return !m_reader.hasError() || xmlError();
    }

    QXmlStreamReader m_reader;
    QString m_source;
    QString m_error;
};

} // namespace

Status parseTypesXml(QByteArrayView xml, const QString &source, QList<TypeDecl> &out)
{
    QList<TypeDecl> decls;
    if (Status st = XmlTypeReader(xml, source).read(decls); !st.isOk())
        return st;
    out += decls;
    return {};
}

} // namespace dialog::is
