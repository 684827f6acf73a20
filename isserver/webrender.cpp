#include "webrender.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QtEndian>

Q_LOGGING_CATEGORY(lcRender, "dialog.is.web")

namespace dialog::isd {

namespace {

QByteArray lengthPrefixed(const QByteArray &bytes)
{
    QByteArray out(4, Qt::Uninitialized);
    qToBigEndian<quint32>(quint32(bytes.size()), out.data());
    return out + bytes;
}

/// The length of the frame at the start of @p buffer, or -1 while its prefix is incomplete.
qint64 frameLength(const QByteArray &buffer, qint64 offset)
{
    if (buffer.size() < offset + 4)
        return -1;
    return qint64(qFromBigEndian<quint32>(buffer.constData() + offset));
}

} // namespace

WebRenderer::WebRenderer(const QString &program, QObject *parent) : QObject(parent), m_program(program)
{
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        failCurrent(503, QStringLiteral("drawing took longer than %1 ms; the renderer was restarted").arg(DeadlineMs));
        if (m_process) {
            m_process->disconnect(this);
            m_process->kill();
            m_process->waitForFinished(1000);
            m_process->deleteLater();
            m_process = nullptr;
        }
        sendNext();
    });
}

WebRenderer::~WebRenderer()
{
    if (m_process) {
        m_process->disconnect(this);
        m_process->closeWriteChannel(); // dialog-render exits at the end of its input
        if (!m_process->waitForFinished(1000)) {
            m_process->kill();
            m_process->waitForFinished(1000);
        }
        delete m_process;
    }
}

void WebRenderer::later(Done done, RenderResult result)
{
    QMetaObject::invokeMethod(
        this, [done = std::move(done), result = std::move(result)] { done(result); }, Qt::QueuedConnection);
}

void WebRenderer::render(const RenderRequest &r, Done done)
{
    if (m_queue.size() >= size_t(MaxQueued))
        return later(std::move(done),
                     {503, QStringLiteral("%1 drawings are waiting (limit %2), try again later")
                               .arg(m_queue.size())
                               .arg(MaxQueued),
                      {}});
    const qint64 id = m_nextId++;
    QJsonObject request{{QStringLiteral("id"), id},
                              {QStringLiteral("width"), r.width},
                              {QStringLiteral("height"), r.height},
                              {QStringLiteral("type"), r.type},
                              {QStringLiteral("name"), r.name},
                              {QStringLiteral("value"), r.value},
                              {QStringLiteral("log_y"), r.logY},
                              {QStringLiteral("log_z"), r.logZ}};
    if (!r.check.isEmpty())
        request.insert(QStringLiteral("check"), r.check);
    m_queue.push_back(Pending{id, lengthPrefixed(QJsonDocument(request).toJson(QJsonDocument::Compact)),
                              std::move(done)});
    if (!m_busy)
        QMetaObject::invokeMethod(this, &WebRenderer::sendNext, Qt::QueuedConnection);
}

bool WebRenderer::ensureStarted(QString *why)
{
    if (m_process && m_process->state() != QProcess::NotRunning)
        return true;
    if (!QFileInfo(m_program).isExecutable()) {
        *why = QStringLiteral("no renderer: %1 is not there (it is in the package dialog-toolkit-gui; "
                              "--http-renderer names another)")
                   .arg(m_program);
        return false;
    }
    auto *p = new QProcess(this);
    p->setProgram(m_program);
    p->setProcessChannelMode(QProcess::SeparateChannels);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p->setProcessEnvironment(env);
    connect(p, &QProcess::readyReadStandardOutput, this, &WebRenderer::onReadyRead);
    connect(p, &QProcess::readyReadStandardError, this, [this, p] {
        m_stderrTail = QString::fromUtf8(p->readAllStandardError()).trimmed().right(300);
    });
    connect(p, &QProcess::finished, this, &WebRenderer::onFinished);
    m_buffer.clear();
    p->start();
    if (!p->waitForStarted(2000)) {
        *why = QStringLiteral("cannot start the renderer %1: %2").arg(m_program, p->errorString());
        delete p;
        return false;
    }
    m_process = p;
    qCInfo(lcRender) << "renderer started:" << m_program << "pid" << p->processId();
    return true;
}

