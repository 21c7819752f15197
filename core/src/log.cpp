#include "core/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>

namespace j2k {

std::shared_ptr<spdlog::logger> logger(const std::string& module) {
  // spdlog's registry is its own synchronised store; creation races are resolved here.
  static std::mutex creation_mutex;  // guards creation of a logger that does not exist yet
  if (auto existing = spdlog::get(module)) return existing;
  std::lock_guard lock(creation_mutex);
  if (auto existing = spdlog::get(module)) return existing;
  auto log = spdlog::stderr_color_mt(module);
  log->set_pattern("%H:%M:%S.%e %^%-5l%$ [%n] %v");
  log->set_level(spdlog::get_level());
  return log;
}

void set_log_level(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace j2k
