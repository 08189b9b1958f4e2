#pragma once
// The result document (DESIGN §5) as plain values. Times are seconds, rates GB/s (1e9 B/s).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/case_spec.hpp"
#include "ccbench/config.hpp"
#include "ccbench/fabric.hpp"
#include "ccbench/host_info.hpp"
#include "ccbench/rank_times.hpp"
#include "ccbench/rdma_info.hpp"
#include "ccbench/statistics.hpp"

namespace ccbench {

inline constexpr std::string_view kSchemaName = "ccbench.result";
// 1.1: group_id, group_ranks, group_hosts, topology; 1.2: environment.binding;
// 1.3: ib_write_bw / ib_write_lat (backend verbs, rdma, bw_peak_GBps), time.p999_us;
// 1.4: copy_bench (op copy, backend cuda, group copy), timing graph; 1.5: --nccl-variants;
// 1.6: a null median CI below 6 samples, rdma.run_bw_GBps, stop_reason noise_floor;
// 1.7: group kind hosts (--hosts-per-group); 1.8: fabric (each host's counters and links); 1.9: per_rank;
// 1.10: run.source (a run imported from another tool's logs by ccbench-report import)
inline constexpr std::string_view kSchemaVersion = "1.11.0";

enum class CaseStatus { Ok, Failed, Skipped, TimedOut };
/// NoiseFloor: the median's interval would not reach the target within the time budget.
enum class StopReason { FixedIters, TargetCi, TimeBudget, MaxSamples, NoiseFloor };

std::string_view name(CaseStatus status);
std::string_view name(StopReason reason);

/// One measured (or skipped) case: a size, a placement, a group of ranks.
struct CaseResult {
  std::string benchmark;  // allreduce_bench
  std::string backend;    // mpi | nccl
  TimingMode timing = TimingMode::Batch;
  std::string clock;  // "host steady_clock", "CUDA events"
  CaseSpec spec;
  int ranks = 0;
  int nodes = 0;
  std::string group = "world";     // kind: world, node, cross-node, rail, pair
  std::string group_id = "world";  // node:host1, rail:3, pair:4-5, ...
  std::vector<int> group_ranks;    // world ranks of the group, in group rank order
  std::vector<std::string> group_hosts;
  std::uint64_t size_bytes = 0;  // S, the bytes algbw counts
  std::uint64_t ops_per_sample = 0;
  std::optional<StopReason> stop_reason;
  std::optional<Summary> time;    // seconds per op, MAX across ranks per sample
  std::vector<double> samples_s;  // kept with --samples
  double bus_factor = 0.0;
  double algbw_GBps = 0.0;       // from the median
  double busbw_GBps = 0.0;       // from the median
  double busbw_mean_GBps = 0.0;  // from the mean, as nccl-tests computes it
  std::optional<double> peak_GBps;
  std::optional<double> pct_of_peak;
  std::string peak_basis;
  std::optional<std::uint64_t> wrong_elements;  // unset when not checked
  CaseStatus status = CaseStatus::Ok;
  std::string reason;
  double elapsed_s = 0.0;
  std::optional<RdmaInfo> rdma;        // ib_write_*: the pair and its settings (schema 1.3)
  std::optional<double> bw_peak_GBps;  // ib_write_bw: S over the fastest sample, perftest's "BW peak"
  std::string variant;                 // --nccl-variants: "configured" or "ring"; empty otherwise (schema 1.5)
  std::vector<RankTimes> per_rank;     // --per-rank: each rank's own times, in group rank order (schema 1.9)
  std::string registration;            // -R 1 / 2 (NCCL): "local" or "symmetric" as NCCL granted it on every rank
                                       // (a null handle or window: none); empty otherwise (schema 1.10)
};

/// Where an imported run's numbers come from (ccbench-report import, schema 1.10): another tool's logs.
struct RunSource {
  std::string tool;                // "nccl-tests", "perftest"
  std::string version;             // the tool's version as its log names it; "" when it does not
  std::string format;              // "text", "json"
  std::vector<std::string> files;  // the logs, as given to the importer
  std::vector<std::string> notes;  // what the importer took that the logs do not say (ranks, peak, time)
};

struct RunInfo {
  std::string id;
  std::string started_utc;
  std::string ended_utc;
  std::vector<std::string> argv;
  std::string tool_version;
  std::string git_revision;
  std::string label;
  std::string benchmark;
  std::optional<RunSource> source;  // 1.10: set when imported from another tool's logs
};

/// What --bind did for one rank, as read back from the kernel once set-up was done (schema 1.2).
struct BindingRecord {
  int rank = 0;
  std::string host;
  BindPolicy policy = BindPolicy::None;
  bool applied = false;                    // the CPU affinity was set by --bind auto
  std::optional<int> numa_node;            // auto: the node bound to; none: the node holding every CPU of the affinity
  std::string cpus;                        // the affinity in force, in the kernel's cpulist format ("0-15,32-47")
  std::string memory = "unchanged";        // "preferred node 0" (read back), or "unchanged"
  std::optional<std::string> gpu;          // the rank's GPU (PCI bus id); null for host memory
  std::optional<std::string> nic;          // the NIC nearest the rank's memory
  std::optional<std::string> nic_applied;  // null: --bind sets no NIC variable (older files: "NCCL_IB_HCA==mlx5_0")
  std::string note;                        // why something was not applied, or what to know
};

struct EnvironmentInfo {
  std::vector<HostInfo> hosts;
  std::vector<BindingRecord> binding;            // one per world rank; empty in documents before 1.2
  std::map<std::string, std::string> libraries;  // {"mpi": "Open MPI v4.1.4", "nccl": ...}
  std::map<std::string, std::string> variables;  // allow-listed environment variables
};

// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json members; nothing here is noexcept by contract
struct ResultDocument {
  RunInfo run;
  EnvironmentInfo environment;
  nlohmann::json topology;         // what topo/ discovered ({"hosts": [...]}), opaque to core; null if none
  std::vector<HostFabric> fabric;  // 1.8: per host, its counters' deltas and links over the run; empty if none
  std::vector<CaseResult> results;
};

}  // namespace ccbench
