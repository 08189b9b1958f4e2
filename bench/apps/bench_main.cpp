#include "bench_main.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include "backend_registry.hpp"
#include "binding.hpp"
#include "ccbench/environment.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/groups.hpp"
#include "ccbench/output_file.hpp"
#include "ccbench/run_plan.hpp"
#include "ccbench/tcp_pair.hpp"
#include "ccbench/version.hpp"
#include "command_line.hpp"
#include "debug_hooks.hpp"
#include "session.hpp"
#include "topology_gather.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace ccbench {
namespace {

/// Thrown on every rank once an error has been printed (by one rank) and the exit code agreed.
struct Reported {
  int exit_code;
};

int exit_code_of(const std::exception& e) {
  if (dynamic_cast<const UsageError*>(&e) != nullptr) {
    return kExitUsage;
  }
  return dynamic_cast<const TimeoutError*>(&e) != nullptr ? kExitTimeout : kExitFailure;
}

/// Runs `fn` on every rank (collective). If it threw anywhere, the lowest failing rank prints
/// its one-line message and every rank throws Reported with that rank's exit code.
template <typename Fn>
auto agreed(Group& group, std::string_view program, Fn&& fn) {
  std::optional<decltype(fn())> value;
  std::string failure;
  try {
    value.emplace(fn());
  } catch (const std::exception& e) {
    failure = fmt::format("{}{}", exit_code_of(e), e.what());
  }
  const auto all = group.all_gather(failure);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (!all[r].empty()) {
      if (static_cast<int>(r) == group.rank()) {
        fmt::print(stderr, "{}: error: {}\n", program, std::string_view(all[r]).substr(1));
      }
      throw Reported{all[r][0] - '0'};
    }
  }
  return std::move(*value);
}

/// A fatal error during the sweep, in one voice. World rank 0 says it at once and ends the job;
/// another rank waits kFatalGraceS first: an error that every rank meets ends the job from rank 0
/// in the meantime, so a rank speaks (with its rank) only when it alone met the error.
void say_fatal(std::string_view program, const Group& world, std::string_view what) {
  constexpr double kFatalGraceS = 2.0;
  if (world.rank() == 0) {
    fmt::print(stderr, "{}: error: {}\n", program, what);
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(kFatalGraceS));
    fmt::print(stderr, "{}: error: rank {}: {}\n", program, world.rank(), what);
  }
  std::fflush(stderr);
}

constexpr double kFinalizeWithinS = 30.0;

struct Layout {
  std::vector<HostInfo> hosts;
  RankPlacement placement;
};

Layout discover_layout(Group& group) {
  const auto names = group.all_gather(local_hostname());
  const auto machines = group.all_gather(machine_identity());
  Layout layout;
  for (std::size_t r = 0; r < names.size(); ++r) {
    auto host = std::find_if(layout.hosts.begin(), layout.hosts.end(),
                             [&](const HostInfo& h) { return h.hostname == names[r]; });
    if (host == layout.hosts.end()) {
      host = layout.hosts.insert(layout.hosts.end(), HostInfo{names[r], {}, machines[r]});
    }
    if (static_cast<int>(r) == group.rank()) {
      layout.placement.local_rank = static_cast<int>(host->ranks.size());
    }
    host->ranks.push_back(static_cast<int>(r));
  }
  for (const auto& h : layout.hosts) {
    if (h.hostname == names[static_cast<std::size_t>(group.rank())]) {
      layout.placement.local_size = static_cast<int>(h.ranks.size());
    }
  }
  return layout;
}

/// World rank 0's hold on the result path, let go of once by whichever thread comes first: the end of the run,
/// or the job being ended (by this rank, or by another rank that tells this one first: HangGuard).
class HeldClaim {
 public:
  void hold(std::optional<OutputClaim> claim) {
    const std::lock_guard lock(m_mutex);
    m_claim = std::move(claim);
  }
  [[nodiscard]] std::optional<std::string> path() const {
    const std::lock_guard lock(m_mutex);
    return m_claim ? std::optional<std::string>(m_claim->path().string()) : std::nullopt;
  }
  void let_go() {
    const std::lock_guard lock(m_mutex);
    m_claim.reset();
  }

