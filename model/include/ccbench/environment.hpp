#pragma once
// Facts about the process environment that go into results.
#include <map>
#include <string>
#include <string_view>

namespace ccbench {

/// Environment variables that steer communication, taken by allow-list (prefixes such as
/// NCCL_, UCX_, OMPI_MCA_ and names such as CUDA_VISIBLE_DEVICES), never the whole
/// environment; names that look like secrets are dropped even when a prefix matches.
std::map<std::string, std::string> communication_variables(const char* const* envp);
bool is_allowed_variable(std::string_view name);

std::string local_hostname();
/// What tells two host names apart as machines: "boot_id B interfaces H (N MACs)", B the kernel's boot id (new at
/// every boot, one per kernel) and H a hash of the sorted MAC addresses of the network interfaces but loopback's
/// (one per network namespace). Two names with the same are one machine: a hostfile listing it twice under two
/// names makes one "pair" a loopback. "" where neither can be read. `proc` and `sys` for tests.
std::string machine_identity(const std::string& proc = "/proc", const std::string& sys = "/sys");
/// "2026-11-22T04:05:06.123Z"
std::string utc_now_iso8601();
/// "20261122T040506Z", for file names.
std::string utc_now_compact();
/// 16 random hex digits.
std::string make_run_id();

}  // namespace ccbench
