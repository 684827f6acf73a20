// Web IS: histograms drawn as PNG by dialog-render, a child process, so that the IS server itself
// needs no GUI stack (the daemons' package has none) and drawing never holds up its other work.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QString>
#include <QTimer>
#include <deque>
#include <functional>

namespace dialog::isd {

/// What to draw: one histogram object (its value as dialog::is::toJson() gives it).
struct RenderRequest
{
    QString name; ///< "Server.Object"
    QString type; ///< Histogram1D or Histogram2D
    QJsonObject value;
    int width = 0;
    int height = 0;
    bool logY = false;
    bool logZ = false;
    QJsonObject check; ///< a DQResult's value (status, value, details); empty: none
};

/// What came of it: a PNG, or the HTTP status and the reason.
struct RenderResult
{
    int status = 200;
    QString error;
    QByteArray png;
};

/// Keeps one dialog-render running (started at the first request, started again after it died or
/// was killed) and sends it one request at a time; the protocol is in docs/presenter.md. A request
/// waits in a queue of at most MaxQueued (more: 503 at once) and is answered within DeadlineMs of
/// being sent (else the renderer is killed and the request gets 503). Lives in the web server's
/// thread; every callback is called there.
class WebRenderer : public QObject
{
    Q_OBJECT
public:
    static constexpr int MaxQueued = 16;
    static constexpr int DeadlineMs = 3000;
    static constexpr qint64 MaxPngBytes = 64 * 1024 * 1024;

    /// @p program: the dialog-render binary.
    explicit WebRenderer(const QString &program, QObject *parent = nullptr);
    ~WebRenderer() override;

    using Done = std::function<void(const RenderResult &)>;
    /// Draws @p request; @p done is called once, later (never from within this call).
    void render(const RenderRequest &request, Done done);

    /// Requests drawn by the renderer since the start (not counting those answered from no process).
    quint64 drawn() const { return m_drawn; }

private:
    struct Pending
    {
        qint64 id = 0;
        QByteArray frame;
        Done done;
    };
    void sendNext();
    void onReadyRead();
    void onFinished();
    void failCurrent(int status, const QString &why);
    void later(Done done, RenderResult result);
    bool ensureStarted(QString *why);

    QString m_program;
    QPointer<QProcess> m_process;
    std::deque<Pending> m_queue;
    bool m_busy = false;
    Pending m_current;
    QByteArray m_buffer;
    QTimer m_deadline;
    qint64 m_nextId = 1;
    quint64 m_drawn = 0;
    QString m_stderrTail; ///< the renderer's last words, for the reason of a crash
};

} // namespace dialog::isd
