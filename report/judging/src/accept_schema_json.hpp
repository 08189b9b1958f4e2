#pragma once
#include <string_view>

namespace ccbench::report::detail {

/// The text of report/schema/ccbench.accept.schema.json, compiled in.
std::string_view builtin_accept_schema();

}  // namespace ccbench::report::detail
