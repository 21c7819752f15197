#pragma once
// The live pipeline's real-time decisions, kept free of threads and clocks so that tests can
// drive them with a fake clock and a fake decoder:
//
//   StreamClock        when a frame is due, from its RTP timestamp and the stream's rate
//   DegradeController  how much to simplify decoding (resolution levels skipped) so that the
//                      decoders keep up, and when to go back to full quality
//   LatencyHistogram   receive → decoded (→ displayed) times and their percentiles
//
// Each object is owned by the pipeline and guarded by it; none of them locks.
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace j2k::pipeline {

using Clock = std::chrono::steady_clock;

/// Maps RTP timestamps to local time. The RTP media clock of JPEG 2000 video is 90 kHz
/// (RFC 5371 §4.2, RFC 3550 §5.1). The anchor is the least-delayed frame seen (arrival of
/// its last packet minus its media time), so network and sender jitter only ever make a
/// frame look late, never move every later deadline. The minimum is taken over a sliding
/// pair of windows so that a slow drift between the sender's and our clock is followed.
class StreamClock {
 public:
  static constexpr double kTicksPerSecond = 90000.0;

  /// Records one frame (RTP timestamp, arrival of its last packet); returns when it was due.
  Clock::time_point on_frame(std::uint32_t rtp_timestamp, Clock::time_point last_arrival);
  /// When a frame with this timestamp is due (its arrival in a jitter-free stream). Before
  /// the first frame: `fallback`.
  Clock::time_point due(std::uint32_t rtp_timestamp, Clock::time_point fallback) const;
  /// The frame interval from timestamp steps (0 until two frames were seen).
  Clock::duration frame_interval() const noexcept { return interval_; }

 private:
  std::int64_t unwrap(std::uint32_t ts) const;

  bool anchored_ = false;
  std::uint32_t last_ts_ = 0;
  std::int64_t last_unwrapped_ = 0;
  // Local time minus media time, minimum over the current and the previous window.
  Clock::duration offset_now_{}, offset_prev_{};
  std::int64_t window_start_ = 0;  // unwrapped ticks where the current window began
  std::int64_t last_step_ = 0;     // the last forward timestamp step (ticks)
  int long_steps_ = 0;             // steps of several frames in a row, all alike
  Clock::duration interval_{};
};

/// The decode cost model and the degradation level. Level L means DecodeOptions::reduce = L:
/// the L highest resolution levels' code-blocks are not decoded (ISO/IEC 15444-1 resolution
/// scalability, B.5) and the picture is 2^L times smaller each way.
///
/// The load at a level is the decoding work one frame costs there (thread time, summed over
/// the threads that worked on it) over the work the decoders can do in one frame interval
/// (`capacity` threads × interval). It degrades one level when that load is above
/// `engage_load`, or when the frames waiting would start too late: their wait at this level's
/// cost is half the latency budget or more and the backlog is not shrinking (a start-up
/// backlog that drains is no reason), or three quarters of it whatever the trend (degrading
/// comes before dropping). It relaxes one level
/// when the load predicted at the finer level is below `relax_load` (hysteresis): the work
/// measured now, at the degraded level, times the cost ratio between the two levels. That
/// ratio is learnt at a change of level from the frames on both sides of it, never from the
/// few frames of a start-up (`default_step_ratio` until then). While it is not learnt, a
/// level held for long (four dwells) where even the cheapest plausible ratio would show
/// headroom is relaxed once to try (a probe), whose frames then teach the ratio. Relaxing that
/// proves premature doubles the time to the next.
class DegradeController {
 public:
  struct Config {
    bool enabled = true;
    int max_level = 2;            ///< at most this many resolution levels dropped
    double engage_load = 0.95;    ///< load above which to degrade one more level
    double relax_load = 0.75;     ///< load predicted at the finer level below which to go back
    /// Degrade when the backlog's wait exceeds this part of the latency budget and the backlog
    /// is not shrinking, or `late_wait` of it whatever the trend (before frames are dropped).
    double engage_wait = 0.5;
    double late_wait = 0.75;
    int dwell_frames = 25;        ///< frames decoded at a level before relaxing from it
    double default_step_ratio = 2.5;  ///< cost(L-1) / cost(L) until measured
    double min_step_ratio = 1.2;      ///< learnt ratios are kept within these bounds
    double max_step_ratio = 4.0;
  };
  /// One decoded frame, as the controller sees it.
  struct Sample {
    int level = 0;                ///< the level it was decoded at
    Clock::duration work{};       ///< decoding work it cost (thread time over all threads that worked on it)
    int capacity = 1;             ///< threads that decode (all frames together)
    int workers = 1;              ///< frames decoded at once
    Clock::duration interval{};   ///< the stream's frame interval (0 while unknown)
    std::size_t backlog = 0;      ///< frames waiting for a decoder
    Clock::duration budget{};     ///< how long a frame may wait after it is due before it is dropped as late
    bool cold = false;            ///< a decoder's first frame (allocations, page faults): not representative
  };
  explicit DegradeController(Config config);
  DegradeController() : DegradeController(Config{}) {}

  /// The level the next frame should be decoded at.
  int level() const noexcept { return level_; }
  /// The highest level the codestreams allow (their decomposition levels).
  void cap(int max_level) noexcept;
  int max_level() const noexcept { return max_level_cap_; }

  /// One frame was decoded: updates the cost model and the level for the next frames.
  void on_decoded(const Sample& s);

  /// The mean work of a frame at a level, ms (nullopt before any warm frame at that level
  /// since the level was last entered).
  std::optional<double> mean_ms(int level) const;
  /// The cost ratio cost(level - 1) / cost(level) in use (learnt or the default).
  double step_ratio(int level) const;
  /// Predicted load at a level from the current level's measurement (0 while unknown).
  double predicted_load(int level, int capacity, Clock::duration interval) const;

 private:
  static constexpr int kLevels = 8;
  void enter(int level);
  double work_at(int level) const;  // ms, predicted from the current level; 0 while unknown

  Config config_;
  int level_ = 0;
  int max_level_cap_ = kLevels - 1;
  int frames_at_level_ = 0;       // warm frames decoded at level_ since it was entered
  int dwell_ = 0;                 // grows when relaxing proved premature (no oscillation)
  bool relaxed_recently_ = false;
  std::array<double, kLevels> mean_ms_{};      // exponential moving average per level
  std::array<bool, kLevels> measured_{};
  std::array<double, kLevels> ratio_{};        // ratio_[L] = cost(L-1) / cost(L)
  std::array<bool, kLevels> learnt_{};         // ratio_[L] was measured (else the default)
  // The level left at the last change and its cost then, to learn the ratio from once the
  // new level has settled (only when the level left had been held long enough to trust).
  int left_level_ = -1;
  double left_ms_ = 0;
  std::deque<std::size_t> backlogs_;  // the backlog at the last frames at this level (its trend)
};

/// Latencies in logarithmic buckets (about 2.3 % wide) from 10 µs to about 100 s; counts only,
/// so two snapshots can be subtracted for a per-interval figure.
class LatencyHistogram {
 public:
  static constexpr int kBuckets = 720;
  void add(double ms);
  std::uint64_t count() const noexcept { return total_; }
  /// The latency below which a fraction `q` (0..1) of the samples lie (bucket upper bound).
  double percentile(double q) const;
  /// This histogram minus an earlier snapshot of the same one.
  LatencyHistogram since(const LatencyHistogram& earlier) const;

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t total_ = 0;
};

/// p50 / p95 / p99 of a histogram, in ms (0 when empty).
struct LatencyFigures {
  std::uint64_t count = 0;
  double p50 = 0, p95 = 0, p99 = 0;
  static LatencyFigures of(const LatencyHistogram& h);
};

}  // namespace j2k::pipeline
