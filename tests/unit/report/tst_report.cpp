// The reporting queue without network: bounds, drop counting and its report, collapsing of
// repeated messages, sequence order; and the record codec.
#include "statuscheck.h"
#include "reportqueue_p.h"

#include <QCborArray>
#include <QCborMap>
#include <QCborValue>
#include <QTest>

using namespace dialog;

class tst_Report : public QObject
{
    Q_OBJECT

private:
    static LogRecord record(const QString &text, Severity s = Severity::Info)
    {
        LogRecord r;
        r.text = text;
        r.severity = s;
        r.category = QStringLiteral("test");
        r.host = QStringLiteral("h");
        r.pid = 42;
        return r;
    }

private Q_SLOTS:
    void takesInOrderWithIncreasingSequence()
    {
        ReportQueue q;
        for (int i = 0; i < 10; ++i)
            QVERIFY(q.push(record(QStringLiteral("m%1").arg(i)), 1000 + i));
        const auto a = q.take(4, 2000);
        const auto b = q.take(100, 2000);
        QCOMPARE(a.size(), 4);
        QCOMPARE(b.size(), 6);
        const auto all = a + b;
        for (int i = 0; i < 10; ++i) {
            QCOMPARE(all.at(i).text, QStringLiteral("m%1").arg(i));
            QCOMPARE(all.at(i).sequence, quint64(i + 1));
        }
        QCOMPARE(q.size(), 0);
    }

    void fullQueueDropsNewestAndCounts()
    {
        ReportQueue q({5, 0, 16});
        for (int i = 0; i < 8; ++i)
            q.push(record(QStringLiteral("m%1").arg(i)), 1000);
        QCOMPARE(q.size(), 5);
        QCOMPARE(q.dropped(), quint64(3));
        QCOMPARE(q.reported(), quint64(8));
        const auto kept = q.take(100, 1000);
        QCOMPARE(kept.last().text, QStringLiteral("m4"));
    }

    void dropsAreReportedOnceDeliveredAgain()
    {
        ReportQueue q({2, 0, 16});
        for (int i = 0; i < 5; ++i)
            q.push(record(QStringLiteral("m%1").arg(i)), 1000);
        const auto batch = q.take(100, 1000);
        QCOMPARE(batch.size(), 2);
        q.push(record(QStringLiteral("later")), 1100);
        // Not reported before the logger acknowledged something.
        QCOMPARE(q.size(), 1);
        q.delivered(quint64(batch.size()), 1200);
        const auto next = q.take(100, 1200);
        QCOMPARE(next.size(), 2);
        QCOMPARE(next.at(0).category, ReportQueue::category());
        QCOMPARE(next.at(0).severity, Severity::Warning);
        QCOMPARE(next.at(0).values.value(QStringLiteral("dropped")).toLongLong(), 3);
        QVERIFY(next.at(0).text.contains(QStringLiteral("3 messages")));
        QCOMPARE(next.at(1).text, QStringLiteral("later"));
        // Reported once only.
        q.delivered(2, 1300);
        QCOMPARE(q.size(), 0);
        QCOMPARE(q.acknowledged(), quint64(4));
    }

    void refusedBatchCountsAsDropped()
    {
        ReportQueue q;
        q.push(record(QStringLiteral("a")), 1000);
        const auto batch = q.take(10, 1000);
        q.countDropped(quint64(batch.size()));
        QCOMPARE(q.dropped(), quint64(1));
        q.delivered(0, 2000);
        const auto next = q.take(10, 2000);
        QCOMPARE(next.size(), 1);
        QCOMPARE(next.at(0).values.value(QStringLiteral("dropped")).toLongLong(), 1);
    }

