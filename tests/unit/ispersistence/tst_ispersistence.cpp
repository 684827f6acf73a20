// Persistence: the journal acknowledges writes once durable and brings them back at the next
// start, declared types are kept, and a checkpoint that cannot be written is said in the
// category dialog.is.persist (so the message log gets it) without stopping anything.
#include "statuscheck.h"
#include "persistence.h"

#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

using namespace dialog;
using namespace dialog::isd;

namespace {
struct Logged
{
    QString category;
    QString text;
};
QList<Logged> g_logged;
void capture(QtMsgType, const QMessageLogContext &context, const QString &text)
{
    g_logged.append({QString::fromUtf8(context.category), text});
}

is::TypeInfo countType()
{
    is::TypeInfo t(QStringLiteral("Count"));
    t.setAttributes({is::AttributeInfo(QStringLiteral("n"), is::BasicType::U32)});
    return t;
}

/// What an IS server keeps on disk: its registry (knowing Count unless told otherwise), repository
/// and persistence.
struct Server
{
    explicit Server(const ServerOptions &options, bool withCount = true)
        : repo(options.name, types), persistence(options, types, repo, pool)
    {
        if (withCount)
            types.declareType(countType());
    }
    bool load(QString *error) { return persistence.loadTypes(error) && persistence.load(error); }

    is::TypeRegistry types;
    is::Repository repo;
    QThreadPool pool;
    Persistence persistence;
};
} // namespace

class tst_IsPersistence : public QObject
{
    Q_OBJECT
private slots:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        m_options = ServerOptions();
        m_options.name = QStringLiteral("Srv");
        m_options.dataDir = m_dir->path();
        m_options.checkpointS = 0;
    }

    void journaledWritesComeBackAtTheNextStart()
    {
        QString error;
        {
            Server srv(m_options);
            QVERIFY2(srv.load(&error), qPrintable(error));
            QVERIFY(!srv.persistence.holdsAcknowledgements());
            is::Object o = is::Object::create(srv.types, QStringLiteral("Count"));
            o.set<quint32>(QStringLiteral("n"), 42);
            QCOMPARE(srv.repo.upsert(QStringLiteral("a"), o).code(), Status::Code::Ok);
            QVERIFY(srv.persistence.holdsAcknowledgements());
            QList<bool> acknowledged;
            srv.persistence.afterJournal(true, [&](bool ok, const QString &) { acknowledged << ok; });
            srv.persistence.afterJournal(false, [&](bool ok, const QString &) { acknowledged << ok; });
            QTRY_COMPARE_WITH_TIMEOUT(acknowledged, QList<bool>({true, true}), 10000);
            QCOMPARE(srv.persistence.journalErrors(), quint64(0));
            // No checkpoint is written: the change is in the journal only.
        }
        Server srv(m_options);
        QVERIFY2(srv.load(&error), qPrintable(error));
        is::Object back;
        QCOMPARE(srv.repo.get(QStringLiteral("a"), &back).code(), Status::Code::Ok);
        QCOMPARE(back.get<quint32>(QStringLiteral("n")), quint32(42));
        QVERIFY2(srv.persistence.saveNow(&error), qPrintable(error));
    }

    void declaredTypesAreKept()
    {
        QString error;
        {
            Server srv(m_options, false);
            QVERIFY2(srv.load(&error), qPrintable(error));
            QVERIFY_OK(is::mergeTypes(srv.types, {countType()}));
            QVERIFY2(srv.persistence.addDeclaredTypes({countType()}, &error), qPrintable(error));
        }
        Server srv(m_options, false);
        QVERIFY(!srv.types.contains(QStringLiteral("Count")));
        QVERIFY2(srv.persistence.loadTypes(&error), qPrintable(error));
        QVERIFY(srv.types.contains(QStringLiteral("Count")));
    }

    void checkpointFailureIsLoggedAndCounted()
    {
        m_options.journal = false;
        Server srv(m_options);
        Persistence &p = srv.persistence;
        QString error;
        QVERIFY2(srv.load(&error), qPrintable(error));
        QCOMPARE(srv.repo.upsert(QStringLiteral("a"), is::Object::create(srv.types, QStringLiteral("Count"))).code(),
                 Status::Code::Ok);
        p.checkpoint();
        QTRY_VERIFY_WITH_TIMEOUT(p.lastCheckpointUs() > 0, 10000);
        QCOMPARE(p.checkpointErrors(), quint64(0));

        // The data directory becomes a file: no checkpoint can be written there (even by root).
        QVERIFY(QDir(m_options.dataDir).removeRecursively());
        QFile blocker(m_options.dataDir);
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        g_logged.clear();
        const QtMessageHandler previous = qInstallMessageHandler(capture);
        p.checkpoint();
        QTRY_COMPARE_WITH_TIMEOUT(p.checkpointErrors(), quint64(1), 10000);
        srv.pool.waitForDone();
        qInstallMessageHandler(previous);
        QCOMPARE(g_logged.size(), 1);
        QCOMPARE(g_logged.first().category, QStringLiteral("dialog.is.persist"));
        QVERIFY2(g_logged.first().text.contains(QLatin1String("Srv: checkpoint failed")),
                 qPrintable(g_logged.first().text));
        QVERIFY(!p.saveNow(&error));
        QVERIFY(!error.isEmpty());
        QFile::remove(m_options.dataDir);
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    ServerOptions m_options;
};

QTEST_GUILESS_MAIN(tst_IsPersistence)
#include "tst_ispersistence.moc"
