#include "pipeline/presenter.hpp"

#include <algorithm>
#include <vector>

namespace j2k::pipeline {

namespace {

constexpr std::int64_t kTicksPerSecond = 90000;  // the RTP video clock (RFC 3550 §5.1)
constexpr std::int64_t kNewTimeline = 10 * kTicksPerSecond;  // a timestamp jump this large starts afresh

Clock::duration media_time(std::int64_t ticks) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ticks * 100000 / 9));
}

}  // namespace

FramePresenter::FramePresenter(Config config) : config_(config) {}

void FramePresenter::adapt(Clock::duration lateness) {
  // About five seconds of frames (16 to 128): a stall of a few frames stays below the
  // percentile (it is shown late or skipped, the latency stays low), jitter that recurs does not.
  const auto interval = clock_.frame_interval();
  std::size_t keep = 128;
  if (interval > Clock::duration{}) keep = static_cast<std::size_t>(std::chrono::seconds(5) / interval);
  keep = std::clamp<std::size_t>(keep, 16, 128);
  lateness_.push_back(lateness);
  while (lateness_.size() > keep) lateness_.pop_front();
  std::vector<Clock::duration> sorted(lateness_.begin(), lateness_.end());
  const auto k = static_cast<std::size_t>(0.95 * static_cast<double>(sorted.size() - 1) + 0.5);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k), sorted.end());
  // The display's own delay: the picture chosen now is seen a refresh later, and must be ready
  // half a refresh before the refresh nearest its due time.
  auto target = sorted[k] + refresh_ + refresh_ / 2;
  target = std::max(std::min(target, config_.max_delay), min_delay_);
  // Never a delay longer than the buffer can hold frames for: on-time frames would be pushed
  // out as the oldest before they are due (at 60 fps, 8 frames held 133 ms).
  if (interval > Clock::duration{}) {
    const auto held = static_cast<std::int64_t>(frames_held()) - 2;
    const auto most = held * interval - 2 * refresh_;
    if (most > Clock::duration{}) target = std::min(target, most);
  }
  // Later frames: at once. Earlier: a sixteenth of the excess a frame (at least 0.5 ms), so that
  // the schedule moves by a fraction of a refresh at a time.
  if (target > delay_) delay_ = target;
  else delay_ = std::max(target, delay_ - std::max<Clock::duration>(std::chrono::microseconds(500), (delay_ - target) / 16));
}

void FramePresenter::push(Frame frame, Clock::time_point ready) {
  std::lock_guard lock(mutex_);
  std::int64_t media = frame.rtp_timestamp;
  if (any_pushed_) {
    media = last_media_ + static_cast<std::int32_t>(frame.rtp_timestamp - last_ts_);  // serial arithmetic (wraps)
    if (media - last_media_ > kNewTimeline || last_media_ - media > kNewTimeline) {
      // A new timeline (sender restarted, a splice): what was measured belongs to the old one.
      media = frame.rtp_timestamp;
      lateness_.clear();
      next_media_.reset();
      shown_due_.reset();
      pending_repeats_ = 0;
    }
  }
  last_media_ = media;
  last_ts_ = frame.rtp_timestamp;
  any_pushed_ = true;
  const auto on_time = clock_.on_frame(frame.rtp_timestamp, ready);  // when it would be ready without jitter
  adapt(ready - on_time);
  auto due = on_time + delay_;
  if (!waiting_.empty()) due = std::max(due, waiting_.back().due);  // never before an earlier frame
  if (shown_due_ && !next_media_ && waiting_.empty()) next_media_ = media;
  const auto interval = clock_.frame_interval();
  if (!config_.split_fields || !frame.interlaced) {
    frame.field = -1;
    enqueue({std::move(frame), due, media});
    return;
  }
  // A picture per field: the first in time at P, the second half a frame later (the first
  // frame of a stream, whose interval is not known yet, shows its first field only).
  const int first = frame.first_field_is_top ? 0 : 1;
  Frame second = frame;
  frame.field = first;
  second.field = 1 - first;
  enqueue({std::move(frame), due, media});
  if (interval <= Clock::duration{}) return;
  const auto half_ticks = std::chrono::duration_cast<std::chrono::nanoseconds>(interval).count() * 9 / 200000;
  enqueue({std::move(second), due + interval / 2, media + half_ticks});
}

