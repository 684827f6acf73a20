// dialog-render: the off-screen renderer of histogram pictures that the IS server starts as a child
// (its web route /is/<server>/<object>.png). Requests on stdin, answers on stdout, one at a time
// (renderprotocol.h); EOF on stdin ends it with 0. It never opens a window: the offscreen platform
// is forced before the application exists.
#include "renderprotocol.h"

#include <QCommandLineParser>
#include <QGuiApplication>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace {

// Reads exactly @p n bytes of fd 0 into @p out (nullptr: discards them). False on EOF or error.
bool readExact(char *out, qint64 n)
{
    char sink[65536];
    while (n > 0) {
        char *to = out ? out : sink;
        const qint64 want = out ? n : std::min<qint64>(n, sizeof sink);
        const ssize_t got = ::read(STDIN_FILENO, to, size_t(want));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        n -= got;
        if (out)
            out += got;
    }
    return true;
}

bool writeAll(const QByteArray &data)
{
    const char *p = data.constData();
    qint64 left = data.size();
    while (left > 0) {
        const ssize_t put = ::write(STDOUT_FILENO, p, size_t(left));
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return false;
        p += put;
        left -= put;
    }
    return true;
}

} // namespace

int main(int argc, char *argv[])
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    QGuiApplication::setApplicationName(QStringLiteral("dialog-render"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Draws IS histograms as PNG pictures, off screen, for the web IS: length-prefixed JSON requests on "
        "stdin, length-prefixed answers and PNGs on stdout, until EOF. The same drawing as "
        "dialog-presenter."));
    p.addHelpOption();
    p.process(app);
    std::signal(SIGPIPE, SIG_IGN); // a parent that went away: write() fails and the loop ends
    using namespace dialog::presenter::render;
    for (;;) {
        char header[4];
        if (!readExact(header, 4))
            return 0; // EOF (or a parent gone): done
        const quint32 n = frameLength(header);
        QByteArray reply;
        if (n > MaxRequestBytes) {
            if (!readExact(nullptr, n))
                return 0;
            reply = encodeAnswer(
                -1,
                QStringLiteral("request of %1 bytes is over the limit of %2").arg(n).arg(MaxRequestBytes));
        } else {
            QByteArray json(qsizetype(n), Qt::Uninitialized);
            if (!readExact(json.data(), n)) {
                std::fprintf(stderr, "dialog-render: input ended inside a request\n");
                return 1;
            }
            reply = answer(json);
        }
        if (!writeAll(reply))
            return 1;
    }
}
