#pragma once
// How many CPUs this process may use: the default for "0 = one thread per core" options.
//
// std::thread::hardware_concurrency() counts the machine's online CPUs. A receiver started
// under `taskset`, in a container with a CPU set (docker --cpuset-cpus) or with a CPU quota
// (docker --cpus, systemd CPUQuota=) has fewer, and one thread per online CPU then runs
// many more threads than it has cores: frames wait on each other's time slices.
#include <optional>
#include <string_view>

namespace j2k {

/// The CPUs of this thread's affinity mask, capped by the smallest CPU quota from its cgroup up
/// to the root (cgroup v2 cpu.max, v1 cpu.cfs_quota_us; rounded up);
/// hardware_concurrency() when neither can be read; at least 1.
int usable_cpus();

/// The CPUs a cgroup v2 `cpu.max` file allows ("QUOTA PERIOD", or "max PERIOD" for no
/// limit): QUOTA / PERIOD rounded up, at least 1; nullopt for no limit or text it cannot read.
std::optional<int> cpus_of_cgroup_cpu_max(std::string_view text);

/// The same for cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us (quota -1: no limit).
std::optional<int> cpus_of_cfs_quota(std::string_view quota_us, std::string_view period_us);

}  // namespace j2k
