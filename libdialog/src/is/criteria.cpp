#include "dialog/is/criteria.h"

#include "dialog/is/typeregistry.h"

#define PCRE2_CODE_UNIT_WIDTH 16
#include <pcre2.h>

#include <QLoggingCategory>
#include <QRegularExpression>
#include <atomic>
#include <mutex>

Q_LOGGING_CATEGORY(lcCriteria, "dialog.is.criteria")

namespace dialog::is {

namespace {
std::mutex limitsLock;
Criteria::Limits currentLimits;

Criteria::Limits limitsNow()
{
    std::lock_guard<std::mutex> lock(limitsLock);
    return currentLimits;
}

QString pcreMessage(int code)
{
    PCRE2_UCHAR16 buf[256];
    const int n = pcre2_get_error_message(code, buf, sizeof buf / sizeof buf[0]);
    return n < 0 ? QStringLiteral("error %1").arg(code)
                 : QString::fromUtf16(reinterpret_cast<const char16_t *>(buf), n);
}
} // namespace

struct CriteriaPrivate
{
    QString regex, type;
    Criteria::TypeSelector selector = Criteria::TypeSelector::Any;
    Criteria::Logic logic = Criteria::Logic::And;
    pcre2_code *code = nullptr;
    // Shared read-only by every matches() call: PCRE2 allows a match context in several threads
    // as long as nobody changes it.
    pcre2_match_context *matchContext = nullptr;
    QString error;
    mutable std::atomic<bool> limitReported{false}; // also: a match ran out of the limits

    ~CriteriaPrivate()
    {
        pcre2_match_context_free(matchContext);
        pcre2_code_free(code);
    }
};

namespace {
const char *selectorNames[] = {"any", "exactly", "subtypes", "not", "not-subtypes"};

// Why @p regex is too expensive to match, or empty. Refused: an unbounded quantifier (*, +, {n,})
// or a repeat of more than one applied to a group that itself holds an unbounded quantifier, as in
// (a+)+ or (?:(?:.|.)+)+: such "star height 2" patterns backtrack exponentially on a name that
// almost matches, and cost the whole match limit on every name. A pattern only has to be read
// far enough to see its quantifiers and groups: escapes and character classes are skipped.
QString nestingProblem(const QString &regex)
{
    struct Group
    {
        bool unbounded = false; // holds an unbounded quantifier
    };
    QList<Group> groups{Group()};
    bool lastIsGroup = false, lastGroupUnbounded = false, lastIsQuantifier = false;
    const qsizetype n = regex.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = regex.at(i);
        bool quantifier = false, unbounded = false, repeats = false;
        if (c == QLatin1Char('\\')) {
            ++i;
        } else if (c == QLatin1Char('[')) {
            qsizetype j = i + 1;
            if (j < n && regex.at(j) == QLatin1Char('^'))
                ++j;
            if (j < n && regex.at(j) == QLatin1Char(']'))
                ++j;
            while (j < n && regex.at(j) != QLatin1Char(']'))
                j += regex.at(j) == QLatin1Char('\\') ? 2 : 1;
            i = j;
        } else if (c == QLatin1Char('(')) {
            if (i + 1 < n && regex.at(i + 1) == QLatin1Char('?')) {
                qsizetype j = i + 2;
                while (j < n && !QStringLiteral(":=!>)").contains(regex.at(j)))
                    ++j;
                i = j;
                if (j < n && regex.at(j) == QLatin1Char(')')) { // an option setting or comment
                    lastIsGroup = lastIsQuantifier = false;
                    continue;
                }
            }
            groups.append(Group());
            lastIsGroup = lastIsQuantifier = false;
            continue;
        } else if (c == QLatin1Char(')') && groups.size() > 1) {
            const Group g = groups.takeLast();
            groups.last().unbounded |= g.unbounded;
            lastIsGroup = true;
            lastGroupUnbounded = g.unbounded;
            lastIsQuantifier = false;
            continue;
        } else if (c == QLatin1Char('*') || c == QLatin1Char('+')) {
            quantifier = true;
            unbounded = repeats = !lastIsQuantifier; // "a*+", "a+?" are one quantifier
        } else if (c == QLatin1Char('?')) {
            quantifier = true;
        } else if (c == QLatin1Char('{')) {
            const qsizetype close = regex.indexOf(QLatin1Char('}'), i);
            static const QRegularExpression counted(QStringLiteral("^\\{(\\d+)(,(\\d*))?\\}$"));
            const QRegularExpressionMatch m =
                close < 0 ? QRegularExpressionMatch() : counted.match(regex.mid(i, close - i + 1));
            if (m.hasMatch()) {
                quantifier = true;
                unbounded = m.hasCaptured(2) && m.captured(3).isEmpty();
                repeats = unbounded ||
                          (m.hasCaptured(2) ? m.captured(3).toLongLong() : m.captured(1).toLongLong()) > 1;
                i = close;
            }
        }
        if (quantifier) {
            if (repeats && lastIsGroup && lastGroupUnbounded)
                return QStringLiteral("pattern too expensive: a repeated group holds an unbounded quantifier "
                                      "(as in (a+)+), which backtracks exponentially; write it without "
                                      "the nesting");
            groups.last().unbounded |= unbounded;
            lastIsQuantifier = true;
            continue;
        }
        lastIsGroup = lastIsQuantifier = false;
    }
    return {};
}

// Compiles @p regex with the process-wide limits: the pattern length and the parenthesis nesting
// are bounded here, the compiled size by PCRE2 itself (a pattern whose compiled form would exceed
// its internal link size fails with "regular expression is too large" before any memory grows);
// matching is bounded by the match, depth and heap limits of the match context.
void compile(CriteriaPrivate *p, const QString &regex)
{
    const Criteria::Limits limits = limitsNow();
    if (regex.size() > limits.maxPatternLength) {
        p->error = QStringLiteral("regular expression too long: %1 characters, the limit is %2")
                       .arg(regex.size())
                       .arg(limits.maxPatternLength);
        return;
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(nullptr);
    pcre2_set_max_pattern_length(cc, PCRE2_SIZE(limits.maxPatternLength));
    pcre2_set_parens_nest_limit(cc, 64);
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    // Anchored at both ends: the expression must match the whole name, as in the IS.
    p->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR16>(regex.utf16()), PCRE2_SIZE(regex.size()),
                            PCRE2_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED, &errorCode, &errorOffset, cc);
    pcre2_compile_context_free(cc);
    if (!p->code) {
        p->error = QStringLiteral("invalid regular expression '%1': %2 at offset %3")
                       .arg(regex, pcreMessage(errorCode))
                       .arg(qulonglong(errorOffset));
        return;
    }
    p->error = nestingProblem(regex);
    if (!p->error.isEmpty())
        return;
    p->matchContext = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(p->matchContext, limits.matchLimit);
    pcre2_set_depth_limit(p->matchContext, limits.depthLimit);
    pcre2_set_heap_limit(p->matchContext, limits.heapLimitKiB);
}

std::shared_ptr<const CriteriaPrivate> make(const QString &regex, const QString &type,
                                            Criteria::TypeSelector selector, Criteria::Logic logic)
{
    auto p = std::make_shared<CriteriaPrivate>();
    p->regex = regex;
    p->type = type;
    p->selector = type.isEmpty() ? Criteria::TypeSelector::Any : selector;
    p->logic = logic;
    if (!regex.isEmpty())
        compile(p.get(), regex);
    return p;
}

bool nameMatches(const CriteriaPrivate &p, const QString &name)
{
    pcre2_match_data *md = pcre2_match_data_create(1, nullptr);
    const int rc = pcre2_match(p.code, reinterpret_cast<PCRE2_SPTR16>(name.utf16()), PCRE2_SIZE(name.size()),
                               0, 0, md, p.matchContext);
    pcre2_match_data_free(md);
    if (rc >= 0)
        return true;
    if (rc != PCRE2_ERROR_NOMATCH && !p.limitReported.exchange(true)) {
        // A limit (match, depth, heap) or bad UTF-16 in a name: the object does not match; said once.
        qCWarning(lcCriteria).noquote() << "regular expression" << p.regex << "on" << name << ":"
                                        << pcreMessage(rc) << "- counted as no match";
    }
    return false;
}
} // namespace