    void repeatsCollapseIntoOneSummary()
    {
        ReportQueue q({100, 10000, 16});
        for (int i = 0; i < 5000; ++i)
            q.push(record(QStringLiteral("flood")), 1000 + i);
        QCOMPARE(q.collapsed(), quint64(4999));
        auto first = q.take(100, 6000);
        QCOMPARE(first.size(), 1);
        QCOMPARE(first.at(0).text, QStringLiteral("flood"));
        QVERIFY(q.hasPendingCollapse());
        // The window ends 10 s after the first: then the summary comes.
        QVERIFY(q.take(100, 10999).isEmpty());
        const auto summary = q.take(100, 11000);
        QCOMPARE(summary.size(), 1);
        QCOMPARE(summary.at(0).text, QStringLiteral("flood (repeated 4999 times in 5.0 s)"));
        QCOMPARE(summary.at(0).values.value(QStringLiteral("repeated")).toLongLong(), 4999);
        QCOMPARE(summary.at(0).timeMs, qint64(5999));
        QCOMPARE(summary.at(0).sequence, quint64(2));
        QVERIFY(!q.hasPendingCollapse());
    }

    void collapsingKeepsOthersAndTheirOrder()
    {
        ReportQueue q({1000, 10000, 16});
        for (int i = 0; i < 300; ++i) {
            q.push(record(QStringLiteral("flood")), 1000);
            if (i % 100 == 0)
                q.push(record(QStringLiteral("other %1").arg(i)), 1000);
        }
        const auto out = q.take(1000, 1000);
        QStringList texts;
        for (const auto &r : out)
            texts << r.text;
        QCOMPARE(texts, (QStringList{QStringLiteral("flood"), QStringLiteral("other 0"),
                                     QStringLiteral("other 100"), QStringLiteral("other 200")}));
    }

    void differentSeverityOrCategoryIsNotARepeat()
    {
        ReportQueue q({100, 10000, 16});
        q.push(record(QStringLiteral("x"), Severity::Info), 1000);
        q.push(record(QStringLiteral("x"), Severity::Warning), 1000);
        LogRecord c = record(QStringLiteral("x"));
        c.category = QStringLiteral("other");
        q.push(c, 1000);
        QCOMPARE(q.take(100, 1000).size(), 3);
        QCOMPARE(q.collapsed(), quint64(0));
    }

    void repeatAfterWindowPassesAndSummaryPrecedesIt()
    {
        ReportQueue q({100, 1000, 16});
        q.push(record(QStringLiteral("x")), 0);
        q.push(record(QStringLiteral("x")), 500);
        q.push(record(QStringLiteral("x")), 1500);
        const auto out = q.take(100, 1500);
        QCOMPARE(out.size(), 3);
        QCOMPARE(out.at(0).text, QStringLiteral("x"));
        QVERIFY(out.at(1).text.startsWith(QStringLiteral("x (repeated 1 times")));
        QCOMPARE(out.at(2).text, QStringLiteral("x"));
    }

    void flushCollapsedEmitsPendingSummaries()
    {
        ReportQueue q({100, 60000, 16});
        q.push(record(QStringLiteral("x")), 0);
        q.push(record(QStringLiteral("x")), 10);
        q.flushCollapsed(20);
        QCOMPARE(q.take(100, 20).size(), 2);
    }

    void collapseTableIsBounded()
    {
        ReportQueue q({1000, 10000, 4});
        for (int i = 0; i < 10; ++i)
            q.push(record(QStringLiteral("m%1").arg(i)), 0);
        // Untracked messages pass every time.
        for (int i = 0; i < 10; ++i)
            q.push(record(QStringLiteral("m%1").arg(i)), 1);
        QCOMPARE(q.collapsed(), quint64(4));
        QCOMPARE(q.take(1000, 1).size(), 16);
    }

    void recordsRoundTrip()
    {
        LogRecord r = record(QStringLiteral("text ü"), Severity::Error);
        r.timeMs = 1234567890123;
        r.process = QStringLiteral("RO1");
        r.file = QStringLiteral("a.cpp");
        r.line = 7;
        r.run = 99;
        r.values = {{QStringLiteral("k"), 3}, {QStringLiteral("s"), QStringLiteral("v")}};
        r.sequence = 5;
        r.id = 11;
        QList<LogRecord> back;
        QVERIFY(decodeRecords(encodeRecords({r, record(QStringLiteral("b"))}), &back).isOk());
        QCOMPARE(back.size(), 2);
        QCOMPARE(back.at(0), r);
    }