std::size_t FramePresenter::frames_held() const {
  // In time, not only in frames: the longest delay (the ceiling, or the sound's floor) and
  // two refreshes of frames, at least `capacity`, at most kMostFrames (memory: a picture each).
  const auto interval = clock_.frame_interval();
  if (interval <= Clock::duration{}) return config_.capacity;
  const auto span = std::max(config_.max_delay, min_delay_) + 2 * refresh_;
  const auto need = static_cast<std::size_t>(span / interval) + 3;
  return std::clamp(need, config_.capacity, std::max(config_.capacity, kMostFrames));
}

void FramePresenter::enqueue(Waiting w) {
  const std::size_t capacity = frames_held() * (config_.split_fields ? 2 : 1);
  if (waiting_.size() >= capacity) {
    waiting_.pop_front();
    ++figures_.skipped;
  }
  waiting_.push_back(std::move(w));
}

std::optional<FramePresenter::Frame> FramePresenter::on_refresh(Clock::time_point visible, Clock::duration refresh) {
  std::lock_guard lock(mutex_);
  if (refresh > Clock::duration{}) refresh_ = refresh;
  const auto half = refresh_ / 2;
  // The newest frame whose due time is nearest this refresh or earlier.
  std::size_t due_now = 0;
  while (due_now < waiting_.size() && waiting_[due_now].due <= visible + half) ++due_now;
  if (due_now == 0) {
    // Nothing new. The picture on screen has outstayed its duration if the frame after it
    // should be seen by now: a repeat, counted when that frame comes.
    if (shown_due_) {
      std::int64_t step = next_media_ ? *next_media_ - shown_media_ : 0;
      if (step <= 0 || step > kNewTimeline) {
        const auto interval = clock_.frame_interval();
        step = std::chrono::duration_cast<std::chrono::nanoseconds>(interval).count() * 9 / 100000;
        if (shown_is_field_) step /= 2;  // a field is on screen for half a frame
      }
      if (step > 0 && visible - (*shown_due_ + media_time(step)) > half) ++pending_repeats_;
    }
    return std::nullopt;
  }
  figures_.skipped += due_now - 1;
  Waiting w = std::move(waiting_[due_now - 1]);
  waiting_.erase(waiting_.begin(), waiting_.begin() + static_cast<std::ptrdiff_t>(due_now));
  if (visible - w.due > half) ++figures_.late;
  figures_.repeated += pending_repeats_;
  pending_repeats_ = 0;
  ++figures_.shown;
  if (w.frame.field >= 0) ++figures_.fields_shown;
  shown_due_ = w.due;
  shown_media_ = w.media;
  shown_is_field_ = w.frame.field >= 0;
  next_media_.reset();
  if (!waiting_.empty()) next_media_ = waiting_.front().media;
  // The latency is the frame's: measured at its first picture (a second field comes half a
  // frame later by design).
  const bool second_field = w.frame.field >= 0 && w.frame.field != (w.frame.first_field_is_top ? 0 : 1);
  if (second_field) awaiting_swap_.reset();
  else awaiting_swap_ = w.frame.received;
  return std::move(w.frame);
}

void FramePresenter::on_shown(Clock::time_point at) {
  std::lock_guard lock(mutex_);
  if (!awaiting_swap_) return;
  figures_.receive_to_display.add(std::chrono::duration<double, std::milli>(at - *awaiting_swap_).count());
  awaiting_swap_.reset();
}

void FramePresenter::set_min_delay(Clock::duration floor) {
  std::lock_guard lock(mutex_);
  min_delay_ = std::max(floor, Clock::duration{});
}

void FramePresenter::clear() {
  std::lock_guard lock(mutex_);
  figures_.undisplayed += waiting_.size();  // counted, so that shown + skipped + undisplayed add up
  waiting_.clear();
}

void FramePresenter::drain(Clock::time_point from, Clock::duration refresh, std::size_t most) {
  auto visible = from;
  for (std::size_t i = 0; i < most; ++i) {
    {
      std::lock_guard lock(mutex_);
      if (waiting_.empty()) return;
    }
    visible += refresh;
    if (on_refresh(visible, refresh)) on_shown(visible);
  }
  clear();
}

FramePresenter::Figures FramePresenter::figures() const {
  std::lock_guard lock(mutex_);
  Figures f = figures_;
  f.delay_ms = std::chrono::duration<double, std::milli>(delay_).count();
  return f;
}

}  // namespace j2k::pipeline
