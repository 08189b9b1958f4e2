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
/// "2026-11-22T04:05:06.123Z"
std::string utc_now_iso8601();
/// "20261122T040506Z", for file names.
std::string utc_now_compact();
/// 16 random hex digits.
std::string make_run_id();

}  // namespace ccbench
