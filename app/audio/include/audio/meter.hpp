#pragma once
// Level meters for a broadcast monitor: per channel, the sample peak and the RMS over the
// last 400 ms (EBU Tech 3341's momentary window) after the K-weighting filter of ITU-R
// BS.1770, with a peak hold of 2 s and
// silence / clipping detection. A 997 Hz sine peaking at -20 dBFS reads -23.0 momentary
// (BS.1770 puts a full-scale sine at -3.0), and -23.0 dB RMS. Fed on the depacketizer's or the player's audio thread;
// `levels()` copies the state under a mutex for the overlay, the JSON and the alarms.
#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

#include "depacketizer/audio.hpp"

namespace j2k::audio {

struct ChannelLevel {
  double peak_dbfs = -150;       ///< highest |sample| over the last 400 ms
  double peak_hold_dbfs = -150;  ///< highest peak of the last 2 s
  double momentary_db = -150;    ///< K-weighted mean square over 400 ms, 10·log10 (LUFS-like, per channel)
  double rms_dbfs = -150;        ///< unweighted RMS over 400 ms
  bool silent = false;           ///< below the silence level for the silence time
  bool clipping = false;         ///< samples at full scale in the last 400 ms
};

struct MeterOptions {
  double silence_dbfs = -60;     ///< a channel quieter than this (RMS over each 10 ms) ...
  double silence_s = 2;          ///< ... for this long is silent
};

class LevelMeter {
 public:
  explicit LevelMeter(MeterOptions options = {}) : options_(options) {}

  /// Adds samples (a new format resets the meter).
  void push(const depacketizer::AudioBlock& block);
  std::vector<ChannelLevel> levels() const;
  depacketizer::AudioFormat format() const;
  /// Silence and clipping episodes seen so far (each counted once when it starts).
  std::uint64_t silence_events() const;
  std::uint64_t clipping_events() const;

 private:
  struct Biquad {
    double b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
    double z1 = 0, z2 = 0;
    double step(double x) {
      const double y = b0 * x + z1;
      z1 = b1 * x - a1 * y + z2;
      z2 = b2 * x - a2 * y;
      return y;
    }
  };
  struct Channel {
    Biquad shelf, highpass;                 // K-weighting: high shelf then RLB high-pass
    std::vector<double> weighted_squares;   // one per 100 ms block, the last four
    std::vector<double> plain_squares;
    std::vector<double> peaks;
    double block_weighted = 0, block_plain = 0, block_peak = 0;
    std::array<double, 20> hold_blocks{};   // the peaks of the last 20 blocks of 100 ms: the 2 s hold
    std::size_t hold_next = 0;
    double window_squares = 0;              // sum of squares over the current 10 ms
    std::int64_t quiet_samples = 0;         // in whole 10 ms windows quieter than the silence level
    bool silent = false, clipping = false;
    std::int64_t clip_age = -1;
  };
  void reset(const depacketizer::AudioFormat& format);
  void end_block(Channel& c);

  const MeterOptions options_;
  mutable std::mutex mutex_;  // guards everything below
  depacketizer::AudioFormat format_;
  std::vector<Channel> channels_;
  std::int64_t block_fill_ = 0;
  std::int64_t window_fill_ = 0;  // samples into the current 10 ms silence window
  std::uint64_t silence_events_ = 0, clipping_events_ = 0;
};

/// 20·log10(x / full scale), floored at -150 dB.
double to_dbfs(double magnitude, int bits);

}  // namespace j2k::audio
