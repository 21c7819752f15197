#include "ui/monitor_view.hpp"

#include <algorithm>
#include <cmath>

namespace j2k::ui {

namespace {

QColor level_colour(AlarmLevel level) {
  switch (level) {
    case AlarmLevel::ok: return QColor(30, 140, 60, 200);
    case AlarmLevel::warning: return QColor(230, 150, 0, 220);
    case AlarmLevel::critical: return QColor(200, 30, 30, 230);
  }
  return Qt::gray;
}

/// A scale that ends on a round number: 1, 2, 5 × 10^k.
double nice_ceiling(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (v <= m * p) return m * p;
  return 10 * p;
}

}  // namespace

int draw_alarm_banner(QPainter& painter, const QRect& area, const MonitorView& view) {
  const int h = painter.fontMetrics().height() + 8;
  const QRect banner(area.left(), area.top(), area.width(), h);
  painter.fillRect(banner, level_colour(view.level));
  painter.setPen(Qt::white);
  QString text = view.alarm_text.isEmpty() ? QStringLiteral("OK") : view.alarm_text;
  if (!view.since_last_error.isEmpty()) text += QStringLiteral("   ·   ") + view.since_last_error;
  painter.drawText(banner.adjusted(10, 0, -10, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
  return h;
}

void draw_graphs(QPainter& painter, const QRect& area, const MonitorView& view) {
  if (view.graphs.empty() || area.height() < 40 || area.width() < 80) return;
  painter.fillRect(area, QColor(0, 0, 0, 170));
  const int n = static_cast<int>(view.graphs.size());
  const int gap = 6;
  const int each = (area.height() - gap * (n + 1)) / n;
  const QFontMetrics fm = painter.fontMetrics();
  for (int g = 0; g < n; ++g) {
    const Graph& graph = view.graphs[static_cast<std::size_t>(g)];
    const QRect box(area.left() + gap, area.top() + gap + g * (each + gap), area.width() - 2 * gap, each);
    const QRect plot = box.adjusted(0, fm.height(), 0, 0);
    std::size_t samples = 0;
    double top = 0;
    for (const auto& s : graph.series) {
      samples = std::max(samples, s.values.size());
      for (double v : s.values) top = std::max(top, v);
    }
    top = nice_ceiling(top);
    // Title and scale, then each series' latest value in its own colour (the legend), as far
    // as the box is wide; then a baseline.
    int pen_x = box.left();
    auto say = [&](const QString& text, const QColor& colour) {
      const int room = box.right() - pen_x;
      if (room <= 0) return;
      painter.setPen(colour);
      const QString fitted = fm.elidedText(text, Qt::ElideRight, room);
      painter.drawText(pen_x, box.top() + fm.ascent(), fitted);
      pen_x += fm.horizontalAdvance(fitted);
    };
    say(graph.title + QStringLiteral(" ≤%1").arg(top, 0, 'g', 3), QColor(220, 220, 220));
    for (const auto& s : graph.series)
      if (!s.values.empty()) say(QStringLiteral("  %1 %2").arg(s.values.back(), 0, 'f', 1).arg(s.name), s.colour);
    painter.setPen(QColor(90, 90, 90));
    painter.drawLine(plot.bottomLeft(), plot.bottomRight());
    if (samples < 2 || plot.height() < 4) continue;
    const double dx = static_cast<double>(plot.width()) / static_cast<double>(samples - 1);
    // Event marks: thin vertical lines where something happened.
    painter.setPen(QColor(255, 80, 80, 160));
    for (double ago : view.event_marks) {
      const double x = plot.right() - ago * dx;
      if (x >= plot.left()) painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    }
    for (const auto& s : graph.series) {
      if (s.values.size() < 2) continue;
      QPainterPath path;
      const std::size_t offset = samples - s.values.size();
      for (std::size_t i = 0; i < s.values.size(); ++i) {
        const double x = plot.left() + static_cast<double>(i + offset) * dx;
        const double y = plot.bottom() - std::clamp(s.values[i] / top, 0.0, 1.0) * plot.height();
        if (i == 0) path.moveTo(x, y);
        else path.lineTo(x, y);
      }
      painter.setPen(QPen(s.colour, 1.5));
      painter.drawPath(path);
    }
  }
}

void draw_events(QPainter& painter, const QRect& area, const MonitorView& view) {
  if (area.height() < 20) return;
  const QFontMetrics fm = painter.fontMetrics();
  const int line = fm.height();
  // Shown with nothing in it too, so that the operator sees the panel is on and quiet.
  const QStringList quiet{QStringLiteral("events: none so far")};
  const QStringList& events = view.events.isEmpty() ? quiet : view.events;
  const int fit = std::max(1, (area.height() - 8) / line);
  const int first = std::max(0, static_cast<int>(events.size()) - fit);
  const int shown = static_cast<int>(events.size()) - first;
  const QRect box(area.left(), area.bottom() - shown * line - 8, area.width(), shown * line + 8);
  painter.fillRect(box, QColor(0, 0, 0, 170));
  painter.setPen(view.events.isEmpty() ? QColor(180, 180, 180) : QColor(255, 210, 120));
  for (int i = 0; i < shown; ++i)
    painter.drawText(QRect(box.left() + 8, box.top() + 4 + i * line, box.width() - 16, line),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     fm.elidedText(events[first + i], Qt::ElideRight, box.width() - 16));
}

}  // namespace j2k::ui
