// copy_bench: the copies the collectives ride on, per GPU and per pair of GPUs, on Google Benchmark
// (manual time from CUDA events) with a reporter that writes our result JSON:
//   h2d / d2h   host <-> device, pinned and pageable host memory, copy engine
//   d2d         within one GPU's memory, copy engine and SM copy kernel (against the HBM spec)
//   p2p         GPU -> GPU (every ordered pair) and GPU <-> GPU (both directions at once), copy engine
//               and SM copy kernel, against NVLink or PCIe as discovered
// Every copy is verified once per size (-c 0 to skip): the source holds the pattern, the destination is
// poisoned first and counted on the device afterwards. Each timed copy starts with cold L2s.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/common_flags.hpp"
#include "ccbench/config.hpp"
#include "ccbench/environment.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/kernels.hpp"
#include "ccbench/output_file.hpp"
#include "ccbench/pattern.hpp"
#include "ccbench/rates.hpp"
#include "ccbench/result_json.hpp"
#include "ccbench/statistics.hpp"
#include "ccbench/topo/discover.hpp"
#include "ccbench/topo/topology_json.hpp"
#include "ccbench/version.hpp"
#include "copy_paths.hpp"
#include "cuda_copies.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, not declared by <cstdlib>

namespace ccbench::copy {
namespace {

/// Why Google Benchmark did not finish a run, if it did not: error_occurred/error_message until 1.7
/// (Debian 12), skipped/skip_message from 1.8 (Debian 13, the CUDA 12 build).
template <typename Run>
auto run_error(const Run& run, int) -> decltype(run.error_occurred, std::optional<std::string>{}) {
  return run.error_occurred ? std::optional<std::string>{run.error_message} : std::nullopt;
}
template <typename Run>
auto run_error(const Run& run, long) -> decltype(run.skip_message, std::optional<std::string>{}) {
  return run.skipped != decltype(run.skipped){} ? std::optional<std::string>{run.skip_message} : std::nullopt;
}

constexpr std::string_view kProgram = "copy_bench";

struct Options {
  std::string min_bytes = "4M";
  std::string max_bytes = "256M";
  double step_factor = 4.0;
  std::string kinds = "all";
  std::string engines = "all";
  std::string devices = "all";
  double min_time_s = 0.1;
  int check = 1;
  std::string out_path;
  std::string label;
  CommonFlags common;  // --check-args, --bind, --timeout: as every bench takes them
};

struct Plan {
  std::vector<Path> paths;
  std::vector<std::uint64_t> sizes;
  std::vector<CopyPeak> peaks;  // per path
  bool check = true;
};

/// Parses our options (Google Benchmark has taken its --benchmark_* flags out already).
Options parse_options(int argc, const char* const* argv, bool& exit_early) {
  Options o;
  CLI::App app{
      "copy_bench: host<->device, device<->device and GPU<->GPU copy bandwidth against the spec. "
      "Google Benchmark's --benchmark_filter=REGEX, --benchmark_repetitions=N, ... apply too."};
  app.add_option("-b,--min-bytes", o.min_bytes, "smallest copy (default 4M)");
  app.add_option("-e,--max-bytes", o.max_bytes, "largest copy (default 256M)");
  app.add_option("-f,--step-factor", o.step_factor, "size multiplier between steps (default 4)");
  app.add_option("--kinds", o.kinds, "h2d,d2h,d2d,p2p or all (default all)");
  app.add_option("--engines", o.engines, "ce (copy engine, cudaMemcpy), sm (copy kernel) or all (default all)");
  app.add_option("--devices", o.devices, "CUDA device indices, 0,1,... or all (default all)");
  app.add_option("--min-time", o.min_time_s, "seconds of copies per size at least (default 0.1)");
  app.add_option("-c,--check", o.check, "1: verify each size's copy on the device (default 1)");
  app.add_option("--out", o.out_path, "result JSON path (default results/copy_bench-<host>-<UTC>.json)");
  app.add_option("--label", o.label, "a label for the run (baselines, comparisons)");
  o.common.add_bind(app,
                    "none | auto: checked as every bench checks it, so that a workflow gives every bench the same "
                    "flags; copy_bench is one process over every local GPU and binds nothing either way");
  o.common.add_timeout(app,
                       "seconds (default 300), checked as every bench checks it; copy_bench does not watch its "
                       "copies: bound the whole run from outside (as accept-node does)");
  o.common.add_check_args(app,
                          "check the options and exit: 0, or 2 with the one line a run would print (no GPU; what "
                          "scripts ask before a run)");
  app.set_version_flag("--version", std::string(version_string()));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    exit_early = true;
  } catch (const CLI::CallForVersion&) {
    LibraryLines lines;
    for (const auto& [name, text] : cuda_versions()) {
      lines.emplace_back(name, text);
    }
    lines.emplace_back("nccl, mpi, verbs", "not linked: copy_bench is one process on this host's GPUs");
    fmt::print("{}", version_text("copy_bench", lines));
    exit_early = true;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  return o;
}

/// The sizes of the sweep; every option that needs no GPU is checked here (before looking for one).
std::vector<std::uint64_t> checked_sizes(const Options& o) {
  (void)o.common.checked();  // copy_bench takes them to answer as every bench does, and uses none but --check-args
  const auto lo = parse_bytes(o.min_bytes);
  const auto hi = parse_bytes(o.max_bytes);
  if (!lo || !hi || *lo == 0) {
    throw UsageError(fmt::format("--min-bytes '{}' / --max-bytes '{}': sizes are like 64K, 4M, 1G (at least 1 B)",
                                 o.min_bytes, o.max_bytes));
  }
  if (*lo > *hi) {
    throw UsageError(fmt::format("--min-bytes {} is larger than --max-bytes {}", o.min_bytes, o.max_bytes));
  }
  if (!(o.step_factor > 1.0)) {
    throw UsageError(fmt::format("--step-factor {:g} must be greater than 1", o.step_factor));
  }
  if (!(o.min_time_s > 0.0) || o.min_time_s > 60.0) {
    throw UsageError(fmt::format("--min-time {:g} must be from 0 to 60 seconds", o.min_time_s));
  }
  if (o.check != 0 && o.check != 1) {
    throw UsageError(fmt::format("--check {} must be 0 or 1", o.check));
  }
  return sweep_sizes(*lo, *hi, o.step_factor);
}

Plan make_plan(const Options& o, std::vector<std::uint64_t> sizes, const topo::HostTopology& host,
               const std::vector<int>& topo_gpu, int visible) {
  Plan p;
  p.check = o.check == 1;
  p.sizes = std::move(sizes);
  const Selection selection = parse_selection(o.kinds, o.engines, o.devices, visible);
  p.paths = plan_paths(selection, peer_access_matrix(visible));
  for (const Path& path : p.paths) {
    p.peaks.push_back(copy_peak(path, topo::SpecDatabase::builtin(), host, topo_gpu));
  }
  return p;
}

/// How a path's copies were timed, and with which host memory.
std::string clock_of(const Path& path) {
  if (path.kind != Kind::H2D && path.kind != Kind::D2H) {
    return "CUDA events";
  }
  if (path.host == HostMemory::Pinned) {
    return "CUDA events; pinned host memory (cudaMallocHost)";
  }
  return "CUDA events; pageable host memory (malloc): the stream idle at the start event, so the driver's staging "
         "through pinned memory is timed";
}

/// Writes the result document after every benchmark (atomically), so an interrupted run keeps what it
/// finished; and shows Google Benchmark's console table as usual.
class JsonReporter final : public benchmark::ConsoleReporter {
 public:
  JsonReporter(ResultDocument doc, std::string path, const Plan& plan, const Samples& samples)
      : m_doc(std::move(doc)), m_path(std::move(path)), m_plan(plan), m_samples(samples) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      // One result per benchmark: the last call's samples (with --benchmark_repetitions, the last
      // repetition's; the aggregates are Google Benchmark's own, in its table).
      const std::string name = run.run_name.function_name;
      const auto at = m_samples.index.find(name);
      if (run.run_type != Run::RT_Iteration || at == m_samples.index.end() || !m_added.insert(name).second) {
        continue;
      }
      add(name, at->second, run);
    }
    m_doc.run.ended_utc = utc_now_iso8601();
    write_file_atomically(m_path, json_text(to_json(m_doc), 2) + "\n");
  }

