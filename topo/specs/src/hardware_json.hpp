#pragma once
// The text of topo/specs/hardware.json, compiled in at configure time (hardware_json.cpp.in).
#include <string_view>

namespace ccbench::topo::detail {

/// topo/specs/hardware.json as it was when the build was configured.
std::string_view builtin_hardware_json();

}  // namespace ccbench::topo::detail
