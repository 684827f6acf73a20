#include "plotaxis.h"

#include <QFontMetrics>
#include <QPainter>

namespace dialog::presenter::plot {

QString label(double v)
{
    if (std::abs(v) < 1e-12)
        return QStringLiteral("0");
    return QString::number(v, 'g', 4);
}

QList<double> ticks(double lo, double hi, bool log, int maxTicks)
{
    // Every count is bounded, and ticks are counted by an integer: near 1e20 adding a small step
    // to a double does not move it, and a loop on the value would never end.
    QList<double> out;
    maxTicks = std::max(2, maxTicks);
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo) || (log && !(lo > 0)))
        return out;
    if (log) {
        if (!std::isfinite(std::log10(hi)) || !std::isfinite(std::log10(lo)))
            return out;
        const int a = int(std::ceil(std::log10(lo) - 1e-9)), b = int(std::floor(std::log10(hi) + 1e-9));
        const int step = std::max(1, (b - a + 1 + maxTicks - 1) / maxTicks);
        for (int k = a; k <= b; k += step)
            out << std::pow(10.0, k);
        if (out.size() < 3)
            for (int k = a - 1; k <= b; ++k)
                for (double m : {2.0, 5.0}) {
                    const double v = m * std::pow(10.0, k);
                    if (v >= lo && v <= hi)
                        out << v;
                }
        std::sort(out.begin(), out.end());
        return out;
    }
    const double raw = (hi - lo) / maxTicks;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    if (!std::isfinite(step) || !(step > 0))
        return out;
    const double first = std::ceil(lo / step - 1e-9), last = std::floor(hi / step + 1e-9);
    if (!std::isfinite(first) || !std::isfinite(last) || last - first > 1000)
        return out;
    for (int i = 0; i <= int(last - first); ++i) {
        const double v = (first + i) * step;
        out << (std::abs(v) < step * 1e-9 ? 0.0 : v);
    }
    return out;
}

void drawYTicks(QPainter *p, const Axis &y, const QRect &plot, const QFontMetrics &fm, bool labelsRight)
{
    const int count = std::max(2, plot.height() / (fm.height() * 2));
    for (double v : ticks(y.lo, y.hi, y.log, count)) {
        const int py = int(std::lround(y.toPixel(v)));
        if (py < plot.top() - 1 || py > plot.bottom() + 1)
            continue;
        const QString t = label(v);
        if (labelsRight) {
            p->drawLine(plot.right() + 1, py, plot.right() + 4, py);
            p->drawText(QRect(plot.right() + 6, py - fm.height() / 2, 200, fm.height()),
                        Qt::AlignLeft | Qt::AlignVCenter, t);
        } else {
            p->drawLine(plot.left() - 4, py, plot.left() - 1, py);
            p->drawText(QRect(0, py - fm.height() / 2, plot.left() - 6, fm.height()),
                        Qt::AlignRight | Qt::AlignVCenter, t);
        }
    }
}

void drawXTicks(QPainter *p, const Axis &x, const QRect &plot, const QFontMetrics &fm)
{
    const int count = std::max(2, plot.width() / (fm.horizontalAdvance(QStringLiteral("00000")) + 8));
    drawXTicks(p, x, plot, fm, ticks(x.lo, x.hi, x.log, count), label);
}

void drawXTicks(QPainter *p, const Axis &x, const QRect &plot, const QFontMetrics &fm,
                const QList<double> &values, const std::function<QString(double)> &text)
{
    for (double v : values) {
        const int px = int(std::lround(x.toPixel(v)));
        if (px < plot.left() - 1 || px > plot.right() + 1)
            continue;
        p->drawLine(px, plot.bottom() + 1, px, plot.bottom() + 4);
        p->drawText(QRect(px - 60, plot.bottom() + 5, 120, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
                    text(v));
    }
}

int fontPixels(const QSize &size)
{
    return std::clamp(std::min(size.width() / 28, size.height() / 16), 8, 14);
}

QFont pictureFont(const QSize &size)
{
    QFont f;
    f.setPixelSize(fontPixels(size));
    return f;
}

} // namespace dialog::presenter::plot