 private:
  mutable std::mutex m_mutex;
  std::optional<OutputClaim> m_claim;
};

/// World rank 0's hold on the result file (--out, or results/<bench>-<host>-<UTC>.json, suffixed
/// when a run of the same second has that name), taken before set-up; none for --out - (stdout).
std::optional<OutputClaim> claim_result_path(const CollectiveInfo& coll, const std::string& out_path) {
  if (out_path == "-") {
    return std::nullopt;
  }
  if (!out_path.empty()) {
    return OutputClaim::explicit_path(out_path, "--out");
  }
  std::error_code ec;
  const bool made = std::filesystem::create_directories("results", ec);
  if (ec) {
    throw UsageError(
        fmt::format("cannot create the folder results/ for the result file: {} (give --out)", ec.message()));
  }
  OutputClaim claim =
      OutputClaim::default_path(fmt::format("results/{}-{}-{}", coll.bench, local_hostname(), utc_now_compact()));
  if (made) {
    claim.remove_if_left_empty("results");
  }
  return claim;
}

std::size_t host_of(const Layout& layout, int rank) {
  const auto host = std::find_if(layout.hosts.begin(), layout.hosts.end(), [&](const HostInfo& h) {
    return std::find(h.ranks.begin(), h.ranks.end(), rank) != h.ranks.end();
  });
  return static_cast<std::size_t>(host - layout.hosts.begin());
}

/// No two ranks of a host may drive one GPU, whatever groups they are in: with one visible GPU a rank
/// (choose_device), only the PCI bus ids tell. Throws UsageError naming the world ranks and the host.
bool refuse_shared_gpus(Group& world, const Layout& layout, const std::string& bus_id) {
  const auto ids = world.all_gather(bus_id);
  for (std::size_t a = 0; a < ids.size(); ++a) {
    for (std::size_t b = a + 1; b < ids.size() && !ids[a].empty(); ++b) {
      const std::size_t host = host_of(layout, static_cast<int>(a));
      if (ids[b] == ids[a] && host_of(layout, static_cast<int>(b)) == host) {
        throw UsageError(
            fmt::format("ranks {} and {} on {} both drive the GPU at {}: give each rank a GPU of its "
                        "own (one rank per GPU, or srun --gpus-per-task=1 / CUDA_VISIBLE_DEVICES per "
                        "rank)",
                        a, b, layout.hosts[host].hostname, ids[a]));
      }
    }
  }
  return true;
}

Membership join_group(const RunConfig& config, BackendChoice choice, const GpuProbe& gpus, MpiGroup& world,
                      const Layout& layout, const std::vector<GroupPlan>& groups, const std::string& variant,
                      std::string_view program) {
  Membership m;
  m.plan = group_of(groups, world.rank());
  const auto& ranks = m.plan != nullptr ? m.plan->ranks : std::vector<int>{};
  const auto key = std::find(ranks.begin(), ranks.end(), world.rank()) - ranks.begin();
  std::unique_ptr<MpiGroup> split = world.split(m.plan != nullptr ? m.plan->color : -1, static_cast<int>(key));
  agreed(world, program, [&] {  // local checks first, so no rank enters set-up alone
    check_can_run(choice, layout.placement, local_hostname(), gpus);
    return true;
  });
  m.backend = agreed(world, program, [&]() -> std::unique_ptr<Backend> {
    if (split == nullptr) {
      return nullptr;  // idles in this split
    }
    return make_backend(choice, *split, layout.placement, config, world.rank(), local_hostname(), variant);
  });
  if (choice == BackendChoice::Nccl) {  // groups side by side (--split, --all-pairs) must not share a GPU either
    const std::string bus_id = m.backend ? m.backend->device_bus_id() : std::string{};
    agreed(world, program, [&] { return refuse_shared_gpus(world, layout, bus_id); });
  }
  m.group = split.get();
  m.owned = std::move(split);
  return m;
}