void WebRenderer::sendNext()
{
    if (m_busy || m_queue.empty())
        return;
    QString why;
    if (!ensureStarted(&why)) {
        // Every waiting request gets the same answer: nothing can draw them.
        std::deque<Pending> queue;
        queue.swap(m_queue);
        for (Pending &p : queue)
            later(std::move(p.done), {501, why, {}});
        return;
    }
    m_current = std::move(m_queue.front());
    m_queue.pop_front();
    m_busy = true;
    m_process->write(m_current.frame);
    m_deadline.start(DeadlineMs);
}

void WebRenderer::onReadyRead()
{
    if (!m_process)
        return;
    m_buffer += m_process->readAllStandardOutput();
    const qint64 headLength = frameLength(m_buffer, 0);
    if (headLength < 0)
        return;
    if (headLength > 65536)
        return failCurrent(502, QStringLiteral("the renderer answered a header of %1 bytes").arg(headLength));
    const qint64 pngLength = frameLength(m_buffer, 4 + headLength);
    if (pngLength < 0)
        return;
    if (pngLength > MaxPngBytes)
        return failCurrent(502, QStringLiteral("the renderer answered a PNG of %1 bytes").arg(pngLength));
    if (m_buffer.size() < 8 + headLength + pngLength)
        return;
    const QJsonObject head = QJsonDocument::fromJson(m_buffer.mid(4, headLength)).object();
    RenderResult result;
    result.png = m_buffer.mid(8 + headLength, pngLength);
    m_buffer.remove(0, 8 + headLength + pngLength);
    if (head.value(QStringLiteral("id")).toInteger() != m_current.id) {
        return failCurrent(502, QStringLiteral("the renderer answered request %1 to request %2")
                                    .arg(head.value(QStringLiteral("id")).toInteger())
                                    .arg(m_current.id));
    }
    const QString error = head.value(QStringLiteral("error")).toString();
    if (!error.isEmpty() || result.png.isEmpty()) {
        result.status = 400;
        result.error = error.isEmpty() ? QStringLiteral("the renderer drew nothing") : error;
        result.png.clear();
    }
    m_deadline.stop();
    m_busy = false;
    ++m_drawn;
    Done done = std::move(m_current.done);
    m_current = {};
    done(result);
    sendNext();
}

void WebRenderer::failCurrent(int status, const QString &why)
{
    m_deadline.stop();
    if (m_busy) {
        m_busy = false;
        Done done = std::move(m_current.done);
        m_current = {};
        qCWarning(lcRender).noquote() << "PNG not drawn:" << why;
        later(std::move(done), {status, why, {}});
    }
    m_buffer.clear();
    // A renderer whose answer cannot be read is not trusted with the next request.
    if (m_process && status == 502) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(1000);
        m_process->deleteLater();
        m_process = nullptr;
        QMetaObject::invokeMethod(this, &WebRenderer::sendNext, Qt::QueuedConnection);
    }
}

void WebRenderer::onFinished()
{
    QProcess *p = m_process;
    const QString how = p && p->exitStatus() == QProcess::CrashExit
                            ? QStringLiteral("the renderer crashed")
                            : QStringLiteral("the renderer exited with status %1").arg(p ? p->exitCode() : -1);
    if (p) {
        p->disconnect(this);
        p->deleteLater();
        m_process = nullptr;
    }
    failCurrent(502, m_stderrTail.isEmpty() ? how : QStringLiteral("%1: %2").arg(how, m_stderrTail));
    QMetaObject::invokeMethod(this, &WebRenderer::sendNext, Qt::QueuedConnection);
}

} // namespace dialog::isd
