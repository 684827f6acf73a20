// Farm-summed objects of dialog-isserver (--sum REGEX --into NAME): the IS paper's histograms
// summed over the processes of a farm.
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/object.h"

#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>

namespace dialog::is {
class Repository;
struct Change;
} // namespace dialog::is

namespace dialog::isd {

/// Keeps the object @p into of this server equal to the sum of the objects matching @p regex
/// (the "parts"):
///  - Histogram1D / Histogram2D: bin-wise sum of the contents and the sum of the entries; every part
///    must have the binning (bins and edges) of the sum, else it is refused and left out.
///  - any other type: the sum of every numeric attribute (numeric vectors element-wise, nested
///    objects recursively, histograms among them as above); strings, booleans, times and vectors of
///    objects are those of the first part. Every part must be of one type.
/// The first part taken (by name among those taken together) decides the type and binning; it
/// stays the reference while it is a part. A part that is removed, or whose writer process is lost
/// (partLost()), leaves the sum; it is taken again at its next update. When every part has gone
/// the sum is zero, with the last binning. A refused part is reported once on stderr, naming it and why,
/// and again when it is accepted later.
///
/// Lives in the IS server's main thread; changes are gathered and the sum written once per event
/// loop turn (a burst of updates costs one write).
class Summer : public QObject
{
    Q_OBJECT
public:
    /// @p regex: a POSIX regex on object names (a leading "<Server>." is accepted and stripped);
    /// @p into: the sum's object name, "Name" or "<Server>.Name" (a leading "<Server>." is stripped). @p
    /// repository must outlive this object.
    Summer(is::Repository &repository, const QString &regex, const QString &into, QObject *parent = nullptr);
    ~Summer() override;

    /// Validates the rule and takes the parts already stored. False with a reason.
    bool start(QString *error);
    QString into() const { return m_into; }
    /// The parts summed at the last write, and those refused.
    QStringList parts() const;
    QStringList refused() const;

    /// The writer of the object @p name was lost: it leaves the sum (if it is a part).
    void partLost(const QString &name);
    /// Called in the thread writing the change (the listener of the repository).
    void onChange(const is::Change &change);

    /// Adds @p part to @p sum (same type): false with the reason, @p sum untouched, if it does not fit.
    static bool add(is::Object &sum, const is::Object &part, QString *why);

private:
    void schedule();
    void write();
    void report(const QString &name, const QString &why);

    is::Repository &m_repository;
    QString m_regex;
    QString m_into;
    is::Criteria m_criteria;
    int m_listener = 0;
    QHash<QString, is::Object> m_parts;
    QString m_reference;
    is::Object m_lastReference;        // for the sum of nothing once every part has gone
    QHash<QString, QString> m_refused; // name -> why (already reported)
    QStringList m_summed;
    bool m_scheduled = false;
    QString m_writeError; // reported once
};

} // namespace dialog::isd
