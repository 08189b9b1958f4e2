#pragma once
// The bench table's header: what the run is, read off its inputs. A pure function beside the table printer
// (model/.../table_printer.hpp prints it), so that the Session only gathers the facts and passes them on.
#include <map>
#include <string>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/config.hpp"
#include "ccbench/groups.hpp"
#include "ccbench/run_plan.hpp"
#include "ccbench/table_printer.hpp"
#include "ccbench/topo/peak.hpp"

namespace ccbench {

/// What the header says, as the run knows it once the backend is up.
struct HeaderFacts {
  const RunConfig& config;
  const CollectiveInfo& coll;
  int ranks = 0;
  int hosts = 0;
  const RunPlan& plan;
  const std::vector<GroupPlan>& groups;            // every group of every round
  const std::map<std::string, topo::Peak>& peaks;  // by group id
  const std::map<std::string, std::string>& versions;
  std::string backend;
  std::string clock;
};

/// The header: title, backend (and why it is not NCCL when auto chose otherwise), ranks and hosts, the groups,
/// the timing and the sampling policy's stopping rule (its own constants), and each group's peak.
TableHeader make_table_header(const HeaderFacts& f);

}  // namespace ccbench
