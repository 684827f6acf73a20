// Shared by the libFuzzer targets: quiet Qt logging (a fuzzer feeds millions of bad inputs, and a
// warning per input would be all it does) and a type registry with every kind of attribute.
#pragma once

#include <dialog/is/typeregistry.h>

#include <google/protobuf/stubs/logging.h>

#include <QByteArrayView>
#include <QtGlobal>
#include <cstdint>
#include <cstdlib>

namespace dialog::fuzz {

inline void quietQt()
{
    // protobuf logs an error line for every string field that is not UTF-8.
    google::protobuf::SetLogHandler(
        [](google::protobuf::LogLevel, const char *, int, const std::string &) {});
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &, const QString &msg) {
        if (type == QtFatalMsg) {
            fprintf(stderr, "qFatal: %s\n", qPrintable(msg));
            abort();
        }
    });
}

inline QByteArrayView bytes(const uint8_t *data, size_t size)
{
    return QByteArrayView(reinterpret_cast<const char *>(data), qsizetype(size));
}

/// The types of the demo partition (resources/is-types) plus one attribute of every kind, a
/// self-nesting type and a few small ones, so decoded values reach every branch of the codec.
inline const dialog::is::TypeRegistry &registry()
{
    static const dialog::is::TypeRegistry *r = [] {
        auto *reg = new dialog::is::TypeRegistry;
        if (const dialog::Status st = reg->loadDirectory(QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types"));
            !st.isOk()) {
            fprintf(stderr, "fuzz: cannot load the IS types: %s\n", qPrintable(st.message()));
            abort();
        }
        static const char xml[] = R"(<is-types>
  <type name="AllTypes">
    <attribute name="b" type="bool"/>   <attribute name="i8" type="s8"/>   <attribute name="u8" type="u8"/>
    <attribute name="i16" type="s16"/>  <attribute name="u16" type="u16"/> <attribute name="i32" type="s32"/>
    <attribute name="u32" type="u32"/>  <attribute name="i64" type="s64"/> <attribute name="u64" type="u64"/>
    <attribute name="f" type="float"/>  <attribute name="d" type="double"/>
    <attribute name="s" type="string"/> <attribute name="t" type="time"/>
    <attribute name="vb" type="bool" vector="true"/>   <attribute name="vi8" type="s8" vector="true"/>
    <attribute name="vu8" type="u8" vector="true"/>    <attribute name="vi16" type="s16" vector="true"/>
    <attribute name="vu16" type="u16" vector="true"/>  <attribute name="vi32" type="s32" vector="true"/>
    <attribute name="vu32" type="u32" vector="true"/>  <attribute name="vi64" type="s64" vector="true"/>
    <attribute name="vu64" type="u64" vector="true"/>  <attribute name="vf" type="float" vector="true"/>
    <attribute name="vd" type="double" vector="true"/> <attribute name="vs" type="string" vector="true"/>
    <attribute name="vt" type="time" vector="true"/>
    <attribute name="h1" type="Histogram1D"/>
    <attribute name="h2s" type="Histogram2D" vector="true"/>
  </type>
  <type name="Tree"><attribute name="children" type="Tree" vector="true"/></type>
  <type name="OneString"><attribute name="s" type="string"/></type>
  <type name="OneBool"><attribute name="b" type="bool"/></type>
</is-types>)";
        if (const dialog::Status st = reg->loadXml(QByteArrayView(xml), QStringLiteral("fuzz")); !st.isOk()) {
            fprintf(stderr, "fuzz: cannot load the fuzz types: %s\n", qPrintable(st.message()));
            abort();
        }
        return reg;
    }();
    return *r;
}

} // namespace dialog::fuzz
