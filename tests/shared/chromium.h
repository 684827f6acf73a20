// Headless Chromium driven over the DevTools protocol, for tests of web pages served by our daemons:
// HeadlessChromium starts it on a loopback port of its choice and finds the page's endpoint,
// DevTools sends commands and evaluates JavaScript in the page.
#pragma once

#include "isweb.h"

#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QWebSocket>

namespace dialog::test {

/// A minimal DevTools-protocol client: one page target, commands answered in order of ids.
class DevTools
{
public:
    bool connect(const QUrl &url)
    {
        QObject::connect(&m_ws, &QWebSocket::textMessageReceived, &m_ws, [this](const QString &text) {
            const QJsonObject o = QJsonDocument::fromJson(text.toUtf8()).object();
            if (o.contains(QLatin1String("id")))
                m_answers.insert(o.value(QLatin1String("id")).toInt(), o);
            else if (o.value(QLatin1String("method")).toString() == QLatin1String("Runtime.exceptionThrown"))
                m_pageErrors << QString::fromUtf8(
                    QJsonDocument(o.value(QLatin1String("params")).toObject()).toJson());
            else if (o.value(QLatin1String("method")).toString() == QLatin1String("Log.entryAdded") &&
                     o.value(QLatin1String("params"))
                             .toObject()
                             .value(QLatin1String("entry"))
                             .toObject()
                             .value(QLatin1String("level"))
                             .toString() == QLatin1String("error"))
                m_pageErrors << QString::fromUtf8(
                    QJsonDocument(o.value(QLatin1String("params")).toObject()).toJson());
        });
        m_ws.open(url);
        if (!waitUntil([this] { return m_ws.state() == QAbstractSocket::ConnectedState; }, 10000))
            qWarning() << "DevTools WebSocket" << url << m_ws.errorString();
        return m_ws.state() == QAbstractSocket::ConnectedState;
    }
    QJsonObject call(const QString &method, const QJsonObject &params = {}, int timeoutMs = 15000)
    {
        const int id = ++m_id;
        m_ws.sendTextMessage(QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("id"), id},
                                                                         {QStringLiteral("method"), method},
                                                                         {QStringLiteral("params"), params}})
                                                   .toJson(QJsonDocument::Compact)));
        waitUntil([&] { return m_answers.contains(id); }, timeoutMs);
        return m_answers.take(id);
    }
    /// The value of a JavaScript expression in the page (JSON-serialisable), or undefined.
    QJsonValue eval(const QString &expression)
    {
        const QJsonObject r =
            call(QStringLiteral("Runtime.evaluate"),
                 {{QStringLiteral("expression"), expression}, {QStringLiteral("returnByValue"), true}});
        return r.value(QLatin1String("result"))
            .toObject()
            .value(QLatin1String("result"))
            .toObject()
            .value(QLatin1String("value"));
    }
    void close() { m_ws.close(); }
    /// Uncaught exceptions and errors logged by the page (failed loads, …).
    QStringList pageErrors() const { return m_pageErrors; }

private:
    QStringList m_pageErrors;
    QWebSocket m_ws;
    int m_id = 0;
    QHash<int, QJsonObject> m_answers;
};

/// Chromium with --headless and the DevTools protocol on a loopback port (from DevToolsActivePort in
/// its own profile directory); terminated and reaped by the destructor.
class HeadlessChromium
{
public:
    ~HeadlessChromium()
    {
        if (m_browser.state() != QProcess::NotRunning) {
            m_browser.terminate();
            if (!m_browser.waitForFinished(5000)) {
                m_browser.kill();
                m_browser.waitForFinished(5000);
            }
        }
    }

    static QString executable() { return QStandardPaths::findExecutable(QStringLiteral("chromium")); }

