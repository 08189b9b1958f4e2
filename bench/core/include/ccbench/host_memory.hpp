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
std::optional<std::uint64_t> cgroup_room(std::string_view limit, std::string_view usage);

struct HostMemory {
  std::uint64_t available_bytes = 0;
  std::string basis;  // "MemAvailable" or "the memory cgroup's limit (memory.max)"
};

/// This host's memory that a process may still take, from /proc and /sys/fs/cgroup; unset when
/// neither says.
std::optional<HostMemory> host_memory_available();

}  // namespace ccbench
