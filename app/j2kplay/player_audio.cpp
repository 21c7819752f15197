#include "player_audio.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "core/log.hpp"

namespace j2k::player {

Result<AudioOptions> parse_audio_option(const std::string& text) {
  AudioOptions o;
  if (text == "on") return o;
  if (text == "off") {
    o.play = false;
    return o;
  }
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int n = 0;
    std::size_t used = 0;
    try {
      n = std::stoi(item, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != item.size() || n < 1 || n > 16)
      return make_error(ErrorKind::corrupt, fmt::format("--audio '{}' is not off, on or channel numbers 1-16 (e.g. 3,4)", text));
    o.channels.push_back(n - 1);
  }
  if (o.channels.empty() || o.channels.size() > 2)
    return make_error(ErrorKind::corrupt, fmt::format("--audio '{}': give one or two channels (left, right)", text));
  return o;
}

Status PlayerAudio::open(pipeline::PipelineConfig& config, monitor::StreamMonitor& mon, const monitor::AlarmThresholds& alarms,
                         AudioOptions options, bool window) {
  options_ = std::move(options);
  if (window && options_.play) {
    audio::PlayoutOptions po;
    po.channels = options_.channels;
    playout_ = std::make_unique<audio::AudioPlayout>(po);
    if (options_.sync_probe) playout_->set_onset_hook([this](Clock::time_point t) { probe_.on_click(t); });
  }
  auto* playout = playout_.get();
  return glue_.open(config, mon, alarms, "", [playout](const depacketizer::AudioBlock& b) {
    if (playout) playout->push(b);
  });
}

void PlayerAudio::on_frame(const void* picture, std::uint32_t rtp_timestamp, const gpu::RgbaImage* host) {
  bool flash = false;
  if (options_.sync_probe && host && host->width > 0 && host->height > 0) {
    // A flash: the picture is white (mean green above 200 of 255, sampled on a 32 x 32 grid).
    std::uint64_t sum = 0, n = 0;
    for (int y = host->height / 64; y < host->height; y += std::max(1, host->height / 32))
      for (int x = host->width / 64; x < host->width; x += std::max(1, host->width / 32), ++n)
        sum += host->pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(host->width) + static_cast<std::size_t>(x)) * 4 + 1];
    flash = n > 0 && sum > 200 * n;
  }
  std::lock_guard lock(frames_mutex_);
  frames_[next_frame_++ % frames_.size()] = Shown{picture, rtp_timestamp, flash && !last_flash_};
  last_flash_ = flash;
}

PlayerAudio::Clock::duration PlayerAudio::picture_delay() const {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(picture_delay_ms_.load(std::memory_order_relaxed)));
}

void PlayerAudio::on_shown(const void* picture, Clock::time_point swapped) {
  std::optional<Shown> found;
  {
    std::lock_guard lock(frames_mutex_);
    // The newest entry for this picture (pooled pictures come back with the same address).
    for (std::size_t k = 1; k <= frames_.size() && k <= next_frame_; ++k) {
      const Shown& s = frames_[(next_frame_ - k) % frames_.size()];
      if (s.picture == picture) {
        found = s;
        break;
      }
    }
  }
  if (!found) return;
  if (playout_) playout_->on_video_shown(found->rtp_timestamp, swapped);
  if (found->flash) probe_.on_flash(swapped);
}

void PlayerAudio::tick() {
  if (!playout_) return;
  const int rate = playout_->sample_rate();
  if (rate <= 0 || (output_ && output_->sample_rate() == rate)) return;
  output_.reset();  // a new rate: a new output
  auto* playout = playout_.get();
  auto opened = ui::AudioOutput::open(options_.device, rate, playout_->output_channels(),
                                      [playout](std::int16_t* out, std::size_t frames, Clock::time_point heard_at) {
                                        playout->pull(out, frames, heard_at);
                                      });
  if (!opened && options_.device.empty()) {
    // No sound card: keep the sound moving (meters, lip sync) at its real pace, unheard.
    if (output_error_.empty()) logger("j2kplay")->warn("sound not played: {}; it is metered only", opened.error().message);
    output_error_ = opened.error().message;
    opened = ui::AudioOutput::open("null", rate, playout_->output_channels(),
                                   [playout](std::int16_t* out, std::size_t frames, Clock::time_point heard_at) {
                                     playout->pull(out, frames, heard_at);
                                   });
  }
  if (!opened) {
    if (output_error_ != opened.error().message) logger("j2kplay")->error("sound not played: {}", opened.error().message);
    output_error_ = opened.error().message;
    return;
  }
  output_ = std::move(opened).value();
  // The picture waits for its sound: the output's lead (it takes sound that long before it is
  // heard), a frame period of 25 fps for the frame's packets (the sound follows the picture in
  // each content package or PES) and 20 ms for decoding and the hand-overs.
  picture_delay_ms_.store(output_->lead_ms() + 60.0);
  logger("j2kplay")->info("sound: {} Hz to {}; pictures shown at least {:.0f} ms after their earliest arrival, in step with it", rate,
                          output_->describe(), picture_delay_ms_.load());
}