  [[nodiscard]] int failures() const { return m_failures; }

 private:
  void add(const std::string& name, const CaseKey& key, const Run& run) {
    const Path& path = m_plan.paths[key.path];
    const CopyPeak& peak = m_plan.peaks[key.path];
    const std::uint64_t size = m_plan.sizes[key.size];
    CaseResult r;
    r.benchmark = std::string(kProgram);
    r.backend = "cuda";
    r.timing = TimingMode::PerOp;
    r.clock = clock_of(path);
    r.spec = {Collective::Copy, DType::Uint8, ReduceOp::Sum, 0, false, size};
    r.ranks = 1;
    r.nodes = 1;
    r.group = "copy";
    r.group_id = path.id();
    r.group_ranks = {0};
    r.group_hosts = {m_doc.environment.hosts.front().hostname};
    r.size_bytes = path.bytes_moved(size);
    r.ops_per_sample = 1;
    r.stop_reason = StopReason::TimeBudget;
    r.bus_factor = path.bus_factor();
    r.peak_GBps = peak.GBps;
    r.peak_basis = peak.basis;
    const auto& s = m_samples.last(name);
    const auto error = run_error(run, 0);
    if (error || s.seconds.empty()) {
      r.status = CaseStatus::Failed;
      r.reason = error ? *error : "no sample was taken";
      ++m_failures;
    } else {
      r.time = summarize(s.seconds);
      derive_rates(r);
      r.wrong_elements = s.wrong;
      if (s.wrong && *s.wrong > 0) {
        r.status = CaseStatus::Failed;
        r.reason = fmt::format("{} wrong bytes after the copy", *s.wrong);
        ++m_failures;
      }
      r.elapsed_s = s.elapsed_s;
    }
    m_doc.results.push_back(std::move(r));
  }

