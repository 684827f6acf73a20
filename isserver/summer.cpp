#include "summer.h"

#include "dialog/handoff.h"
#include "dialog/is/repository.h"

#include <QLoggingCategory>
#include <QMetaObject>
#include <QThread>
#include <utility>

Q_LOGGING_CATEGORY(lcSum, "dialog.is.sum")

namespace dialog::isd {

namespace {

/// QList of a number type (bool is not one).
template <typename T> struct NumberList : std::false_type
{
};
template <typename E>
struct NumberList<QList<E>> : std::bool_constant<std::is_arithmetic_v<E> && !std::is_same_v<E, bool>>
{
};

QString binning(const is::Object &h)
{
    const auto d = [&](const char *a) { return h.get<double>(QString::fromLatin1(a)); };
    const auto n = [&](const char *a) { return h.get<quint32>(QString::fromLatin1(a)); };
    if (h.typeName() == QLatin1String("Histogram2D"))
        return QStringLiteral("%1x%2 bins in [%3, %4)x[%5, %6)")
            .arg(n("xBins"))
            .arg(n("yBins"))
            .arg(d("xLow"))
            .arg(d("xHigh"))
            .arg(d("yLow"))
            .arg(d("yHigh"));
    return QStringLiteral("%1 bins in [%2, %3)").arg(n("bins")).arg(d("xLow")).arg(d("xHigh"));
}

bool isHistogram(const QString &type)
{
    return type == QLatin1String("Histogram1D") || type == QLatin1String("Histogram2D");
}

bool combine(is::Object &sum, const is::Object &part, bool apply, const QString &path, QString *why);

/// Adds @p p to @p s (values of one attribute); checks only unless @p apply.
bool addValue(is::Value &s, const is::Value &p, bool apply, const QString &path, QString *why)
{
    return std::visit(
        [&](auto &sv) -> bool {
            using T = std::decay_t<decltype(sv)>;
            const T *pv = p.getIf<T>();
            if (!pv) {
                *why = QStringLiteral("its attribute %1 is of another type").arg(path);
                return false;
            }
            if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
                if (apply)
                    sv = T(sv + *pv);
            } else if constexpr (std::is_same_v<T, is::Time>) {
                if (apply && pv->microsecondsSinceEpoch() > sv.microsecondsSinceEpoch())
                    sv = *pv; // the newest
            } else if constexpr (std::is_same_v<T, is::Object>) {
                return combine(sv, *pv, apply, path + QLatin1Char('.'), why);
            } else if constexpr (NumberList<T>::value) {
                if (sv.size() != pv->size()) {
                    *why = QStringLiteral("its attribute %1 has %2 elements, the sum has %3")
                               .arg(path)
                               .arg(pv->size())
                               .arg(sv.size());
                    return false;
                }
                if (apply) {
                    auto *out = sv.data();
                    const auto *in = pv->constData();
                    for (qsizetype i = 0, n = sv.size(); i < n; ++i)
                        out[i] = typename T::value_type(out[i] + in[i]);
                }
            }
            return true;
        },
        s.storage());
}

bool combine(is::Object &sum, const is::Object &part, bool apply, const QString &path, QString *why)
{
    if (sum.typeName() != part.typeName()) {
        *why = path.isEmpty()
                   ? QStringLiteral("it is a %1, the sum is a %2").arg(part.typeName(), sum.typeName())
                   : QStringLiteral("its %1 is a %2, the sum's is a %3")
                         .arg(path.chopped(1), part.typeName(), sum.typeName());
        return false;
    }
    if (isHistogram(sum.typeName())) {
        static const QStringList edges{
            QStringLiteral("bins"),  QStringLiteral("xBins"), QStringLiteral("yBins"), QStringLiteral("xLow"),
            QStringLiteral("xHigh"), QStringLiteral("yLow"),  QStringLiteral("yHigh")};
        for (const QString &e : edges) {
            const int i = sum.indexOf(e);
            if (i >= 0 && *sum.valueAt(i) != *part.valueAt(i)) {
                *why = QStringLiteral("%1has %2, the sum has %3")
                           .arg(path.isEmpty() ? QString() : path.chopped(1) + QLatin1Char(' '),
                                binning(part), binning(sum));
                return false;
            }
        }
    }
    const QList<is::AttributeInfo> attributes = sum.attributes();
    for (int i = 0; i < attributes.size(); ++i) {
        const is::AttributeInfo &a = attributes.at(i);
        if (isHistogram(sum.typeName()) && a.name() != QLatin1String("contents") &&
            a.name() != QLatin1String("entries"))
            continue; // title and binning: the reference's
        is::Value v = *sum.valueAt(i);
        if (!addValue(v, *part.valueAt(i), apply, path + a.name(), why))
            return false;
        if (apply)
            sum.setValue(i, v);
    }
    return true;
}

/// @p object with every summed value at zero (binning, strings and times kept).
is::Object zeroLike(const is::Object &object)
{
    is::Object zero = object;
    const QList<is::AttributeInfo> attributes = zero.attributes();
    for (int i = 0; i < attributes.size(); ++i) {
        is::Value v = *zero.valueAt(i);
        if (isHistogram(zero.typeName()) && attributes.at(i).name() != QLatin1String("contents") &&
            attributes.at(i).name() != QLatin1String("entries"))
            continue;
        std::visit(
            [](auto &x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
                    x = T(0);
                else if constexpr (std::is_same_v<T, is::Object>)
                    x = zeroLike(x);
                else if constexpr (NumberList<T>::value)
                    x.fill(typename T::value_type(0));
            },
            v.storage());
        zero.setValue(i, v);
    }
    return zero;
}

} // namespace

