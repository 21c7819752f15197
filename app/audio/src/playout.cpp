#include "audio/playout.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/log.hpp"

namespace j2k::audio {

namespace {

constexpr double kSlewTicks = 90;  // 1 ms on the 90 kHz clock
// Sound this far from the picture clock belongs to another timeline (the pictures' own jump
// test uses the same second).
constexpr double kTimelineTicks = 90000;
constexpr std::size_t kMaxTimelines = 4;  // waiting after the one playing (jumps in a burst: the oldest go)

double seconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::int16_t to_s16(std::int32_t s, int bits) {
  return static_cast<std::int16_t>(bits >= 16 ? s >> (bits - 16) : s * (1 << (16 - bits)));
}

}  // namespace

AudioPlayout::AudioPlayout(PlayoutOptions options) : options_(std::move(options)) {}

void AudioPlayout::reset(const depacketizer::AudioFormat& format) {
  format_ = format;
  fifo_.clear();
  later_.clear();
  switched_.reset();
  jumped_ = false;
  wait_for_pictures_ = false;
  heard_any_ = false;
  free_anchor_.reset();
}

std::size_t AudioPlayout::queued_frames() const {
  std::size_t n = fifo_.size();
  for (const auto& t : later_) n += t.frames.size();
  return n / static_cast<std::size_t>(options_.output_channels);
}

void AudioPlayout::next_timeline(Clock::time_point heard_at) {
  fifo_ = std::move(later_.front().frames);
  head_ticks_ = later_.front().head_ticks;
  later_.pop_front();
  // It plays on from here, without the start's delay (see `pull` for the picture clock).
  begin_timeline(heard_at, /*wait_for_pictures=*/false);
}

void AudioPlayout::begin_timeline(Clock::time_point heard_at, bool wait_for_pictures) {
  ++stats_.timeline_changes;
  free_anchor_ = switched_ = std::make_pair(head_ticks_, heard_at);
  wait_for_pictures_ = wait_for_pictures;
  playing_ = false;
}

double AudioPlayout::unwrap(std::uint32_t ts) {
  // The nearest 64-bit value with these low 32 bits to the last one seen (sound and picture
  // times are never far apart, and each moves by less than 2^31 ticks between calls).
  const double t = media_ref_ ? *media_ref_ + static_cast<double>(static_cast<std::int32_t>(
                                                  ts - static_cast<std::uint32_t>(static_cast<std::int64_t>(*media_ref_))))
                              : static_cast<double>(ts);
  media_ref_ = t;
  return t;
}

void AudioPlayout::push(const depacketizer::AudioBlock& block) {
  if (block.format.channels <= 0 || block.format.sample_rate <= 0) return;
  const std::size_t in_channels = static_cast<std::size_t>(block.format.channels);
  const std::size_t out_channels = static_cast<std::size_t>(options_.output_channels);
  // Which stream channel feeds each output channel (-1: none).
  std::vector<int> route(out_channels, -1);
  for (std::size_t k = 0; k < out_channels; ++k) {
    if (options_.channels.empty()) route[k] = static_cast<int>(std::min(k, in_channels - 1));
    else route[k] = options_.channels[std::min(k, options_.channels.size() - 1)];
    if (route[k] >= static_cast<int>(in_channels)) route[k] = -1;
  }
  std::lock_guard lock(mutex_);
  if (!(block.format == format_)) {
    reset(block.format);
    // A chosen channel the stream lacks plays silence: said once per format.
    stats_.missing_channels.clear();
    for (int c : options_.channels)
      if (c >= static_cast<int>(in_channels) &&
          std::find(stats_.missing_channels.begin(), stats_.missing_channels.end(), c + 1) == stats_.missing_channels.end())
        stats_.missing_channels.push_back(c + 1);
    if (!stats_.missing_channels.empty())
      logger("audio")->warn("the sound has {} channels: channel(s) {} chosen to play are silent", in_channels,
                            fmt::join(stats_.missing_channels, ", "));
  }
  const double tpf = 90000.0 / format_.sample_rate;  // ticks per frame
  const double t = unwrap(block.rtp_timestamp);
  const std::size_t frames = block.frames();
  std::size_t skip = 0;
  // The block continues the last timeline queued (the one playing when none waits).
  std::deque<std::int16_t>* tail = later_.empty() ? &fifo_ : &later_.back().frames;
  double* tail_head = later_.empty() ? &head_ticks_ : &later_.back().head_ticks;
  const std::size_t queued = tail->size() / out_channels;
  if (queued == 0) {
    // Far from where the sound was (it ran dry, then the stream's time jumped): a new
    // timeline, which `pull` starts as one.
    if (later_.empty() && heard_any_ && std::abs(t - head_ticks_) > kTimelineTicks) jumped_ = true;
    *tail_head = t;
    heard_any_ = true;
  } else {
    const double gap = t - (*tail_head + static_cast<double>(queued) * tpf);
    if (std::abs(gap) <= tpf) {
      // continues the queued sound
    } else if (gap > 0 && gap < options_.max_buffer_s * 90000.0) {
      tail->insert(tail->end(), static_cast<std::size_t>(std::lround(gap / tpf)) * out_channels, 0);  // a hole in the sound
    } else if (gap < 0 && -gap < static_cast<double>(frames) * tpf) {
      skip = static_cast<std::size_t>(std::lround(-gap / tpf));  // overlaps what is queued
    } else {
      // A jump of the stream's time: a timeline of its own, after what is queued.
      if (later_.size() == kMaxTimelines) {
        stats_.frames_dropped += later_.front().frames.size() / out_channels;
        later_.pop_front();
      }
      later_.push_back({t, {}});
      tail = &later_.back().frames;
    }
  }
  for (std::size_t f = skip; f < frames; ++f)
    for (std::size_t k = 0; k < out_channels; ++k)
      tail->push_back(route[k] < 0 ? 0 : to_s16(block.samples[f * in_channels + static_cast<std::size_t>(route[k])], format_.bits));
  // The bound holds over every timeline: the oldest sound goes first.
  const auto max_frames = static_cast<std::size_t>(options_.max_buffer_s * format_.sample_rate);
  for (std::size_t total = queued_frames(); total > max_frames;) {
    // The oldest sound queued: the playing timeline's, else the first waiting one's (which
    // `pull` still starts as a timeline of its own).
    std::deque<std::int16_t>* q = &fifo_;
    double* head = &head_ticks_;
    if (fifo_.empty()) {
      while (later_.front().frames.empty()) later_.pop_front();  // total > 0: one holds sound
      q = &later_.front().frames;
      head = &later_.front().head_ticks;
    }
    const std::size_t drop = std::min(total - max_frames, q->size() / out_channels);
    q->erase(q->begin(), q->begin() + static_cast<std::ptrdiff_t>(drop * out_channels));
    *head += static_cast<double>(drop) * tpf;
    stats_.frames_dropped += drop;
    total -= drop;
  }
}

void AudioPlayout::on_video_shown(std::uint32_t rtp_timestamp, Clock::time_point shown) {
  std::lock_guard lock(mutex_);
  const double offset = seconds(shown) - unwrap(rtp_timestamp) / 90000.0;
  if (!video_offsets_.empty()) {
    std::vector<double> v(video_offsets_.begin(), video_offsets_.end());
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    if (std::abs(offset - v[v.size() / 2]) > 1.0) video_offsets_.clear();  // the stream's clock jumped
  }
  video_offsets_.push_back(offset);
  if (video_offsets_.size() > 15) video_offsets_.pop_front();
  last_video_ = shown;
  free_anchor_.reset();
}

std::optional<double> AudioPlayout::due_media_time(Clock::time_point heard_at) {
  // The picture clock: the median over the last pictures of (shown − media time), so that one
  // picture drawn late does not move the sound.
  if (video_offsets_.empty() || !last_video_ || heard_at - *last_video_ > std::chrono::seconds(2)) return std::nullopt;
  std::vector<double> v(video_offsets_.begin(), video_offsets_.end());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return (seconds(heard_at) - v[v.size() / 2]) * 90000.0;
}

void AudioPlayout::pull(std::int16_t* out, std::size_t frames, Clock::time_point heard_at) {
  const std::size_t ch = static_cast<std::size_t>(options_.output_channels);
  std::fill(out, out + frames * ch, std::int16_t{0});
  int rate = 0;
  {
    std::lock_guard lock(mutex_);
    rate = format_.channels > 0 ? format_.sample_rate : 0;
    if (rate <= 0) {
      stats_.frames_silence += frames;
      return;
    }
    const double tpf = 90000.0 / rate;
    // Whether the sound was playing into this pull: a switch of timelines (here or within the
    // pull) starts the next one afresh, but running dry right after it is an underrun all the same.
    const bool was_playing = playing_;
    auto due = due_media_time(heard_at);
    stats_.on_picture_clock = due.has_value();
    // The timeline playing is through: the next takes over. On the picture clock, one the
    // pictures have left (its sound outlasted them) gives way to the next that fits them.
    const auto off_pictures = [&](double head) { return due && std::abs(*due - head) > kTimelineTicks; };
    if (due && !later_.empty() && (fifo_.empty() || off_pictures(head_ticks_))) {
      // Several jumps in a row: what comes before the first timeline that fits goes too.
      const auto fits = std::find_if(later_.begin(), later_.end(), [&](const Timeline& tl) { return !off_pictures(tl.head_ticks); });
      if (fits != later_.end()) {
        const auto stale = static_cast<std::size_t>(fits - later_.begin());
        stats_.frames_skipped += fifo_.size() / ch;
        fifo_.clear();
        for (std::size_t k = 0; k < stale; ++k) {
          stats_.frames_skipped += later_.front().frames.size() / ch;
          later_.pop_front();
        }
      }
    }
    while (fifo_.empty() && !later_.empty()) next_timeline(heard_at);
    if (jumped_ && !fifo_.empty()) {
      // The stream's time jumped while nothing was queued (a pause at a loop's seam, a sender
      // started again): a new timeline as well. Nothing joins it to the old one, so it waits
      // for its pictures (its sound arrives ahead of them) rather than playing on.
      jumped_ = false;
      begin_timeline(heard_at, /*wait_for_pictures=*/true);
    }
    if (switched_ && due) {
      // Until its first pictures are shown, the picture clock is the old timeline's: the new
      // one plays on from where the old one ended (all a seamless loop needs) and is moved
      // onto its pictures when they come. A second at most: sound whose time jumped alone is
      // then moved as any other.
      const auto since = heard_at - switched_->second;
      if (off_pictures(head_ticks_) && since < std::chrono::seconds(1)) {
        if (wait_for_pictures_) {
          stats_.frames_silence += frames;
          return;
        }
        due = switched_->first + std::chrono::duration<double>(since).count() * 90000.0;
      } else {
        switched_.reset();
        wait_for_pictures_ = false;
      }
    }
    if (!due) {
      // No picture to follow: play on the sound's own clock, from where it is now (the first
      // time after a short delay, so that a little sound is queued against jitter).
      if (!free_anchor_) {
        if (fifo_.empty()) {
          stats_.frames_silence += frames;
          return;
        }
        const auto delay = playing_ ? Clock::duration::zero()
                                    : std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.free_run_delay_s));
        free_anchor_ = std::make_pair(head_ticks_, heard_at + delay);
      }
      due = free_anchor_->first + std::chrono::duration<double>(heard_at - free_anchor_->second).count() * 90000.0;
    }
    std::size_t done = 0;
    std::size_t queued = fifo_.size() / ch;
    if (queued > 0) {
      const double error = *due - head_ticks_;  // +: the sound at the head is late
      stats_.last_error_ms = error / 90.0;
      // Sound that starts (or starts again after a gap) starts on time to the sample; sound
      // that is playing is moved only when it strays beyond the tolerance.
      const double allowed = playing_ ? options_.tolerance_s * 90000.0 : tpf / 2;
      if (std::abs(error) > allowed) {
        if (playing_) ++stats_.corrections;
        if (error > 0) {
          const std::size_t skip = std::min(queued, static_cast<std::size_t>(std::lround(error / tpf)));
          fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<std::ptrdiff_t>(skip * ch));
          head_ticks_ += static_cast<double>(skip) * tpf;
          stats_.frames_skipped += skip;
          queued -= skip;
        } else {
          done = std::min(frames, static_cast<std::size_t>(std::lround(-error / tpf)));  // silence until it is due
          stats_.frames_silence += done;
        }
      } else if (playing_ && std::abs(error) > kSlewTicks && queued > 1) {
        // Within the tolerance the sound is slewed to the picture's clock a sample at a time
        // (200 samples a second at 5 ms pulls: 4 ms/s, inaudible), so that it settles on it
        // rather than anywhere inside the tolerance.
        ++stats_.frames_slewed;
        if (error > 0) {
          fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<std::ptrdiff_t>(ch));  // one frame less
          head_ticks_ += tpf;
          --queued;
        } else {
          std::copy_n(fifo_.begin(), ch, out);  // the head frame twice
          done = 1;
        }
      }
    }
    // Plays up to `count` queued frames of the timeline playing at frame `at` of the pull.
    auto take = [&](std::size_t at, std::size_t count) {
      const std::size_t k = std::min(count, fifo_.size() / ch);
      std::copy_n(fifo_.begin(), k * ch, out + at * ch);
      fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<std::ptrdiff_t>(k * ch));
      head_ticks_ += static_cast<double>(k) * tpf;
      stats_.frames_played += k;
      return k;
    };
    std::size_t n = take(done, std::min(frames - done, queued));
    if (done + n < frames && fifo_.empty() && !later_.empty()) {
      // The timeline ran out within this pull: the next one plays on from the next frame.
      next_timeline(heard_at + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(static_cast<double>(done + n) / rate)));
      n += take(done + n, frames - done - n);
    }
    if (done + n < frames) {
      stats_.frames_silence += frames - done - n;
      if (was_playing && n < frames - done) ++stats_.underruns;
      // Ran dry on its own clock: the next sound starts it afresh (a gap in the stream, or a
      // sender whose clock runs slow against ours), not measured against the old anchor.
      if (!stats_.on_picture_clock && fifo_.empty()) free_anchor_.reset();
    }
    playing_ = n > 0 || (playing_ && done > 0);
    if (muted_) std::fill(out, out + frames * ch, std::int16_t{0});
  }
  if (onset_hook_) detect_onsets(out, frames, heard_at);
  (void)rate;
}

