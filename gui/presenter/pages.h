// The pages file of dialog-presenter (docs/presenter.md): pages by sub-system, each a grid of
// histograms, each optionally with its data-quality check and reference.
#pragma once

#include <QList>
#include <QString>

namespace dialog::presenter {

struct PageEntry
{
    QString histogram;     ///< the IS histogram, "Server.Object"
    QString check;         ///< the DQResult object, "Server.Check" (empty: none)
    QString referenceFile; ///< absolute path of the reference file (empty: none)
    QString title;         ///< drawn instead of the object's name (empty: the name)
    bool logX = false, logY = false, logZ = false;
};

struct Page
{
    QString name;
    QString subsystem;
    int columns = 2;
    QList<PageEntry> entries;
    /// "subsystem: name", or the name without a sub-system.
    QString label() const
    {
        return subsystem.isEmpty() ? name : QStringLiteral("%1: %2").arg(subsystem, name);
    }
};

struct PageSet
{
    QList<Page> pages;

    /// Parses a pages file's JSON. Relative "reference" paths are taken from @p baseDir;
    /// "reference_check" names, and checks without a reference of their own, from
    /// @p referencesDir (dialog-dqm's --references; empty: none). Empty on success, else the reason
    /// with the page and entry it concerns; @p out is untouched then.
    static QString parse(const QByteArray &json, const QString &baseDir, const QString &referencesDir,
                         PageSet *out);
    /// parse() of the file at @p path.
    static QString load(const QString &path, const QString &referencesDir, PageSet *out);
};

} // namespace dialog::presenter
