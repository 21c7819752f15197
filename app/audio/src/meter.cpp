#include "audio/meter.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace j2k::audio {

namespace {

constexpr double kFloorDb = -150;

double db10(double power) { return power > 0 ? std::max(kFloorDb, 10.0 * std::log10(power)) : kFloorDb; }

}  // namespace

double to_dbfs(double magnitude, int bits) {
  const double full = std::ldexp(1.0, bits - 1);
  return magnitude > 0 ? std::max(kFloorDb, 20.0 * std::log10(magnitude / full)) : kFloorDb;
}

void LevelMeter::reset(const depacketizer::AudioFormat& format) {
  format_ = format;
  channels_.assign(static_cast<std::size_t>(std::max(0, format.channels)), Channel{});
  block_fill_ = 0;
  window_fill_ = 0;
  // ITU-R BS.1770-4 K-weighting, its two biquads re-derived for this sample rate from the
  // filters' analog parameters (shelf: f0 1681.97 Hz, gain 3.99984 dB, Q 0.7071752;
  // high-pass: f0 38.1355 Hz, Q 0.5003270), bilinear transform with pre-warping.
  const double fs = static_cast<double>(format.sample_rate > 0 ? format.sample_rate : 48000);
  Biquad shelf, hp;
  {
    const double f0 = 1681.974450955533, g = 3.999843853973347, q = 0.7071752369554196;
    const double k = std::tan(std::numbers::pi * f0 / fs);
    const double vh = std::pow(10.0, g / 20.0), vb = std::pow(vh, 0.4996667741545416);
    const double a0 = 1.0 + k / q + k * k;
    shelf.b0 = (vh + vb * k / q + k * k) / a0;
    shelf.b1 = 2.0 * (k * k - vh) / a0;
    shelf.b2 = (vh - vb * k / q + k * k) / a0;
    shelf.a1 = 2.0 * (k * k - 1.0) / a0;
    shelf.a2 = (1.0 - k / q + k * k) / a0;
  }
  {
    const double f0 = 38.13547087602444, q = 0.5003270373238773;
    const double k = std::tan(std::numbers::pi * f0 / fs);
    const double a0 = 1.0 + k / q + k * k;
    hp.b0 = 1.0;
    hp.b1 = -2.0;
    hp.b2 = 1.0;
    hp.a1 = 2.0 * (k * k - 1.0) / a0;
    hp.a2 = (1.0 - k / q + k * k) / a0;
  }
  for (auto& c : channels_) {
    c.shelf = shelf;
    c.highpass = hp;
  }
}

void LevelMeter::end_block(Channel& c) {
  auto keep4 = [](std::vector<double>& v, double x) {
    v.push_back(x);
    if (v.size() > 4) v.erase(v.begin());
  };
  keep4(c.weighted_squares, c.block_weighted);
  keep4(c.plain_squares, c.block_plain);
  keep4(c.peaks, c.block_peak);
  c.hold_blocks[c.hold_next++ % c.hold_blocks.size()] = c.block_peak;
  c.block_weighted = c.block_plain = c.block_peak = 0;
}

void LevelMeter::push(const depacketizer::AudioBlock& block) {
  std::lock_guard lock(mutex_);
  if (!(block.format == format_) || channels_.size() != static_cast<std::size_t>(block.format.channels)) reset(block.format);
  const int n = block.format.channels;
  if (n <= 0) return;
  const double full = std::ldexp(1.0, block.format.bits - 1);
  const std::int64_t block_len = std::max(1, block.format.sample_rate / 10);  // 100 ms
  const std::int64_t silence_len = static_cast<std::int64_t>(options_.silence_s * block.format.sample_rate);
  // Silence is judged on the RMS of 10 ms windows, as the option says: a sample peak would
  // call hiss at -70 dBFS RMS (peaks near -56) sound for ever.
  const std::int64_t window_len = std::max(1, block.format.sample_rate / 100);
  const double silence_power = std::pow(10.0, options_.silence_dbfs / 10.0) * static_cast<double>(window_len);
  const std::size_t frames = block.frames();
  for (std::size_t f = 0; f < frames; ++f) {
    for (int ch = 0; ch < n; ++ch) {
      Channel& c = channels_[static_cast<std::size_t>(ch)];
      const std::int32_t raw = block.samples[f * static_cast<std::size_t>(n) + static_cast<std::size_t>(ch)];
      const double x = raw / full;
      const double w = c.highpass.step(c.shelf.step(x));
      c.block_weighted += w * w / static_cast<double>(block_len);
      c.block_plain += x * x / static_cast<double>(block_len);
      c.block_peak = std::max(c.block_peak, std::fabs(x));
      c.window_squares += x * x;
      const bool at_full_scale = raw >= full - 1 || raw <= -full;
      if (at_full_scale) {
        if (c.clip_age < 0) ++clipping_events_;
        c.clip_age = 0;
      } else if (c.clip_age >= 0 && ++c.clip_age > 4 * block_len) {
        c.clip_age = -1;
      }
      c.clipping = c.clip_age >= 0;
    }
    if (++window_fill_ >= window_len) {
      window_fill_ = 0;
      for (auto& c : channels_) {
        if (c.window_squares < silence_power) c.quiet_samples += window_len;
        else c.quiet_samples = 0;
        c.window_squares = 0;
        const bool silent = c.quiet_samples >= silence_len;
        if (silent && !c.silent) ++silence_events_;
        c.silent = silent;
      }
    }
    if (++block_fill_ >= block_len) {
      block_fill_ = 0;
      for (auto& c : channels_) end_block(c);
    }
  }
}

std::vector<ChannelLevel> LevelMeter::levels() const {
  std::lock_guard lock(mutex_);
  std::vector<ChannelLevel> out;
  for (const auto& c : channels_) {
    ChannelLevel l;
    double w = 0, p = 0, peak = 0;
    for (double v : c.weighted_squares) w += v;
    for (double v : c.plain_squares) p += v;
    for (double v : c.peaks) peak = std::max(peak, v);
    const double blocks = static_cast<double>(std::max<std::size_t>(1, c.weighted_squares.size()));
    // BS.1770: loudness = -0.691 + 10 log10(mean square of the K-weighted signal).
    l.momentary_db = c.weighted_squares.empty() ? kFloorDb : std::max(kFloorDb, -0.691 + db10(w / blocks));
    l.rms_dbfs = c.plain_squares.empty() ? kFloorDb : db10(p / blocks);
    l.peak_dbfs = peak > 0 ? std::max(kFloorDb, 20.0 * std::log10(peak)) : kFloorDb;
    // The highest peak of the last 2 s: the finished blocks' and the one filling now.
    const double hold = std::max(*std::max_element(c.hold_blocks.begin(), c.hold_blocks.end()), c.block_peak);
    l.peak_hold_dbfs = hold > 0 ? std::max(kFloorDb, 20.0 * std::log10(hold)) : kFloorDb;
    l.silent = c.silent;
    l.clipping = c.clipping;
    out.push_back(l);
  }
  return out;
}

depacketizer::AudioFormat LevelMeter::format() const {
  std::lock_guard lock(mutex_);
  return format_;
}
std::uint64_t LevelMeter::silence_events() const {
  std::lock_guard lock(mutex_);
  return silence_events_;
}
std::uint64_t LevelMeter::clipping_events() const {
  std::lock_guard lock(mutex_);
  return clipping_events_;
}

}  // namespace j2k::audio
