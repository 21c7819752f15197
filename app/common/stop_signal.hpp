#pragma once
// Ctrl-C / SIGTERM as a flag the tools' loops poll (the only process-wide state they keep).
// The first signal asks for an orderly stop; a second one ends the process at once (a user
// who presses Ctrl-C twice does not want to wait for a drain). (SIGXFSZ is ignored from the
// start, by ToolSetup.)
#include <atomic>
#include <csignal>
#include <unistd.h>

namespace j2k::cli {

inline std::atomic<bool>& stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

inline void install_stop_signals() {
  auto handler = [](int sig) {
    if (stop_requested().exchange(true)) _exit(128 + sig);  // async-signal-safe
  };
  std::signal(SIGINT, handler);
  std::signal(SIGTERM, handler);
}

}  // namespace j2k::cli
