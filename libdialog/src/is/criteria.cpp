#include "dialog/is/criteria.h"

#include "dialog/is/typeregistry.h"

#include <regex.h>

namespace dialog::is {

struct CriteriaPrivate
{
    QString regex, type;
    Criteria::TypeSelector selector = Criteria::TypeSelector::Any;
    Criteria::Logic logic = Criteria::Logic::And;
    bool compiled = false;
    regex_t re{};
    QString error;

    ~CriteriaPrivate()
    {
        if (compiled)
            regfree(&re);
    }
};

namespace {
const char *selectorNames[] = {"any", "exactly", "subtypes", "not", "not-subtypes"};

std::shared_ptr<const CriteriaPrivate> make(const QString &regex, const QString &type,
                                            Criteria::TypeSelector selector, Criteria::Logic logic)
{
    auto p = std::make_shared<CriteriaPrivate>();
    p->regex = regex;
    p->type = type;
    p->selector = type.isEmpty() ? Criteria::TypeSelector::Any : selector;
    p->logic = logic;
    if (!regex.isEmpty()) {
        // Anchored: the expression must match the whole name, as in the IS.
        const QByteArray anchored = "^(" + regex.toUtf8() + ")$";
        const int rc = regcomp(&p->re, anchored.constData(), REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char buf[256];
            regerror(rc, &p->re, buf, sizeof buf);
            p->error =
                QStringLiteral("invalid regular expression '%1': %2").arg(regex, QString::fromLocal8Bit(buf));
        } else {
            p->compiled = true;
        }
    }
    return p;
}
} // namespace

Criteria::Criteria() : d(make(QString(), QString(), TypeSelector::Any, Logic::And)) {}

Criteria::Criteria(const QString &regex, const QString &type, TypeSelector selector, Logic logic)
    : d(make(regex, type, selector, logic))
{
}

Criteria::~Criteria() = default;
Criteria::Criteria(const Criteria &) = default;
Criteria &Criteria::operator=(const Criteria &) = default;

bool Criteria::isValid() const
{
    return d->error.isEmpty();
}
QString Criteria::errorString() const
{
    return d->error;
}
QString Criteria::regex() const
{
    return d->regex;
}
QString Criteria::type() const
{
    return d->type;
}
Criteria::TypeSelector Criteria::selector() const
{
    return d->selector;
}
Criteria::Logic Criteria::logic() const
{
    return d->logic;
}

bool Criteria::matches(const QString &objectName, const QString &typeName, const TypeRegistry &registry) const
{
    if (!isValid())
        return false;
    const bool hasName = d->compiled;
    const bool hasType = d->selector != TypeSelector::Any;
    if (!hasName && !hasType)
        return true;
    // regexec on a compiled, read-only regex_t is thread-safe.
    const bool nameOk = hasName && regexec(&d->re, objectName.toUtf8().constData(), 0, nullptr, 0) == 0;
    bool typeOk = false;
    switch (d->selector) {
    case TypeSelector::Any:
        break;
    case TypeSelector::Exactly:
        typeOk = typeName == d->type;
        break;
    case TypeSelector::WithSubtypes:
        typeOk = registry.isSameOrDerived(typeName, d->type);
        break;
    case TypeSelector::Not:
        typeOk = typeName != d->type;
        break;
    case TypeSelector::NotWithSubtypes:
        typeOk = !registry.isSameOrDerived(typeName, d->type);
        break;
    }
    if (!hasName)
        return typeOk;
    if (!hasType)
        return nameOk;
    return d->logic == Logic::And ? (nameOk && typeOk) : (nameOk || typeOk);
}

Criteria Criteria::exactName(const QString &objectName, const QString &type, TypeSelector selector)
{
    static const QString special = QStringLiteral(".[]()*+?{}|^$\\");
    QString regex;
    regex.reserve(objectName.size() * 2);
    for (QChar c : objectName) {
        if (special.contains(c))
            regex += QLatin1Char('\\');
        regex += c;
    }
    return Criteria(regex, type, selector, Logic::And);
}

bool Criteria::parseSelector(const QString &text, TypeSelector &out)
{
    for (int i = 0; i < 5; ++i) {
        if (text == QLatin1String(selectorNames[i])) {
            out = TypeSelector(i);
            return true;
        }
    }
    return false;
}

QJsonObject Criteria::toJson() const
{
    return QJsonObject{
        {QStringLiteral("regex"), d->regex},
        {QStringLiteral("type"), d->type},
        {QStringLiteral("selector"), QLatin1String(selectorNames[int(d->selector)])},
        {QStringLiteral("logic"), d->logic == Logic::And ? QStringLiteral("and") : QStringLiteral("or")}};
}

Criteria Criteria::fromJson(const QJsonObject &json, QString *error)
{
    TypeSelector sel = TypeSelector::Any;
    const QString selText = json.value(QStringLiteral("selector")).toString(QStringLiteral("any"));
    const QString logicText = json.value(QStringLiteral("logic")).toString(QStringLiteral("and"));
    if (!parseSelector(selText, sel)) {
        if (error)
            *error = QStringLiteral("unknown type selector '%1'").arg(selText);
        return Criteria(QStringLiteral("("), {}); // invalid on purpose: matches nothing
    }
    if (logicText != QLatin1String("and") && logicText != QLatin1String("or")) {
        if (error)
            *error = QStringLiteral("unknown logic '%1' (and, or)").arg(logicText);
        return Criteria(QStringLiteral("("), {});
    }
    Criteria c(json.value(QStringLiteral("regex")).toString(), json.value(QStringLiteral("type")).toString(),
               sel, logicText == QLatin1String("or") ? Logic::Or : Logic::And);
    if (!c.isValid() && error)
        *error = c.errorString();
    return c;
}

} // namespace dialog::is
