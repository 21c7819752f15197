#pragma once
// Ctrl-C / SIGTERM as a flag the tools' loops poll (the only process-wide state they keep).
#include <atomic>
#include <csignal>

namespace j2k::cli {

inline std::atomic<bool>& stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

inline void install_stop_signals() {
  auto handler = [](int) { stop_requested().store(true); };
  std::signal(SIGINT, handler);
  std::signal(SIGTERM, handler);
}

}  // namespace j2k::cli
