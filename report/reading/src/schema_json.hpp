#pragma once
#include <string_view>

namespace ccbench::report::detail {

/// The text of report/schema/ccbench.result.schema.json, compiled in.
std::string_view builtin_result_schema();

}  // namespace ccbench::report::detail
