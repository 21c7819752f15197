#pragma once
// The built-in demo: a sender running inside the player's process, on loopback, so a new
// user sees moving video with one command (j2kplay --demo).
#include <atomic>
#include <mutex>
#include <memory>
#include <string>
#include <thread>

#include "sender/source.hpp"

namespace j2k::sender {

struct DemoConfig {
  std::string address = "127.0.0.1";
  std::uint16_t port = 5004;
  PictureFormat format{1280, 720, 10, 2};
  int fps = 25;
  int loop_frames = 50;
  double bitrate = 30e6;
  std::string image;  ///< photograph for the demo; empty: the built-in flower.png
  bool sound = true;  ///< a stereo line-up tone (MXF sound elements) with the pictures
};

class DemoSender {
 public:
  /// Starts encoding (cached after the first run) and then sending on a thread.
  explicit DemoSender(DemoConfig config);
  ~DemoSender();
  /// True once encoding is done and packets are being sent.
  bool sending() const noexcept { return sending_.load(); }
  /// Non-empty when the demo could not start.
  std::string error() const;

 private:
  DemoConfig config_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> sending_{false};
  mutable std::mutex error_mutex_;  // guards error_
  std::string error_;
  std::thread thread_;
};

}  // namespace j2k::sender
