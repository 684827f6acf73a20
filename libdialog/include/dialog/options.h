// Command-line options as a table: one row per option (name, value name, help, type, bounds, unit,
// target variable), one parser for every DIALOG program, one shape of error.
#pragma once

#include "dialog/status.h"

#include <QCommandLineParser>
#include <QSharedDataPointer>
#include <QString>
#include <QStringList>

#include <functional>
#include <initializer_list>
#include <memory>

namespace dialog {

/// What a bare number given to a numeric option means; named in error messages.
enum class OptionUnit
{
    None,         ///< a count
    Bytes,        ///< sizes: a bare number is bytes; K, M, G, T (powers of 1024) may follow
    KiB,          ///< sizes: a bare number is KiB; K, M, G, T may follow
    Microseconds, ///< durations: a bare number is µs; us, ms, s, min, h, d may follow
    Milliseconds, ///< durations: a bare number is ms
    Seconds,      ///< durations: a bare number is seconds
};

class OptionPrivate;

/// One row of an OptionTable: a command-line option "--name", its help, its type, its bounds and
/// the variable its value is written to. The target keeps its value (the default) when the option
/// is not given, so a default is set by initialising the variable. Targets must outlive the
/// table's parse. A bad value is reported in one shape, naming the option, the value and what is
/// allowed: "invalid --checkpoint-s '-1' (out of range 0..86400 seconds)". Cheap to copy.
class Option
{
public:
    /// What the option's value is, and how it is read.
    enum class Kind
    {
        Flag,     ///< no value; the target becomes true (or the value given to flag()) when given
        Text,     ///< any string (the last one given)
        List,     ///< repeatable; every value given, in order
        Integer,  ///< a whole number in [min, max]
        Number,   ///< a floating-point number in [min, max]
        Duration, ///< a whole number of the unit in [min, max]; "1.5s", "2min" and the like accepted
        Size,     ///< a whole number of the unit in [min, max]; "64K", "8M" and the like accepted
        Choice,   ///< one of a fixed list of words
        Custom,   ///< read by a function of the caller (addresses, lists of its own syntax)
    };

    /// A flag: @p target becomes @p whenGiven when the option is given ("--no-journal" sets false).
    /// Flags, texts and lists may have no target (nullptr): their value is read from the table
    /// (OptionTable::isSet(), value(), values()).
    static Option flag(const QString &name, const QString &help, bool *target = nullptr,
                       bool whenGiven = true);
    /// A text: @p target (or OptionTable::value()) gets the last value given.
    static Option text(const QString &name, const QString &valueName, const QString &help,
                       QString *target = nullptr);
    /// A repeatable option: @p target (or OptionTable::values()) gets every value given, in order.
    static Option list(const QString &name, const QString &valueName, const QString &help,
                       QStringList *target = nullptr);
    /// A floating-point number in [@p min, @p max], in @p unit.
    static Option number(const QString &name, const QString &valueName, const QString &help, double *target,
                         double min, double max, OptionUnit unit = OptionUnit::None);
    /// One of the words @p choices.
    static Option choice(const QString &name, const QString &valueName, const QString &help, QString *target,
                         const QStringList &choices);
    /// A value of a syntax of its own: @p read checks it and stores it where it belongs, or refuses
    /// it with a Status whose message is the reason (refuse()), shown as
    /// "invalid --name 'value' (reason)".
    static Option custom(const QString &name, const QString &valueName, const QString &help,
                         std::function<Status(const QString &value)> read);
    /// The refusal a check() or custom() reader returns: Status::Code::BadRequest with @p why
    /// (what is allowed: "HOST:PORT", "none, batch or always").
    static Status refuse(const QString &why);
    template <typename T>
    /// A whole number in [@p min, @p max], in @p unit, written to @p target of any integer type.
    static Option integer(const QString &name, const QString &valueName, const QString &help, T *target,
                          qint64 min, qint64 max, OptionUnit unit = OptionUnit::None)
    {
        return whole(Kind::Integer, name, valueName, help, setter(target), min, max, unit);
    }
    /// @p unit is Microseconds, Milliseconds or Seconds: the unit of @p target, @p min and @p max.
    template <typename T>
    static Option duration(const QString &name, const QString &valueName, const QString &help, T *target,
                           OptionUnit unit, qint64 min, qint64 max)
    {
        return whole(Kind::Duration, name, valueName, help, setter(target), min, max, unit);
    }
    /// @p unit is Bytes or KiB: the unit of @p target, @p min and @p max.
    template <typename T>
    static Option size(const QString &name, const QString &valueName, const QString &help, T *target,
                       qint64 min, qint64 max, OptionUnit unit = OptionUnit::Bytes)
    {
        return whole(Kind::Size, name, valueName, help, setter(target), min, max, unit);
    }

    ///@{
    /// Copies share the row (implicit sharing).
    Option(const Option &other);
    Option &operator=(const Option &other);
    ///@}
    ~Option();

