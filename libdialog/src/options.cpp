#include "dialog/options.h"

#include <QList>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dialog {

class OptionPrivate : public QSharedData
{
public:
    Option::Kind kind = Option::Kind::Text;
    QString name, valueName, help, environment, defaultValue;
    OptionUnit unit = OptionUnit::None;
    qint64 min = 0, max = 0;
    double minNumber = 0, maxNumber = 0;
    QStringList choices;
    bool required = false;
    bool *flagTarget = nullptr;
    bool whenGiven = true;
    QString *textTarget = nullptr;
    QStringList *listTarget = nullptr;
    double *numberTarget = nullptr;
    std::function<void(qint64)> set;
    std::function<Status(const QString &)> check;
};

namespace {

QString unitName(OptionUnit unit)
{
    switch (unit) {
    case OptionUnit::None:
        return QString();
    case OptionUnit::Bytes:
        return QStringLiteral("bytes");
    case OptionUnit::KiB:
        return QStringLiteral("KiB");
    case OptionUnit::Microseconds:
        return QStringLiteral("microseconds");
    case OptionUnit::Milliseconds:
        return QStringLiteral("milliseconds");
    case OptionUnit::Seconds:
        return QStringLiteral("seconds");
    }
    return QString();
}

// The size of one unit in the base of its kind: microseconds for durations, bytes for sizes.
double unitFactor(OptionUnit unit)
{
    switch (unit) {
    case OptionUnit::KiB:
        return 1024;
    case OptionUnit::Milliseconds:
        return 1e3;
    case OptionUnit::Seconds:
        return 1e6;
    default:
        return 1;
    }
}

// The factor of a suffix in the base of @p kind; 0: not a suffix of that kind.
double suffixFactor(Option::Kind kind, const QString &suffix)
{
    static const QList<std::pair<QString, double>> durations = {
        {QStringLiteral("us"), 1},     {QStringLiteral("ms"), 1e3},   {QStringLiteral("s"), 1e6},
        {QStringLiteral("min"), 60e6}, {QStringLiteral("h"), 3600e6}, {QStringLiteral("d"), 86400e6}};
    static const QList<std::pair<QString, double>> sizes = {
        {QStringLiteral("b"), 1},
        {QStringLiteral("k"), 1024.0},
        {QStringLiteral("kib"), 1024.0},
        {QStringLiteral("m"), 1024.0 * 1024},
        {QStringLiteral("mib"), 1024.0 * 1024},
        {QStringLiteral("g"), 1024.0 * 1024 * 1024},
        {QStringLiteral("gib"), 1024.0 * 1024 * 1024},
        {QStringLiteral("t"), 1024.0 * 1024 * 1024 * 1024},
        {QStringLiteral("tib"), 1024.0 * 1024 * 1024 * 1024}};
    const auto &table = kind == Option::Kind::Duration ? durations : sizes;
    const QString key = kind == Option::Kind::Size ? suffix.toLower() : suffix;
    for (const auto &[name, factor] : table)
        if (name == key)
            return factor;
    return 0;
}

QString range(const OptionPrivate &d)
{
    const QString unit = unitName(d.unit);
    const QString r = d.kind == Option::Kind::Number
                          ? QStringLiteral("%1..%2").arg(d.minNumber).arg(d.maxNumber)
                          : QStringLiteral("%1..%2").arg(d.min).arg(d.max);
    return unit.isEmpty() ? r : r + QLatin1Char(' ') + unit;
}

QString expected(const OptionPrivate &d)
{
    switch (d.kind) {
    case Option::Kind::Integer:
        return QStringLiteral("expected an integer in %1").arg(range(d));
    case Option::Kind::Number:
        return QStringLiteral("expected a number in %1").arg(range(d));
    case Option::Kind::Duration:
        return QStringLiteral(
                   "expected a duration in %1; a bare number is in %2, or add us, ms, s, min, h or d")
            .arg(range(d), unitName(d.unit));
    case Option::Kind::Size:
        return QStringLiteral("expected a size in %1; a bare number is in %2, or add K, M, G or T")
            .arg(range(d), unitName(d.unit));
    default:
        return QString();
    }
}

// A whole number of the row's unit from @p text ("90", "1.5s", "64K"); false with the reason.
bool readWhole(const OptionPrivate &d, const QString &text, qint64 *out, QString *why)
{
    const QString t = text.trimmed();
    qsizetype digitsEnd = 0;
    while (digitsEnd < t.size() &&
           (t.at(digitsEnd).isDigit() || t.at(digitsEnd) == QLatin1Char('.') ||
            (digitsEnd == 0 && (t.at(0) == QLatin1Char('-') || t.at(0) == QLatin1Char('+')))))
        ++digitsEnd;
    const QString number = t.left(digitsEnd);
    const QString suffix = t.mid(digitsEnd);
    bool ok = false;
    qint64 v = 0;
    if (suffix.isEmpty() && !number.contains(QLatin1Char('.'))) {
        v = number.toLongLong(&ok);
    } else if (d.kind != Option::Kind::Integer) {
        const double factor = suffix.isEmpty() ? unitFactor(d.unit) : suffixFactor(d.kind, suffix);
        const double x = number.toDouble(&ok) * factor / unitFactor(d.unit);
        ok = ok && factor > 0 && std::isfinite(x);
        if (ok && (std::abs(x - std::round(x)) > 1e-9 * qMax(1.0, std::abs(x)))) {
            *why = QStringLiteral("not a whole number of %1").arg(unitName(d.unit));
            return false;
        }
        ok = ok && std::abs(x) < 9e18;
        if (ok)
            v = qint64(std::llround(x));
    }
    if (!ok) {
        *why = expected(d);
        return false;
    }
    if (v < d.min || v > d.max) {
        *why = QStringLiteral("out of range %1").arg(range(d));
        return false;
    }
    *out = v;
    return true;
}

QString choiceList(const QStringList &choices)
{
    if (choices.size() < 2)
        return choices.join(QString());
    return QStringList(choices.mid(0, choices.size() - 1)).join(QStringLiteral(", ")) +
           QStringLiteral(" or ") + choices.last();
}

} // namespace