  ResultDocument m_doc;
  std::string m_path;
  const Plan& m_plan;
  const Samples& m_samples;
  std::set<std::string> m_added;
  int m_failures = 0;
};

ResultDocument start_document(int argc, char** argv, const Options& o, const topo::HostTopology& host) {
  ResultDocument doc;
  doc.run.id = make_run_id();
  doc.run.benchmark = std::string(kProgram);
  doc.run.started_utc = utc_now_iso8601();
  doc.run.argv.assign(argv, argv + argc);
  doc.run.tool_version = std::string(tool_version());
  doc.run.git_revision = std::string(git_revision());
  doc.run.label = o.label;
  doc.environment.hosts = {{local_hostname(), {0}}};
  doc.environment.libraries = cuda_versions();
  doc.environment.variables = communication_variables(environ);
  doc.topology = {{"hosts", nlohmann::json::array({topo::to_json(host)})}};
  return doc;
}

/// results/copy_bench-<host>-<UTC>.json, suffixed when a run of the same second has that name.
OutputClaim default_claim() {
  std::error_code ec;
  std::filesystem::create_directories("results", ec);
  if (ec) {
    throw UsageError(
        fmt::format("cannot create the folder results/ for the result file: {} (give --out)", ec.message()));
  }
  return OutputClaim::default_path(fmt::format("results/copy_bench-{}-{}", local_hostname(), utc_now_compact()));
}

int run(int argc, char** argv) {
  const std::vector<std::string> original(argv, argv + argc);  // before Google Benchmark edits argv
  for (const auto& a : original) {
    if (a == "--help" || a == "-h") {  // ours (Google Benchmark would print only its own and exit)
      bool unused = false;
      const std::array<const char*, 2> help{argv[0], "--help"};
      (void)parse_options(2, help.data(), unused);
      return kExitOk;
    }
  }
  benchmark::Initialize(&argc, argv);
  bool exit_early = false;
  const Options o = parse_options(argc, argv, exit_early);
  if (exit_early) {
    return kExitOk;
  }
  std::vector<std::uint64_t> sizes = checked_sizes(o);
  if (o.common.check_args()) {
    if (!o.out_path.empty()) {
      check_output_path(o.out_path, "--out");
    }
    return kExitOk;
  }
  // Held until the run ends (the kernel lets go if it dies); checked before any device is touched.
  const OutputClaim claim = o.out_path.empty() ? default_claim() : OutputClaim::explicit_path(o.out_path, "--out");
  const int visible = visible_devices();
  if (visible == 0) {
    throw UsageError("no CUDA device here (" + no_device_reason() + "); copy_bench measures GPU copies");
  }
  const topo::HostTopology host = topo::discover_host();
  const std::vector<int> topo_gpu = match_topology(host, visible);
  const Plan plan = make_plan(o, std::move(sizes), host, topo_gpu, visible);
  Samples samples;
  std::vector<std::optional<double>> peaks;
  peaks.reserve(plan.peaks.size());
  for (const auto& p : plan.peaks) {
    peaks.push_back(p.GBps);
  }
  register_benchmarks(plan.paths, peaks, plan.sizes, plan.check, o.min_time_s, samples);

  const std::string path = claim.path().string();
  std::vector<char*> kept;  // the argv we record: as given, Google Benchmark's flags included
  std::vector<std::string> copy = original;
  kept.reserve(copy.size());
  for (auto& a : copy) {
    kept.push_back(a.data());
  }
  JsonReporter reporter(start_document(static_cast<int>(kept.size()), kept.data(), o, host), path, plan, samples);
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();  // their buffers go now, while the CUDA runtime is still up
  benchmark::Shutdown();
  if (ran == 0) {
    throw UsageError("no copy matched (--kinds, --engines, --devices, --benchmark_filter select nothing)");
  }
  fmt::print("# results: {}\n", path);
  return reporter.failures() > 0 ? kExitFailure : kExitOk;
}

}  // namespace
}  // namespace ccbench::copy

int main(int argc, char** argv) {
  using namespace ccbench;
  try {
    return copy::run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "copy_bench: error: {}\n", e.what());
    if (dynamic_cast<const UsageError*>(&e) != nullptr) {
      return kExitUsage;
    }
    return dynamic_cast<const TimeoutError*>(&e) != nullptr ? kExitTimeout : kExitFailure;
  }
}