    /// The option must be given (an error names it when it is not).
    Option &required();
    /// An extra check of the value as given: a Status that is not ok refuses it (refuse()), its
    /// message shown as "invalid --name 'value' (reason)". Runs before the target is written.
    Option &check(std::function<Status(const QString &value)> check);
    /// The value a text row reads as (OptionTable::value()) when the option is not given; rows
    /// with a target have the target's value as their default instead.
    Option &defaultValue(const QString &value);
    /// When the option is not given, the value of environment variable @p variable (if set and not
    /// empty) is read instead, checked the same way; errors then name the variable.
    Option &environment(const QString &variable);

    /// The option's name, without the leading "--".
    QString name() const;
    /// What the option's value is.
    Kind kind() const;
    /// The unit of the value (and of the target), or None.
    OptionUnit unit() const;
    /// The option as QCommandLineParser takes it (name, help, value name).
    QCommandLineOption commandLineOption() const;
    /// Reads this option from @p parser (after its parse) into the target. A bad or missing value
    /// gives Status::Code::BadRequest with the one-line reason as its message; the target is then
    /// unchanged.
    Status apply(const QCommandLineParser &parser) const;
    /// Checks @p value as this option's value and writes it to the target; errors as apply(), with
    /// the code of a check()'s or custom() reader's refusal where one refused it.
    Status applyValue(const QString &value) const;

private:
    explicit Option(OptionPrivate *d);
    template <typename T> static std::function<void(qint64)> setter(T *target)
    {
        return [target](qint64 v) { *target = T(v); };
    }
    static Option whole(Kind kind, const QString &name, const QString &valueName, const QString &help,
                        std::function<void(qint64)> set, qint64 min, qint64 max, OptionUnit unit);

    QSharedDataPointer<OptionPrivate> d;
};

class OptionTablePrivate;

/// The options of one program (or of one verb of the dialogctl tool): rows added in the order of
/// --help, parsed by one QCommandLineParser, each value checked against its row and written to its
/// target. --help is always there. Positional arguments are refused unless
/// addPositional() or allowPositionals() says otherwise. Typical main():
///
///     dialog::OptionTable options(QStringLiteral("dialog-isserver"), QStringLiteral("An IS server ..."));
///     options.add({dialog::Option::text(QStringLiteral("name"), QStringLiteral("name"), ...,
///     &o.name).required(),
///                  dialog::Option::integer(QStringLiteral("threads"), QStringLiteral("n"), ..., &o.threads,
///                  1, 256)});
///     if (!options.process(app.arguments()))
///         return 1;
class OptionTable
{
public:
    /// @p program prefixes error lines ("dialog-isserver: invalid --threads '0' (out of range 1..256)").
    explicit OptionTable(const QString &program, const QString &description = QString());
    /// The first paragraph of --help.
    void setDescription(const QString &description);
    ~OptionTable();
    OptionTable(const OptionTable &) = delete;
    OptionTable &operator=(const OptionTable &) = delete;

    ///@{
    /// Adds rows, in the order of --help.
    OptionTable &add(const Option &row);
    OptionTable &add(std::initializer_list<Option> rows);
    ///@}
    /// A positional argument, for --help; it also allows positional arguments.
    void addPositional(const QString &name, const QString &description, const QString &syntax = QString());
    /// Accepts positional arguments without describing them in --help.
    void allowPositionals();

    /// Parses @p arguments (the first one, the program, is skipped) and applies every row in
    /// order. False with errorText() on an unknown option, a missing value, a bad value, a missing
    /// required option or an unexpected positional argument. --help given: true, and
    /// helpRequested() says so (no row is applied).
    bool parse(const QStringList &arguments);
    /// parse(); on --help prints helpText() on stdout and exits with status 0; on an error prints
    /// "PROGRAM: error" on stderr and returns false (main() then returns 1).
    bool process(const QStringList &arguments);
    /// True when parse() saw --help.
    bool helpRequested() const;
    /// Why parse() failed: one line naming the option and what is allowed.
    QString errorText() const;
    /// The --help text: the description, then every row.
    QString helpText() const;
    /// The program name error lines start with.
    QString program() const;

    /// True when the option @p name was given.
    bool isSet(const QString &name) const;
    /// The value of the text option @p name (its default when not given).
    QString value(const QString &name) const;
    /// Every value of the list option @p name.
    QStringList values(const QString &name) const;
    /// The positional arguments, in order.
    QStringList positionalArguments() const;
    /// The parser itself, for options added by a facility of its own (such as
    /// AccessOptions::addParserOptions()) and read after parse().
    QCommandLineParser &parser();
    /// The QCommandLineParser the table parses with.
    const QCommandLineParser &parser() const;

    /// Prints "PROGRAM: why" on stderr; returns 1, the exit status of a failed DIALOG program.
    int fail(const QString &why) const;

private:
    const std::unique_ptr<OptionTablePrivate> d;
};

} // namespace dialog
