#pragma once
// One run of a bench: the sweep over sizes and placements, in the groups of a --split, with
// results collected on world rank 0, printed and written after every size.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/backend.hpp"
#include "ccbench/config.hpp"
#include "ccbench/groups.hpp"
#include "ccbench/mpi/mpi_group.hpp"
#include "ccbench/result.hpp"
#include "ccbench/runner.hpp"
#include "ccbench/table_printer.hpp"
#include "ccbench/topo/peak.hpp"
#include "ccbench/topo/topology.hpp"
#include "ccbench/watchdog.hpp"

namespace ccbench {

/// This rank's part in the split: its group and the backend over it (both null when it idles).
struct Membership {
  const GroupPlan* plan = nullptr;
  std::unique_ptr<MpiGroup> group;
  std::unique_ptr<Backend> backend;
};

struct SessionInputs {
  RunConfig config;
  std::vector<HostInfo> hosts;
  std::vector<GroupPlan> groups;
  std::string result_path;                   // "-" for stdout; only world rank 0 writes
  std::vector<topo::HostTopology> topology;  // one per host
  std::vector<topo::RankPlace> places;       // one per world rank
};

class Session {
 public:
  Session(SessionInputs inputs, MpiGroup& world, Membership membership);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;
  ~Session() = default;

  /// Collective over the world. Returns the exit code (1 when any case failed verification).
  int run();

 private:
  struct BackendFacts {
    std::map<std::string, std::string> versions;
    std::string backend;
    std::string clock;
  };
  BackendFacts backend_facts();
  bool sweep(const TablePrinter& printer);
  [[nodiscard]] bool is_writer() const { return m_world.rank() == 0; }
  [[nodiscard]] std::FILE* table_stream() const { return m_in.result_path == "-" ? stderr : stdout; }
  [[nodiscard]] std::vector<bool> placements() const;
  [[nodiscard]] TableHeader table_header(const std::map<std::string, std::string>& versions, const std::string& backend,
                                         const std::string& clock) const;
  [[nodiscard]] CaseResult base_result(std::uint64_t size, bool in_place) const;
  std::string measure_mine(Runner& runner, std::uint64_t size, bool in_place);
  std::vector<CaseResult> collect(const std::string& mine);
  void start_document(const std::map<std::string, std::string>& versions);
  void record(CaseResult& result);
  /// Each group's bottleneck link from the topology and the spec database (world rank 0).
  void plan_peaks();
  void write_document();
  void on_timeout(const std::string& activity, double waited_s);

  SessionInputs m_in;
  const CollectiveInfo& m_coll;
  MpiGroup& m_world;
  Membership m_member;
  std::mutex m_doc_mutex;  // the watchdog thread records a timed-out case
  ResultDocument m_doc;
  std::optional<CaseResult> m_current;
  std::map<std::string, topo::Peak> m_peaks;  // by group id
  Watchdog m_watchdog;
};

}  // namespace ccbench