Option::Option(OptionPrivate *p) : d(p) {}
Option::Option(const Option &other) = default;
Option &Option::operator=(const Option &other) = default;
Option::~Option() = default;

static OptionPrivate *row(Option::Kind kind, const QString &name, const QString &valueName,
                          const QString &help)
{
    auto *p = new OptionPrivate;
    p->kind = kind;
    p->name = name;
    p->valueName = valueName;
    p->help = help;
    return p;
}

Option Option::flag(const QString &name, const QString &help, bool *target, bool whenGiven)
{
    OptionPrivate *p = row(Kind::Flag, name, QString(), help);
    p->flagTarget = target;
    p->whenGiven = whenGiven;
    return Option(p);
}

Option Option::custom(const QString &name, const QString &valueName, const QString &help,
                      std::function<Status(const QString &)> read)
{
    OptionPrivate *p = row(Kind::Custom, name, valueName, help);
    p->check = std::move(read);
    return Option(p);
}

Option Option::text(const QString &name, const QString &valueName, const QString &help, QString *target)
{
    OptionPrivate *p = row(Kind::Text, name, valueName, help);
    p->textTarget = target;
    return Option(p);
}

Option Option::list(const QString &name, const QString &valueName, const QString &help, QStringList *target)
{
    OptionPrivate *p = row(Kind::List, name, valueName, help);
    p->listTarget = target;
    return Option(p);
}

Option Option::number(const QString &name, const QString &valueName, const QString &help, double *target,
                      double min, double max, OptionUnit unit)
{
    OptionPrivate *p = row(Kind::Number, name, valueName, help);
    p->numberTarget = target;
    p->minNumber = min;
    p->maxNumber = max;
    p->unit = unit;
    return Option(p);
}

