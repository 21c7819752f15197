#pragma once
// The sound's level meters drawn over the picture: per channel a peak bar (dBFS, green up
// to -18, amber to -6, red above) with its 2 s peak hold, and beside it a thinner bar of the
// BS.1770 momentary loudness; a silent channel is marked, a clipping one lit red. Plain data
// in, QPainter out: the application fills the view from the audio monitor.
#include <QPainter>
#include <QRect>
#include <QString>
#include <vector>

namespace j2k::ui {

struct AudioMeterChannel {
  double peak_dbfs = -150;
  double hold_dbfs = -150;
  double loudness_db = -150;  ///< momentary (K-weighted, 400 ms)
  bool silent = false;
  bool clipping = false;
  bool playing = true;        ///< routed to the output
};

struct AudioMetersView {
  std::vector<AudioMeterChannel> channels;
  QString caption;            ///< "48 kHz 24-bit" and the output's state
  bool muted = false;
};

/// Where the meters go in a window of `widget` size: the bottom-right corner.
QRect audio_meters_area(const QRect& widget, std::size_t channels);
void draw_audio_meters(QPainter& painter, const QRect& area, const AudioMetersView& view);

}  // namespace j2k::ui
