#pragma once
#include <string>
#include <utility>
#include <vector>

namespace ccbench {

/// A host of the job and the world ranks on it, in local-rank order.
struct HostInfo {
  HostInfo() = default;
  HostInfo(std::string name, std::vector<int> on, std::string identity = {})
      : hostname(std::move(name)), ranks(std::move(on)), machine(std::move(identity)) {}
  std::string hostname;
  std::vector<int> ranks;
  std::string machine;  // machine_identity() of the host (environment.hpp); "" when unknown (results before 1.11.0)
};

}  // namespace ccbench
