// Replays the inputs of a fuzz target without libFuzzer: its checked-in seeds (corpus/<target>/)
// and every input that once crashed it (regressions/<target>/, one file per fixed bug, named
// after what broke). Built into a QtTest per target by tests/fuzz/CMakeLists.txt, so the default
// suite and the sanitizer builds run them.
#include <QDir>
#include <QFile>
#include <QTest>

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

class tst_FuzzReplay : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        int argc = 0;
        char **argv = nullptr;
        LLVMFuzzerInitialize(&argc, &argv);
    }
    void replay_data()
    {
        QTest::addColumn<QString>("path");
        const QString base = QStringLiteral(DIALOG_FUZZ_DIR);
        int n = 0;
        for (const QString &kind : {QStringLiteral("corpus"), QStringLiteral("regressions")}) {
            const QDir dir(base + u'/' + kind + u'/' + QStringLiteral(DIALOG_FUZZ_TARGET));
            for (const QString &f : dir.entryList(QDir::Files, QDir::Name)) {
                QTest::newRow(qPrintable(kind + u'/' + f)) << dir.filePath(f);
                ++n;
            }
        }
        if (n == 0)
            QTest::newRow("none") << QString();
    }
    void replay()
    {
        QFETCH(QString, path);
        QVERIFY2(!path.isEmpty(), "no seed for " DIALOG_FUZZ_TARGET);
        QFile f(path);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
        const QByteArray bytes = f.readAll();
        // A crash, an abort() of a target's own check or a sanitizer report ends the test.
        QCOMPARE(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.constData()),
                                        size_t(bytes.size())),
                 0);
    }
};

QTEST_GUILESS_MAIN(tst_FuzzReplay)
#include "replay.moc"
