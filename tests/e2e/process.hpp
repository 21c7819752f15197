#pragma once
// Runs the project's tools from tests: commands with captured output and exit status.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include <chrono>
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

/// Starts a receiver command, gives it time to join, runs the sender command, and waits for the
/// receiver to finish: the shape of every end-to-end test. Output goes to TAG.probe.* / TAG.send.*.
inline std::pair<CommandResult, CommandResult> run_receiver_and_sender(const std::string& receiver,
                                                                       const std::string& sender,
                                                                       const std::string& tag) {
  CommandResult rx_result;
  std::thread rx([&] { rx_result = run(receiver, tag + ".probe"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CommandResult tx_result = run(sender, tag + ".send");
  rx.join();
  return {rx_result, tx_result};
}

}  // namespace j2k::test
