// ServerStatistics: the object <Server>.Statistics holds the figures of the other parts and the
// repository's counts, without counting its own writes as changes.
#include "statuscheck.h"
#include "statistics.h"

#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QTest>

using namespace dialog;
using namespace dialog::isd;

class tst_IsStatistics : public QObject
{
    Q_OBJECT
private slots:
    void publishesFiguresWithoutItsOwnWrites()
    {
        is::TypeRegistry types;
        QString error;
        QVERIFY_OK(ServerStatistics::declareType(types));
        QVERIFY_OK(ServerStatistics::declareType(types)); // once is enough
        is::TypeInfo t(QStringLiteral("Count"));
        t.setAttributes({is::AttributeInfo(QStringLiteral("n"), is::BasicType::U32)});
        QVERIFY_OK(types.declareType(t));
        is::Repository repo(QStringLiteral("Srv"), types);

        ServerStatistics::Figures figures;
        figures.requests = 7;
        figures.deliveries = 11;
        figures.journalErrors = 2;
        auto slow = std::make_shared<Subscriber>();
        slow->key = QStringLiteral("Reader/1");
        slow->priority = 0;
        slow->dropped = 5;
        auto fast = std::make_shared<Subscriber>();
        fast->key = QStringLiteral("Reader/2");
        fast->priority = 2;
        figures.subscribers = {slow, fast};
        ServerStatistics stats(repo, types, [&figures] { return figures; });

        is::Object o = is::Object::create(types, QStringLiteral("Count"));
        QCOMPARE(repo.insert(QStringLiteral("a"), o).code(), Status::Code::Ok);
        QCOMPARE(repo.upsert(QStringLiteral("a"), o).code(), Status::Code::Ok);
        stats.publish();
        stats.publish(); // its own two writes are not changes
        is::Object s;
        QCOMPARE(repo.get(ServerStatistics::objectName(), &s).code(), Status::Code::Ok);
        QCOMPARE(s.typeName(), QStringLiteral("ISServerStatistics"));
        QCOMPARE(s.get<quint64>(QStringLiteral("changes")), quint64(2));
        QCOMPARE(s.get<quint64>(QStringLiteral("objects")), quint64(2)); // a, and Statistics itself
        QCOMPARE(s.get<quint64>(QStringLiteral("requests")), quint64(7));
        QCOMPARE(s.get<quint64>(QStringLiteral("deliveries")), quint64(11));
        QCOMPARE(s.get<quint64>(QStringLiteral("journalErrors")), quint64(2));
        QCOMPARE(s.get<quint32>(QStringLiteral("subscribers")), quint32(2));
        QCOMPARE(s.get<quint32>(QStringLiteral("slowSubscribers")), quint32(1));
        QCOMPARE(s.get<QList<QString>>(QStringLiteral("subscriberNames")),
                 QList<QString>({QStringLiteral("Reader/1"), QStringLiteral("Reader/2")}));
        QCOMPARE(s.get<QList<quint64>>(QStringLiteral("subscriberDropped")), QList<quint64>({5, 0}));

        figures.requests = 9;
        QCOMPARE(repo.remove(QStringLiteral("a")).code(), Status::Code::Ok);
        stats.publish();
        QCOMPARE(repo.get(ServerStatistics::objectName(), &s).code(), Status::Code::Ok);
        QCOMPARE(s.get<quint64>(QStringLiteral("changes")), quint64(3));
        QCOMPARE(s.get<quint64>(QStringLiteral("requests")), quint64(9));
    }
};

QTEST_GUILESS_MAIN(tst_IsStatistics)
#include "tst_isstatistics.moc"
