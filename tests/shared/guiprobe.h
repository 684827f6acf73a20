// Observes how a GUI copes with load: a 10 ms probe timer that counts its ticks (the event loop keeps
// turning) and records the largest gap between them (the longest stall, reported, never asserted:
// it depends on the machine), and how often given widgets repaint and given models change
// (coalescing keeps both to about ten per second, whatever the input rate).
#pragma once

#include <QAbstractItemModel>
#include <QElapsedTimer>
#include <QEvent>
#include <QObject>
#include <QTimer>
#include <QWidget>

namespace dialog::test {

class GuiProbe : public QObject
{
public:
    GuiProbe()
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(10);
        QObject::connect(&m_timer, &QTimer::timeout, this, [this] {
            const qint64 now = m_clock.elapsed();
            m_maxGapMs = qMax(m_maxGapMs, now - m_lastTickMs);
            m_lastTickMs = now;
            ++m_ticks;
        });
    }

    /// Counts paint events of @p widget (e.g. a view's viewport).
    void watchPaints(QWidget *widget) { widget->installEventFilter(this); }
    /// Counts resets and dataChanged/rowsInserted/rowsRemoved signals of @p model.
    void watchModel(QAbstractItemModel *model)
    {
        const auto count = [this] {
            if (m_timer.isActive())
                ++m_modelChanges;
        };
        connect(model, &QAbstractItemModel::modelReset, this, count);
        connect(model, &QAbstractItemModel::dataChanged, this, count);
        connect(model, &QAbstractItemModel::rowsInserted, this, count);
        connect(model, &QAbstractItemModel::rowsRemoved, this, count);
    }

    void start()
    {
        m_clock.start();
        m_lastTickMs = 0;
        m_maxGapMs = 0;
        m_paints = 0;
        m_modelChanges = 0;
        m_ticks = 0;
        m_timer.start();
    }
    void stop()
    {
        m_timer.stop();
        // A stall still in progress counts too.
        m_maxGapMs = qMax(m_maxGapMs, m_clock.elapsed() - m_lastTickMs);
        m_elapsedMs = m_clock.elapsed();
    }

    qint64 maxStallMs() const { return m_maxGapMs; }
    /// Ticks of the probe timer while started: how often the event loop came round to it.
    int ticks() const { return m_ticks; }
    double seconds() const { return double(m_elapsedMs) / 1000.0; }
    double paintsPerSecond() const { return m_paints / seconds(); }
    double modelChangesPerSecond() const { return m_modelChanges / seconds(); }
    int paints() const { return m_paints; }
    int modelChanges() const { return m_modelChanges; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Paint && m_timer.isActive())
            ++m_paints;
        return QObject::eventFilter(watched, event);
    }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_lastTickMs = 0, m_maxGapMs = 0, m_elapsedMs = 1;
    int m_paints = 0, m_modelChanges = 0, m_ticks = 0;
};

} // namespace dialog::test
