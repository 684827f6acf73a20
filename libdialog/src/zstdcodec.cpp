#include "zstdcodec_p.h"

#include <zstd.h>

namespace dialog::zstd {

namespace {
// One compression context per thread, reused by every call of that thread.
ZSTD_CCtx *context()
{
    struct Holder
    {
        ZSTD_CCtx *ctx = ZSTD_createCCtx();
        ~Holder() { ZSTD_freeCCtx(ctx); }
    };
    thread_local Holder holder;
    return holder.ctx;
}

QString zstdError(size_t code)
{
    return QString::fromLatin1(ZSTD_getErrorName(code));
}
} // namespace

bool compress(QByteArrayView in, int level, QByteArray &out, QString *error)
{
    ZSTD_CCtx *ctx = context();
    if (!ctx) {
        if (error)
            *error = QStringLiteral("zstd compression failed: out of memory");
        return false;
    }
    size_t n = ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, level);
    if (!ZSTD_isError(n))
        n = ZSTD_CCtx_setParameter(ctx, ZSTD_c_checksumFlag, 1);
    if (!ZSTD_isError(n)) {
        out.resize(qsizetype(ZSTD_compressBound(size_t(in.size()))));
        n = ZSTD_compress2(ctx, out.data(), size_t(out.size()), in.data(), size_t(in.size()));
    }
    if (ZSTD_isError(n)) {
        ZSTD_CCtx_reset(ctx, ZSTD_reset_session_and_parameters);
        out.clear();
        if (error)
            *error = QStringLiteral("zstd compression failed: %1").arg(zstdError(n));
        return false;
    }
    out.truncate(qsizetype(n));
    return true;
}

qint64 contentSize(QByteArrayView in)
{
    const unsigned long long size = ZSTD_getFrameContentSize(in.data(), size_t(in.size()));
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > quint64(INT64_MAX))
        return -1;
    return qint64(size);
}

bool decompress(QByteArrayView in, QByteArray &out, qint64 maxSize, QString *error)
{
    const qint64 size = contentSize(in);
    if (size < 0) {
        if (error)
            *error = QStringLiteral("corrupt zstd data (no valid frame header)");
        return false;
    }
    if (size > maxSize) {
        if (error)
            *error = QStringLiteral("compressed data expands to %1 bytes, over the maximum of %2")
                         .arg(size)
                         .arg(maxSize);
        return false;
    }
    out.resize(qsizetype(size));
    const size_t n = ZSTD_decompress(out.data(), size_t(size), in.data(), size_t(in.size()));
    if (ZSTD_isError(n) || qint64(n) != size) {
        if (error)
            *error = QStringLiteral("corrupt zstd data: %1")
                         .arg(ZSTD_isError(n) ? zstdError(n) : QStringLiteral("size mismatch"));
        out.clear();
        return false;
    }
    return true;
}

} // namespace dialog::zstd
