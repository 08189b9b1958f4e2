// Command line -> RunConfig. Short flags follow nccl-tests (-b -e -f -n -w -d -o -r -c).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>

#include "ccbench/binding.hpp"
#include "ccbench/config.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/version.hpp"

namespace ccbench {
namespace {

// Text values are parsed by us after CLI11, so every error message is ours and one line.
struct RawOptions {
  std::string min_bytes = "8";
  std::string max_bytes = "32M";
  std::string dtype = "float32";
  std::string op = "sum";
  std::string backend = "auto";
  std::string timing = "batch";
  std::string placement = "both";
  std::string split = "world";
  std::string bind = "none";
  std::int64_t iters = -1;
  std::int64_t warmup = 5;
  std::int64_t batch = -1;
  std::int64_t min_samples = 10;
  std::int64_t max_samples = 100000;
  std::int64_t root = 0;
  int check = 0;
  double peak = -1.0;
};

void add_options(CLI::App& app, RawOptions& raw, RunConfig& c) {
  app.add_option("-b,--min-bytes", raw.min_bytes, "smallest size, bytes; K/M/G are binary (default 8)");
  app.add_option("-e,--max-bytes", raw.max_bytes, "largest size (default 32M)");
  app.add_option("-f,--step-factor", c.step_factor, "multiply the size by this each step (default 4)");
  app.add_option("-n,--iters", raw.iters, "fixed samples per size instead of adaptive stopping");
  app.add_option("-w,--warmup-iters", raw.warmup, "untimed ops before sampling each size (default 5)");
  app.add_option("--batch", raw.batch, "ops per sample in batch timing (default: calibrated to ~1 ms)");
  app.add_option("-d,--dtype", raw.dtype, "element type: " + dtype_names() + " (default float32)");
  app.add_option("-o,--op", raw.op, "reduction: " + reduce_op_names() + " (default sum)");
  app.add_option("-r,--root", raw.root, "root rank of broadcast / reduce (default 0)");
  app.add_option("-c,--check", raw.check, "verify results untimed (0/1; -c alone means 1)")
      ->expected(0, 1)
      ->default_str("1");
  app.add_option("--backend", raw.backend, "auto | mpi | nccl (auto: NCCL when a GPU is visible)");
  app.add_option("--timing", raw.timing, "batch (k ops per sample) | per_op (each op alone)");
  app.add_option("--placement", raw.placement, "out | in | both (out-of-place and in-place; default both)");
  app.add_option("--split", raw.split,
                 "run in groups side by side: world | node | cross-node (one rank per node) | rail (same local "
                 "rank across nodes) | pairs");
  app.add_option("--bind", raw.bind,
                 "none (keep the launcher's CPU binding) | auto (each rank on its GPU's NUMA node, or host memory's "
                 "ranks spread over the nodes; NCCL uses the nearest NIC); recorded per rank either way");
  app.add_option("--target-ci", c.target_ci, "stop when the median's 95% CI is within this fraction (0.01)");
  app.add_option("--time-budget", c.time_budget_s, "seconds of sampling per size at most (default 1)");
  app.add_option("--min-samples", raw.min_samples, "samples per size at least (default 10)");
  app.add_option("--max-samples", raw.max_samples, "samples per size at most (default 100000)");
  app.add_option("--timeout", c.timeout_s, "seconds any op (and set-up) may take before the run aborts (300)");
  app.add_option("--out", c.out_path, "result JSON path; - for stdout (default results/<bench>-<host>-<UTC>.json)");
  app.add_option("--label", c.label, "a label stored in the result (e.g. before-upgrade)");
  app.add_flag("--samples", c.keep_samples, "keep every sample in the JSON");
  app.add_option("--peak-GBps", raw.peak, "peak bus bandwidth to set results against");
  app.set_version_flag("--version", std::string{version_string()});
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

void apply(const RawOptions& raw, RunConfig& c) {
  c.min_bytes = parse_or_throw(parse_bytes(raw.min_bytes), "--min-bytes", raw.min_bytes, "a size like 8, 4K, 1M");
  c.max_bytes = parse_or_throw(parse_bytes(raw.max_bytes), "--max-bytes", raw.max_bytes, "a size like 8, 4K, 1M");
  c.dtype = parse_or_throw(parse_dtype(raw.dtype), "--dtype", raw.dtype, "one of: " + dtype_names());
  c.op = parse_or_throw(parse_reduce_op(raw.op), "--op", raw.op, "one of: " + reduce_op_names());
  c.split = parse_or_throw(parse_split(raw.split), "--split", raw.split, "world, node, cross-node, rail or pairs");
  c.timing = parse_or_throw(parse_timing_mode(raw.timing), "--timing", raw.timing, "batch or per_op");
  c.bind = parse_or_throw(parse_bind_policy(raw.bind), "--bind", raw.bind, "none or auto");
  if (raw.backend == "auto" || raw.backend == "mpi" || raw.backend == "nccl") {
    c.backend = raw.backend == "auto"  ? BackendChoice::Auto
                : raw.backend == "mpi" ? BackendChoice::Mpi
                                       : BackendChoice::Nccl;
  } else {
    throw UsageError(fmt::format("--backend '{}' is not one of: auto, mpi, nccl", raw.backend));
  }
  if (raw.placement == "out" || raw.placement == "in" || raw.placement == "both") {
    c.placement = raw.placement == "out"  ? Placement::OutOfPlace
                  : raw.placement == "in" ? Placement::InPlace
                                          : Placement::Both;
  } else {
    throw UsageError(fmt::format("--placement '{}' is not one of: out, in, both", raw.placement));
  }
  if (raw.iters != -1) {
    c.iters = non_negative(raw.iters, "--iters", false);
  }
  if (raw.batch != -1) {
    c.batch_ops = non_negative(raw.batch, "--batch", false);
  }
  c.warmup_iters = *non_negative(raw.warmup, "--warmup-iters", true);
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
  add_options(app, raw, config);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    return EarlyExit{app.help()};
  } catch (const CLI::CallForVersion&) {
    return EarlyExit{std::string{version_string()} + "\n"};
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("{} (see --help)", e.what()));
  }
  apply(raw, config);
  if (const auto errors = validate(config); !errors.empty()) {
    throw UsageError(errors.front());
  }
  return config;
}

}  // namespace ccbench