/// The standalone RDMA pair (--server / --connect): the two processes are the world and its one pair.
Membership join_pair(const RunConfig& config, Group& pair, const std::vector<GroupPlan>& groups,
                     std::string_view program) {
  Membership m;
  m.plan = group_of(groups, pair.rank());
  m.group = &pair;
  m.backend = agreed(pair, program, [&] { return make_rdma_backend(pair, config, pair.rank(), local_hostname()); });
  return m;
}

std::optional<std::string> env_value(const char* variable) {
  const char* value = std::getenv(variable);
  return value == nullptr ? std::nullopt : std::optional<std::string>(value);
}

BindingInputs binding_inputs(const RankPlacement& placement, BackendChoice choice) {
  return {placement.local_rank, placement.local_size, choice == BackendChoice::Nccl, env_value("CUDA_VISIBLE_DEVICES"),
          env_value("CUDA_DEVICE_ORDER")};
}

/// On world rank 0, one line when --bind auto left ranks unbound (the JSON says why for each).
void warn_unbound(const std::vector<BindingRecord>& binding, std::string_view program) {
  const auto unbound = std::count_if(binding.begin(), binding.end(),
                                     [](const BindingRecord& b) { return b.policy == BindPolicy::Auto && !b.applied; });
  const auto first = std::find_if(binding.begin(), binding.end(),
                                  [](const BindingRecord& b) { return b.policy == BindPolicy::Auto && !b.applied; });
  if (unbound > 0) {
    fmt::print(stderr, "{}: warning: --bind auto: {} of {} rank(s) not bound, e.g. rank {} on {}: {}\n", program,
               unbound, binding.size(), first->rank, first->host, first->note);
  }
}

/// --backend auto is resolved on each rank, and must end on one backend: a node whose CUDA cannot start (a
/// driver older than the runtime) or that sees no GPU would run MPI while the rest run NCCL, and the job would
/// hang until --timeout. MPI only when no rank can use NCCL; when the ranks split, a UsageError (on every rank)
/// names the first rank that cannot, its host and why, and one that can.
bool agree_on_auto(Group& world, const Layout& layout, const BackendResolution& mine) {
  const bool nccl = mine.choice == BackendChoice::Nccl;
  const auto causes = world.all_gather(fmt::format("{}{}", nccl ? 'N' : 'M', mine.cause));
  const auto on = [&](int rank) {
    const auto& host = layout.hosts[host_of(layout, rank)].hostname;
    return fmt::format("rank {} on {} ({})", rank, host,
                       std::string_view(causes[static_cast<std::size_t>(rank)]).substr(1));
  };
  const auto count = std::count_if(causes.begin(), causes.end(), [](const std::string& c) { return c[0] == 'N'; });
  if (count == 0 || count == static_cast<std::ptrdiff_t>(causes.size())) {
    return true;
  }
  const auto first = [&](char kind) {
    return static_cast<int>(
        std::find_if(causes.begin(), causes.end(), [&](const std::string& c) { return c[0] == kind; }) -
        causes.begin());
  };
  throw UsageError(
      fmt::format("--backend auto: the ranks disagree: {} cannot use NCCL, while {} can; {} of {} rank(s) cannot: mend "
                  "{}, or start the job on the nodes that can (or give --backend mpi for host memory on all)",
                  on(first('M')), on(first('N')), static_cast<std::ptrdiff_t>(causes.size()) - count, causes.size(),
                  causes.size() - static_cast<std::size_t>(count) == 1 ? "that node" : "those nodes"));
}

/// How a run's processes meet: through MPI (mpirun, srun), or the standalone RDMA pair over TCP.
struct Launch {
  MpiGroup* mpi = nullptr;  // null in the standalone pair
  HangGuard::EndJob end_job;
};

/// --help / --version: the text the command line asked for instead of a run.
void print_early_exit(const CollectiveInfo& coll, const EarlyExit& early) {
  fmt::print("{}", early.version ? version_text(coll.bench, library_lines()) : early.text);
}

