#pragma once
// How much host memory a run may still take: the kernel's MemAvailable, lowered to what this
// process's memory cgroup (v2 or v1) still allows. A size whose buffers would not fit is skipped
// with the reason before anything is allocated, instead of a bad_alloc or the OOM killer.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ccbench {

/// MemAvailable of /proc/meminfo's text, in bytes; unset when absent.
std::optional<std::uint64_t> meminfo_available(std::string_view meminfo);

/// What a cgroup's limit and usage files (v2 memory.max / memory.current, v1 memory.limit_in_bytes /
/// memory.usage_in_bytes) leave, in bytes; unset when there is no limit ("max", or v1's near-2^63).
/// `reclaimable` (the cgroup's inactive page cache) is not counted as held: usage includes the page
/// cache, which the kernel takes back before it would fail an allocation.
std::optional<std::uint64_t> cgroup_room(std::string_view limit, std::string_view usage, std::uint64_t reclaimable = 0);

/// The value of `key` in a cgroup's memory.stat text ("key value" lines); unset when absent.
std::optional<std::uint64_t> memory_stat_value(std::string_view stat, std::string_view key);

/// The files of one cgroup hierarchy's memory controller (v2 or v1).
struct CgroupFiles {
  const char* limit;        // memory.max | memory.limit_in_bytes
  const char* usage;        // memory.current | memory.usage_in_bytes
  const char* reclaimable;  // memory.stat's inactive_file | total_inactive_file
};

/// The least room any cgroup from `root + path` up to `root` leaves (a limit often sits on a
/// parent: a Slurm job's or a container's, above the task's own cgroup); unset when none has a limit.
std::optional<std::uint64_t> cgroup_hierarchy_room(const std::string& root, std::string_view path,
                                                   const CgroupFiles& files);

struct HostMemory {
  std::uint64_t available_bytes = 0;
  std::string basis;  // "MemAvailable" or "the memory cgroup's limit (memory.max)"
};

/// This host's memory that a process may still take, from /proc and /sys/fs/cgroup; unset when
/// neither says.
std::optional<HostMemory> host_memory_available();

}  // namespace ccbench
