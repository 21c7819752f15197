#include "core/cpus.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "on_one_cpu.hpp"

namespace j2k {
namespace {

TEST(UsableCpus, FollowTheAffinityMask) {
  // As under `taskset -c N` or a container's CPU set: the machine may have more online.
  const int all = usable_cpus();
  EXPECT_GE(all, 1);
  EXPECT_LE(all, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  {
    test::OnOneCpu pinned;
    ASSERT_TRUE(pinned.narrowed());
    EXPECT_EQ(usable_cpus(), 1);
  }
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
