#pragma once
// Admission of a case by memory: a size whose buffers would not fit some rank's host or GPU is
// skipped with the reason, agreed across the group, before anything is allocated.
#include <functional>
#include <optional>
#include <string>

#include "ccbench/backend.hpp"
#include "ccbench/group.hpp"
#include "ccbench/host_memory.hpp"

namespace ccbench {

/// Of what is available, the share a case may take: the library, the runtime, the rest of the host keep the rest.
inline constexpr double kMemoryHeadroom = 0.9;

/// Collective over `group` (two reductions, so every rank returns the same answer): why this case's
/// `need` would not fit the memory of some rank's host or GPU, with the numbers of the rank that is
/// shortest; unset when it fits everywhere. A host's need counts its `ranks_on_host` (they run the same
/// sizes side by side). `host_room` says what the host has left (asked only when host memory is needed).
std::optional<std::string> memory_refusal(
    Group& group, const MemoryNeed& need, int ranks_on_host,
    const std::function<std::optional<HostMemory>()>& host_room = host_memory_available);

}  // namespace ccbench
