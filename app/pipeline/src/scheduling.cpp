#include "pipeline/scheduling.hpp"

#include <algorithm>
#include <cmath>

namespace j2k::pipeline {

namespace {

constexpr std::int64_t kTicks = 90000;
// A timestamp step this large is a new timeline (sender restarted, loop, splice): re-anchor.
constexpr std::int64_t kDiscontinuityTicks = 10 * kTicks;
// The anchor is the minimum offset over the current and previous windows of this length.
constexpr std::int64_t kWindowTicks = 2 * kTicks;

Clock::duration media_time(std::int64_t ticks) {
  // 1 tick = 100000/9 ns; exact in integers for any realistic stream length.
  return std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ticks * 100000 / 9));
}

std::int64_t ticks(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count() * 9 / 100000;
}

}  // namespace

std::int64_t StreamClock::unwrap(std::uint32_t ts) const {
  // Serial-number arithmetic on the 32-bit timestamp (RFC 3550 §5.1: it wraps).
  return last_unwrapped_ + static_cast<std::int32_t>(ts - last_ts_);
}

Clock::time_point StreamClock::on_frame(std::uint32_t ts, Clock::time_point arrival) {
  const auto anchor = [&] {
    anchored_ = true;
    last_ts_ = ts;
    last_unwrapped_ = ts;
    window_start_ = last_unwrapped_;
    offset_now_ = offset_prev_ = arrival.time_since_epoch() - media_time(last_unwrapped_);
  };
  if (!anchored_) {
    anchor();
    return arrival;
  }
  const std::int64_t u = unwrap(ts);
  const std::int64_t step = u - last_unwrapped_;
  if (step > kDiscontinuityTicks || step < -kDiscontinuityTicks) {
    anchor();
    interval_ = {};
    return arrival;
  }
  // A stream's frames never go back by more than a frame or two (a late one): a timestamp
  // further back is the sender's clock stepping back (a playout server looping, a TS PTS
  // discontinuity). A new timeline from it, at the same frame rate; kept on the old one, the
  // least delay seen would make every frame after it late by the step (review 2026-11-25:
  // a 5 s step back, 101 frames late and 144 repeated in j2kplay).
  const std::int64_t back_limit = std::max<std::int64_t>(3 * ticks(interval_), kTicks / 10);
  if (step < -back_limit) {
    anchor();
    return arrival;
  }
  if (step > 0) {
    if (step < kTicks) {  // frames, not a gap of lost frames worth a second
      // A step over frames that were lost counts as that many frames: smoothed in whole, a
      // burst of five lost frames made the interval (and the spacing of the fields shown
      // after it) 40 % longer for a while. The same long step three times in a row is the
      // stream's new rate (50 to 25 frames a second), taken as it is.
      const auto d = media_time(step);
      const double frames =
          interval_ == Clock::duration{} ? 1.0 : std::max(1.0, std::round(static_cast<double>(d.count()) / static_cast<double>(interval_.count())));
      long_steps_ = frames > 1.0 && std::abs(step - last_step_) <= step / 100 ? long_steps_ + 1 : (frames > 1.0 ? 1 : 0);
      last_step_ = step;
      if (interval_ == Clock::duration{} || long_steps_ >= 3) {
        interval_ = d;
        long_steps_ = 0;
      } else {
        interval_ = std::chrono::duration_cast<Clock::duration>(0.9 * interval_ + 0.1 * (d / frames));
      }
    }
    last_ts_ = ts;
    last_unwrapped_ = u;
  }
  const Clock::duration offset = arrival.time_since_epoch() - media_time(u);
  if (u - window_start_ > kWindowTicks) {
    offset_prev_ = offset_now_;
    offset_now_ = offset;
    window_start_ = u;
  } else {
    offset_now_ = std::min(offset_now_, offset);
  }
  return due(ts, arrival);
}

Clock::time_point StreamClock::due(std::uint32_t ts, Clock::time_point fallback) const {
  if (!anchored_) return fallback;
  return Clock::time_point(std::min(offset_now_, offset_prev_) + media_time(unwrap(ts)));
}

DegradeController::DegradeController(Config config) : config_(config) { ratio_.fill(config.default_step_ratio); }

void DegradeController::cap(int max_level) noexcept {
  max_level_cap_ = std::clamp(max_level, 0, kLevels - 1);
  if (level_ > max_level_cap_) enter(max_level_cap_);
}

void DegradeController::enter(int level) {
  // The cost of the level left is trusted for learning the ratio only when that level had
  // been held for a dwell: the first frames of a stream (start-up backlog, cold caches,
  // frames decoded while the others were still being set up) teach nothing.
  const bool trusted = measured_[static_cast<std::size_t>(level_)] && frames_at_level_ >= config_.dwell_frames;
  left_level_ = trusted ? level_ : -1;
  left_ms_ = mean_ms_[static_cast<std::size_t>(level_)];
  level_ = level;
  frames_at_level_ = 0;
  measured_[static_cast<std::size_t>(level)] = false;  // measured again from now: the old figure is stale
  backlogs_.clear();
}

std::optional<double> DegradeController::mean_ms(int level) const {
  if (level < 0 || level >= kLevels || !measured_[static_cast<std::size_t>(level)]) return std::nullopt;
  return mean_ms_[static_cast<std::size_t>(level)];
}

double DegradeController::step_ratio(int level) const {
  if (level <= 0 || level >= kLevels) return 1.0;
  return ratio_[static_cast<std::size_t>(level)];
}

double DegradeController::work_at(int level) const {
  if (level < 0 || level >= kLevels || !measured_[static_cast<std::size_t>(level_)]) return 0;
  // Always from the level decoded now: the only figure that is current.
  double ms = mean_ms_[static_cast<std::size_t>(level_)];
  for (int l = level_; l > level; --l) ms *= step_ratio(l);
  for (int l = level_ + 1; l <= level; ++l) ms /= step_ratio(l);
  return ms;
}

