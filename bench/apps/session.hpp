#pragma once
// One run of a bench: the sweep over sizes and placements, in the groups of a --split, with
// results collected on world rank 0, printed and written after every size.
#include <functional>
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
#include "ccbench/run_plan.hpp"
#include "ccbench/runner.hpp"
#include "ccbench/table_printer.hpp"
#include "ccbench/topo/peak.hpp"
#include "ccbench/topo/topology.hpp"
#include "hang_guard.hpp"
#include "result_sinks.hpp"

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

/// Collective: this rank's membership among `groups` (a round of --all-pairs), its backend connected.
using JoinRound = std::function<Membership(const std::vector<GroupPlan>& groups)>;

class Session {
 public:
  /// `guard` watches every op and the gathering of results; on world rank 0 the session records
  /// a hang in the result file through it. `membership` is this rank's part in the first round;
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
  /// --nccl-variants: new communicators with NCCL_ALGO=Ring, and the sweep again (variant "ring").
  bool sweep_ring_variant();
  [[nodiscard]] bool is_writer() const { return m_world.rank() == 0; }
  [[nodiscard]] std::FILE* table_stream() const { return m_in.result_path == "-" ? stderr : stdout; }
  [[nodiscard]] TableHeader table_header(const std::map<std::string, std::string>& versions, const std::string& backend,
                                         const std::string& clock) const;
  [[nodiscard]] CaseResult base_result(const GroupPlan& group, std::uint64_t size, bool in_place) const;
  std::string measure_mine(Runner& runner, std::uint64_t size, bool in_place);
  /// Collective over this rank's group: why a case's buffers would not fit the memory of some
  /// rank's host or GPU (headroom kept); unset when they fit everywhere.
  std::optional<std::string> memory_refusal(const CaseSpec& spec);
  std::vector<CaseResult> collect(const std::string& mine);
  void start_document(const std::map<std::string, std::string>& versions);
  void record(CaseResult& result);
  /// Each group's bottleneck link from the topology and the spec database (world rank 0).
  void plan_peaks();
  /// Marks the case in progress timed out for every group the hang involves, and writes.
  void record_hang(const Hang& hang);
  /// Lets the hang guard abandon the current backend (see HangGuard::set_abandon).
  void watch_backend();
  /// Replaces this rank's membership (a round of --all-pairs, the ring variant): the old one goes first.
  void rejoin(const std::vector<GroupPlan>& groups);
  /// One event to every sink, in order: those that read the document under m_doc_mutex, then the others
  /// outside it (world rank 0; the sinks are made before the first case, and never change after).
  template <typename Event>
  void emit(const Event& event) {
    {
      const std::lock_guard lock(m_doc_mutex);
      if (m_closed) {
        return;  // a hang is recorded: nothing is written after it
      }
      for (const auto& sink : m_sinks) {
        if (sink->reads_document()) {
          event(*sink);
        }
      }
    }
    for (const auto& sink : m_sinks) {
      if (!sink->reads_document()) {
        event(*sink);
      }
    }
  }

  SessionInputs m_in;
  std::vector<GroupPlan> m_groups;  // every group of every round of the plan
  const CollectiveInfo& m_coll;
  Group& m_world;
  Membership m_member;
  HangGuard& m_guard;
  JoinRound m_join_round;
  std::size_t m_round = 0;          // the round being measured (its groups: current_groups())
  std::size_t m_sizes_started = 0;  // over every round: where the test hooks act
  std::string m_variant;            // --nccl-variants: "configured", then "ring"; empty otherwise
  [[nodiscard]] const std::vector<GroupPlan>& current_groups() const { return m_in.plan.rounds[m_round]; }
  std::mutex m_doc_mutex;  // m_doc, m_position, m_facts: a hang is recorded from another thread
  ResultDocument m_doc;
  struct Position {
    std::uint64_t size = 0;
    bool in_place = false;
    std::vector<std::string> timed_out;  // groups already recorded as timed out here
  };
  std::optional<Position> m_position;  // the case every group is measuring
  bool m_closed = false;               // a hang was recorded: the document is final
  BackendFacts m_facts;
  std::vector<std::unique_ptr<ResultSink>> m_sinks;  // world rank 0: the JSON file, the table
  std::map<std::string, topo::Peak> m_peaks;         // by group id
};

}  // namespace ccbench
