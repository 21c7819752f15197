#include "audio/audio_monitor.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "core/log.hpp"

namespace j2k::audio {

const char* to_string(AudioEvent::Kind kind) noexcept {
  switch (kind) {
    case AudioEvent::Kind::format: return "format";
    case AudioEvent::Kind::silence: return "silence";
    case AudioEvent::Kind::silence_end: return "silence_end";
    case AudioEvent::Kind::clipping: return "clipping";
    case AudioEvent::Kind::stalled: return "stalled";
  }
  return "unknown";
}

AudioMonitor::AudioMonitor(AudioMonitorOptions options, EventSink on_event, BlockSink on_block)
    : options_(std::move(options)),
      on_event_(std::move(on_event)),
      on_block_(std::move(on_block)),
      blocks_(options_.queue_blocks),
      meter_(options_.meter) {}

Result<std::unique_ptr<AudioMonitor>> AudioMonitor::create(AudioMonitorOptions options, EventSink on_event,
                                                           BlockSink on_block) {
  if (!options.dump_path.empty()) {
    // Fail at the start, not when the first sound arrives: the file is made (empty) now and
    // written once the sound's format is known.
    std::FILE* f = std::fopen(options.dump_path.c_str(), "wb");
    if (!f) return make_error(ErrorKind::io, fmt::format("cannot write --dump-audio file '{}'", options.dump_path));
    std::fclose(f);
  }
  std::unique_ptr<AudioMonitor> m(new AudioMonitor(std::move(options), std::move(on_event), std::move(on_block)));
  m->thread_ = std::thread([raw = m.get()] { raw->run(); });
  return m;
}

AudioMonitor::~AudioMonitor() { stop(); }

void AudioMonitor::push(depacketizer::AudioBlock&& block) {
  if (!blocks_.try_push(block)) dropped_.fetch_add(1, std::memory_order_relaxed);
}

void AudioMonitor::stop() {
  blocks_.close();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  stopped_ = true;
  if (dump_) {
    if (auto st = dump_->close(); !st) {
      state_.dump_failed = true;
      if (state_.dump_error.empty()) state_.dump_error = st.error().message;
      logger("audio")->error("--dump-audio: {}", st.error().message);
    }
    state_.dump_frames = dump_->frames_written();
  } else if (!options_.dump_path.empty() && !state_.seen) {
    // The file made at the start to check it could be written holds nothing: no sound came.
    // (A dump that ended early, full or refused, keeps what it holds.)
    std::remove(options_.dump_path.c_str());
    if (state_.dump_error.empty()) state_.dump_error = "no sound arrived: nothing written";
    logger("audio")->warn("--dump-audio: no sound arrived, {} not written", options_.dump_path);
  }
}

void AudioMonitor::run() {
  for (;;) {
    auto block = blocks_.pop_for(std::chrono::milliseconds(200));
    if (!block) {
      if (blocks_.closed() && blocks_.size() == 0) return;
      continue;
    }
    consume(*block);
  }
}

void AudioMonitor::post(AudioEvent e) {
  if (state_.events.size() >= options_.kept_events) state_.events.erase(state_.events.begin());
  state_.events.push_back(std::move(e));
}

void AudioMonitor::consume(const depacketizer::AudioBlock& block) {
  const auto& f = block.format;
  const auto wall = std::chrono::system_clock::now();
  std::vector<AudioEvent> fresh;
  if (!(f == meter_.format()) || previous_.empty()) {
    AudioEvent e{AudioEvent::Kind::format, 0, block.rtp_timestamp, wall,
                 fmt::format("sound: {} channels, {} Hz, {}-bit", f.channels, f.sample_rate, f.bits)};
    fresh.push_back(e);
    previous_.assign(static_cast<std::size_t>(f.channels), ChannelLevel{});
    sum_squares_.assign(static_cast<std::size_t>(f.channels), 0.0);
  }
  meter_.push(block);
  const auto levels = meter_.levels();
  // Episodes start (and silence ends) at block granularity: a block is a frame's worth.
  for (std::size_t c = 0; c < levels.size() && c < previous_.size(); ++c) {
    const int ch = static_cast<int>(c) + 1;
    if (levels[c].silent && !previous_[c].silent)
      fresh.push_back({AudioEvent::Kind::silence, ch, block.rtp_timestamp, wall,
                       fmt::format("channel {} silent (below {:.0f} dBFS for {:.1f} s)", ch, options_.meter.silence_dbfs,
                                   options_.meter.silence_s)});
    if (!levels[c].silent && previous_[c].silent)
      fresh.push_back({AudioEvent::Kind::silence_end, ch, block.rtp_timestamp, wall, fmt::format("channel {} sound back", ch)});
    if (levels[c].clipping && !previous_[c].clipping)
      fresh.push_back({AudioEvent::Kind::clipping, ch, block.rtp_timestamp, wall, fmt::format("channel {} clipping", ch)});
  }
  previous_ = levels;
  const double full = std::ldexp(1.0, f.bits - 1);
  const std::size_t n = static_cast<std::size_t>(f.channels);
  for (std::size_t i = 0; i < block.samples.size(); ++i) {
    const double x = block.samples[i] / full;
    sum_squares_[i % n] += x * x;
  }
  std::string dump_error;
  bool dump_failed = false, dump_ended = false;
  if (!options_.dump_path.empty() && !dump_ && state_.dump_error.empty()) {
    auto made = WavWriter::create(options_.dump_path, f);
    if (made) {
      dump_ = std::move(made).value();
    } else {
      dump_error = made.error().message;
      dump_failed = true;
    }
  }
  std::uint64_t dump_frames = 0;
  if (dump_) {
    if (auto st = dump_->write(block); !st) {
      dump_error = st.error().message;  // a changed format: not written
      if (st.error().kind == ErrorKind::io || st.error().kind == ErrorKind::limit) {
        // The file refused it (io: a failure) or is full (limit: 4 GiB, an end): the dump
        // ends here, its header saying what it holds.
        dump_failed = st.error().kind == ErrorKind::io;
        dump_ended = true;
        if (auto closed = dump_->close(); !closed) dump_error += "; " + closed.error().message;
        dump_frames = dump_->frames_written();
        dump_.reset();
      }
    }
  }
  {
    std::lock_guard lock(mutex_);
    auto& s = state_;
    if (s.seen && !(s.format == f)) {
      // A new format starts its totals afresh (its channels are not the old ones).
      s.totals.clear();
      s.format_sample_frames = 0;
    }
    s.seen = true;
    s.format = f;
    ++s.blocks;
    s.sample_frames += block.frames();
    s.format_sample_frames += block.frames();
    if (f.sample_rate > 0) s.seconds += static_cast<double>(block.frames()) / f.sample_rate;
    s.levels = levels;
    s.totals.resize(n);
    for (std::size_t c = 0; c < n && c < levels.size(); ++c) {
      auto& t = s.totals[c];
      t.peak_dbfs = std::max(t.peak_dbfs, levels[c].peak_dbfs);
      t.momentary_max_db = std::max(t.momentary_max_db, levels[c].momentary_db);
      const double mean = s.format_sample_frames ? sum_squares_[c] / static_cast<double>(s.format_sample_frames) : 0.0;
      t.rms_dbfs = mean > 0 ? std::max(-150.0, 10.0 * std::log10(mean)) : -150.0;
    }
    s.silence_events = meter_.silence_events();
    s.clipping_events = meter_.clipping_events();
    if (dump_) s.dump_frames = dump_->frames_written();
    else if (dump_ended) s.dump_frames = dump_frames;
    s.dump_failed = s.dump_failed || dump_failed;
    if (!dump_error.empty() && s.dump_error.empty()) {
      s.dump_error = dump_error;
      if (dump_failed) logger("audio")->error("--dump-audio: {}", dump_error);
      else logger("audio")->warn("--dump-audio: {}", dump_error);
    }
    last_block_ = std::chrono::steady_clock::now();
    if (stalled_) {
      stalled_ = false;
      fresh.push_back({AudioEvent::Kind::silence_end, 0, block.rtp_timestamp, wall, "sound arrives again"});
    }
    for (const auto& e : fresh) post(e);
  }
  for (const auto& e : fresh)
    if (on_event_) on_event_(e);
  if (on_block_) on_block_(block);
}

AudioSnapshot AudioMonitor::snapshot(std::chrono::steady_clock::time_point now) {
  std::optional<AudioEvent> stall;
  AudioSnapshot copy;
  {
    std::lock_guard lock(mutex_);
    if (last_block_) {
      const double since = std::chrono::duration<double>(now - *last_block_).count();
      state_.seconds_since_sound = std::max(0.0, since);
      // Sound that stops arriving while it was there is silence on every channel.
      if (!stalled_ && !stopped_ && since >= options_.meter.silence_s) {
        stalled_ = true;
        stall = AudioEvent{AudioEvent::Kind::stalled, 0, std::nullopt, std::chrono::system_clock::now(),
                           fmt::format("no sound for {:.1f} s", since)};
        post(*stall);
      }
    }
    state_.dropped_queue_full = dropped_.load(std::memory_order_relaxed);
    copy = state_;
  }
  if (stall && on_event_) on_event_(*stall);
  return copy;
}

}  // namespace j2k::audio
