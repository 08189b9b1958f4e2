#include "ccbench/environment.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

namespace ccbench {
namespace {

constexpr std::array<std::string_view, 15> kPrefixes{
    "NCCL_", "UCX_",  "OMPI_MCA_", "HCOLL_", "NVSHMEM_", "FI_",          "I_MPI_",      "MPICH_",
    "MV2_",  "CUDA_", "MLX5_",     "IBV_",   "RDMAV_",   "GLOO_SOCKET_", "TORCH_NCCL_",
};
// What mpirun itself sets for its ranks (daemon URIs, session dirs, transport keys): not
// choices the user made, and some of it is secret.
constexpr std::array<std::string_view, 6> kLauncherPrefixes{
    "OMPI_MCA_orte_",          "OMPI_MCA_ess",
    "OMPI_MCA_pmix",           "OMPI_MCA_initial_wdir",
    "OMPI_MCA_shmem_RUNTIME_", "OMPI_MCA_mpi_oversubscribe",
};
constexpr std::array<std::string_view, 8> kNames{
    "OMP_NUM_THREADS",    "SLURM_JOB_ID",   "SLURM_NNODES",        "SLURM_NTASKS",
    "SLURM_JOB_NODELIST", "SLURM_CPU_BIND", "SLURM_GPUS_PER_NODE", "LD_PRELOAD",
};
// Words that mark a secret anywhere in a name, in any case (OMPI_MCA_token, UCX_PASSPHRASE).
constexpr std::array<std::string_view, 9> kSecretWords{"TOKEN", "SECRET",     "PASSW",        "PASSPHRASE", "AUTH",
                                                       "KEY",   "CREDENTIAL", "PRECONDITION", "PRIVATE"};
// Settings whose names hold a secret word but whose values are no secret: partition keys.
constexpr std::array<std::string_view, 3> kNotSecrets{"NCCL_IB_PKEY", "UCX_IB_PKEY", "OMPI_MCA_BTL_OPENIB_PKEY"};

std::string upper(std::string_view s) {
  std::string out(s);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

bool starts_with_upper(std::string_view name_upper, std::string_view prefix) {
  return name_upper.starts_with(upper(prefix));
}

}  // namespace

bool is_allowed_variable(std::string_view name) {
  const std::string u = upper(name);
  const bool known = std::ranges::find(kNotSecrets, u) != kNotSecrets.end();
  if (!known &&
      std::ranges::any_of(kSecretWords, [&u](std::string_view w) { return u.find(w) != std::string::npos; })) {
    return false;
  }
  if (std::ranges::any_of(kLauncherPrefixes, [&u](std::string_view p) { return starts_with_upper(u, p); })) {
    return false;
  }
  return std::ranges::any_of(kPrefixes, [&u](std::string_view p) { return starts_with_upper(u, p); }) ||
         std::ranges::any_of(kNames, [&u](std::string_view n) { return u == upper(n); });
}

std::map<std::string, std::string> communication_variables(const char* const* envp) {
  std::map<std::string, std::string> out;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    const std::string_view entry{*envp};
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    const auto key = entry.substr(0, eq);
    if (is_allowed_variable(key)) {
      out.emplace(key, entry.substr(eq + 1));
    }
  }
  return out;
}

std::string local_hostname() {
  std::array<char, HOST_NAME_MAX + 1> buf{};
  if (::gethostname(buf.data(), buf.size() - 1) != 0) {
    return "unknown";
  }
  return buf.data();
}

std::string machine_identity(const std::string& proc, const std::string& sys) {
  std::string boot_id;
  std::ifstream(proc + "/sys/kernel/random/boot_id") >> boot_id;
  std::vector<std::string> macs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(sys + "/class/net", ec)) {
    std::string mac;
    std::ifstream(entry.path() / "address") >> mac;
    if (entry.path().filename() != "lo" && !mac.empty() && mac.find_first_not_of("0:") != std::string::npos) {
      macs.push_back(std::move(mac));
    }
  }
  if (boot_id.empty() && macs.empty()) {
    return {};
  }
  std::sort(macs.begin(), macs.end());
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a 64
  for (const auto& mac : macs) {
    for (const char c : mac + ";") {
      hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
  }
  return fmt::format("boot_id {} interfaces {:016x} ({} MAC{})", boot_id.empty() ? "?" : boot_id, hash, macs.size(),
                     macs.size() == 1 ? "" : "s");
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", fmt::gmtime(std::chrono::system_clock::to_time_t(now)), ms);
}

std::string utc_now_compact() {
  return fmt::format("{:%Y%m%dT%H%M%SZ}",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

std::string make_run_id() {
  std::random_device rd;
  const std::uint64_t hi = rd();
  const std::uint64_t lo = rd();
  return fmt::format("{:016x}", (hi << 32) | lo);
}

}  // namespace ccbench
