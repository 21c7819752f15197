#include "sender/sound.hpp"

#include <fmt/format.h>

#include <cmath>

#include "audio/wav.hpp"

namespace j2k::sender {

depacketizer::AudioBlock generated_sound(const SoundSpec& spec, int fps_num, int fps_den, std::uint64_t frame) {
  const auto& f = spec.format;
  const std::uint64_t first = depacketizer::samples_before_frame(f.sample_rate, fps_num, fps_den, frame);
  const auto count = static_cast<std::size_t>(depacketizer::samples_in_frame(f.sample_rate, fps_num, fps_den, frame));
  if (spec.kind == SoundKind::tone) return audio::lineup_tone(f, first, count, spec.level_dbfs);
  depacketizer::AudioBlock b;
  b.format = f;
  b.samples.assign(count * static_cast<std::size_t>(f.channels), 0);
  if (spec.kind == SoundKind::click && spec.click_period > 0 && frame % static_cast<std::uint64_t>(spec.click_period) == 0) {
    const auto level = static_cast<std::int32_t>(std::lround(std::ldexp(1.0, f.bits - 1) * std::pow(10.0, kClickDbfs / 20.0)));
    const auto n = std::min(count, static_cast<std::size_t>(kClickSeconds * f.sample_rate));
    std::fill_n(b.samples.begin(), n * static_cast<std::size_t>(f.channels), level);
  }
  return b;
}

namespace {

class FlashSource final : public FrameSource {
 public:
  FlashSource(std::unique_ptr<FrameSource> inner, int period, const PictureFormat& format)
      : inner_(std::move(inner)), period_(period), format_(format) {}
  PlanarImage frame(int index, int loop_frames) const override {
    PlanarImage p = inner_->frame(index, loop_frames);
    if (period_ <= 0 || index % period_ != 0) return p;
    // Narrow-range white: Y at 235, Cb and Cr at 128 (scaled to the bit depth).
    const int shift = format_.bits - 8;
    for (std::size_t c = 0; c < p.planes.size(); ++c)
      std::fill(p.planes[c].samples.begin(), p.planes[c].samples.end(), (c == 0 ? 235 : 128) << shift);
    return p;
  }
  std::string identity() const override { return fmt::format("{}+flash{}", inner_->identity(), period_); }

 private:
  std::unique_ptr<FrameSource> inner_;
  int period_;
  PictureFormat format_;
};

}  // namespace

std::unique_ptr<FrameSource> make_flash_source(std::unique_ptr<FrameSource> inner, int period, const PictureFormat& format) {
  return std::make_unique<FlashSource>(std::move(inner), period, format);
}

}  // namespace j2k::sender
