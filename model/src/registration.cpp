#include "ccbench/registration.hpp"

#include <fmt/format.h>

namespace ccbench {

std::string nccl_version_text(int code) {
  return code >= 10000 ? fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100)
                       : fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
}

std::string_view name(Registration mode) {
  switch (mode) {
    case Registration::None:
      return "none";
    case Registration::Local:
      return "local";
    case Registration::Symmetric:
      return "symmetric";
  }
  return "none";
}

std::optional<Registration> parse_registration(std::string_view text) {
  for (const auto mode : {Registration::None, Registration::Local, Registration::Symmetric}) {
    if (text == name(mode) || text == std::to_string(static_cast<int>(mode))) {
      return mode;
    }
  }
  return std::nullopt;
}

std::string registration_refusal(Registration mode, int built, int loaded) {
  if (mode == Registration::None) {
    return {};
  }
  const bool symmetric = mode == Registration::Symmetric;
  const int since = symmetric ? kWindowSince : kRegisterSince;
  const char* what =
      symmetric ? "symmetric windows (ncclCommWindowRegister)" : "registered buffers (ncclMemAlloc, ncclCommRegister)";
  if (built < since) {
    return fmt::format("-R {}: {} need NCCL {} or later, and this build's nccl.h is {}; rebuild against a newer NCCL",
                       static_cast<int>(mode), what, nccl_version_text(since), nccl_version_text(built));
  }
  if (loaded < since) {
    return fmt::format("-R {}: {} need NCCL {} or later, and the NCCL library loaded{} is {}", static_cast<int>(mode),
                       what, nccl_version_text(since), " (on the oldest rank)", nccl_version_text(loaded));
  }
  return {};
}

}  // namespace ccbench
