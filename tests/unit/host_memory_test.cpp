#include "ccbench/host_memory.hpp"

#include <gtest/gtest.h>

namespace ccbench {
namespace {

TEST(HostMemory, MemAvailableInBytes) {
  EXPECT_EQ(meminfo_available("MemTotal:       24575104 kB\nMemFree:  100 kB\nMemAvailable:   24194820 kB\n"),
            24194820ULL * 1024);
  EXPECT_FALSE(meminfo_available("MemTotal: 1 kB\n"));
  EXPECT_FALSE(meminfo_available("MemAvailable: lots kB\n"));
}

TEST(HostMemory, CgroupRoomOrNoLimit) {
  EXPECT_EQ(cgroup_room("8589934592\n", "1073741824\n"), 7516192768ULL);  // v2: 8 GiB limit, 1 GiB used
  EXPECT_EQ(cgroup_room("1000\n", "2000\n"), 0U);                         // over the limit already
  EXPECT_FALSE(cgroup_room("max\n", "1073741824\n"));                     // v2: no limit
  EXPECT_FALSE(cgroup_room("9223372036854771712\n", "5\n"));              // v1: no limit
  EXPECT_FALSE(cgroup_room("", "5"));
}

TEST(HostMemory, ThisHostSaysSomething) {
  const auto mem = host_memory_available();
  ASSERT_TRUE(mem);  // Linux has /proc/meminfo
  EXPECT_GT(mem->available_bytes, 0U);
  EXPECT_FALSE(mem->basis.empty());
}

}  // namespace
}  // namespace ccbench
