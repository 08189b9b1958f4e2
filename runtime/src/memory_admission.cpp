#include "ccbench/memory_admission.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace ccbench {

namespace {

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / static_cast<double>(1ULL << 30)); }

}  // namespace

// Two reductions: the worst ratio of need to room, then the numbers of the rank that has it.
std::optional<std::string> memory_refusal(Group& group, const MemoryNeed& need, int ranks_on_host,
                                          const std::function<std::optional<HostMemory>()>& host_room) {
  const double host_need = static_cast<double>(need.host_bytes) * static_cast<double>(ranks_on_host);
  const std::optional<HostMemory> host = need.host_bytes > 0 ? host_room() : std::nullopt;
  const double host_usable = host ? kMemoryHeadroom * static_cast<double>(host->available_bytes) : 0.0;
  const double device_usable = kMemoryHeadroom * static_cast<double>(need.device_free_bytes);
  const auto device_need = static_cast<double>(need.device_bytes);
  std::array<double, 2> ratio{host && host_need > 0.0 ? host_need / std::max(host_usable, 1.0) : 0.0,
                              device_need > 0.0 ? device_need / std::max(device_usable, 1.0) : 0.0};
  const std::array<double, 2> mine = ratio;
  group.max_all(ratio);
  if (ratio[0] <= 1.0 && ratio[1] <= 1.0) {
    return std::nullopt;
  }
  const bool host_short = ratio[0] > 1.0;
  const bool worst = mine[host_short ? 0 : 1] == ratio[host_short ? 0 : 1];
  std::array<double, 3> numbers{worst ? (host_short ? host_need : device_need) : 0.0,
                                worst ? (host_short ? host_usable : device_usable) / kMemoryHeadroom : 0.0,
                                worst ? static_cast<double>(ranks_on_host) : 0.0};
  group.max_all(numbers);
  if (host_short) {
    return fmt::format(
        "needs {} of host memory ({} per rank x {} rank(s) on a host) where {} is available "
        "({}, {:.0f}% usable): skipped before allocating",
        gib(numbers[0]), gib(numbers[0] / std::max(numbers[2], 1.0)), numbers[2], gib(numbers[1]),
        host ? host->basis : std::string{"MemAvailable"}, kMemoryHeadroom * 100);
  }
  return fmt::format(
      "needs {} more of GPU memory where {} is free (cudaMemGetInfo, {:.0f}% usable): skipped before "
      "allocating",
      gib(numbers[0]), gib(numbers[1]), kMemoryHeadroom * 100);
}

}  // namespace ccbench
