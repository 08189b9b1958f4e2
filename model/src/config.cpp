#include "ccbench/config.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>

#include "ccbench/text.hpp"

namespace ccbench {

std::string_view name(BackendChoice choice) {
  switch (choice) {
    case BackendChoice::Auto:
      return "auto";
    case BackendChoice::Mpi:
      return "mpi";
    case BackendChoice::Nccl:
      return "nccl";
    case BackendChoice::Verbs:
      return "verbs";
  }
  return "auto";
}

std::string_view name(TimingMode mode) {
  switch (mode) {
    case TimingMode::Batch:
      return "batch";
    case TimingMode::PerOp:
      return "per_op";
    case TimingMode::Graph:
      return "graph";
  }
  return "batch";
}

std::optional<TimingMode> parse_timing_mode(std::string_view text) {
  if (text == "batch") {
    return TimingMode::Batch;
  }
  if (text == "per_op" || text == "per-op") {
    return TimingMode::PerOp;
  }
  if (text == "graph") {
    return TimingMode::Graph;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front())) == 0) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0; ++i) {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return std::nullopt;
    }
    value = value * 10 + digit;
  }
  std::string_view suffix = text.substr(i);
  unsigned shift = 0;
  if (!suffix.empty()) {
    switch (std::toupper(static_cast<unsigned char>(suffix.front()))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      case 'B':
        break;
      default:
        return std::nullopt;
    }
    suffix.remove_prefix(1);
    if (shift != 0 && (suffix == "iB" || suffix == "B" || suffix == "ib" || suffix == "b")) {
      suffix = {};
    }
    if (!suffix.empty()) {
      return std::nullopt;
    }
  }
  if (shift != 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift)) {
    return std::nullopt;
  }
  return value << shift;
}

std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor,
                                       std::uint64_t element_bytes) {
  std::vector<std::uint64_t> sizes;
  if (min_bytes == 0 || min_bytes > max_bytes || !(factor > 1.0) || !std::isfinite(factor) || element_bytes == 0) {
    return sizes;
  }
  auto size = static_cast<double>(min_bytes);
  while (size <= static_cast<double>(max_bytes) * (1.0 + 1e-12)) {
    auto bytes = static_cast<std::uint64_t>(std::llround(size));
    if (bytes >= element_bytes) {
      bytes -= bytes % element_bytes;
    }
    if (sizes.empty() || sizes.back() != bytes) {
      sizes.push_back(bytes);
    }
    size *= factor;
  }
  return sizes;
}

std::size_t sweep_length(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor) {
  if (min_bytes == 0 || min_bytes > max_bytes || !(factor > 1.0) || !std::isfinite(factor)) {
    return 0;
  }
  const double steps = std::log(static_cast<double>(max_bytes) / static_cast<double>(min_bytes)) / std::log(factor);
  return static_cast<std::size_t>(std::min(steps + 1e-9, 1e18)) + 1;
}

