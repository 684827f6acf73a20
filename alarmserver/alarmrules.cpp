#include "alarmrules.h"
#include "entryparser.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <functional>

using namespace Qt::StringLiterals;

namespace dialog::alarm {

namespace {

int lineAt(const QByteArray &text, qsizetype offset)
{
    return int(text.left(offset).count('\n')) + 1;
}

void collectAlarmRefs(const Condition &c, QStringList *out)
{
    if (c.kind == Condition::Kind::Alarm)
        out->append(c.alarm);
    for (const Condition &child : c.children)
        collectAlarmRefs(child, out);
}

} // namespace

Status RuleSet::parse(const QByteArray &json, const QString &source, const is::TypeRegistry *types,
                      RuleSet *out)
{
    const auto bad = [&](int line, const QString &where, const QString &why) {
        return Status(Status::Code::BadRequest, line > 0
                                                    ? u"%1:%2: %3%4"_s.arg(source).arg(line).arg(where, why)
                                                    : u"%1: %2%3"_s.arg(source, where, why));
    };
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError)
        return bad(lineAt(json, pe.offset), QString(), pe.errorString());
    const QJsonObject top = doc.object();
    for (auto it = top.begin(); it != top.end(); ++it)
        if (it.key() != u"alarms"_s)
            return bad(0, QString(), u"unknown key \"%1\" (expected {\"alarms\": [...]})"_s.arg(it.key()));
    if (!top.value(u"alarms"_s).isArray())
        return bad(0, QString(), u"expected {\"alarms\": [...]}"_s);
    RuleSet set;
    EntryParser parser(types);
    const QJsonArray alarms = top.value(u"alarms"_s).toArray();
    // The line of each entry: where its "path" is written, searched for after the previous entry's
    // (lines counted as the search goes: a file of 100,000 alarms is read once).
    const QString text = QString::fromUtf8(json);
    qsizetype searchFrom = 0;
    int lineAtSearch = 1;
    for (int i = 0; i < alarms.size(); ++i) {
        Rule r;
        r.entry = i;
        const QJsonObject o = alarms.at(i).toObject();
        const QString p = o.value(u"path"_s).toString();
        if (!p.isEmpty()) {
            const QByteArray quoted =
                QJsonDocument(QJsonArray{p}).toJson(QJsonDocument::Compact).mid(1).chopped(1);
            const QString value = QString::fromUtf8(quoted);
            // "path" : "<value>", with any white space around the colon (no regular expression: one
            // compiled per entry costs more than the whole parse).
            for (qsizetype at = text.indexOf(u"\"path\""_s, searchFrom); at >= 0;
                 at = text.indexOf(u"\"path\""_s, at + 6)) {
                qsizetype v = at + 6;
                while (v < text.size() && text.at(v).isSpace())
                    ++v;
                if (v >= text.size() || text.at(v) != u':')
                    continue;
                ++v;
                while (v < text.size() && text.at(v).isSpace())
                    ++v;
                if (QStringView(text).mid(v, value.size()) != value)
                    continue;
                r.line = lineAtSearch + int(QStringView(text).mid(searchFrom, at - searchFrom).count(u'\n'));
                lineAtSearch = r.line + int(QStringView(text).mid(at, v - at).count(u'\n'));
                searchFrom = v + value.size();
                break;
            }
        }
        const QString where = p.isEmpty() ? u"alarms[%1]: "_s.arg(i) : u"alarms[%1] (%2): "_s.arg(i).arg(p);
        QString why;
        if (!alarms.at(i).isObject())
            return bad(0, where, u"expected an object"_s);
        if (!parser.rule(o, &r, &why))
            return bad(r.line, where, why);
        if (set.byPath.contains(r.path))
            return bad(r.line, where,
                       u"duplicate path: alarms[%1] has it already"_s.arg(
                           set.rules.at(set.byPath.value(r.path)).entry));
        set.byPath.insert(r.path, int(set.rules.size()));
        set.rules << r;
    }
    // An alarm is a leaf of the tree: its path may not be a node above another alarm.
    for (const Rule &r : std::as_const(set.rules)) {
        QString node = r.path;
        while (node.contains(u'/')) {
            node = node.section(u'/', 0, -2);
            if (const auto it = set.byPath.constFind(node); it != set.byPath.constEnd())
                return bad(set.rules.at(*it).line,
                           u"alarms[%1] (%2): "_s.arg(set.rules.at(*it).entry).arg(node),
                           u"is an alarm and also a node of the tree above %1"_s.arg(r.path));
        }
    }
    // References between alarms: each to an existing alarm, and no cycle.
    set.dependents.resize(set.rules.size());
    QList<QList<int>> refs(set.rules.size());
    for (int i = 0; i < set.rules.size(); ++i) {
        const Rule &r = set.rules.at(i);
        QStringList names;
        collectAlarmRefs(r.condition, &names);
        for (const QString &n : std::as_const(names)) {
            const auto it = set.byPath.constFind(n);
            if (it == set.byPath.constEnd())
                return bad(r.line, u"alarms[%1] (%2): "_s.arg(r.entry).arg(r.path),
                           u"refers to unknown alarm '%1'"_s.arg(n));
            refs[i] << *it;
            set.dependents[*it] << i;
        }
    }
    QList<int> mark(set.rules.size(), 0); // 0 unvisited, 1 on the path, 2 done
    QList<int> stack;
    std::function<int(int)> visit = [&](int i) -> int {
        mark[i] = 1;
        stack << i;
        for (int j : std::as_const(refs[i])) {
            if (mark[j] == 1)
                return j;
            if (mark[j] == 0)
                if (const int c = visit(j); c >= 0)
                    return c;
        }
        stack.removeLast();
        mark[i] = 2;
        return -1;
    };
    for (int i = 0; i < set.rules.size(); ++i) {
        if (mark[i] != 0)
            continue;
        if (const int start = visit(i); start >= 0) {
            QStringList cycle;
            for (int k = int(stack.indexOf(start)); k < stack.size(); ++k)
                cycle << set.rules.at(stack.at(k)).path;
            cycle << set.rules.at(start).path;
            const Rule &r = set.rules.at(start);
            return bad(r.line, u"alarms[%1] (%2): "_s.arg(r.entry).arg(r.path),
                       u"cycle of alarm references: %1"_s.arg(cycle.join(u" -> "_s)));
        }
    }
    *out = std::move(set);
    return {};
}

Status RuleSet::load(const QString &path, const is::TypeRegistry *types, RuleSet *out)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return Status(Status::Code::StorageError, u"cannot read %1: %2"_s.arg(path, f.errorString()));
    return parse(f.readAll(), path, types, out);
}

} // namespace dialog::alarm
