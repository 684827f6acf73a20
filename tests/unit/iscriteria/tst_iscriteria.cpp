// IS criteria: regular expression (bounded) on names, and/or type selectors, JSON form.
#include "statuscheck.h"
#include "dialog/is/criteria.h"
#include "dialog/is/typeregistry.h"

#include <QtTest>

using namespace dialog::is;
using Sel = Criteria::TypeSelector;
using Logic = Criteria::Logic;

class tst_IsCriteria : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void matches_data();
    void matches();
    void invalidRegexMatchesNothing();
    void catastrophicRegexRefused_data();
    void catastrophicRegexRefused();
    void backtrackingBoundedByMatchLimit();
    void singleLevelQuantifiersAccepted_data();
    void singleLevelQuantifiersAccepted();
    void exactNameMatchesOnlyThatName_data();
    void exactNameMatchesOnlyThatName();
    void jsonRoundTrip();
    void badJsonRejected_data();
    void badJsonRejected();

private:
    TypeRegistry m_types;
};

void tst_IsCriteria::initTestCase()
{
    QString error;
    QVERIFY_OK(m_types.loadDirectory(QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")));
    QVERIFY(m_types.isSameOrDerived(QStringLiteral("ReadoutStats"), QStringLiteral("ProcessStats")));
}

void tst_IsCriteria::matches_data()
{
    QTest::addColumn<QString>("regex");
    QTest::addColumn<QString>("type");
    QTest::addColumn<Sel>("selector");
    QTest::addColumn<Logic>("logic");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("objectType");
    QTest::addColumn<bool>("expected");

    const QString R = QStringLiteral("ReadoutStats"), P = QStringLiteral("ProcessStats"),
                  I = QStringLiteral("RunInfo");
    QTest::newRow("default-matches-all")
        << QString() << QString() << Sel::Any << Logic::And << "x" << I << true;
    QTest::newRow("regex-whole-name")
        << "Readout[0-9]+" << QString() << Sel::Any << Logic::And << "Readout12" << R << true;
    QTest::newRow("regex-is-anchored")
        << "Readout" << QString() << Sel::Any << Logic::And << "Readout12" << R << false;
    QTest::newRow("regex-alternation")
        << "Run(Info|Params)" << QString() << Sel::Any << Logic::And << "RunParams" << I << true;
    QTest::newRow("regex-posix-class")
        << "[[:alpha:]]+" << QString() << Sel::Any << Logic::And << "abc1" << I << false;
    QTest::newRow("exactly-same") << QString() << P << Sel::Exactly << Logic::And << "a" << P << true;
    QTest::newRow("exactly-derived-excluded")
        << QString() << P << Sel::Exactly << Logic::And << "a" << R << false;
    QTest::newRow("subtypes-derived")
        << QString() << P << Sel::WithSubtypes << Logic::And << "a" << R << true;
    QTest::newRow("subtypes-same") << QString() << P << Sel::WithSubtypes << Logic::And << "a" << P << true;
    QTest::newRow("subtypes-other") << QString() << P << Sel::WithSubtypes << Logic::And << "a" << I << false;
    QTest::newRow("not-other") << QString() << P << Sel::Not << Logic::And << "a" << I << true;
    QTest::newRow("not-derived-included") << QString() << P << Sel::Not << Logic::And << "a" << R << true;
    QTest::newRow("not-same") << QString() << P << Sel::Not << Logic::And << "a" << P << false;
    QTest::newRow("not-subtypes-derived")
        << QString() << P << Sel::NotWithSubtypes << Logic::And << "a" << R << false;
    QTest::newRow("not-subtypes-other")
        << QString() << P << Sel::NotWithSubtypes << Logic::And << "a" << I << true;
    QTest::newRow("and-both") << "Readout.*" << P << Sel::WithSubtypes << Logic::And << "Readout3" << R
                              << true;
    QTest::newRow("and-name-only") << "Readout.*" << P << Sel::WithSubtypes << Logic::And << "Readout3" << I
                                   << false;
    QTest::newRow("and-type-only") << "Readout.*" << P << Sel::WithSubtypes << Logic::And << "Other" << R
                                   << false;
    QTest::newRow("or-name-only") << "Readout.*" << P << Sel::WithSubtypes << Logic::Or << "Readout3" << I
                                  << true;
    QTest::newRow("or-type-only") << "Readout.*" << P << Sel::WithSubtypes << Logic::Or << "Other" << R
                                  << true;
    QTest::newRow("or-neither") << "Readout.*" << P << Sel::WithSubtypes << Logic::Or << "Other" << I
                                << false;
    QTest::newRow("or-type-absent-uses-name")
        << "Readout.*" << QString() << Sel::Any << Logic::Or << "Other" << R << false;
}

void tst_IsCriteria::matches()
{
    QFETCH(QString, regex);
    QFETCH(QString, type);
    QFETCH(Sel, selector);
    QFETCH(Logic, logic);
    QFETCH(QString, name);
    QFETCH(QString, objectType);
    QFETCH(bool, expected);
    const Criteria c(regex, type, selector, logic);
    QVERIFY2(c.isValid(), qPrintable(c.errorString()));
    QCOMPARE(c.matches(name, objectType, m_types), expected);
}

void tst_IsCriteria::invalidRegexMatchesNothing()
{
    const Criteria c(QStringLiteral("Readout[0-9"));
    QVERIFY(!c.isValid());
    QVERIFY(c.errorString().startsWith(QStringLiteral("invalid regular expression 'Readout[0-9'")));
    QVERIFY(!c.matches(QStringLiteral("Readout1"), QStringLiteral("RunInfo"), m_types));
}

void tst_IsCriteria::catastrophicRegexRefused_data()
{
    QTest::addColumn<QString>("regex");
    QTest::addColumn<QString>("says");
    QTest::newRow("nested-bounded-repeats")
        << QStringLiteral("X.(((a{1,255}){1,255}){1,255})") << QStringLiteral("too large");
    QTest::newRow("too-long") << QString(Criteria::limits().maxPatternLength + 1, QLatin1Char('a'))
                              << QStringLiteral("too long");
    QTest::newRow("too-deep") << QString(200, QLatin1Char('(')) + QString(200, QLatin1Char(')'))
                              << QStringLiteral("nested");
    // Star height 2: exponential backtracking on a name that almost matches.
    QTest::newRow("repeated-plus") << QStringLiteral("(a+)+b") << QStringLiteral("pattern too expensive");
    QTest::newRow("repeated-alternation-plus")
        << QStringLiteral("(?:(?:.|.)+)+\\s") << QStringLiteral("pattern too expensive");
    QTest::newRow("star-of-star") << QStringLiteral("(?:x*y*)*z") << QStringLiteral("pattern too expensive");
    QTest::newRow("counted-repeat") << QStringLiteral("(?:a.*){2,}")
                                    << QStringLiteral("pattern too expensive");
    QTest::newRow("named-group") << QStringLiteral("(?<n>[a-z]+)*")
                                 << QStringLiteral("pattern too expensive");
}

// Compiling used to take ~1 GB/s until the process was killed; now it is refused at once.
void tst_IsCriteria::catastrophicRegexRefused()
{
    QFETCH(QString, regex);
    QFETCH(QString, says);
    const Criteria c(regex);
    QVERIFY(!c.isValid());
    QVERIFY2(c.errorString().contains(says), qPrintable(c.errorString()));
    QVERIFY(!c.matches(QStringLiteral("Xaaa"), QStringLiteral("RunInfo"), m_types));
}

// Exponential backtracking stops at the match limit and counts as no match; the expression says
// it ran out (a standing subscription drops it), copies share that.
void tst_IsCriteria::backtrackingBoundedByMatchLimit()
{
    const Criteria c(QStringLiteral("(a|a|aa)*(a|a)*b"));
    QVERIFY2(c.isValid(), qPrintable(c.errorString()));
    const Criteria copy = c;
    QVERIFY(c.matches(QStringLiteral("aab"), QStringLiteral("RunInfo"), m_types));
    QVERIFY(!copy.exhausted());
    // Without a 'b' PCRE2 gives up before matching (a required character); with one it backtracks.
    QVERIFY(
        !c.matches(QString(60, QLatin1Char('a')) + QStringLiteral("bx"), QStringLiteral("RunInfo"), m_types));
    QVERIFY(copy.exhausted());
    QVERIFY(c.matches(QStringLiteral("aab"), QStringLiteral("RunInfo"), m_types));
}

// Quantifiers that look nested but cannot backtrack exponentially stay accepted.
void tst_IsCriteria::singleLevelQuantifiersAccepted_data()
{
    QTest::addColumn<QString>("regex");
    QTest::newRow("group-optional") << QStringLiteral("(Run[0-9]+)?State");
    QTest::newRow("quantifier-in-class") << QStringLiteral("[+*]+(ab)*");
    QTest::newRow("escaped-parens") << QStringLiteral("\\(a+\\)+");
    QTest::newRow("bounded-inner") << QStringLiteral("(?:a{2})+");
    QTest::newRow("alternation") << QStringLiteral("(Readout|Control)[0-9]*\\..*");
    QTest::newRow("option-setting") << QStringLiteral("(?i)run.*");
}

void tst_IsCriteria::singleLevelQuantifiersAccepted()
{
    QFETCH(QString, regex);
    const Criteria c(regex);
    QVERIFY2(c.isValid(), qPrintable(c.errorString()));
}

void tst_IsCriteria::exactNameMatchesOnlyThatName_data()
{
    QTest::addColumn<QString>("object");
    QTest::addColumn<QString>("other");
    QTest::newRow("dot") << QStringLiteral("a.b") << QStringLiteral("aXb");
    QTest::newRow("brackets") << QStringLiteral("Readout[1]") << QStringLiteral("Readout1");
    QTest::newRow("star-plus") << QStringLiteral("x*+") << QStringLiteral("xxx+");
    QTest::newRow("anchors-alternation") << QStringLiteral("^a|b$") << QStringLiteral("a");
    QTest::newRow("backslash-braces") << QStringLiteral("p\\q{2}") << QStringLiteral("p\\qq");
    QTest::newRow("question-parens") << QStringLiteral("(x)?") << QStringLiteral("");
}

void tst_IsCriteria::exactNameMatchesOnlyThatName()
{
    QFETCH(QString, object);
    QFETCH(QString, other);
    const Criteria c = Criteria::exactName(object);
    QVERIFY2(c.isValid(), qPrintable(c.errorString()));
    QVERIFY(c.matches(object, QStringLiteral("RunInfo"), m_types));
    QVERIFY(!c.matches(other, QStringLiteral("RunInfo"), m_types));
    QVERIFY(!c.matches(object + QLatin1Char('x'), QStringLiteral("RunInfo"), m_types));
}

void tst_IsCriteria::jsonRoundTrip()
{
    const Criteria c(QStringLiteral("Readout.*"), QStringLiteral("ProcessStats"), Sel::NotWithSubtypes,
                     Logic::Or);
    const QJsonObject j = c.toJson();
    QCOMPARE(j.value(QStringLiteral("selector")).toString(), QStringLiteral("not-subtypes"));
    QCOMPARE(j.value(QStringLiteral("logic")).toString(), QStringLiteral("or"));
    Criteria back;
    QVERIFY_OK(Criteria::fromJson(j, &back));
    QVERIFY(back.isValid());
    QCOMPARE(back.regex(), c.regex());
    QCOMPARE(back.type(), c.type());
    QCOMPARE(back.selector(), c.selector());
    QCOMPARE(back.logic(), c.logic());
    // Copies share the compiled expression and stay usable after the original is gone.
    Criteria copy = back;
    {
        Criteria temp = copy;
    }
    QVERIFY(copy.matches(QStringLiteral("Other"), QStringLiteral("RunInfo"), m_types));
}

void tst_IsCriteria::badJsonRejected_data()
{
    QTest::addColumn<QJsonObject>("json");
    QTest::addColumn<QString>("error");
    QTest::newRow("selector") << QJsonObject{{"type", "X"}, {"selector", "sometimes"}}
                              << "unknown type selector 'sometimes'";
    QTest::newRow("logic") << QJsonObject{{"logic", "xor"}} << "unknown logic 'xor'";
    QTest::newRow("regex") << QJsonObject{{"regex", "(("}} << "invalid regular expression '(('";
}

void tst_IsCriteria::badJsonRejected()
{
    QFETCH(QJsonObject, json);
    QFETCH(QString, error);
    Criteria c(QStringLiteral("untouched"), {});
    const dialog::Status refused = Criteria::fromJson(json, &c);
    QCOMPARE(refused.code(), dialog::Status::Code::BadRequest);
    QVERIFY2(refused.message().startsWith(error), qPrintable(refused.message()));
    QCOMPARE(c.regex(), QStringLiteral("untouched"));
}

QTEST_GUILESS_MAIN(tst_IsCriteria)
#include "tst_iscriteria.moc"
