#pragma once
// Run configuration: parsed once from the command line into a value, validated in one
// function that returns every error, then passed down (no globals).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/groups.hpp"
#include "ccbench/registration.hpp"
#include "ccbench/types.hpp"

namespace ccbench {

struct Traffic;  // traffic.hpp

enum class BackendChoice { Auto, Mpi, Nccl, Verbs };
/// batch: k ops enqueued back to back per sample; per_op: one op per sample; graph: k ops captured
/// once into a CUDA graph, one graph launch per sample (launch overhead out, as nccl-tests -G).
enum class TimingMode { Batch, PerOp, Graph };
enum class Placement { OutOfPlace, InPlace, Both };
/// --bind: none leaves the launcher's binding alone; auto binds each rank near its memory (binding.hpp).
enum class BindPolicy { None, Auto };
/// --timeout when not given: seconds any op (and set-up) may take.
inline constexpr double kDefaultTimeoutS = 300.0;

std::string_view name(BackendChoice choice);
std::string_view name(TimingMode mode);
std::optional<TimingMode> parse_timing_mode(std::string_view text);

/// ib_write_bw / ib_write_lat (the verbs backend): names and defaults after perftest's.
struct RdmaOptions {
  std::string device;              // -d: empty = the first device whose port is ACTIVE
  int ib_port = 1;                 // -i
  std::optional<int> gid_index;    // -x: unset = RoCE v2 with an IPv4 address, else v2, else v1; IB: LID only
  std::optional<int> mtu;          // -m: 256..4096; unset = the smaller active MTU of the two ports
  int tx_depth = 128;              // -t: writes in flight per QP (bw); ib_write_lat keeps one
  int qps = 1;                     // -q: QPs per pair, writes spread over them round robin
  int cq_mod = 100;                // -Q: one signalled completion every this many writes (bw)
  std::optional<int> inline_size;  // -I: unset = 0 for bw, 220 for lat (perftest's); up to what the device allows
  bool bidir = false;              // --bidirectional: both ranks of a pair write (bw)
  std::string mem = "host";        // --mem host | cuda:N
  bool gbits = false;              // --report-gbits: the table in Gb/s (the JSON stays GB/s)
  bool server = false;             // --server: standalone, wait for one --connect peer over TCP (no MPI)
  std::string connect;             // --connect HOST: standalone, the other side of a --server
  int tcp_port = 18515;            // -p: the standalone mode's TCP port (perftest's default)
};

struct RunConfig {
  Collective collective = Collective::AllReduce;
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = std::uint64_t{32} << 20;
  double step_factor = 4.0;
  std::optional<std::uint64_t> iters;  // fixed samples per size; unset = adaptive stopping
  std::uint64_t warmup_iters = 5;
  std::optional<std::uint64_t> batch_ops;  // ops per sample in batch mode; unset = calibrated
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  bool check = false;
  BackendChoice backend = BackendChoice::Auto;
  TimingMode timing = TimingMode::Batch;
  Placement placement = Placement::Both;
  Split split = Split::World;
  bool all_pairs = false;   // --all-pairs: every pair of hosts (of ranks, on one host), in rounds of disjoint pairs
  int hosts_per_group = 0;  // --hosts-per-group K: groups of K hosts side by side; 0: off
  BindPolicy bind = BindPolicy::None;
  double target_ci = 0.01;              // relative half-width of the median's 95% CI
  std::optional<double> time_budget_s;  // per size and placement, after warm-up; unset: auto (see SamplingPolicy)
  std::uint64_t min_samples = 10;
  std::uint64_t max_samples = 100000;
  double timeout_s = kDefaultTimeoutS;
  std::string out_path;  // empty: results/<bench>-<host>-<UTC>.json; "-": stdout
  std::string label;
  bool keep_samples = false;
  bool per_rank = false;         // --per-rank: keep each rank's own per-sample times (the straggler view)
  bool check_args_only = false;  // --check-args: the options are checked (as by any run) and nothing runs
  std::optional<double> peak_GBps;
  bool nccl_variants = false;  // --nccl-variants: the sweep as configured, then again with NCCL_ALGO=Ring
  Registration registration = Registration::None;
  std::shared_ptr<const Traffic> traffic;  // alltoallv_bench: its spread or matrix (traffic.hpp); null otherwise  //
                                           // -R: NCCL buffers registered (1) or symmetric windows (2)
  RdmaOptions rdma;                        // ib_write_bw / ib_write_lat only
  std::vector<std::string> argv;
};

/// Every problem with a config, each one line that says how to fix it. Empty when valid.
std::vector<std::string> validate(const RunConfig& config);

/// --timeout's rule, the same in every bench: positive seconds, at most FlagLimits::kMaxTimeoutS. The line that
/// refuses `seconds`, or nothing.
std::optional<std::string> timeout_error(double seconds);

/// "8", "4K", "1M", "2G" (binary: 1K = 1024). Nullopt on anything else.
std::optional<std::uint64_t> parse_bytes(std::string_view text);

/// The sizes of a sweep: min, min*f, ... while <= max (max itself included when reached), each
/// rounded down to whole elements of `element_bytes` (a size below one element stays, to be skipped
/// with that reason), a size that rounding repeats taken once.
std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor,
                                       std::uint64_t element_bytes = 1);

/// How many sizes min, min*f, ... <= max are, before rounding (huge for a factor near 1).
std::size_t sweep_length(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor);

/// The ranges validate() holds numeric flags to (README, "Flags"): samples are kept in memory, and
/// a time past these is a typo, not a plan.
struct FlagLimits {
  static constexpr std::uint64_t kMaxCount = 1'000'000;  // -n, -w, --batch, --graph, --max-samples
  static constexpr double kMaxTimeBudgetS = 3600.0;
  static constexpr double kMaxTimeoutS = 86400.0;
  static constexpr std::size_t kMaxSizes = 1000;          // sizes in one sweep (-b, -e, -f)
  static constexpr std::uint64_t kMaxBytes = 1ULL << 50;  // -b, -e: 1024T, far past any GPU or host
  static constexpr double kMinPeakGBps = 1e-3;
  static constexpr double kMaxPeakGBps = 1e6;
};

}  // namespace ccbench
