// The run-control tree of a partition: its checks and the questions asked of it.
#include "dialog/rc/partition.h"
#include "partition_p.h"

#include <QHash>

#include <algorithm>

namespace dialog::rc {

bool checkTree(Partition *p, QString *field, QString *why)
{
    auto fail = [&](const QString &f, const QString &w) {
        *field = f;
        *why = w;
        return false;
    };
    QHash<QString, QString> parent; // node -> the segment that lists it
    QHash<QString, qsizetype> index;
    for (qsizetype i = 0; i < p->tree.size(); ++i) {
        if (index.contains(p->tree.at(i).name))
            return fail(QStringLiteral("segments[%1].name").arg(i),
                        QStringLiteral("'%1' is used twice").arg(p->tree.at(i).name));
        index.insert(p->tree.at(i).name, i);
    }
    for (qsizetype i = 0; i < p->tree.size(); ++i) {
        const Segment &seg = p->tree.at(i);
        for (auto [key, names] : {std::pair{"slaves", &seg.slaves}, std::pair{"segments", &seg.segments}}) {
            const bool slaves = QLatin1String(key) == QLatin1String("slaves");
            for (const QString &n : *names) {
                const QString where = QStringLiteral("segments[%1].%2").arg(i).arg(QLatin1String(key));
                if (slaves ? !p->slave(n) : !index.contains(n))
                    return fail(
                        where,
                        QStringLiteral("segment '%1' names %2 '%3', which the partition does "
                                       "not have")
                            .arg(seg.name, slaves ? QStringLiteral("slave") : QStringLiteral("segment"), n));
                if (parent.contains(n))
                    return fail(where,
                                QStringLiteral("'%1' is in segment '%2' and in segment '%3' (a node has "
                                               "one parent)")
                                    .arg(n, parent.value(n), seg.name));
                parent.insert(n, seg.name);
            }
        }
    }
    // Up from every segment: coming back to where the walk began is a cycle.
    for (const Segment &seg : std::as_const(p->tree)) {
        QStringList walk{seg.name};
        for (QString up = parent.value(seg.name); !up.isEmpty(); up = parent.value(up)) {
            walk << up;
            if (up == seg.name) {
                std::reverse(walk.begin(), walk.end());
                return fail(QStringLiteral("segments"),
                            QStringLiteral("cycle: %1").arg(walk.join(QStringLiteral(" -> "))));
            }
            if (walk.size() > p->tree.size() + 1)
                break; // a cycle above this segment, reported from one of its members
        }
    }
    // Parents before children: the order a launcher starts them in.
    QList<Segment> ordered;
    QStringList level;
    for (const Segment &seg : std::as_const(p->tree))
        if (!parent.contains(seg.name))
            level << seg.name;
    while (!level.isEmpty()) {
        QStringList next;
        for (const QString &n : std::as_const(level)) {
            ordered << p->tree.at(index.value(n));
            next << ordered.last().segments;
        }
        level = next;
    }
    p->tree = ordered;
    return true;
}

const Segment *Partition::segment(const QString &name) const
{
    for (const Segment &s : tree)
        if (s.name == name)
            return &s;
    return nullptr;
}

const ProcessSpec *Partition::node(const QString &name) const
{
    if (const Segment *s = segment(name))
        return &s->controller;
    return slave(name);
}

QString Partition::parentOf(const QString &name) const
{
    for (const Segment &s : tree)
        if (s.slaves.contains(name) || s.segments.contains(name))
            return s.name;
    return master.name;
}

QStringList Partition::childrenOf(const QString &controller) const
{
    if (const Segment *s = segment(controller))
        return s->slaves + s->segments;
    QStringList out;
    if (controller != master.name)
        return out;
    for (const ProcessSpec &s : slaves)
        if (parentOf(s.name) == master.name)
            out << s.name;
    for (const Segment &s : tree)
        if (parentOf(s.name) == master.name)
            out << s.name;
    return out;
}

} // namespace dialog::rc
