#pragma once
// One run of a bench: the sweep over sizes and placements, in the groups of a --split, with
// results collected on world rank 0 and handed to its recorder (which prints and writes them after
// every size). The session coordinates: the policies are elsewhere (the plan, the sampling, memory
// admission, the peaks of the spec layer, the table header, the recorder and its sinks).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/backend.hpp"
#include "ccbench/config.hpp"
#include "ccbench/groups.hpp"
#include "ccbench/mpi/mpi_group.hpp"
#include "ccbench/result.hpp"
#include "ccbench/run_plan.hpp"
#include "ccbench/runner.hpp"
#include "ccbench/table_printer.hpp"
#include "ccbench/topo/peak.hpp"
#include "ccbench/topo/topology.hpp"
#include "hang_guard.hpp"
#include "run_recorder.hpp"

namespace ccbench {

/// This rank's part in the split: its group and the backend over it (both null when it idles).
struct Membership {
  const GroupPlan* plan = nullptr;
  std::unique_ptr<Group> owned;  // the group's communicator, when the membership made one (MPI)
  Group* group = nullptr;        // the group: owned, or the world itself (the standalone RDMA pair)
  std::unique_ptr<Backend> backend;
};

struct SessionInputs {
  RunConfig config;
  std::vector<HostInfo> hosts;
  RunPlan plan;                                  // rounds of groups, variants, sizes, placements
  std::string result_path;                       // "-" for stdout; only world rank 0 writes
  std::vector<topo::HostTopology> topology;      // one per host
  std::vector<topo::RankPlace> places;           // one per world rank
  std::vector<BindingRecord> binding;            // one per world rank: what --bind did, read back
  std::map<std::string, std::string> variables;  // world rank 0's communication variables, before --bind
  std::string backend_choice;                    // --backend auto: which backend it chose and why; else empty
};

/// Collective: this rank's membership among `groups` (a round of --all-pairs), its backend connected, for
/// the plan's `variant` ("ring" of --nccl-variants: the backend makes its communicators ring).
using JoinRound = std::function<Membership(const std::vector<GroupPlan>& groups, const std::string& variant)>;

class Session {
 public:
  /// `guard` watches every op and the gathering of results; on world rank 0 it records a hang through the
  /// session's recorder. `membership` is this rank's part in the first round;
  /// `join_round` makes it for each later round (rounds after the first need it).
  Session(SessionInputs inputs, Group& world, Membership membership, HangGuard& guard, JoinRound join_round = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;
  ~Session();

  /// Collective over the world. Returns the exit code (1 when any case failed verification).
  int run();

 private:
  struct BackendFacts {
    std::map<std::string, std::string> versions;
    std::string backend;
    std::string clock;
  };
  BackendFacts backend_facts();
  bool sweep();
  /// --nccl-variants: new communicators for variant "ring", and the sweep again.
  bool sweep_ring_variant();
  [[nodiscard]] bool is_writer() const { return m_world.rank() == 0; }
  [[nodiscard]] std::FILE* table_stream() const { return m_in.result_path == "-" ? stderr : stdout; }
  [[nodiscard]] TableHeader table_header(const std::map<std::string, std::string>& versions, const std::string& backend,
                                         const std::string& clock) const;
  /// Every result starts here: the case, its group, and the group's planned peak (the one place a result is
  /// built; the measurement or a hang's verdict is added to it).
  [[nodiscard]] CaseResult base_result(const GroupPlan& group, std::uint64_t size, bool in_place) const;
  std::string measure_mine(Runner& runner, std::uint64_t size, bool in_place);
  std::vector<CaseResult> collect(const std::string& mine, std::uint64_t size, bool in_place);
  [[nodiscard]] ResultDocument start_document(const std::map<std::string, std::string>& versions) const;
  /// Each group's bottleneck link from the topology and the spec database (every rank, before the first case).
  void plan_peaks();
  /// Lets the hang guard abandon the current backend (see HangGuard::set_abandon); an RDMA pair's peak,
  /// from its ports, once it is connected.
  void watch_backend();
  /// The first rank of each host reads its counters before the first case (fabric_after: after the last).
  void fabric_before();
  /// Collective over the world: each host's counter deltas and links, gathered into the recorder's document.
  void fabric_after();
  /// Replaces this rank's membership (a round of --all-pairs, the ring variant): the old one goes first.
  void rejoin(const std::vector<GroupPlan>& groups);
  /// Backend::expect with every case of the sweep (collective over this rank's group).
  void expect_sweep();

  SessionInputs m_in;
  std::vector<GroupPlan> m_groups;  // every group of every round of the plan
  const CollectiveInfo& m_coll;
  Group& m_world;
  Membership m_member;
  HangGuard& m_guard;
  JoinRound m_join_round;
  std::size_t m_round = 0;          // the round being measured (its groups: current_groups())
  std::size_t m_sizes_started = 0;  // over every round: where the test hooks act
  // What base_result reads (the recorder calls it from the hang guard's thread) changes only between cases.
  std::string m_variant;  // --nccl-variants: "configured", then "ring"; empty otherwise
  [[nodiscard]] const std::vector<GroupPlan>& current_groups() const { return m_in.plan.rounds[m_round]; }
  BackendFacts m_facts;
  std::map<std::string, topo::Peak> m_peaks;  // by group id, from the topology (not for RDMA pairs)
  std::optional<topo::Peak> m_pair_peak;      // an RDMA pair's, from its ports (this rank's group)
  std::optional<CounterSnapshot> m_counters;  // this host's, before the first case (its first rank only)
  RunRecorder m_recorder;                     // world rank 0's: the document and its sinks
};

}  // namespace ccbench
