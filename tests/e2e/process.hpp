#pragma once
// Runs the project's tools from tests: commands with captured output and exit status.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>

namespace j2k::test {

inline std::string bin(const std::string& tool) { return std::string(J2K_BIN_DIR) + "/" + tool; }

struct CommandResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Runs `command` through the shell; stdout and stderr are captured through files named
/// after `tag` in the test's working directory.
inline CommandResult run(const std::string& command, const std::string& tag) {
  const std::string out = tag + ".out", err = tag + ".err";
  const int status = std::system((command + " >" + out + " 2>" + err).c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// A receiver (j2kprobe) running in the background. `wait_listening()` returns once it has
/// bound its socket (its "listening on" line), so a sender started after it loses nothing,
/// however long the receiver took to start.
class BackgroundReceiver {
 public:
  BackgroundReceiver(const std::string& command, const std::string& tag) : err_(tag + ".err") {
    std::remove(err_.c_str());
    std::remove((tag + ".out").c_str());
    thread_ = std::thread([this, command, tag] {
      result_ = run(command, tag);
      done_.store(true);
    });
  }
  ~BackgroundReceiver() {
    if (thread_.joinable()) thread_.join();
  }
  /// True once the line is there; false when the receiver ended first (or after a minute).
  bool wait_listening() {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < give_up) {
      if (slurp(err_).find("listening on") != std::string::npos) return true;
      if (done_.load()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling a file for the line
    }
    return false;
  }
  CommandResult join() {
    if (thread_.joinable()) thread_.join();
    return result_;
  }

 private:
  std::string err_;
  CommandResult result_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

/// Starts a receiver command, waits until it listens, runs the sender command, and waits for
/// the receiver to finish: the shape of every end-to-end test. Output goes to TAG.probe.* /
/// TAG.send.*.
inline std::pair<CommandResult, CommandResult> run_receiver_and_sender(const std::string& receiver,
                                                                       const std::string& sender,
                                                                       const std::string& tag) {
  BackgroundReceiver rx(receiver, tag + ".probe");
  if (!rx.wait_listening()) ADD_FAILURE() << "the receiver never said it was listening";
  CommandResult tx_result = run(sender, tag + ".send");
  return {rx.join(), tx_result};
}

}  // namespace j2k::test
