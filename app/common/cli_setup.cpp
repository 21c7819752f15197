#include "common/cli_setup.hpp"

#include <fmt/format.h>
#include <openjpeg.h>

#include <QtGlobal>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/log.hpp"
#include "gpu/cuda.hpp"
#if J2K_HAVE_CUDA
#include <cuda_runtime_api.h>  // CUDART_VERSION: the runtime linked into this binary
#endif

namespace j2k::cli {

std::string version_text(const std::string& tool) {
  std::string s = fmt::format("{} {} (j2kplay project)\n", tool, J2K_PROJECT_VERSION);
  s += fmt::format("  Qt {} (built with {})\n", qVersion(), QT_VERSION_STR);
  s += fmt::format("  OpenJPEG {}\n", opj_version());
#if J2K_HAVE_CUDA
  s += fmt::format("  CUDA runtime {}.{} (static); {}", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10,
                   gpu::cuda_describe());
#else
  s += "  CUDA: not in this build (CPU reconstruction only)";
#endif
  return s;
}

ToolSetup::ToolSetup(CLI::App& app, std::string tool, std::string examples, std::string exit_statuses)
    : app_(app), tool_(std::move(tool)) {
  // From the start (before the first log line): under a file size limit (ulimit -f) a file
  // that reaches it fails its writes, which the tools count and say, instead of the process
  // ending with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  std::string footer;
  if (!examples.empty()) footer += "Examples:\n" + examples + "\n\n";
  footer += "Exit status:\n" + exit_statuses;
  app_.footer(footer);
  app_.set_version_flag("--version", [t = tool_] { return version_text(t); },
                        "print the version (and of Qt, OpenJPEG, CUDA) and exit");
  app_.add_option("--log-level", log_level_, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
}

std::optional<int> ToolSetup::parse(int argc, char** argv) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here as "errors" with status 0: print them as CLI11 does.
    if (e.get_exit_code() == 0) return app_.exit(e);
    // Everything else is a usage error: one line, status 2 (not CLI11's own 1xx codes).
    std::fprintf(stderr, "%s: %s (see %s --help)\n", tool_.c_str(), e.what(), tool_.c_str());
    return exit_usage;
  }
  set_log_level(log_level_);
  return std::nullopt;
}

int ToolSetup::usage_error(const std::string& reason) const {
  std::fprintf(stderr, "%s: %s\n", tool_.c_str(), reason.c_str());
  return exit_usage;
}

namespace {

CLI::Validator bound(double min, bool inclusive) {
  return CLI::Validator(
      [min, inclusive](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return fmt::format("'{}' is not a number", text);
        if (inclusive ? v >= min : v > min) return "";
        return fmt::format("{} must be {} {}", text, inclusive ? "at least" : "more than", min);
      },
      fmt::format("NUMBER {} {}", inclusive ? ">=" : ">", min));
}

}  // namespace

CLI::Validator at_least(double min) { return bound(min, true); }
CLI::Validator more_than(double min) { return bound(min, false); }

void DecoderOptions::add_to(CLI::App& app) {
  app.add_option("--backend", backend_, "decoder: own, cuda (own with GPU reconstruction required) or openjpeg")
      ->check(CLI::IsMember({"own", "cuda", "openjpeg"}))
      ->capture_default_str();
  app.add_option("--gpu", gpu_, "own decoder's reconstruction on the GPU: on, off or auto (GPU when usable)")
      ->check(CLI::IsMember({"on", "off", "auto"}))
      ->capture_default_str();
  app.add_option("--tier1", tier1_, "code-block decoding: cpu, gpu (needs the GPU) or auto (GPU where usable, else CPU)")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}))
      ->capture_default_str();
  app.add_option("--tier1-host", tier1_host_,
                 "with tier-1 on the GPU, the N heaviest code-blocks of each frame decoded on the CPU meanwhile "
                 "(-1: N chosen per frame by a cost model; 0: all on the GPU)")
      ->check(CLI::Range(-1L, 1L << 30))
      ->capture_default_str();
}

Result<app::DecoderChoice> DecoderOptions::resolve() const {
  auto choice = app::parse_decoder_choice(backend_, gpu_, tier1_);
  if (choice) choice->tier1_host_blocks = tier1_host_;
  return choice;
}

std::string unreadable_capture(const std::string& file, bool is_capture) {
  if (!is_capture) return "";
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return fmt::format("capture '{}' does not exist", file);
  if (std::filesystem::is_directory(file, ec)) return fmt::format("capture '{}' is a directory, not a capture file", file);
  if (!std::ifstream(file, std::ios::binary)) return fmt::format("capture '{}' cannot be read (permissions?)", file);
  return "";
}

}  // namespace j2k::cli