namespace {

// Counts that size memory (samples are kept) or time, and the sweep's sizes.
void validate_ranges(const RunConfig& c, std::vector<std::string>& errors) {
  const auto count = [&](std::optional<std::uint64_t> v, std::string_view flag) {
    if (v && *v > FlagLimits::kMaxCount) {
      errors.push_back(fmt::format("{} {} is more than {}", flag, *v, FlagLimits::kMaxCount));
    }
  };
  count(c.iters, "--iters");
  count(c.warmup_iters, "--warmup-iters");
  count(c.batch_ops, c.timing == TimingMode::Graph ? "--graph" : "--batch");
  count(c.max_samples, "--max-samples");
  if (const std::size_t n = sweep_length(c.min_bytes, c.max_bytes, c.step_factor); n > FlagLimits::kMaxSizes) {
    errors.push_back(fmt::format("--step-factor {} makes {} sizes from {} to {} B; at most {} (raise -f)",
                                 c.step_factor, n, c.min_bytes, c.max_bytes, FlagLimits::kMaxSizes));
  }
  const std::uint64_t element = size_of(c.dtype);
  for (const auto& [flag, bytes] : {std::pair{"--min-bytes", c.min_bytes}, std::pair{"--max-bytes", c.max_bytes}}) {
    if (bytes > FlagLimits::kMaxBytes) {
      errors.push_back(fmt::format("{} {} is more than {} (1024T)", flag, bytes, FlagLimits::kMaxBytes));
    } else if (bytes >= element && bytes % element != 0) {
      errors.push_back(fmt::format("{} {} is not a whole number of {} elements ({} B each): use {} or {}", flag, bytes,
                                   name(c.dtype), element, bytes - bytes % element, bytes - bytes % element + element));
    }
  }
}

void validate_rdma(const RunConfig& c, std::vector<std::string>& errors) {
  const RdmaOptions& r = c.rdma;
  if (r.ib_port < 1 || r.ib_port > 255) {
    errors.push_back(fmt::format("--ib-port {} must be a port number from 1 (see ibv_devinfo)", r.ib_port));
  }
  if (r.gid_index && (*r.gid_index < 0 || *r.gid_index > 65535)) {
    errors.push_back(fmt::format("--gid-index {} must be 0 or more (see show_gids or ibv_devinfo -v)", *r.gid_index));
  }
  if (r.mtu && *r.mtu != 256 && *r.mtu != 512 && *r.mtu != 1024 && *r.mtu != 2048 && *r.mtu != 4096) {
    errors.push_back(fmt::format("--mtu {} must be one of 256, 512, 1024, 2048, 4096", *r.mtu));
  }
  if (r.tx_depth < 1 || r.tx_depth > 65536) {
    errors.push_back(fmt::format("--tx-depth {} must be from 1 to 65536", r.tx_depth));
  }
  if (r.qps < 1 || r.qps > 1024) {
    errors.push_back(fmt::format("--qp {} must be from 1 to 1024", r.qps));
  }
  if (r.cq_mod < 1 || r.cq_mod > r.tx_depth) {
    errors.push_back(fmt::format("--cq-mod {} must be from 1 to --tx-depth ({})", r.cq_mod, r.tx_depth));
  }
  if (r.inline_size && (*r.inline_size < 0 || *r.inline_size > 65536)) {
    errors.push_back(fmt::format("--inline-size {} must be from 0 to 65536 bytes", *r.inline_size));
  }
  if (r.mem != "host" && !(r.mem.starts_with("cuda:") && r.mem.size() > 5 &&
                           r.mem.find_first_not_of("0123456789", 5) == std::string::npos)) {
    errors.push_back(fmt::format("--mem '{}' must be host or cuda:N (a CUDA device index)", r.mem));
  } else if (r.mem.size() > 9) {
    errors.push_back(fmt::format("--mem '{}': the device index is too large", r.mem));
  } else if (r.mem != "host" && c.collective == Collective::IbWriteLat) {
    errors.emplace_back(
        "--mem cuda:N is for ib_write_bw_bench: ib_write_lat_bench detects each write by polling "
        "its last byte from the CPU, so its buffer is host memory");
  }
  if (r.server && !r.connect.empty()) {
    errors.emplace_back("--server and --connect are the two sides of a standalone pair: give one of them");
  }
  if (r.tcp_port < 1 || r.tcp_port > 65535) {
    errors.push_back(fmt::format("--port {} must be a TCP port from 1 to 65535", r.tcp_port));
  }
  if (c.all_pairs && (r.server || !r.connect.empty())) {
    errors.emplace_back("--all-pairs needs mpirun (every rank with every other); the standalone mode is one pair");
  }
  if (r.bidir && c.collective == Collective::IbWriteLat) {
    errors.emplace_back("--bidirectional is for ib_write_bw_bench (a latency ping-pong goes both ways already)");
  }
}

}  // namespace

std::optional<std::string> timeout_error(double seconds) {
  if (seconds > 0.0 && seconds <= FlagLimits::kMaxTimeoutS) {
    return std::nullopt;
  }
  return fmt::format("--timeout must be positive seconds, at most {:g} (a day)", FlagLimits::kMaxTimeoutS);
}