    /// Starts it and returns the DevTools WebSocket URL of its page (empty on failure, @p error says why).
    QUrl start(QString *error)
    {
        m_browser.setStandardOutputFile(QProcess::nullDevice());
        m_browser.setStandardErrorFile(m_profile.filePath(QStringLiteral("chromium.log")));
        m_browser.start(
            executable(),
            {QStringLiteral("--headless"), QStringLiteral("--no-sandbox"), QStringLiteral("--disable-gpu"),
             QStringLiteral("--no-first-run"), QStringLiteral("--disable-extensions"),
             QStringLiteral("--disable-dev-shm-usage"), QStringLiteral("--window-size=1280,760"),
             QStringLiteral("--remote-debugging-address=127.0.0.1"),
             QStringLiteral("--remote-debugging-port=0"), QStringLiteral("--remote-allow-origins=*"),
             QStringLiteral("--user-data-dir=") + m_profile.path(), QStringLiteral("about:blank")});
        if (!m_browser.waitForStarted(10000)) {
            *error = m_browser.errorString();
            return {};
        }
        quint16 devtools = 0;
        waitUntil(
            [&] {
                QFile active(m_profile.filePath(QStringLiteral("DevToolsActivePort")));
                if (active.open(QIODevice::ReadOnly))
                    devtools = quint16(active.readLine().trimmed().toUInt());
                return devtools != 0;
            },
            20000, 50);
        if (!devtools) {
            *error = QStringLiteral("Chromium did not write DevToolsActivePort");
            return {};
        }
        QUrl pageWs;
        waitUntil(
            [&] {
                const HttpReply r = httpGet(devtools, "/json/list");
                for (const QJsonValue &v : QJsonDocument::fromJson(r.body).array())
                    if (v.toObject().value(QLatin1String("type")).toString() == QLatin1String("page"))
                        pageWs = QUrl(v.toObject().value(QLatin1String("webSocketDebuggerUrl")).toString());
                return !pageWs.isEmpty();
            },
            20000, 100);
        if (pageWs.isEmpty()) {
            *error = QStringLiteral("Chromium's DevTools endpoint did not answer");
            return {};
        }
        pageWs.setHost(QStringLiteral("127.0.0.1")); // built from our Host header, which has no port
        pageWs.setPort(devtools);
        return pageWs;
    }

    QProcess &process() { return m_browser; }

private:
    QTemporaryDir m_profile;
    QProcess m_browser;
};

/// Starts @p browser and opens @p url in its page, @p width × @p height pixels, with @p dt connected
/// to it and the Page and Runtime domains (and Log, with @p log) on. Empty, or why not.
inline QString openPage(HeadlessChromium &browser, DevTools &dt, const QString &url, int width, int height,
                        bool log = false)
{
    QString error;
    const QUrl pageWs = browser.start(&error);
    if (pageWs.isEmpty())
        return error;
    if (!dt.connect(pageWs))
        return QStringLiteral("cannot connect to the DevTools endpoint %1").arg(pageWs.toString());
    QStringList domains{QStringLiteral("Page.enable"), QStringLiteral("Runtime.enable")};
    if (log)
        domains << QStringLiteral("Log.enable");
    for (const QString &d : std::as_const(domains))
        if (dt.call(d).isEmpty())
            return QStringLiteral("%1 was not answered").arg(d);
    dt.call(QStringLiteral("Emulation.setDeviceMetricsOverride"), {{QStringLiteral("width"), width},
                                                                   {QStringLiteral("height"), height},
                                                                   {QStringLiteral("deviceScaleFactor"), 1},
                                                                   {QStringLiteral("mobile"), false}});
    if (!dt.call(QStringLiteral("Page.navigate"), {{QStringLiteral("url"), url}})
             .contains(QLatin1String("result")))
        return QStringLiteral("Page.navigate to %1 failed").arg(url);
    return {};
}

/// Saves the page as a PNG at @p path. Empty, or why not.
inline QString savePagePng(DevTools &dt, const QString &path)
{
    const QJsonObject shot = dt.call(QStringLiteral("Page.captureScreenshot"),
                                     {{QStringLiteral("format"), QStringLiteral("png")}});
    const QByteArray png = QByteArray::fromBase64(
        shot.value(QLatin1String("result")).toObject().value(QLatin1String("data")).toString().toLatin1());
    if (!png.startsWith("\x89PNG"))
        return QStringLiteral("Page.captureScreenshot answered no PNG");
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(png) != png.size())
        return QStringLiteral("cannot write %1: %2").arg(path, out.errorString());
    return {};
}

/// Closes the browser of @p dt and reaps @p browser.
inline void closeBrowser(HeadlessChromium &browser, DevTools &dt)
{
    dt.call(QStringLiteral("Browser.close"), {}, 3000);
    dt.close();
    browser.process().waitForFinished(10000);
}

} // namespace dialog::test
