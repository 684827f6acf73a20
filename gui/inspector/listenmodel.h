// Messages of the services and commands being listened to, newest last, bounded, and applied to
// the view at most ten times a second whatever the message rate.
#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <QElapsedTimer>
#include <QTimer>

namespace dialog::inspector {

struct Heard
{
    QDateTime time;
    QString source; ///< service or command name
    QString detail; ///< "#sequence" or "from ORIGIN"
    QByteArray data;
};

class ListenModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        Time,
        Source,
        Detail,
        Size,
        Data,
        ColumnCount
    };
    explicit ListenModel(QObject *parent = nullptr);

    /// Queues a message; the view sees it at the next flush (≤ 100 ms later).
    void add(const Heard &h);
    void clear();
    /// Applies what was queued now (tests call it instead of waiting).
    void flush();
    /// Messages per second over the last five seconds (since listening began, if less).
    double rate() const { return m_rate; }
    qint64 total() const { return m_total; }
    const Heard &at(int row) const { return m_rows.at(row); }
    static constexpr int MaxRows = 2000;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    /// Text if the bytes are printable UTF-8, else hexadecimal.
    static QString preview(const QByteArray &data, int max = 200);

Q_SIGNALS:
    void flushed();

private:
    QList<Heard> m_rows;
    QList<Heard> m_pending;
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_sinceLastFlush = 0;
    QList<QPair<qint64, qint64>> m_recent; ///< (flush time in ms of m_clock, messages), oldest first
    qint64 m_total = 0;
    double m_rate = 0;
};

} // namespace dialog::inspector
