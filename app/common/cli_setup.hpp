#pragma once
// The set-up every tool shares: --version, --log-level (checked), the "Exit status" help
// section, and parsing that turns every argument error into status 2 with a one-line reason.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "common/decoder_choice.hpp"

namespace j2k::cli {

/// Exit statuses, the same in every tool (the help and the README list them).
enum ExitStatus : int {
  exit_ok = 0,
  exit_error = 1,       ///< the work failed: socket, file, decode, send
  exit_usage = 2,       ///< bad arguments (unknown option, bad value, contradiction)
  exit_no_packets = 3,  ///< receivers only: nothing arrived (or the capture held nothing that matched)
  exit_alarm = 4,       ///< j2kprobe --alarm: an alarm fired (the stream arrived, but was not healthy)
};

/// "j2kprobe 0.1.0" and the library versions that matter (Qt, OpenJPEG, CUDA).
std::string version_text(const std::string& tool);

/// The tool's common options and help sections.
class ToolSetup {
 public:
  /// `exit_statuses`: the lines of the tool's "Exit status" section (which statuses it uses).
  ToolSetup(CLI::App& app, std::string tool, std::string examples, std::string exit_statuses);

  /// Parses the command line. Returns a status to exit with at once (0 after --help and
  /// --version, 2 for any argument error, reported on stderr in one line), or nullopt to go on
  /// (the log level is then set).
  std::optional<int> parse(int argc, char** argv);

  /// A usage error found after parsing: logs the reason, returns 2.
  int usage_error(const std::string& reason) const;

  const std::string& tool() const noexcept { return tool_; }

 private:
  CLI::App& app_;
  std::string tool_;
  std::string log_level_ = "info";
};

/// Lower bounds for number options, said plainly ("-1 is less than 0", where CLI11's own
/// range check prints its upper bound of 1.8e308).
/// A capture URL's file (pcap:FILE?…) that cannot be read: the reason, for a usage error
/// (status 2, like a missing SDP file), said before anything starts; "" when it can be.
std::string unreadable_capture(const std::string& file, bool is_capture);

CLI::Validator at_least(double min);   ///< value >= min
CLI::Validator more_than(double min);  ///< value > min

/// --tier1-host's default in the tools that decode a stream with several frames in flight
/// (j2kplay, j2kprobe): every code-block on the GPU. There the hybrid's CPU share competes
/// with the other frames' work and buys no latency; on a live 2160p50 stream it cost ~2.5
/// cores and a longer p99 (bench/RESULTS.md, issue 15). j2kdecode, one frame at a time,
/// keeps the cost model (-1), which cuts a frame's latency 1.4-1.8x.
constexpr long kStreamTier1Host = 0;

/// --backend own|cuda|openjpeg, --gpu on|off|auto, --tier1 cpu|gpu|auto and --tier1-host N, into one DecoderChoice.
class DecoderOptions {
 public:
  /// `tier1_host`: --tier1-host's default (-1: the cost model; kStreamTier1Host for streams).
  explicit DecoderOptions(long tier1_host = -1) : tier1_host_(tier1_host) {}
  void add_to(CLI::App& app);
  /// The choice the words mean; an error (for status 2) on contradictions.
  Result<app::DecoderChoice> resolve() const;

 private:
  std::string backend_ = "own";
  std::string gpu_ = "auto";
  std::string tier1_ = "auto";
  long tier1_host_ = -1;
};

}  // namespace j2k::cli
