#include "core/cpus.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <thread>

namespace j2k {
namespace {

/// Runs `body` with this thread's affinity narrowed to its current CPU, then restores it.
template <typename F>
void on_one_cpu(F&& body) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  const int here = sched_getcpu();
  ASSERT_GE(here, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(here, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  body();
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
}

TEST(UsableCpus, FollowTheAffinityMask) {
  // As under `taskset -c N` or a container's CPU set: the machine may have more online.
  const int all = usable_cpus();
  EXPECT_GE(all, 1);
  EXPECT_LE(all, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  on_one_cpu([] { EXPECT_EQ(usable_cpus(), 1); });
  EXPECT_EQ(usable_cpus(), all);
}

TEST(UsableCpus, CgroupV2Quota) {
  EXPECT_EQ(cpus_of_cgroup_cpu_max("400000 100000\n"), 4);
  EXPECT_EQ(cpus_of_cgroup_cpu_max("150000 100000"), 2);  // 1.5 CPUs: two threads
  EXPECT_EQ(cpus_of_cgroup_cpu_max("1000 100000"), 1);    // a sliver: still one
  EXPECT_EQ(cpus_of_cgroup_cpu_max("max 100000\n"), std::nullopt);
  EXPECT_EQ(cpus_of_cgroup_cpu_max(""), std::nullopt);
  EXPECT_EQ(cpus_of_cgroup_cpu_max("400000"), std::nullopt);
  EXPECT_EQ(cpus_of_cgroup_cpu_max("400000 0"), std::nullopt);
  EXPECT_EQ(cpus_of_cgroup_cpu_max("-5 100000"), std::nullopt);
  EXPECT_EQ(cpus_of_cgroup_cpu_max("4e5 100000"), std::nullopt);
  EXPECT_EQ(cpus_of_cgroup_cpu_max("99999999999999999999999 1"), std::nullopt);
  EXPECT_EQ(cpus_of_cgroup_cpu_max("9000000000000 1"), 1 << 16);  // clamped
}

TEST(UsableCpus, CgroupV1Quota) {
  EXPECT_EQ(cpus_of_cfs_quota("200000\n", "100000\n"), 2);
  EXPECT_EQ(cpus_of_cfs_quota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(cpus_of_cfs_quota("", ""), std::nullopt);
  EXPECT_EQ(cpus_of_cfs_quota("50000", "100000"), 1);
}

}  // namespace
}  // namespace j2k