int run_program(Collective collective, Group& world, const Launch& launch, const CommandLine& line) {
  const auto& coll = info(collective);
  // Each process parsed the same argv; agreeing keeps one voice (and one exit code) where a rank's parse differs
  // (its environment: alltoallv's NCCL_TESTS_* variables and matrix file).
  auto parsed = agreed(world, coll.bench, [&]() -> Parsed { return line.parsed(); });
  if (const auto* early = std::get_if<EarlyExit>(&parsed)) {
    if (world.rank() == 0) {
      print_early_exit(coll, *early);
    }
    return kExitOk;
  }
  SessionInputs in;
  in.config = std::get<RunConfig>(std::move(parsed));
  HeldClaim claim;  // until the run ends; the kernel lets go of the flock if the process dies
  in.result_path = agreed(world, coll.bench, [&] {
    if (world.rank() != 0) {
      return in.config.out_path;
    }
    claim.hold(claim_result_path(coll, in.config.out_path));
    return claim.path().value_or(in.config.out_path);
  });
  // Ending the job (MPI_Abort, _Exit) runs no destructor: the claim's lock file (and an empty results/) go
  // first, on world rank 0, whichever rank ends it.
  HangGuard guard(world, std::string{coll.bench}, in.config.timeout_s, launch.end_job, [&claim] { claim.let_go(); });
  guard.begin("set-up: learning which ranks share a host");
  debug::stop_if_asked("setup", world.rank());
  const Layout layout = discover_layout(world);
  in.hosts = layout.hosts;
  in.plan = plan_run(in.config, layout.hosts);
  agreed(world, coll.bench, [&] {
    if (!in.plan.errors.empty()) {
      throw UsageError(joined_errors(in.plan));
    }
    return true;
  });
  guard.begin("set-up: gathering every host's topology");
  in.topology = gather_topology(world, layout.hosts, layout.placement.local_rank);
  in.variables = communication_variables(environ);  // as the user set them, before --bind adds NCCL_IB_HCA
  // CUDA is asked only where a GPU may be used: starting its runtime costs time on a GPU node.
  const bool may_use_gpu = in.config.backend == BackendChoice::Auto || in.config.backend == BackendChoice::Nccl;
  const GpuProbe gpus = may_use_gpu ? probe_gpus() : GpuProbe{};
  const BackendResolution resolved = resolve_backend(in.config.backend, gpus);
  if (in.config.backend == BackendChoice::Auto) {
    agreed(world, coll.bench, [&] { return agree_on_auto(world, layout, resolved); });
  }
  const BackendChoice choice = resolved.choice;
  in.backend_choice = resolved.why;
  agreed(world, coll.bench, [&] {
    if (in.config.nccl_variants && choice != BackendChoice::Nccl) {
      throw UsageError(
          fmt::format("--nccl-variants forces NCCL's ring algorithm: it needs the NCCL backend, and {}", resolved.why));
    }
    if (in.config.registration != Registration::None && choice != BackendChoice::Nccl) {
      throw UsageError(fmt::format("-R {} registers NCCL's buffers: it needs the NCCL backend, and {}",
                                   static_cast<int>(in.config.registration), resolved.why));
    }
    if (in.config.timing == TimingMode::Graph && choice == BackendChoice::Mpi) {
      throw UsageError(
          fmt::format("--timing graph captures CUDA graphs: it needs the NCCL backend, and {}", resolved.why));
    }
    return true;
  });
  if (world.rank() == 0 && in.config.backend == BackendChoice::Auto && !gpus.problem.empty()) {
    fmt::print(stderr, "{}: warning: {}\n", coll.bench, resolved.why);
  }
  const std::size_t host = host_of(layout, world.rank());
  BindingRecord binding =
      bind_rank(in.config.bind, in.topology[host], binding_inputs(layout.placement, choice));  // before the backend
  guard.begin("set-up: creating the groups and their communicators");
  const auto join = [&, choice](const RunConfig& config, const std::vector<GroupPlan>& groups,
                                const std::string& variant) {
    return launch.mpi != nullptr ? join_group(config, choice, gpus, *launch.mpi, layout, groups, variant, coll.bench)
                                 : join_pair(config, world, groups, coll.bench);
  };
  Membership member = join(in.config, in.plan.rounds.front(), in.plan.variants.front());
  const std::string bus_id = member.backend ? member.backend->device_bus_id() : std::string{};
  guard.begin("set-up: gathering where every rank runs");
  in.places = gather_places(world, layout.hosts, in.topology, bus_id);
  binding.rank = world.rank();
  binding.host = layout.hosts[host].hostname;
  read_back_binding(binding, in.topology[host], bus_id);
  in.binding = gather_binding(world, binding);
  if (world.rank() == 0) {
    warn_unbound(in.binding, coll.bench);
  }
  guard.idle("set-up");
  const RunConfig config = in.config;
  Session session(
      std::move(in), world, std::move(member), guard,
      [&](const std::vector<GroupPlan>& groups, const std::string& variant) { return join(config, groups, variant); });
  try {
    return session.run();
  } catch (const std::exception& e) {  // other ranks may be inside a collective: end the job
    say_fatal(coll.bench, world, e.what());
    guard.end_job(exit_code_of(e));
  }
}

