#include "ui/audio_meters.hpp"

#include <algorithm>

namespace j2k::ui {

namespace {

constexpr double kFloorDb = -60;

/// Height fraction of a level on the meter's scale (-60 … 0 dBFS, linear in dB).
double fraction(double db) { return std::clamp((db - kFloorDb) / -kFloorDb, 0.0, 1.0); }

}  // namespace

QRect audio_meters_area(const QRect& widget, std::size_t channels) {
  const int w = 44 + static_cast<int>(std::max<std::size_t>(channels, 1)) * 30;
  // A third of the area's height within 160-320 px, and never taller than the area itself
  // (the corner the graphs leave free).
  const int h = std::min(std::clamp(widget.height() / 3, 160, 320), std::max(48, widget.height() - 16));
  return QRect(widget.right() - w - 8, widget.bottom() - h - 8, w, h);
}

void draw_audio_meters(QPainter& painter, const QRect& area, const AudioMetersView& view) {
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing, false);
  painter.fillRect(area, QColor(0, 0, 0, 170));
  QFont font = painter.font();
  font.setPointSize(8);
  painter.setFont(font);
  const int caption_h = 16, label_h = 14;
  const QRect scale_area(area.left() + 4, area.top() + caption_h + 4, 30, area.height() - caption_h - label_h - 10);
  painter.setPen(view.muted ? QColor(255, 90, 90) : QColor(220, 220, 220));
  painter.drawText(QRect(area.left() + 4, area.top() + 2, area.width() - 8, caption_h), Qt::AlignLeft | Qt::AlignVCenter,
                   view.muted ? view.caption + QStringLiteral("  MUTED") : view.caption);
  // The scale: 0, -6, -18 (line-up), -40, -60 dBFS.
  painter.setPen(QColor(170, 170, 170));
  for (int db : {0, -6, -18, -40, -60}) {
    const int y = scale_area.bottom() - static_cast<int>(fraction(db) * scale_area.height());
    painter.drawText(QRect(scale_area.left(), y - 6, scale_area.width() - 4, 12), Qt::AlignRight | Qt::AlignVCenter,
                     QString::number(db));
    painter.drawLine(scale_area.right(), y, area.right() - 4, y);
  }
  int x = scale_area.right() + 4;
  for (std::size_t c = 0; c < view.channels.size(); ++c, x += 30) {
    const auto& ch = view.channels[c];
    const QRect bar(x, scale_area.top(), 17, scale_area.height());
    painter.fillRect(bar, QColor(40, 40, 40, 200));
    // Peak: coloured by zone, from the bottom up.
    const int top = bar.bottom() - static_cast<int>(fraction(ch.peak_dbfs) * bar.height());
    auto zone = [&](double from_db, double to_db, QColor colour) {
      const int z_top = bar.bottom() - static_cast<int>(fraction(to_db) * bar.height());
      const int z_bottom = bar.bottom() - static_cast<int>(fraction(from_db) * bar.height());
      const int y0 = std::max(top, z_top);
      if (y0 < z_bottom) painter.fillRect(QRect(bar.left(), y0, bar.width(), z_bottom - y0), ch.playing ? colour : colour.darker(200));
    };
    zone(kFloorDb, -18, QColor(60, 200, 80));
    zone(-18, -6, QColor(240, 200, 50));
    zone(-6, 0, QColor(240, 60, 50));
    // Peak hold: a white line.
    if (ch.hold_dbfs > kFloorDb) {
      const int y = bar.bottom() - static_cast<int>(fraction(ch.hold_dbfs) * bar.height());
      painter.fillRect(QRect(bar.left(), y - 1, bar.width(), 2), Qt::white);
    }
    // Momentary loudness: a thin blue bar beside the peak.
    const QRect loud(bar.right() + 2, bar.top(), 5, bar.height());
    painter.fillRect(loud, QColor(40, 40, 40, 200));
    const int ly = loud.bottom() - static_cast<int>(fraction(ch.loudness_db) * loud.height());
    painter.fillRect(QRect(loud.left(), ly, loud.width(), loud.bottom() - ly), QColor(90, 170, 255));
    // Clipping lamp above, silence mark and channel number below.
    if (ch.clipping) painter.fillRect(QRect(bar.left(), bar.top() - 6, bar.width() + 7, 4), QColor(255, 40, 40));
    painter.setPen(ch.silent ? QColor(255, 90, 90) : QColor(220, 220, 220));
    painter.drawText(QRect(bar.left() - 4, bar.bottom() + 2, 30, label_h), Qt::AlignHCenter | Qt::AlignTop,
                     ch.silent ? QStringLiteral("%1 S").arg(c + 1) : QString::number(c + 1));
  }
  painter.restore();
}

}  // namespace j2k::ui