std::vector<std::string> validate(const RunConfig& c) {
  std::vector<std::string> errors;
  if (c.min_bytes == 0) {
    errors.emplace_back("--min-bytes must be at least 1 byte");
  }
  if (c.min_bytes > c.max_bytes) {
    errors.push_back(fmt::format("--min-bytes {} is larger than --max-bytes {}; swap them or raise -e",
                                 format_size(c.min_bytes, SizeStyle::Short),
                                 format_size(c.max_bytes, SizeStyle::Short)));
  }
  if (!(c.step_factor > 1.0) || !std::isfinite(c.step_factor)) {
    errors.push_back(fmt::format("--step-factor {} must be greater than 1 (e.g. -f 2)", c.step_factor));
  }
  if (c.iters && *c.iters == 0) {
    errors.emplace_back("--iters must be at least 1 (or leave it out for adaptive stopping)");
  }
  validate_ranges(c, errors);
  if (c.batch_ops && *c.batch_ops == 0) {
    errors.emplace_back(c.timing == TimingMode::Graph ? "--graph must be at least 1 op per graph"
                                                      : "--batch must be at least 1");
  }
  if (c.timing == TimingMode::Graph && c.backend == BackendChoice::Mpi) {
    errors.emplace_back("--timing graph captures CUDA graphs: it needs --backend nccl (or auto on a GPU)");
  }
  if (c.nccl_variants && c.backend != BackendChoice::Nccl && c.backend != BackendChoice::Auto) {
    errors.push_back(
        fmt::format("--nccl-variants forces NCCL's ring algorithm: it needs --backend nccl, not {}", name(c.backend)));
  }
  if (c.registration != Registration::None && c.backend != BackendChoice::Nccl && c.backend != BackendChoice::Auto) {
    errors.push_back(fmt::format("-R {} registers NCCL's buffers: it needs --backend nccl, not {}",
                                 static_cast<int>(c.registration), name(c.backend)));
  }
  if (c.all_pairs && !is_rdma(c.collective) && c.split != Split::World) {
    errors.push_back(
        fmt::format("--all-pairs and --split {}: give one of them (--all-pairs makes its own pairs)", name(c.split)));
  }
  if (c.all_pairs && c.nccl_variants) {
    errors.emplace_back("--all-pairs and --nccl-variants: run the ring variant as a sweep of its own");
  }
  if (c.hosts_per_group != 0) {
    if (info(c.collective).pairwise) {
      errors.push_back(fmt::format(
          "--hosts-per-group is for the collective benches; {} measures between the ranks of pairs: --all-pairs",
          info(c.collective).bench));
    } else if (c.hosts_per_group < 2) {
      errors.push_back(fmt::format("--hosts-per-group {} must be 2 or more (one host per group is --split node)",
                                   c.hosts_per_group));
    } else if (c.all_pairs || c.split != Split::World) {
      errors.push_back(
          fmt::format("--hosts-per-group and {}: give one of them",
                      c.all_pairs ? std::string{"--all-pairs"} : fmt::format("--split {}", name(c.split))));
    }
  }
  if (c.timing == TimingMode::Graph && is_rdma(c.collective)) {
    errors.emplace_back("--timing graph is for NCCL collectives; ib_write_* time each write on the host");
  }
  if (!(c.target_ci > 0.0 && c.target_ci < 1.0)) {
    errors.push_back(fmt::format("--target-ci {} must be a fraction in (0, 1), e.g. 0.01 for 1%", c.target_ci));
  }
  if (c.time_budget_s && !(*c.time_budget_s > 0.0 && *c.time_budget_s <= FlagLimits::kMaxTimeBudgetS)) {
    errors.push_back(fmt::format("--time-budget must be positive seconds, at most {:g}", FlagLimits::kMaxTimeBudgetS));
  }
  if (auto error = timeout_error(c.timeout_s)) {
    errors.push_back(std::move(*error));
  }
  if (c.min_samples == 0 || c.min_samples > c.max_samples) {
    errors.emplace_back("--min-samples must be at least 1 and at most --max-samples");
  }
  if (c.root < 0) {
    errors.push_back(fmt::format("--root {} must be a rank (0 or more)", c.root));
  }
  if (c.peak_GBps && !(*c.peak_GBps >= FlagLimits::kMinPeakGBps && *c.peak_GBps <= FlagLimits::kMaxPeakGBps)) {
    errors.push_back(fmt::format("--peak-GBps {} must be from {:g} to {:g} GB/s", *c.peak_GBps,
                                 FlagLimits::kMinPeakGBps, FlagLimits::kMaxPeakGBps));
  }
  if (is_rdma(c.collective)) {
    validate_rdma(c, errors);
  }
  return errors;
}

}  // namespace ccbench