void PlayerAudio::toggle_mute() {
  if (playout_) playout_->set_muted(!playout_->muted());
}

ui::AudioMetersView PlayerAudio::meters_view() {
  ui::AudioMetersView v;
  const auto levels = glue_.monitor().levels();
  const auto f = glue_.monitor().format();
  for (std::size_t c = 0; c < levels.size(); ++c) {
    ui::AudioMeterChannel ch;
    ch.peak_dbfs = levels[c].peak_dbfs;
    ch.hold_dbfs = levels[c].peak_hold_dbfs;
    ch.loudness_db = levels[c].momentary_db;
    ch.silent = levels[c].silent;
    ch.clipping = levels[c].clipping;
    const auto& sel = options_.channels;
    ch.playing = playout_ && (sel.empty() ? c < 2 : std::find(sel.begin(), sel.end(), static_cast<int>(c)) != sel.end());
    v.channels.push_back(ch);
  }
  v.caption = QStringLiteral("%1 kHz %2-bit").arg(f.sample_rate / 1000.0, 0, 'g', 4).arg(f.bits);
  if (!playout_) v.caption += QStringLiteral("  not played");
  v.muted = playout_ && playout_->muted();
  return v;
}

std::string PlayerAudio::overlay_line() {
  const auto s = glue_.monitor().snapshot();
  if (!s.seen) return {};
  std::string line = fmt::format("sound {} ch {} Hz {}-bit", s.format.channels, s.format.sample_rate, s.format.bits);
  if (!playout_) return line + ", not played (--audio off)";
  const auto p = playout_->stats();
  line += output_ ? fmt::format(" → {}", output_->describe()) : std::string(" → no output");
  if (playout_->muted()) line += " (muted)";
  line += p.on_picture_clock ? fmt::format(", on the picture clock (error {:+.1f} ms)", p.last_error_ms) : ", free-running";
  return line;
}

void PlayerAudio::finish() {
  picture_delay_ms_.store(0);
  const bool audible = output_ && output_->audible();
  const std::string device = output_ ? output_->describe() : std::string();
  output_.reset();
  if (playout_ && has_sound()) {
    // What became of the stream's sound: heard on a device, or only metered (no sound card,
    // --audio-device null): "played" only for sound that was.
    const auto p = playout_->stats();
    const std::string timing =
        fmt::format("{} of silence, skipped {} late, dropped {}, {} corrections, {} frames slewed, {} underruns, "
                    "{} jumps of the stream's time played through",
                    p.frames_silence, p.frames_skipped, p.frames_dropped, p.corrections, p.frames_slewed, p.underruns,
                    p.timeline_changes);
    if (audible)
      logger("j2kplay")->info("sound: played {} frames on {}, {}", p.frames_played, device, timing);
    else
      logger("j2kplay")->info("sound: not heard ({}); {} frames metered and discarded at their pace, {}",
                              output_error_.empty() ? (device.empty() ? "no output" : device) : "no sound output: " + output_error_,
                              p.frames_played, timing);
  }
  if (options_.sync_probe) {
    const auto r = probe_.report();
    std::string offsets;
    for (double v : r.offsets_ms) offsets += fmt::format(" {:+.1f}", v);
    logger("j2kplay")->info("lip sync: {} flashes shown, {} clicks heard, {} pairs; sound minus picture mean {:+.1f} ms, "
                            "min {:+.1f} ms, max {:+.1f} ms, largest {:.1f} ms; offsets ms:{}",
                            r.flashes, r.clicks, r.pairs, r.mean_ms, r.min_ms, r.max_ms, r.max_abs_ms, offsets);
  }
}

}  // namespace j2k::player