void AudioPlayout::detect_onsets(const std::int16_t* out, std::size_t frames, Clock::time_point heard_at) {
  const int rate = sample_rate();
  if (rate <= 0) return;
  const std::size_t ch = static_cast<std::size_t>(options_.output_channels);
  constexpr int kHigh = 3277, kLow = 328;  // -20 and -40 dBFS of 16-bit full scale
  const auto quiet_needed = static_cast<std::size_t>(rate / 10);
  for (std::size_t f = 0; f < frames; ++f) {
    const int s = std::abs(static_cast<int>(out[f * ch]));
    if (s >= kHigh && quiet_frames_ >= quiet_needed)
      onset_hook_(heard_at + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(static_cast<double>(f) / rate)));
    quiet_frames_ = s < kLow ? quiet_frames_ + 1 : 0;
  }
}

void AudioPlayout::set_muted(bool muted) {
  std::lock_guard lock(mutex_);
  muted_ = muted;
}

bool AudioPlayout::muted() const {
  std::lock_guard lock(mutex_);
  return muted_;
}

int AudioPlayout::sample_rate() const {
  std::lock_guard lock(mutex_);
  return format_.channels > 0 ? format_.sample_rate : 0;
}

PlayoutStats AudioPlayout::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void SyncProbe::on_flash(Clock::time_point shown) {
  std::lock_guard lock(mutex_);
  if (flashes_.size() < kMax) flashes_.push_back(shown);
}

void SyncProbe::on_click(Clock::time_point heard) {
  std::lock_guard lock(mutex_);
  if (clicks_.size() < kMax) clicks_.push_back(heard);
}

SyncProbe::Report SyncProbe::report() const {
  std::lock_guard lock(mutex_);
  Report r;
  r.flashes = flashes_.size();
  r.clicks = clicks_.size();
  for (const auto& c : clicks_) {
    std::optional<double> best;
    for (const auto& f : flashes_) {
      const double ms = std::chrono::duration<double, std::milli>(c - f).count();
      if (std::abs(ms) <= 500 && (!best || std::abs(ms) < std::abs(*best))) best = ms;
    }
    if (best) r.offsets_ms.push_back(*best);
  }
  r.pairs = r.offsets_ms.size();
  if (r.pairs) {
    double sum = 0;
    r.min_ms = r.max_ms = r.offsets_ms.front();
    for (double v : r.offsets_ms) {
      sum += v;
      r.min_ms = std::min(r.min_ms, v);
      r.max_ms = std::max(r.max_ms, v);
      r.max_abs_ms = std::max(r.max_abs_ms, std::abs(v));
    }
    r.mean_ms = sum / static_cast<double>(r.pairs);
  }
  return r;
}

}  // namespace j2k::audio