Option Option::choice(const QString &name, const QString &valueName, const QString &help, QString *target,
                      const QStringList &choices)
{
    OptionPrivate *p = row(Kind::Choice, name, valueName, help);
    p->textTarget = target;
    p->choices = choices;
    return Option(p);
}

Option Option::whole(Kind kind, const QString &name, const QString &valueName, const QString &help,
                     std::function<void(qint64)> set, qint64 min, qint64 max, OptionUnit unit)
{
    OptionPrivate *p = row(kind, name, valueName, help);
    p->set = std::move(set);
    p->min = min;
    p->max = max;
    p->unit = unit;
    return Option(p);
}

Option &Option::required()
{
    d->required = true;
    return *this;
}

Status Option::refuse(const QString &why)
{
    return Status(Status::Code::BadRequest, why);
}

Option &Option::check(std::function<Status(const QString &)> check)
{
    d->check = std::move(check);
    return *this;
}

Option &Option::defaultValue(const QString &value)
{
    d->defaultValue = value;
    return *this;
}

Option &Option::environment(const QString &variable)
{
    d->environment = variable;
    return *this;
}

QString Option::name() const
{
    return d->name;
}

Option::Kind Option::kind() const
{
    return d->kind;
}

OptionUnit Option::unit() const
{
    return d->unit;
}

QCommandLineOption Option::commandLineOption() const
{
    if (d->kind == Kind::Flag)
        return QCommandLineOption(d->name, d->help);
    return QCommandLineOption(d->name, d->help, d->valueName, d->defaultValue);
}

Status Option::applyValue(const QString &value) const
{
    QString why;
    qint64 whole = 0;
    double number = 0;
    const Status checked = d->check ? d->check(value) : Status();
    bool ok = checked.isOk();
    if (!ok)
        why = checked.message();
    if (ok && (d->kind == Kind::Integer || d->kind == Kind::Duration || d->kind == Kind::Size))
        ok = readWhole(*d, value, &whole, &why);
    if (ok && d->kind == Kind::Number) {
        number = value.trimmed().toDouble(&ok);
        if (!ok || !std::isfinite(number))
            why = expected(*d), ok = false;
        else if (number < d->minNumber || number > d->maxNumber)
            why = QStringLiteral("out of range %1").arg(range(*d)), ok = false;
    }
    if (ok && d->kind == Kind::Choice && !d->choices.contains(value))
        why = choiceList(d->choices), ok = false;
    if (!ok)
        return Status(checked.isOk() ? Status::Code::BadRequest : checked.code(),
                      QStringLiteral("invalid --%1 '%2' (%3)").arg(d->name, value, why));
    switch (d->kind) {
    case Kind::Flag:
        if (d->flagTarget)
            *d->flagTarget = d->whenGiven;
        break;
    case Kind::Custom: // the check stored it
        break;
    case Kind::Text:
    case Kind::Choice:
        if (d->textTarget)
            *d->textTarget = value;
        break;
    case Kind::List:
        if (d->listTarget)
            d->listTarget->append(value);
        break;
    case Kind::Number:
        *d->numberTarget = number;
        break;
    case Kind::Integer:
    case Kind::Duration:
    case Kind::Size:
        d->set(whole);
        break;
    }
    return Status();
}

Status Option::apply(const QCommandLineParser &parser) const
{
    if (!parser.isSet(d->name)) {
        const QString env =
            d->environment.isEmpty() ? QString() : qEnvironmentVariable(qPrintable(d->environment));
        if (!env.isEmpty()) {
            if (d->kind == Kind::Flag) {
                const QString v = env.trimmed().toLower();
                const bool off = v == QLatin1String("0") || v == QLatin1String("no") ||
                                 v == QLatin1String("off") || v == QLatin1String("false");
                if (!off && d->flagTarget)
                    *d->flagTarget = d->whenGiven;
                return Status();
            }
            const Status st = applyValue(env);
            if (st.isOk())
                return st;
            // Name the variable the value came from.
            return Status(st.code(), QStringLiteral("$%1: %2").arg(d->environment, st.message()));
        }
        if (d->required)
            return Status(Status::Code::BadRequest, QStringLiteral("--%1 is required").arg(d->name));
        return Status();
    }
    if (d->kind == Kind::Flag)
        return applyValue(QString());
    if (d->kind == Kind::List) {
        const QStringList before = d->listTarget ? *d->listTarget : QStringList();
        if (d->listTarget)
            d->listTarget->clear();
        for (const QString &v : parser.values(d->name)) {
            if (const Status st = applyValue(v); !st.isOk()) {
                if (d->listTarget)
                    *d->listTarget = before;
                return st;
            }
        }
        return Status();
    }
    return applyValue(parser.value(d->name));
}