    void recordsAreStandardCborOfEveryLength()
    {
        // The writer fits CBOR's header forms by hand: strings and integers across every size boundary
        // must read back, and read as standard CBOR (QCborValue) with the same keys.
        QList<LogRecord> records;
        for (qsizetype length : {0, 1, 23, 24, 255, 256, 65535, 65536, 70000}) {
            LogRecord r = record(QString(length, QLatin1Char('a')) + QStringLiteral("é€"));
            r.timeMs = length % 2 ? -5 : (qint64(1) << 40) + length;
            r.pid = qint64(length) * 70000;
            r.sequence = quint64(length) << 20;
            r.line = int(length);
            r.file = length ? QStringLiteral("f.cpp") : QString();
            records << r;
        }
        const QByteArray data = encodeRecords(records);
        QList<LogRecord> back;
        QVERIFY(decodeRecords(data, &back).isOk());
        QCOMPARE(back, records);
        QCborParserError e;
        const QCborValue tree = QCborValue::fromCbor(data, &e);
        QCOMPARE(e.error, QCborError::NoError);
        QCOMPARE(tree.toArray().size(), records.size());
        const QCborMap last = tree.toArray().last().toMap();
        QCOMPARE(last.value(QStringLiteral("x")).toString(), records.last().text);
        QCOMPARE(last.value(QStringLiteral("n")).toInteger(), qint64(records.last().sequence));
        QCOMPARE(tree.toArray().at(1).toMap().value(QStringLiteral("t")).toInteger(), qint64(-5));
    }

    void malformedRecordsAreRefused()
    {
        const auto refused = [](const QByteArray &data) { // BadRequest, the output untouched
            QList<LogRecord> out{LogRecord()};
            const Status s = decodeRecords(data, &out);
            return s.code() == Status::Code::BadRequest && !s.message().isEmpty() && out.size() == 1 ? s
                                                                                                   : Status();
        };
        QVERIFY(!refused(QByteArray("\xff\x00garbage", 9)).isOk());
        QVERIFY(!refused(QByteArray("\x81\x01", 2)).isOk()); // [1]: not a map
        // [{"x": a text string claiming 2^40 bytes}]: refused, nothing allocated for it.
        const Status huge = refused(QByteArray("\x81\xa1\x61x\x7b\x00\x00\x01\x00\x00\x00\x00\x00", 13));
        QVERIFY2(huge.message().contains(QLatin1String("malformed")), qPrintable(huge.message()));
        // Truncated in the middle of a record.
        const QByteArray good = encodeRecords({record(QStringLiteral("whole"))});
        for (qsizetype n = 0; n < good.size(); ++n)
            QVERIFY(!refused(good.left(n)).isOk());
        LogQuery q;
        QCOMPARE(LogQuery::decode(QByteArray("x"), &q).code(), Status::Code::BadRequest);
        q.limit = 0;
        QCOMPARE(LogQuery::decode(q.encode(), &q).code(), Status::Code::BadRequest);
    }

    void queryRoundTrip()
    {
        LogQuery q;
        q.sinceMs = 5;
        q.untilMs = 10;
        q.minSeverity = Severity::Warning;
        q.process = QStringLiteral("RO*");
        q.text = QStringLiteral("timeout");
        q.run = 3;
        q.limit = 50;
        q.beforeId = 77;
        q.afterId = 3;
        const auto back = dialog::test::decode<LogQuery>(q.encode());
        QVERIFY(back);
        QCOMPARE(back->process, q.process);
        QCOMPARE(back->minSeverity, q.minSeverity);
        QCOMPARE(back->beforeId, q.beforeId);
        QCOMPARE(back->afterId, q.afterId);
        QCOMPARE(back->run, q.run);
        QCOMPARE(back->limit, q.limit);
    }

    void severityNames()
    {
        QCOMPARE(severityFromName(QStringLiteral("Warning")), std::optional<Severity>(Severity::Warning));
        QCOMPARE(severityFromName(QStringLiteral("critical")), std::optional<Severity>(Severity::Error));
        QVERIFY(!severityFromName(QStringLiteral("loud")));
        QCOMPARE(severityName(Severity::Fatal), QStringLiteral("fatal"));
    }
};

QTEST_GUILESS_MAIN(tst_Report)
#include "tst_report.moc"
