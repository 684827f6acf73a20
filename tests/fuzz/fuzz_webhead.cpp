// libFuzzer target: the web IS's first look at a connection — the request line and header block
// gathered as they arrive in fuzzer-chosen pieces, with the same decisions as WebTcpServer::sniff()
// (400 for what is not HTTP/1.x, 431 for an endless head, WebSocket upgrade or plain HTTP).
#include "fuzzcommon.h"

#include "webtcpserver.h"

using dialog::isd::WebTcpServer;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const qsizetype piece = data[0] + 1;
    QByteArrayView in = dialog::fuzz::bytes(data + 1, size - 1);
    QByteArray head;
    while (!in.isEmpty()) {
        const QByteArrayView now = in.first(qMin(piece, in.size()));
        in = in.sliced(now.size());
        head += now.first(qMin(now.size(), qsizetype(WebTcpServer::MaxHeaderBytes + 1) - head.size()));
        const qsizetype lineEnd = head.indexOf('\n');
        if (lineEnd >= 0 && !WebTcpServer::isRequestLine(head.left(lineEnd)))
            return 0; // 400
        const qsizetype end = head.indexOf("\r\n\r\n");
        if (end < 0) {
            if (head.size() > WebTcpServer::MaxHeaderBytes)
                return 0; // 431
            continue;
        }
        (void)WebTcpServer::isUpgradeToWebSocket(head.left(end));
        return 0;
    }
    return 0;
}
