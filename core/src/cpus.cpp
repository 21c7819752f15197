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

/// "/a/b" -> "/a" -> "/".
std::string parent_cgroup(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? std::string("/") : path.substr(0, slash);
}

/// The smallest CPU limit from this process's cgroup up to the root: a quota on a parent
/// (a systemd slice's CPUQuota=, a container's delegated sub-cgroup) binds it too.
/// /proc/self/cgroup has "0::/PATH" (cgroup v2) or "N:cpu,cpuacct:/PATH" (v1).
std::optional<int> cgroup_limit() {
  std::optional<int> least;
  const auto take = [&least](std::optional<int> cpus) {
    if (cpus && (!least || *cpus < *least)) least = cpus;
  };
  const auto walk = [](std::string path, const auto& at) {
    for (int depth = 0; depth < 64; ++depth) {  // bounded: a path has few components
      at(path == "/" ? std::string() : path);
      if (path.empty() || path == "/") return;
      path = parent_cgroup(path);
    }
  };
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (controllers.empty()) {
      walk(path, [&](const std::string& dir) { take(cpus_of_cgroup_cpu_max(read_small_file("/sys/fs/cgroup" + dir + "/cpu.max"))); });
      continue;
    }
    std::istringstream list(controllers);
    bool cpu = false;
    for (std::string c; std::getline(list, c, ',');) cpu = cpu || c == "cpu";
    if (!cpu) continue;
    for (const char* mount : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"})
      walk(path, [&](const std::string& dir) {
        take(cpus_of_cfs_quota(read_small_file(mount + dir + "/cpu.cfs_quota_us"),
                               read_small_file(mount + dir + "/cpu.cfs_period_us")));
      });
  }
  return least;
}

}  // namespace

std::optional<int> cpus_of_cfs_quota(std::string_view quota_us, std::string_view period_us) {
  const auto quota = whole_number(quota_us);  // -1 (v1) or "max" (v2), no limit: not a whole number
  const auto period = whole_number(period_us);
  if (!quota || !period) return std::nullopt;
  return quota_cpus(*quota, *period);
}

std::optional<int> cpus_of_cgroup_cpu_max(std::string_view text) {
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  return cpus_of_cfs_quota(text.substr(0, space), text.substr(space + 1));  // the same two numbers
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
