#pragma once
// The operator's panels drawn over the picture: an alarm banner (green / amber / red with
// the alarm's name and the time since the last error), graphs of the last minutes, and the
// last events. Plain data in, QPainter out: the window knows nothing of packets or
// statistics; the application fills a MonitorView once a second (app/ owns the numbers).
#include <QPainter>
#include <QPainterPath>
#include <QRect>
#include <QString>
#include <QStringList>
#include <vector>

namespace j2k::ui {

struct GraphSeries {
  QString name;                ///< "Mbit/s"
  std::vector<double> values;  ///< one per second, oldest first
  QColor colour = Qt::white;
};

struct Graph {
  QString title;                     ///< "bit rate"
  std::vector<GraphSeries> series;   ///< drawn on one shared scale
};

enum class AlarmLevel { ok, warning, critical };

struct MonitorView {
  AlarmLevel level = AlarmLevel::ok;
  QString alarm_text;                 ///< "FROZEN PICTURE, PACKET LOSS" or "OK"
  QString since_last_error;           ///< "last error 12 s ago" (empty: none yet)
  std::vector<Graph> graphs;
  /// Seconds before the newest graph sample at which events happened (marked on the graphs).
  std::vector<double> event_marks;
  QStringList events;                 ///< newest last: "06:40:01.123 sequence_gap 4 packets lost"
};

/// The banner along the top edge of `area`; returns its height.
int draw_alarm_banner(QPainter& painter, const QRect& area, const MonitorView& view);
/// Small graphs stacked in `area` (translucent background), with event marks.
void draw_graphs(QPainter& painter, const QRect& area, const MonitorView& view);
/// The last events that fit in `area`, newest at the bottom.
void draw_events(QPainter& painter, const QRect& area, const MonitorView& view);

}  // namespace j2k::ui