Summer::Summer(is::Repository &repository, const QString &regex, const QString &into, QObject *parent)
    : QObject(parent), m_repository(repository), m_regex(regex), m_into(into)
{
}

Summer::~Summer()
{
    if (m_listener)
        m_repository.removeListener(m_listener);
}

bool Summer::add(is::Object &sum, const is::Object &part, QString *why)
{
    if (!combine(sum, part, false, {}, why))
        return false;
    combine(sum, part, true, {}, why);
    return true;
}

bool Summer::start(QString *error)
{
    const QString server = m_repository.serverName();
    QString regex = m_regex;
    if (regex.startsWith(server + QLatin1String("\\.")))
        regex = regex.mid(server.size() + 2);
    else if (regex.startsWith(server + QLatin1Char('.')))
        regex = regex.mid(server.size() + 1);
    m_criteria = is::Criteria(regex);
    if (regex.isEmpty() || !m_criteria.isValid()) {
        *error = QStringLiteral("invalid --sum '%1': %2")
                     .arg(m_regex, regex.isEmpty() ? QStringLiteral("empty") : m_criteria.errorString());
        return false;
    }
    // Like the regex, the name may start with this server's name; any other name is an object name.
    QString into;
    if (const Status st = m_repository.objectName(
            m_into.startsWith(server + QLatin1Char('.')) ? m_into : server + QLatin1Char('.') + m_into, &into);
        !st.isOk()) {
        *error = QStringLiteral("invalid --into '%1': %2").arg(m_into, st.message());
        return false;
    }
    m_into = into;
    if (m_criteria.matches(m_into, QString(), m_repository.registry())) {
        *error = QStringLiteral("--into %1 matches its own --sum '%2'").arg(m_into, m_regex);
        return false;
    }
    for (const is::StoredObject &o : m_repository.objects(m_criteria))
        m_parts.insert(o.name, o.object);
    m_listener = m_repository.addListener([this](const is::Change &c) { onChange(c); });
    schedule();
    return true;
}

QStringList Summer::parts() const
{
    return m_summed;
}

QStringList Summer::refused() const
{
    QStringList out = m_refused.keys();
    out.sort();
    return out;
}

void Summer::onChange(const is::Change &change)
{
    if (change.name == m_into || !m_criteria.matches(change.name, change.typeName, m_repository.registry()))
        return;
    if (QThread::currentThread() != thread()) {
        QMetaObject::invokeMethod(this, handoff::handOff([this, change] { onChange(change); }),
                                  Qt::QueuedConnection);
        return;
    }
    if (change.kind == is::Change::Kind::Removed)
        m_parts.remove(change.name);
    else
        m_parts.insert(change.name, change.object);
    schedule();
}

void Summer::partLost(const QString &name)
{
    if (m_parts.remove(name))
        schedule();
}

void Summer::schedule()
{
    if (m_scheduled)
        return;
    m_scheduled = true;
    QMetaObject::invokeMethod(this, &Summer::write, Qt::QueuedConnection);
}

void Summer::report(const QString &name, const QString &why)
{
    if (m_refused.value(name) == why)
        return;
    m_refused.insert(name, why);
    qCWarning(lcSum, "%s: --sum into %s: %s refused: %s", qPrintable(m_repository.serverName()),
              qPrintable(m_into), qPrintable(name), qPrintable(why));
}

void Summer::write()
{
    m_scheduled = false;
    if (!m_parts.contains(m_reference)) {
        m_reference.clear();
        if (!m_parts.isEmpty()) {
            QStringList names = m_parts.keys();
            std::sort(names.begin(), names.end());
            m_reference = names.first();
        }
    }
    m_summed.clear();
    is::Object sum;
    if (m_reference.isEmpty()) {
        // Every part has gone: a sum of nothing, with the last binning.
        if (!m_lastReference.isValid())
            return;
        sum = zeroLike(m_lastReference);
    } else {
        sum = m_parts.value(m_reference);
        m_lastReference = sum;
    }
    m_summed << m_reference;
    QStringList names = m_parts.keys();
    std::sort(names.begin(), names.end());
    for (const QString &name : std::as_const(names)) {
        if (name == m_reference || m_reference.isEmpty())
            continue;
        QString why;
        if (!add(sum, m_parts.value(name), &why)) {
            report(name, why);
            continue;
        }
        if (m_refused.remove(name))
            qCInfo(lcSum, "%s: --sum into %s: %s accepted again", qPrintable(m_repository.serverName()),
                   qPrintable(m_into), qPrintable(name));
        m_summed << name;
    }
    m_refused.removeIf([this](const auto &it) { return !m_parts.contains(it.key()); });
    // A name holding a '.' must be written with its server's name.
    if (const Status st = m_repository.upsert(m_repository.serverName() + QLatin1Char('.') + m_into, sum);
        !st.isOk()) {
        const QString why = st.message();
        if (std::exchange(m_writeError, why) != why)
            qCWarning(lcSum, "%s: --sum into %s: the sum cannot be written: %s",
                      qPrintable(m_repository.serverName()), qPrintable(m_into), qPrintable(why));
    } else {
        m_writeError.clear();
    }
}

} // namespace dialog::isd