class OptionTablePrivate
{
public:
    QString program;
    QCommandLineParser parser;
    QList<Option> rows;
    QString error;
    bool positionals = false;
    bool help = false;
};

OptionTable::OptionTable(const QString &program, const QString &description) : d(new OptionTablePrivate)
{
    d->program = program;
    if (!description.isEmpty())
        d->parser.setApplicationDescription(description);
    d->parser.addHelpOption();
}

OptionTable::~OptionTable() = default;

void OptionTable::setDescription(const QString &description)
{
    d->parser.setApplicationDescription(description);
}

OptionTable &OptionTable::add(const Option &row)
{
    d->rows.append(row);
    d->parser.addOption(row.commandLineOption());
    return *this;
}

OptionTable &OptionTable::add(std::initializer_list<Option> rows)
{
    for (const Option &row : rows)
        add(row);
    return *this;
}

void OptionTable::addPositional(const QString &name, const QString &description, const QString &syntax)
{
    d->parser.addPositionalArgument(name, description, syntax);
    d->positionals = true;
}

void OptionTable::allowPositionals()
{
    d->positionals = true;
}

bool OptionTable::parse(const QStringList &arguments)
{
    d->error.clear();
    d->help = false;
    if (!d->parser.parse(arguments)) {
        d->error = d->parser.errorText();
        return false;
    }
    // --help-all (which QCommandLineParser adds with --help) is answered like --help.
    if (d->parser.isSet(QStringLiteral("help")) || d->parser.isSet(QStringLiteral("help-all"))) {
        d->help = true;
        return true;
    }
    if (!d->positionals && !d->parser.positionalArguments().isEmpty()) {
        d->error = QStringLiteral("unexpected argument '%1' (see --help)")
                       .arg(d->parser.positionalArguments().constFirst());
        return false;
    }
    for (const Option &row : std::as_const(d->rows)) {
        if (const Status st = row.apply(d->parser); !st.isOk()) {
            d->error = st.message();
            return false;
        }
    }
    return true;
}

bool OptionTable::process(const QStringList &arguments)
{
    if (!parse(arguments)) {
        fail(d->error);
        return false;
    }
    if (d->help) {
        std::fputs(qPrintable(helpText()), stdout);
        std::fflush(stdout);
        std::exit(0);
    }
    return true;
}

bool OptionTable::helpRequested() const
{
    return d->help;
}

QString OptionTable::errorText() const
{
    return d->error;
}

QString OptionTable::helpText() const
{
    return d->parser.helpText();
}

QString OptionTable::program() const
{
    return d->program;
}

bool OptionTable::isSet(const QString &name) const
{
    return d->parser.isSet(name);
}

QString OptionTable::value(const QString &name) const
{
    return d->parser.value(name);
}

QStringList OptionTable::values(const QString &name) const
{
    return d->parser.values(name);
}

QStringList OptionTable::positionalArguments() const
{
    return d->parser.positionalArguments();
}

QCommandLineParser &OptionTable::parser()
{
    return d->parser;
}

const QCommandLineParser &OptionTable::parser() const
{
    return d->parser;
}

int OptionTable::fail(const QString &why) const
{
    std::fprintf(stderr, "%s: %s\n", qPrintable(d->program), qPrintable(why));
    return 1;
}

} // namespace dialog
