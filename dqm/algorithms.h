// The data-quality algorithms of dialog-dqm: a histogram (read from the IS, or a reference file)
// judged by one configured check, Good / Warning / Bad, or Undefined when it cannot be judged.
#pragma once

#include "dialog/histogram.h"
#include "dialog/status.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace dialog::dqm {

enum class Quality
{
    Undefined, ///< not judged: too few entries, no histogram, a bad reference …
    Good,
    Warning,
    Bad,
};
QString qualityName(Quality q);

/// One configured check (an entry of the checks file).
struct Check
{
    QString name;      ///< unique; the result is DQM.<name>
    QString object;    ///< the IS histogram, "Server.Object"
    QString algorithm; ///< chi2, ks, mean, rms, dead_bins, noisy_bins
    quint64 minEntries = 100;
    /// chi2, ks, dead_bins, noisy_bins: Warning from this value on, Bad from the other.
    double warning = 0, bad = 0;
    /// mean, rms: Good inside [min, max]; Warning inside [warningMin, warningMax] when given.
    double min = 0, max = 0, warningMin = 0, warningMax = 0;
    bool hasWarningRange = false;
    double deadFraction = 0.1; ///< dead_bins: a bin below this fraction of the mean bin
    double noisyFactor = 5;    ///< noisy_bins: a bin above this many times the mean bin

    /// Reads one entry; BadRequest naming the check and the field.
    static Status fromJson(const QJsonObject &json, Check *out);
    /// True for the algorithms that compare with a reference.
    bool needsReference() const;
};

/// The outcome of a check.
struct Result
{
    Quality quality = Quality::Undefined;
    double value = 0; ///< what the thresholds were applied to (chi2/ndf, KS distance, mean, bins …)
    QString details;
};

/// Judges @p h by @p check (@p reference for chi2 and ks; may be null otherwise).
Result evaluate(const Check &check, const Histogram &h, const Histogram *reference);

} // namespace dialog::dqm
