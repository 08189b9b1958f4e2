#pragma once
#include <string>
#include <vector>

namespace ccbench {

/// A host of the job and the world ranks on it, in local-rank order.
struct HostInfo {
  std::string hostname;
  std::vector<int> ranks;
};

}  // namespace ccbench