double DegradeController::predicted_load(int level, int capacity, Clock::duration interval) const {
  const double interval_ms = std::chrono::duration<double, std::milli>(interval).count();
  if (interval_ms <= 0 || capacity <= 0) return 0;
  return work_at(level) / (capacity * interval_ms);
}

void DegradeController::on_decoded(const Sample& s) {
  if (s.level < 0 || s.level >= kLevels || s.cold) return;
  const auto i = static_cast<std::size_t>(s.level);
  const double ms = std::chrono::duration<double, std::milli>(s.work).count();
  mean_ms_[i] = measured_[i] ? 0.9 * mean_ms_[i] + 0.1 * ms : ms;
  measured_[i] = true;
  if (!config_.enabled || s.level != level_) return;  // a frame started before the last change
  ++frames_at_level_;
  const int workers = std::max(1, s.workers);
  // Let a level show its effect (one frame per worker) before judging it; then learn the cost
  // ratio between it and the level left, both measured moments apart.
  const bool settled = frames_at_level_ >= workers;
  if (frames_at_level_ == workers && left_level_ >= 0 && left_ms_ > 0 && mean_ms_[i] > 0) {
    const auto clamp = [&](double r) { return std::clamp(r, config_.min_step_ratio, config_.max_step_ratio); };
    const std::size_t r = left_level_ == level_ - 1 ? i : i + 1;  // the step between the two levels
    ratio_[r] = clamp(left_level_ == level_ - 1 ? left_ms_ / mean_ms_[i] : mean_ms_[i] / left_ms_);
    learnt_[r] = true;
    left_level_ = -1;
  }
  const double interval_ms = std::chrono::duration<double, std::milli>(s.interval).count();
  if (interval_ms <= 0 || s.capacity <= 0) return;  // the stream's rate is not known yet
  const double capacity_ms = s.capacity * interval_ms;  // work the decoders can do per frame interval
  const double budget_ms = std::chrono::duration<double, std::milli>(s.budget).count();
  const auto backlog = static_cast<double>(s.backlog);
  // How long the newest waiting frame waits before a decoder starts it, at a level's cost.
  const auto wait_ms = [&](int level) { return backlog * work_at(level) / s.capacity; };
  const int top = std::min(config_.max_level, max_level_cap_);
  const double load = mean_ms_[i] / capacity_ms;
  // The backlog's trend over the last round of frames (one per worker and one more).
  backlogs_.push_back(s.backlog);
  while (backlogs_.size() > static_cast<std::size_t>(workers) + 1) backlogs_.pop_front();
  const bool not_shrinking = backlogs_.size() > static_cast<std::size_t>(workers) && backlogs_.back() >= backlogs_.front();
  const bool backlog_late = budget_ms > 0 ? wait_ms(level_) > config_.late_wait * budget_ms ||
                                                (not_shrinking && wait_ms(level_) > config_.engage_wait * budget_ms)
                                          : s.backlog > 2 * static_cast<std::size_t>(workers);
  if (settled && level_ < top && (load > config_.engage_load || backlog_late)) {
    // Engaging again soon after relaxing: the finer level was too optimistic; wait longer next time.
    if (relaxed_recently_) dwell_ = std::min(std::max(dwell_, config_.dwell_frames) * 2, 16 * config_.dwell_frames);
    relaxed_recently_ = false;
    enter(level_ + 1);
    return;
  }
  const int dwell = std::max(dwell_, config_.dwell_frames);
  if (level_ > 0 && frames_at_level_ >= dwell) {
    const bool quiet = budget_ms > 0 ? wait_ms(level_ - 1) <= 0.25 * budget_ms : s.backlog <= 1;
    const bool headroom = work_at(level_ - 1) / capacity_ms < config_.relax_load;
    // Held for long with the ratio still a guess: if even the cheapest plausible ratio leaves
    // headroom, try the finer level (its frames teach the ratio; then no more tries).
    const bool probe = !learnt_[i] && frames_at_level_ >= 4 * dwell &&
                       mean_ms_[i] * config_.min_step_ratio / capacity_ms < config_.engage_load;
    if (quiet && (headroom || probe)) {
      enter(level_ - 1);
      relaxed_recently_ = true;
      return;
    }
  }
  if (frames_at_level_ > 4 * config_.dwell_frames) relaxed_recently_ = false;
}

void LatencyHistogram::add(double ms) {
  static const double kLogStep = std::log(1.023);
  int i = 0;
  if (ms > 0.01) i = static_cast<int>(std::log(ms / 0.01) / kLogStep);
  i = std::clamp(i, 0, kBuckets - 1);
  ++counts_[static_cast<std::size_t>(i)];
  ++total_;
}

double LatencyHistogram::percentile(double q) const {
  if (total_ == 0) return 0;
  const auto target = static_cast<std::uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(total_)));
  std::uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[static_cast<std::size_t>(i)];
    if (seen >= std::max<std::uint64_t>(1, target)) return 0.01 * std::pow(1.023, i + 1);
  }
  return 0.01 * std::pow(1.023, kBuckets);
}

LatencyHistogram LatencyHistogram::since(const LatencyHistogram& earlier) const {
  LatencyHistogram d;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    d.counts_[i] = counts_[i] >= earlier.counts_[i] ? counts_[i] - earlier.counts_[i] : 0;
    d.total_ += d.counts_[i];
  }
  return d;
}

LatencyFigures LatencyFigures::of(const LatencyHistogram& h) {
  return {h.count(), h.percentile(0.50), h.percentile(0.95), h.percentile(0.99)};
}

}  // namespace j2k::pipeline
