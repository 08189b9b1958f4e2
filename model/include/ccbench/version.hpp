#pragma once
#include <string_view>

namespace ccbench {
std::string_view tool_version();    // "0.1.0"
std::string_view git_revision();    // "abc1234" or "abc1234-dirty"; "unknown" outside git
std::string_view version_string();  // "ccbench 0.1.0 (git abc1234)"
}  // namespace ccbench
