#include "sender/demo.hpp"

#include <fmt/format.h>

#include "core/log.hpp"
#include "sender/encoded_loop.hpp"
#include "sender/sender.hpp"

namespace j2k::sender {

DemoSender::DemoSender(DemoConfig config) : config_(std::move(config)) {
  auto fail = [this](const std::string& why) {
    logger("sender")->error("demo sender: {}", why);
    std::lock_guard lock(error_mutex_);
    error_ = why;
  };
  // The picture is loaded here, on the caller's thread: image I/O goes through Qt, and Qt
  // must not be first touched from a helper thread while the caller creates its QApplication.
  const std::string image = config_.image.empty() ? std::string(J2K_DEMO_MEDIA_DIR) + "/flower.png" : config_.image;
  auto loaded = make_image_source(image, config_.format);
  if (!loaded) {
    fail(loaded.error().message);
    return;
  }
  thread_ = std::thread([this, fail, source = std::move(loaded).value()] {
    LoopSpec spec;
    spec.frames = config_.loop_frames;
    spec.encode.target_bytes = static_cast<std::size_t>(config_.bitrate / config_.fps / 8);
    spec.cache_dir = default_cache_dir();
    auto frames = encode_loop(*source, config_.format, spec);
    if (!frames) return fail(frames.error().message);
    SendConfig sc;
    sc.to.host = config_.address;
    sc.to.port = config_.port;
    sc.fps_num = config_.fps;
    sc.frames = -1;
    // Stereo line-up tone with channel identification beside the picture.
    if (config_.sound) sc.sound.kind = SoundKind::tone;
    Sender sender(sc, config_.format, std::move(frames).value());
    sending_.store(true);
    auto result = sender.run(stop_);
    if (!result) fail(result.error().message);
  });
}

DemoSender::~DemoSender() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

std::string DemoSender::error() const {
  std::lock_guard lock(error_mutex_);
  return error_;
}

}  // namespace j2k::sender
