#include "algorithms.h"

#include <QJsonArray>
#include <cmath>

namespace dialog::dqm {

namespace {

const QStringList Algorithms{QStringLiteral("chi2"),      QStringLiteral("ks"),
                             QStringLiteral("mean"),      QStringLiteral("rms"),
                             QStringLiteral("dead_bins"), QStringLiteral("noisy_bins")};

Result judge(double value, double warning, double bad, const QString &details)
{
    const Quality q = value >= bad ? Quality::Bad : value >= warning ? Quality::Warning : Quality::Good;
    return {q, value, details};
}

Result undefined(const QString &why)
{
    return {Quality::Undefined, 0, why};
}

Result chi2(const Histogram &h, const Histogram &r)
{
    const double n = h.sum(), m = r.sum();
    double chi2 = 0;
    int used = 0;
    for (qsizetype i = 0; i < h.contents.size(); ++i) {
        const double a = h.contents.at(i), b = r.contents.at(i);
        if (a + b <= 0)
            continue;
        // Shapes compared: both normalised to unit area, each bin's variance from its own counts.
        const double d = a / n - b / m;
        chi2 += d * d / (a / (n * n) + b / (m * m));
        ++used;
    }
    const int ndf = qMax(1, used - 1);
    return {Quality::Good, chi2 / ndf, QStringLiteral("chi2/ndf %1 (%2 / %3)").arg(chi2 / ndf, 0, 'g', 4).arg(chi2, 0, 'g', 4).arg(ndf)};
}

Result ks(const Histogram &h, const Histogram &r)
{
    const double n = h.sum(), m = r.sum();
    double ca = 0, cb = 0, d = 0;
    qsizetype at = 0;
    for (qsizetype i = 0; i < h.contents.size(); ++i) {
        ca += h.contents.at(i) / n;
        cb += r.contents.at(i) / m;
        if (std::abs(ca - cb) > d) {
            d = std::abs(ca - cb);
            at = i;
        }
    }
    return {Quality::Good, d, QStringLiteral("KS distance %1 (largest at bin %2)").arg(d, 0, 'g', 4).arg(at)};
}

/// Bins of @p h for which @p pick(content, mean content) holds, listed (at most 10 named).
Result bins(const Check &c, const Histogram &h, const QString &what, const std::function<bool(double, double)> &pick)
{
    const double mean = h.sum() / double(h.contents.size());
    QStringList found;
    int count = 0;
    for (qsizetype i = 0; i < h.contents.size(); ++i)
        if (pick(h.contents.at(i), mean) && ++count <= 10)
            found.append(h.kind == Histogram::Kind::TwoD ? QStringLiteral("(%1,%2)").arg(i % h.xBins).arg(i / h.xBins) : QString::number(i));
    const QString details = count == 0 ? QStringLiteral("no %1 bin").arg(what)
                                       : QStringLiteral("%1 %2 bin(s): %3%4")
                                             .arg(count)
                                             .arg(what, found.join(QStringLiteral(", ")),
                                                  count > 10 ? QStringLiteral(" …") : QString());
    return judge(count, c.warning, c.bad, details);
}

Result inRange(const Check &c, double value, const QString &what)
{
    const QString details = QStringLiteral("%1 %2 (Good in [%3, %4])").arg(what).arg(value, 0, 'g', 6).arg(c.min).arg(c.max);
    if (value >= c.min && value <= c.max)
        return {Quality::Good, value, details};
    if (c.hasWarningRange && value >= c.warningMin && value <= c.warningMax)
        return {Quality::Warning, value, details};
    return {Quality::Bad, value, details};
}

} // namespace

QString qualityName(Quality q)
{
    switch (q) {
    case Quality::Good:
        return QStringLiteral("Good");
    case Quality::Warning:
        return QStringLiteral("Warning");
    case Quality::Bad:
        return QStringLiteral("Bad");
    case Quality::Undefined:
        break;
    }
    return QStringLiteral("Undefined");
}

Status Check::fromJson(const QJsonObject &j, Check *out)
{
    Check c;
    c.name = j.value(QStringLiteral("name")).toString();
    const auto bad = [&](const QString &why) {
        return Status(Status::Code::BadRequest,
                      QStringLiteral("check '%1': %2").arg(c.name.isEmpty() ? QStringLiteral("?") : c.name, why));
    };
    if (c.name.isEmpty() || c.name.contains(QLatin1Char('/')))
        return bad(QStringLiteral("\"name\" is required (no '/')"));
    c.object = j.value(QStringLiteral("histogram")).toString();
    if (!c.object.contains(QLatin1Char('.')))
        return bad(QStringLiteral("\"histogram\" must name an IS object, Server.Object"));
    c.algorithm = j.value(QStringLiteral("algorithm")).toString();
    if (!Algorithms.contains(c.algorithm))
        return bad(QStringLiteral("unknown algorithm '%1' (%2)").arg(c.algorithm, Algorithms.join(QStringLiteral(", "))));
    c.minEntries = quint64(j.value(QStringLiteral("min_entries")).toInteger(100));
    const bool ranged = c.algorithm == QLatin1String("mean") || c.algorithm == QLatin1String("rms");
    const bool counted = c.algorithm.endsWith(QLatin1String("_bins"));
    if (ranged) {
        if (!j.contains(QStringLiteral("min")) || !j.contains(QStringLiteral("max")))
            return bad(QStringLiteral("%1 needs \"min\" and \"max\"").arg(c.algorithm));
        c.min = j.value(QStringLiteral("min")).toDouble();
        c.max = j.value(QStringLiteral("max")).toDouble();
        c.hasWarningRange = j.contains(QStringLiteral("warning_min")) || j.contains(QStringLiteral("warning_max"));
        c.warningMin = j.value(QStringLiteral("warning_min")).toDouble(c.min);
        c.warningMax = j.value(QStringLiteral("warning_max")).toDouble(c.max);
    } else {
        c.warning = j.value(QStringLiteral("warning")).toDouble(counted ? 1 : 0);
        c.bad = j.value(QStringLiteral("bad")).toDouble(c.warning);
        if (!counted && !j.contains(QStringLiteral("warning")))
            return bad(QStringLiteral("%1 needs \"warning\" (and \"bad\") thresholds").arg(c.algorithm));
        if (c.bad < c.warning)
            return bad(QStringLiteral("\"bad\" %1 is below \"warning\" %2").arg(c.bad).arg(c.warning));
    }
    c.deadFraction = j.value(QStringLiteral("dead_fraction")).toDouble(c.deadFraction);
    c.noisyFactor = j.value(QStringLiteral("noisy_factor")).toDouble(c.noisyFactor);
    *out = c;
    return {};
}

bool Check::needsReference() const
{
    return algorithm == QLatin1String("chi2") || algorithm == QLatin1String("ks");
}

Result evaluate(const Check &c, const Histogram &h, const Histogram *reference)
{
    if (h.entries < c.minEntries)
        return undefined(QStringLiteral("%1 entries, fewer than the %2 to judge").arg(h.entries).arg(c.minEntries));
    if (h.sum() <= 0)
        return undefined(QStringLiteral("empty histogram"));
    if (c.needsReference()) {
        if (!reference)
            return undefined(QStringLiteral("no reference (dialogctl dqm reference set %1 --from-current)").arg(c.name));
        if (const QString diff = h.binningDifference(*reference); !diff.isEmpty())
            return undefined(QStringLiteral("reference of another binning: ") + diff);
        if (reference->sum() <= 0)
            return undefined(QStringLiteral("empty reference"));
        const Result r = c.algorithm == QLatin1String("chi2") ? chi2(h, *reference) : ks(h, *reference);
        return judge(r.value, c.warning, c.bad, r.details);
    }
    if (c.algorithm == QLatin1String("mean") || c.algorithm == QLatin1String("rms")) {
        if (h.kind == Histogram::Kind::TwoD)
            return undefined(QStringLiteral("%1 of a 2D histogram is not defined").arg(c.algorithm));
        return c.algorithm == QLatin1String("mean") ? inRange(c, h.mean(), QStringLiteral("mean"))
                                                    : inRange(c, h.rms(), QStringLiteral("RMS"));
    }
    if (c.algorithm == QLatin1String("dead_bins"))
        return bins(c, h, QStringLiteral("dead"), [&](double v, double mean) { return v <= c.deadFraction * mean; });
    return bins(c, h, QStringLiteral("noisy"), [&](double v, double mean) { return v > c.noisyFactor * mean; });
}

} // namespace dialog::dqm
