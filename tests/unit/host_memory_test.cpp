#include "ccbench/host_memory.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

TEST(HostMemory, CgroupRoomLeavesOutReclaimablePageCache) {
  constexpr std::uint64_t kGiB = 1ULL << 30;
  // 8 GiB limit, 7.5 GiB used of which 6 GiB is inactive page cache: 1.5 GiB held, 6.5 GiB room.
  EXPECT_EQ(cgroup_room(std::to_string(8 * kGiB), std::to_string(15 * kGiB / 2), 6 * kGiB), 13 * kGiB / 2);
  EXPECT_EQ(cgroup_room("1000", "500", 900), 1000U);  // more reclaimable than used: nothing held
}

TEST(HostMemory, MemoryStatValueByWholeKey) {
  const std::string stat = "anon 5\ntotal_inactive_file 9\ninactive_file 4\nfile 7\n";
  EXPECT_EQ(memory_stat_value(stat, "inactive_file"), 4U);
  EXPECT_EQ(memory_stat_value(stat, "total_inactive_file"), 9U);
  EXPECT_FALSE(memory_stat_value(stat, "inactive_anon"));
  EXPECT_FALSE(memory_stat_value("inactive_file lots\n", "inactive_file"));
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A Slurm-like v2 tree: the limit sits on the job's cgroup; the step's and the task's say "max".
TEST(HostMemory, HierarchyRoomIsTheLeastAlongThePath) {
  constexpr std::uint64_t kGiB = 1ULL << 30;
  const auto root = std::filesystem::temp_directory_path() / ("ccbench-cgroup-" + std::to_string(::getpid()));
  const CgroupFiles v2{"memory.max", "memory.current", "inactive_file"};
  write(root / "job" / "memory.max", std::to_string(4 * kGiB) + "\n");
  write(root / "job" / "memory.current", std::to_string(3 * kGiB) + "\n");
  write(root / "job" / "memory.stat", "anon 1\ninactive_file " + std::to_string(kGiB) + "\n");
  write(root / "job" / "step" / "memory.max", "max\n");
  write(root / "job" / "step" / "memory.current", std::to_string(kGiB) + "\n");
  write(root / "job" / "step" / "task" / "memory.max", std::to_string(10 * kGiB) + "\n");
  write(root / "job" / "step" / "task" / "memory.current", "0\n");
  EXPECT_EQ(cgroup_hierarchy_room(root.string(), "/job/step/task", v2), 2 * kGiB);  // 4 - (3 - 1)
  EXPECT_EQ(cgroup_hierarchy_room(root.string(), "/job/step/gone", v2), 2 * kGiB);  // a missing cgroup is skipped
  EXPECT_FALSE(cgroup_hierarchy_room(root.string(), "/other", v2));                 // no limit on the way up
  std::filesystem::remove_all(root);
}

TEST(HostMemory, ThisHostSaysSomething) {
  const auto mem = host_memory_available();
  ASSERT_TRUE(mem);  // Linux has /proc/meminfo
  EXPECT_GT(mem->available_bytes, 0U);
  EXPECT_FALSE(mem->basis.empty());
}

}  // namespace
}  // namespace ccbench
