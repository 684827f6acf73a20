// Globs (dialog/glob.h): one conversion for access lists, log searches, the message browser and
// alarm rules.
#include "dialog/glob.h"

#include <QTest>

class tst_Glob : public QObject
{
    Q_OBJECT

private slots:
    void matches_data();
    void matches();
    void unclosedBracketIsLiteral();
    void sqliteSpelling_data();
    void sqliteSpelling();
};

void tst_Glob::matches_data()
{
    QTest::addColumn<QString>("glob");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("match");
    QTest::newRow("star any") << "RO*"
                              << "RO1/x.y" << true;
    QTest::newRow("star empty") << "RO*"
                                << "RO" << true;
    QTest::newRow("whole string") << "RO"
                                  << "RO1" << false;
    QTest::newRow("question one") << "RO?"
                                  << "RO1" << true;
    QTest::newRow("question not none") << "RO?"
                                       << "RO" << false;
    QTest::newRow("set") << "RO[12]"
                         << "RO2" << true;
    QTest::newRow("set miss") << "RO[12]"
                              << "RO3" << false;
    QTest::newRow("range") << "RO[0-9]"
                           << "RO7" << true;
    QTest::newRow("negated set") << "RO[^12]"
                                 << "RO3" << true;
    QTest::newRow("negated set miss") << "RO[^12]"
                                      << "RO1" << false;
    QTest::newRow("leading bracket in set") << "[]x]"
                                            << "]" << true;
    QTest::newRow("leading bracket in negated set") << "[^]x]"
                                                    << "]" << false;
    QTest::newRow("backslash in set") << "a[\\]b"
                                      << "a\\b" << true;
    QTest::newRow("dot literal") << "a.b"
                                 << "axb" << false;
    QTest::newRow("dot itself") << "a.b"
                                << "a.b" << true;
    QTest::newRow("regex specials literal") << "a+(b)|{c}^$"
                                            << "a+(b)|{c}^$" << true;
    QTest::newRow("backslash literal") << "a\\b"
                                       << "a\\b" << true;
    QTest::newRow("case-sensitive") << "ro*"
                                    << "RO1" << false;
    QTest::newRow("lone closing bracket") << "a]"
                                          << "a]" << true;
    QTest::newRow("empty brackets literal") << "[]"
                                            << "[]" << true;
}

void tst_Glob::matches()
{
    QFETCH(QString, glob);
    QFETCH(QString, text);
    QFETCH(bool, match);
    const QRegularExpression re = dialog::globToRegex(glob);
    QVERIFY2(re.isValid(), qPrintable(re.errorString()));
    QCOMPARE(re.match(text).hasMatch(), match);
    // The pattern for databases matches the same strings once anchored.
    const QRegularExpression anchored(QLatin1Char('^') + dialog::globToRegexPattern(glob) + QLatin1Char('$'),
                                      QRegularExpression::DotMatchesEverythingOption);
    QVERIFY2(anchored.isValid(), qPrintable(anchored.errorString()));
    QCOMPARE(anchored.match(text).hasMatch(), match);
}

void tst_Glob::unclosedBracketIsLiteral()
{
    for (const QString glob : {QStringLiteral("run[3"), QStringLiteral("run[^3"), QStringLiteral("run[]3")}) {
        const QRegularExpression re = dialog::globToRegex(glob);
        QVERIFY2(re.isValid(), qPrintable(glob + QLatin1String(": ") + re.errorString()));
        QVERIFY2(re.match(glob).hasMatch(), qPrintable(glob));
        QVERIFY2(!re.match(QStringLiteral("run3")).hasMatch(), qPrintable(glob));
    }
    // A later set still works after an unclosed one.
    QVERIFY(dialog::globToRegex(QStringLiteral("[x*")).match(QStringLiteral("[xyz")).hasMatch());
    QVERIFY(dialog::globToRegex(QStringLiteral("a[b")).match(QStringLiteral("a[b")).hasMatch());
}

void tst_Glob::sqliteSpelling_data()
{
    QTest::addColumn<QString>("glob");
    QTest::addColumn<QString>("sqlite");
    QTest::newRow("plain") << "RO*"
                           << "RO*";
    QTest::newRow("set kept") << "RO[12]?"
                              << "RO[12]?";
    QTest::newRow("leading bracket set kept") << "[]x]"
                                              << "[]x]";
    QTest::newRow("unclosed") << "run[3"
                              << "run[[]3";
    QTest::newRow("unclosed then set") << "a[b"
                                       << "a[[]b";
}

void tst_Glob::sqliteSpelling()
{
    QFETCH(QString, glob);
    QFETCH(QString, sqlite);
    QCOMPARE(dialog::globForSqlite(glob), sqlite);
}

QTEST_GUILESS_MAIN(tst_Glob)
#include "tst_glob.moc"