void Criteria::setLimits(const Limits &limits)
{
    std::lock_guard<std::mutex> lock(limitsLock);
    currentLimits = limits;
}

Criteria::Limits Criteria::limits()
{
    return limitsNow();
}

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

bool Criteria::exhausted() const
{
    return d->limitReported.load();
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
    const bool hasName = d->code != nullptr;
    const bool hasType = d->selector != TypeSelector::Any;
    if (!hasName && !hasType)
        return true;
    const bool nameOk = hasName && nameMatches(*d, objectName);
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

Status Criteria::fromJson(const QJsonObject &json, Criteria *out)
{
    TypeSelector sel = TypeSelector::Any;
    const QString selText = json.value(QStringLiteral("selector")).toString(QStringLiteral("any"));
    const QString logicText = json.value(QStringLiteral("logic")).toString(QStringLiteral("and"));
    if (!parseSelector(selText, sel))
        return Status(Status::Code::BadRequest, QStringLiteral("unknown type selector '%1'").arg(selText));
    if (logicText != QLatin1String("and") && logicText != QLatin1String("or"))
        return Status(Status::Code::BadRequest, QStringLiteral("unknown logic '%1' (and, or)").arg(logicText));
    Criteria c(json.value(QStringLiteral("regex")).toString(), json.value(QStringLiteral("type")).toString(),
               sel, logicText == QLatin1String("or") ? Logic::Or : Logic::And);
    if (!c.isValid())
        return Status(Status::Code::BadRequest, c.errorString());
    *out = std::move(c);
    return {};
}

} // namespace dialog::is
