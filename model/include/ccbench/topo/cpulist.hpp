#pragma once
// CPU lists in the kernel's cpulist format ("0-55,112-167"), as sysfs and nvidia-smi write them.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::topo {

/// "0-3,8,10-11" -> {0,1,2,3,8,10,11} (sorted, unique); nullopt when malformed. "" -> {}.
std::optional<std::vector<int>> parse_cpulist(std::string_view text);

/// {0,1,2,3,8} -> "0-3,8" (input need not be sorted).
std::string format_cpulist(std::vector<int> cpus);

}  // namespace ccbench::topo
