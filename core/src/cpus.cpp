#include "core/cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace j2k {
namespace {

/// A whole non-negative decimal number, spaces around it allowed; nullopt otherwise.
std::optional<long long> whole_number(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::optional<int> quota_cpus(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  const long long cpus = (quota + period - 1) / period;
  return static_cast<int>(std::clamp<long long>(cpus, 1, 1 << 16));
}

std::string read_small_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) return {};
  std::string text(256, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(f.gcount()));
  return text;
}

/// This process's cgroup v2 path ("0::/PATH" in /proc/self/cgroup), or "" if none.
std::string cgroup_v2_path() {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return {};
}

std::optional<int> cgroup_limit() {
  // v2: the process's own cgroup first, then the root a container sees as its own.
  const std::string own = cgroup_v2_path();
  for (const std::string& dir : {own.empty() || own == "/" ? std::string() : "/sys/fs/cgroup" + own, std::string("/sys/fs/cgroup")}) {
    if (dir.empty()) continue;
    const std::string text = read_small_file(dir + "/cpu.max");
    if (!text.empty()) return cpus_of_cgroup_cpu_max(text);
  }
  return cpus_of_cfs_quota(read_small_file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
                           read_small_file("/sys/fs/cgroup/cpu/cpu.cfs_period_us"));
}

}  // namespace

std::optional<int> cpus_of_cgroup_cpu_max(std::string_view text) {
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto quota = whole_number(text.substr(0, space));  // "max" is no limit: nullopt
  const auto period = whole_number(text.substr(space + 1));
  if (!quota || !period) return std::nullopt;
  return quota_cpus(*quota, *period);
}

std::optional<int> cpus_of_cfs_quota(std::string_view quota_us, std::string_view period_us) {
  const auto quota = whole_number(quota_us);  // -1 (no limit) is not a whole number here
  const auto period = whole_number(period_us);
  if (!quota || !period) return std::nullopt;
  return quota_cpus(*quota, *period);
}

int usable_cpus() {
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int in_mask = CPU_COUNT(&set);
    if (in_mask > 0) cpus = in_mask;
  }
  if (const auto limit = cgroup_limit()) cpus = std::min(cpus, *limit);
  return std::max(1, cpus);
}

}  // namespace j2k
