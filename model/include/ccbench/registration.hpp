#pragma once
// -R 0|1|2, as nccl-tests' --local_register: the NCCL backend's buffers from ncclMemAlloc registered with the
// communicator (ncclCommRegister, 1) or as symmetric windows (ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC,
// 2). On NVSwitch nodes registered buffers are what lets NVLS reach its published all-reduce numbers.
#include <optional>
#include <string>
#include <string_view>

namespace ccbench {

enum class Registration { None = 0, Local = 1, Symmetric = 2 };

/// "none", "local", "symmetric" (the result's `registration`).
std::string_view name(Registration mode);
/// "0"/"none", "1"/"local", "2"/"symmetric"; nullopt otherwise.
std::optional<Registration> parse_registration(std::string_view text);

/// NCCL_VERSION_CODE of the first NCCL with ncclMemAlloc and ncclCommRegister (2.19), and with
/// ncclCommWindowRegister and NCCL_WIN_COLL_SYMMETRIC (2.27).
inline constexpr int kRegisterSince = 21900;
inline constexpr int kWindowSince = 22700;

/// "2.29.2" for an NCCL_VERSION_CODE (major*10000 + minor*100 + patch since 2.9; major*1000 + minor*100 + patch
/// before).
std::string nccl_version_text(int code);

/// Why -R `mode` cannot run, in one line; empty when it can. `built` is the NCCL_VERSION_CODE of the nccl.h the
/// backend was compiled against, `loaded` the oldest library loaded in the job (ncclGetVersion): both need the
/// calls. nccl-tests quietly falls back from -R 2 to 1 before 2.27; ccbench refuses, so that a result labelled
/// symmetric always was.
std::string registration_refusal(Registration mode, int built, int loaded);

}  // namespace ccbench
