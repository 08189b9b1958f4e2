// Command line -> RunConfig. Short flags follow nccl-tests (-b -e -f -n -w -d -o -r -c); the RDMA
// benches' own flags follow perftest (-d -i -x -m -t -q -Q -I -a -s -p).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "ccbench/cli.hpp"
#include "ccbench/common_flags.hpp"
#include "ccbench/config.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/traffic.hpp"
#include "ccbench/version.hpp"

namespace ccbench {
namespace {

// Text values are parsed by us after CLI11, so every error message is ours and one line.
struct RawOptions {
  std::string min_bytes = "8";
  std::string max_bytes = "32M";
  std::string registration = "0";
  // alltoallv_bench: unset flags fall back to nccl-tests' NCCL_TESTS_ALLTOALLV_* variables
  std::optional<double> spread;
  std::string matrix;
  std::optional<double> matrix_scale;
  std::string dtype = "float32";
  std::string op = "sum";
  std::string backend = "auto";
  std::string timing = "batch";
  std::string placement = "both";
  std::string split = "world";
  std::optional<std::int64_t> iters;
  std::int64_t warmup = 5;
  std::optional<std::int64_t> batch;
  std::optional<std::int64_t> graph;
  std::int64_t min_samples = 10;
  std::int64_t max_samples = 100000;
  std::string time_budget = "auto";
  std::int64_t root = 0;
  int check = 0;
  double peak = -1.0;
  // RDMA benches
  std::string size;
  int gid_index = -1;
  int mtu = -1;
  int inline_size = -1;
  bool all_sizes = false;
  bool pairs = false;
  CommonFlags common;  // --check-args, --bind, --timeout: as every bench takes them
};

// ib_write_bw / ib_write_lat: perftest's flags where they do not clash with the suite's (-b, -e, -n and
// -c keep their meaning in every ccbench binary; perftest's -b is --bidirectional here).
void add_rdma_options(CLI::App& app, RawOptions& raw, RunConfig& c) {
  RdmaOptions& r = c.rdma;
  const bool lat = c.collective == Collective::IbWriteLat;
  app.add_option("-a,--all", raw.all_sizes, "every size from 2 B to 8 MiB by powers of 2 (the default sweep)")
      ->expected(0, 1)
      ->default_str("1");
  app.add_option("-s,--size", raw.size, "one size only (like -b SIZE -e SIZE)");
  app.add_option("-d,--ib-dev", r.device, "RDMA device (default: the first whose port is ACTIVE)");
  app.add_option("-i,--ib-port", r.ib_port, "port of the device (default 1)");
  app.add_option("-x,--gid-index", raw.gid_index,
                 "GID index (default: RoCE v2 with an IPv4 address, else v2, else v1; InfiniBand: LID only)");
  app.add_option("-m,--mtu", raw.mtu, "path MTU: 256..4096 (default: the smaller active MTU of the two ports)");
  if (!lat) {
    app.add_option("-t,--tx-depth", r.tx_depth, "RDMA writes in flight per QP (default 128)");
    app.add_option("-q,--qp", r.qps, "QPs per pair; writes go round robin over them (default 1)");
    app.add_option("-Q,--cq-mod", r.cq_mod, "one signalled completion every this many writes (default 100)");
    app.add_flag("--bidirectional,--bidir", r.bidir, "both ranks of a pair write at once (perftest -b)");
  }
  app.add_option("-I,--inline-size", raw.inline_size,
                 fmt::format("max bytes sent inline (default {}, as perftest)", lat ? 220 : 0));
  app.add_flag("--pairs", raw.pairs, "ranks 2k and 2k+1 pair up, all pairs at once (default)");
  app.add_option("--mem", r.mem, "buffer memory: host | cuda:N (default host)");
  app.add_flag("--report-gbits,--report_gbits", r.gbits, "the table's rates in Gb/s (the JSON keeps GB/s)");
  app.add_flag("--server", r.server, "standalone pair without MPI: wait for the --connect side on TCP --port");
  app.add_option("--connect", r.connect, "standalone pair without MPI: connect to the --server on HOST");
  app.add_option("-p,--port", r.tcp_port, "TCP port of the standalone pair (default 18515)");
}

void add_options(CLI::App& app, RawOptions& raw, RunConfig& c) {
  const bool rdma = is_rdma(c.collective);
  app.add_option("-b,--min-bytes", raw.min_bytes,
                 fmt::format("smallest size, bytes; K/M/G are binary (default {})", raw.min_bytes));
  app.add_option("-e,--max-bytes", raw.max_bytes, fmt::format("largest size (default {})", raw.max_bytes));
  app.add_option("-f,--step-factor", c.step_factor,
                 fmt::format("multiply the size by this each step (default {:g})", c.step_factor));
  app.add_option("-n,--iters", raw.iters, "fixed samples per size instead of adaptive stopping");
  app.add_option("-w,--warmup-iters", raw.warmup, "untimed ops before sampling each size (default 5)");
  app.add_option("--batch", raw.batch, "ops per sample in batch timing (default: calibrated to ~0.25 ms)");
  app.add_option("-c,--check", raw.check, "verify results untimed (0/1; -c alone means 1)")
      ->expected(0, 1)
      ->default_str("1");
  app.add_option("--timing", raw.timing,
                 fmt::format("batch (k ops per sample) | per_op (each op alone) | graph (k ops in a CUDA graph, "
                             "one launch per sample; NCCL) (default {})",
                             raw.timing));
  // Not nccl-tests' -G (which replays its -n ops as a graph G times): here -n stays the number of samples.
  app.add_option("--graph", raw.graph, "--timing graph with this many ops captured per graph (one launch per sample)");
  if (rdma) {
    add_rdma_options(app, raw, c);
  } else {
    app.add_option("-d,--dtype", raw.dtype, "element type: " + dtype_names() + " (default float32)");
    app.add_option("-o,--op", raw.op, "reduction: " + reduce_op_names() + " (default sum)");
    app.add_flag("--nccl-variants", c.nccl_variants,
                 "run the sweep as configured, then again with NCCL_ALGO=Ring (new communicators); results "
                 "tagged variant configured / ring (NCCL)");
    if (c.collective == Collective::AllToAllv) {
      app.add_option("--alltoallv-spread", raw.spread,
                     "0..1: how the generated traffic favours distant peers, (j - i) mod n (nccl-tests' "
                     "NCCL_TESTS_ALLTOALLV_SPREAD; default 1)");
      app.add_option("--alltoallv-matrix", raw.matrix,
                     "a square file of bytes, row i what rank i sends each rank (NCCL_TESTS_ALLTOALLV_MATRIX_FILE): "
                     "one case, its sizes from the matrix");
      app.add_option("--alltoallv-matrix-scale", raw.matrix_scale,
                     "times every value of the matrix (NCCL_TESTS_ALLTOALLV_MATRIX_SCALE; default 1)");
    }
    app.add_option("-R,--local-register", raw.registration,
                   "NCCL buffers from ncclMemAlloc registered with the communicator: 0 no, 1 ncclCommRegister, 2 "
                   "symmetric windows (ncclCommWindowRegister, NCCL 2.27+) (default 0)");
    app.add_option("-r,--root", raw.root, "root rank of broadcast / reduce (default 0)");
    app.add_option("--backend", raw.backend, "auto | mpi | nccl (auto: NCCL when a GPU is visible)");
    app.add_option("--placement", raw.placement, "out | in | both (out-of-place and in-place; default both)");
    app.add_option("--split", raw.split,
                   "run in groups side by side: world | node | cross-node (one rank per node) | rail (same local "
                   "rank across nodes) | pairs");
    app.add_option("--hosts-per-group", c.hosts_per_group,
                   "fleet: groups of K hosts (every rank of each) side by side, so a bad host shows in its group");
  }
  app.add_flag("--all-pairs", c.all_pairs,
               "fleet: every pair of hosts (local rank l with local rank l; every pair of ranks on one host) in "
               "rounds of disjoint pairs side by side (a pingmesh)");
  raw.common.add_bind(
      app,
      "none (keep the launcher's CPU binding) | auto (each rank on its GPU's NUMA node, or host memory's "
      "ranks spread over the nodes; NCCL uses the nearest NIC); recorded per rank either way");
  app.add_option("--target-ci", c.target_ci, "stop when the median's 95% CI is within this fraction (0.01)");
  app.add_option("--time-budget", raw.time_budget,
                 "seconds of sampling per size at most, or auto: 50 samples' time, at most 1 s (default auto)");
  app.add_option("--min-samples", raw.min_samples, "samples per size at least (default 10)");
  app.add_option("--max-samples", raw.max_samples, "samples per size at most (default 100000)");
  raw.common.add_timeout(app, "seconds any op (and set-up) may take before the run aborts (300)");
  app.add_option("--out", c.out_path, "result JSON path; - for stdout (default results/<bench>-<host>-<UTC>.json)");
  app.add_option("--label", c.label, "a label stored in the result (e.g. before-upgrade)");
  app.add_flag("--samples", c.keep_samples, "keep every sample in the JSON");
  app.add_flag("--per-rank", c.per_rank,
               "keep each rank's own time of every sample (not only the slowest rank's) and name a rank the others "
               "wait for (nccl-tests' -I 1 and its --straggler analysis)");
  app.add_option("--peak-GBps", raw.peak, "peak bus bandwidth to set results against");
  raw.common.add_check_args(app,
                            "check the options and exit: 0, or 2 with the one line a run would print (no MPI, no "
                            "GPU; what scripts ask before a job)");
  app.set_version_flag("--version", std::string{version_string()});
}

// A finite number of seconds, the whole text; unset for anything else.
std::optional<double> parse_seconds(std::string_view text) {
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

template <typename T>
T parse_or_throw(const std::optional<T>& value, std::string_view flag, std::string_view text,
                 std::string_view expected) {
  if (!value) {
    throw UsageError(fmt::format("{} '{}' is not {}", flag, text, expected));
  }
  return *value;
}

std::optional<std::uint64_t> non_negative(std::int64_t v, std::string_view flag, bool zero_ok) {
  if (v < 0 || (!zero_ok && v == 0)) {
    throw UsageError(fmt::format("{} {} must be {}", flag, v, zero_ok ? "0 or more" : "at least 1"));
  }
  return static_cast<std::uint64_t>(v);
}

/// A number from a flag, else from nccl-tests' environment variable, else `fallback`.
double flag_or_env(const std::optional<double>& flag, const char* variable, double fallback) {
  if (flag) {
    return *flag;
  }
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (*end != '\0') {
    throw UsageError(fmt::format("{}={}: expected a number", variable, text));
  }
  return v;
}

/// alltoallv's traffic from its flags (or nccl-tests' variables). A matrix gives the sizes: one case, so -b and -e
/// must be equal if given (nccl-tests' rule too).
std::shared_ptr<const Traffic> alltoallv_traffic(const RawOptions& raw, bool sizes_given, RunConfig& c) {
  const double spread = flag_or_env(raw.spread, "NCCL_TESTS_ALLTOALLV_SPREAD", 1.0);
  if (!(spread >= 0.0 && spread <= 1.0)) {
    throw UsageError(fmt::format("--alltoallv-spread {}: expected 0 (every peer alike) to 1 (by distance)", spread));
  }
  std::string file = raw.matrix;
  if (const char* env = std::getenv("NCCL_TESTS_ALLTOALLV_MATRIX_FILE"); file.empty() && env != nullptr) {
    file = env;
  }
  auto traffic = std::make_shared<Traffic>();
  if (!file.empty()) {
    *traffic = read_traffic_matrix(file, flag_or_env(raw.matrix_scale, "NCCL_TESTS_ALLTOALLV_MATRIX_SCALE", 1.0));
    if (sizes_given && c.min_bytes != c.max_bytes) {
      throw UsageError(
          fmt::format("--alltoallv-matrix {}: the matrix gives the sizes, one case: give -b equal to -e "
                      "or neither",
                      file));
    }
    c.max_bytes = c.min_bytes;
  } else if (raw.matrix_scale) {
    throw UsageError("--alltoallv-matrix-scale scales a matrix: give --alltoallv-matrix FILE");
  }
  traffic->spread = spread;
  return traffic;
}

void apply(const RawOptions& raw, RunConfig& c) {
  c.min_bytes = parse_or_throw(parse_bytes(raw.min_bytes), "--min-bytes", raw.min_bytes, "a size like 8, 4K, 1M");
  c.max_bytes = parse_or_throw(parse_bytes(raw.max_bytes), "--max-bytes", raw.max_bytes, "a size like 8, 4K, 1M");
  c.dtype = parse_or_throw(parse_dtype(raw.dtype), "--dtype", raw.dtype, "one of: " + dtype_names());
  c.op = parse_or_throw(parse_reduce_op(raw.op), "--op", raw.op, "one of: " + reduce_op_names());
  c.split = parse_or_throw(parse_split(raw.split), "--split", raw.split, "world, node, cross-node, rail or pairs");
  c.timing = parse_or_throw(parse_timing_mode(raw.timing), "--timing", raw.timing, "batch, per_op or graph");
  if (raw.graph) {
    if (c.timing != TimingMode::Batch && c.timing != TimingMode::Graph) {
      throw UsageError(fmt::format("--graph {} and --timing {}: --graph is graph timing", *raw.graph, raw.timing));
    }
    if (raw.batch && *raw.batch != *raw.graph) {
      throw UsageError(fmt::format("--graph {} and --batch {}: give one of them", *raw.graph, *raw.batch));
    }
    c.timing = TimingMode::Graph;
  }
  c.bind = raw.common.bind();
  c.timeout_s = raw.common.timeout_s();  // validate() holds it to timeout_error(), after the flags read here
  c.check_args_only = raw.common.check_args();
  if (raw.backend == "auto" || raw.backend == "mpi" || raw.backend == "nccl") {
    c.backend = raw.backend == "auto"  ? BackendChoice::Auto
                : raw.backend == "mpi" ? BackendChoice::Mpi
                                       : BackendChoice::Nccl;
  } else {
    throw UsageError(fmt::format("--backend '{}' is not one of: auto, mpi, nccl", raw.backend));
  }
  if (const auto reg = parse_registration(raw.registration)) {
    c.registration = *reg;
  } else {
    throw UsageError(fmt::format("-R '{}' is not one of: 0 (none), 1 (local), 2 (symmetric)", raw.registration));
  }
  if (raw.placement == "out" || raw.placement == "in" || raw.placement == "both") {
    c.placement = raw.placement == "out"  ? Placement::OutOfPlace
                  : raw.placement == "in" ? Placement::InPlace
                                          : Placement::Both;
  } else {
    throw UsageError(fmt::format("--placement '{}' is not one of: out, in, both", raw.placement));
  }
  if (raw.iters) {
    c.iters = non_negative(*raw.iters, "--iters", false);
  }
  if (raw.graph) {
    c.batch_ops = non_negative(*raw.graph, "--graph", false);
  } else if (raw.batch) {
    c.batch_ops = non_negative(*raw.batch, "--batch", false);
  }
  c.warmup_iters = *non_negative(raw.warmup, "--warmup-iters", true);
  if (raw.time_budget != "auto") {
    c.time_budget_s =
        parse_or_throw(parse_seconds(raw.time_budget), "--time-budget", raw.time_budget, "seconds (e.g. 0.5) or auto");
  }
  c.min_samples = *non_negative(raw.min_samples, "--min-samples", false);
  c.max_samples = *non_negative(raw.max_samples, "--max-samples", false);
  if (raw.root < 0 || raw.root > std::numeric_limits<int>::max()) {
    throw UsageError(fmt::format("--root {} must be a rank (0 or more)", raw.root));
  }
  c.root = static_cast<int>(raw.root);
  if (raw.check != 0 && raw.check != 1) {
    throw UsageError(fmt::format("--check {} must be 0 or 1", raw.check));
  }
  c.check = raw.check == 1;
  if (raw.peak != -1.0) {
    c.peak_GBps = raw.peak;
  }
}

// ib_write_*: bytes (uint8), pairs, out of place (an RDMA write has no in-place form), the verbs backend.
void apply_rdma(const RawOptions& raw, RunConfig& c) {
  c.dtype = DType::Uint8;
  c.placement = Placement::OutOfPlace;
  c.backend = BackendChoice::Verbs;
  c.split = Split::Pairs;
  if (!raw.size.empty()) {
    c.min_bytes = parse_or_throw(parse_bytes(raw.size), "--size", raw.size, "a size like 2, 64K, 8M");
    c.max_bytes = c.min_bytes;
  }
  if (raw.gid_index != -1) {
    c.rdma.gid_index = raw.gid_index;
  }
  if (raw.mtu != -1) {
    c.rdma.mtu = raw.mtu;
  }
  if (raw.inline_size != -1) {
    c.rdma.inline_size = raw.inline_size;
  }
  if (raw.pairs && c.all_pairs) {
    throw UsageError("--pairs and --all-pairs: give one of them");
  }
  if (c.collective == Collective::IbWriteLat) {
    c.rdma.tx_depth = 1;
    c.rdma.cq_mod = 1;
  }
}

}  // namespace

std::variant<RunConfig, EarlyExit> parse_command_line(Collective collective, std::span<const char* const> argv) {
  RunConfig config;
  config.collective = collective;
  config.argv.assign(argv.begin(), argv.end());
  const auto& coll = info(collective);
  CLI::App app{fmt::format("{}: {} benchmark (busbw in GB/s = 1e9 B/s)", coll.bench, coll.name),
               std::string{coll.bench}};
  app.get_formatter()->column_width(28);
  RawOptions raw;
  if (is_rdma(collective)) {  // perftest -a: 2 B to 8 MiB in powers of 2; latency op by op
    raw.min_bytes = "2";
    raw.max_bytes = "8M";
    config.step_factor = 2.0;
    raw.timing = collective == Collective::IbWriteLat ? "per_op" : "batch";
  }
  add_options(app, raw, config);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    return EarlyExit{app.help()};
  } catch (const CLI::CallForVersion&) {
    return EarlyExit{std::string{version_string()} + "\n", true};
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("{} (see --help)", e.what()));
  }
  apply(raw, config);
  if (collective == Collective::AllToAllv) {
    config.traffic = alltoallv_traffic(raw, app.count("--min-bytes") + app.count("--max-bytes") > 0, config);
  }
  if (is_rdma(collective)) {
    if (!raw.size.empty() && (app.count("--min-bytes") + app.count("--max-bytes") + app.count("--all")) > 0) {
      throw UsageError("--size is one size: leave out -b, -e and -a with it");
    }
    apply_rdma(raw, config);
  }
  if (const auto errors = validate(config); !errors.empty()) {
    throw UsageError(errors.front());
  }
  return config;
}

}  // namespace ccbench
