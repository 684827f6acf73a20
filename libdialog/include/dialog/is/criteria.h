#pragma once

#include "dialog/status.h"

#include <QJsonObject>
#include <QString>
#include <QtGlobal>
#include <memory>

namespace dialog::is {

class TypeRegistry;
struct CriteriaPrivate;

/// Selects IS objects for iteration and subscription (the ATLAS IS paper, section 2.3): a regular
/// expression on the object name (PCRE2 syntax, of which the POSIX extended expressions used for
/// names are a subset), combined with `and` / `or` with a type selector. The expression must match
/// the whole object name (the part after "Server."). Compiling and matching are bounded by
/// Criteria::limits(): a pattern over the limits, or one nesting unbounded quantifiers, does not
/// compile (isValid() is false), a match that exhausts them counts as no match (and exhausted()
/// says so).
/// An absent part (empty expression, TypeSelector::Any) does not constrain; the default
/// Criteria matches every object. Immutable and cheap to copy; matches() is thread-safe.
class Criteria
{
public:
    /// Which types of objects match, besides the name.
    enum class TypeSelector
    {
        Any,             ///< no type condition
        Exactly,         ///< objects of the type
        WithSubtypes,    ///< objects of the type and of all its subtypes
        Not,             ///< objects of any type but this one
        NotWithSubtypes, ///< objects of any type but this one and its subtypes
    };
    /// How the name and the type conditions combine.
    enum class Logic
    {
        And,
        Or
    };

    /// Bounds on what one expression may cost; process-wide, read when a Criteria is constructed.
    struct Limits
    {
        int maxPatternLength = 1024;  ///< characters of the expression
        quint32 matchLimit = 1000000; ///< PCRE2 match limit (backtracking steps per name)
        quint32 depthLimit = 10000;   ///< PCRE2 depth limit (nested backtracking)
        quint32 heapLimitKiB = 8192;  ///< PCRE2 heap limit for one match, in KiB
    };
    /// Sets the limits for Criteria constructed from now on. Thread-safe.
    static void setLimits(const Limits &limits);
    /// The limits in force.
    static Limits limits();

    Criteria();
    /// Objects whose name (without the server prefix) matches the POSIX-style regular expression @p regex
    /// (whole name), combined by @p logic with the type condition @p selector on @p type.
    Criteria(const QString &regex, const QString &type = QString(), TypeSelector selector = TypeSelector::Any,
             Logic logic = Logic::And);
    ~Criteria();
    ///@{
    /// Copies share the compiled expression.
    Criteria(const Criteria &);
    Criteria &operator=(const Criteria &);
    ///@}

    /// Matches exactly the object named @p objectName (without the server prefix): its regular
    /// expression is the name with every special character escaped.
    static Criteria exactName(const QString &objectName, const QString &type = QString(),
                              TypeSelector selector = TypeSelector::Any);

    /// False when the regular expression does not compile; errorString() says why.
    bool isValid() const;
    /// Why the regular expression does not compile (empty when valid). An expression that nests
    /// unbounded quantifiers (as in `(a+)+`) is refused as "pattern too expensive".
    QString errorString() const;
    /// True once a match of this expression (or of a copy, which shares it) ran out of limits().
    /// Such an expression costs the whole limit on every name it nearly matches: a standing
    /// subscription drops it rather than paying that on every change.
    bool exhausted() const;

    /// The regular expression on the object name.
    QString regex() const;
    /// The type of the type condition (empty: any).
    QString type() const;
    /// The type condition.
    TypeSelector selector() const;
    /// And or Or.
    Logic logic() const;

    /// Whether an object named @p objectName (without the server prefix) of type @p typeName matches.
    /// An invalid Criteria matches nothing.
    bool matches(const QString &objectName, const QString &typeName, const TypeRegistry &registry) const;

    /// {"regex": …, "type": …, "selector": "any|exactly|subtypes|not|not-subtypes", "logic": "and|or"}
    QJsonObject toJson() const;
    /// Parses what toJson() writes into @p out (untouched on failure); Status::Code::BadRequest with the
    /// reason for a bad selector, logic or regular expression.
    static Status fromJson(const QJsonObject &json, Criteria *out);
    /// Parses a selector name as used in JSON and on command lines; false if unknown.
    static bool parseSelector(const QString &text, TypeSelector &out);

private:
    std::shared_ptr<const CriteriaPrivate> d;
};

} // namespace dialog::is