/// ib_write_*_bench --server / --connect HOST: two processes meet over TCP, without MPI (as perftest).
int standalone_main(Collective collective, const CommandLine& line) {
  const auto& coll = info(collective);
  try {
    const Parsed& parsed = line.parsed();
    if (const auto* early = std::get_if<EarlyExit>(&parsed)) {
      print_early_exit(coll, *early);
      return kExitOk;
    }
    const auto& config = std::get<RunConfig>(parsed);
    const std::string id = fmt::format("{} {}", coll.bench, version_string());
    const auto port = static_cast<std::uint16_t>(config.rdma.tcp_port);
    std::unique_ptr<TcpPair> pair;
    if (config.rdma.server) {
      fmt::print(stderr, "{}: waiting up to {:g} s for a --connect peer on TCP port {}\n", coll.bench, config.timeout_s,
                 port);
      pair = TcpPair::listen(port, config.timeout_s, id);
    } else {
      pair = TcpPair::connect(config.rdma.connect, port, config.timeout_s, id);
    }
    const Launch launch{nullptr, [](int code) {
                          std::fflush(nullptr);
                          std::_Exit(code);
                        }};
    try {
      return run_program(collective, *pair, launch, line);
    } catch (const Reported& r) {
      return r.exit_code;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", coll.bench, e.what());
    return exit_code_of(e);
  }
}

/// --check-args: the command line as any run checks it (the same parse and validation, the same one line and
/// exit 2), without MPI or a GPU, so that a workflow script refuses a bad size or split before its first job
/// instead of keeping rules of its own. What needs the job (the ranks, the hosts) is checked by the run.
int check_args_main(Collective collective, const CommandLine& line) {
  const auto& coll = info(collective);
  try {
    const Parsed& parsed = line.parsed();
    if (const auto* early = std::get_if<EarlyExit>(&parsed)) {
      print_early_exit(coll, *early);
    }
    return kExitOk;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", coll.bench, e.what());
    return exit_code_of(e);
  }
}

int mpi_main(Collective collective, int argc, char** argv, const CommandLine& line) {
  try {
    MpiContext mpi(argc, argv);
    int code = kExitOk;
    {
      MpiGroup world(MPI_COMM_WORLD);
      const Launch launch{&world, [](int exit_code) { MpiContext::abort(exit_code); }};
      try {
        code = run_program(collective, world, launch, line);
      } catch (const Reported& r) {
        code = r.exit_code;
      }
    }
    MpiContext::finalize(kFinalizeWithinS, code, info(collective).bench);
    return code;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", info(collective).bench, e.what());
    return kExitFailure;
  }
}

}  // namespace

int bench_main(Collective collective, int argc, char** argv) {
  const std::span<const char* const> args(argv, static_cast<std::size_t>(argc));
  const CommandLine line(collective, args);
  switch (mode_of(collective, args)) {
    case Mode::CheckArgs:
      return check_args_main(collective, line);
    case Mode::StandalonePair:
      return standalone_main(collective, line);
    case Mode::MpiJob:
      break;
  }
  return mpi_main(collective, argc, argv, line);
}

}  // namespace ccbench
