#include "dialog/application.h"

#include <QCoreApplication>
#include <QSocketNotifier>
#include <csignal>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace dialog {

namespace {
int g_signalFd[2] = {-1, -1};

void onSignal(int)
{
    const char c = 1;
    [[maybe_unused]] const ssize_t n = ::write(g_signalFd[0], &c, 1);
}
} // namespace

void preferLowLatencyEventDispatcher()
{
    if (!qEnvironmentVariableIsSet("QT_NO_GLIB"))
        qputenv("QT_NO_GLIB", "1");
}

void quitOnTerminationSignals()
{
    std::signal(SIGPIPE, SIG_IGN);
    if (g_signalFd[0] >= 0 || ::socketpair(AF_UNIX, SOCK_STREAM, 0, g_signalFd) != 0)
        return;
    auto *n = new QSocketNotifier(g_signalFd[1], QSocketNotifier::Read, QCoreApplication::instance());
    QObject::connect(n, &QSocketNotifier::activated, QCoreApplication::instance(), [] {
        char c;
        [[maybe_unused]] const ssize_t r = ::read(g_signalFd[1], &c, 1);
        QCoreApplication::quit();
    });
    struct sigaction sa = {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
}

bool notifyReady()
{
    const QByteArray path = qgetenv("NOTIFY_SOCKET");
    sockaddr_un addr = {};
    if (path.isEmpty() || path.size() >= qsizetype(sizeof(addr.sun_path)) ||
        (path.at(0) != '/' && path.at(0) != '@'))
        return false;
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.constData(), size_t(path.size()));
    if (addr.sun_path[0] == '@')
        addr.sun_path[0] = '\0'; // an abstract socket name
    const socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + size_t(path.size()));
    const QByteArray state =
        "READY=1\nMAINPID=" + QByteArray::number(QCoreApplication::applicationPid()) + '\n';
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    const ssize_t n = ::sendto(fd, state.constData(), size_t(state.size()), MSG_NOSIGNAL,
                               reinterpret_cast<const sockaddr *>(&addr), len);
    ::close(fd);
    return n == state.size();
}

} // namespace dialog
