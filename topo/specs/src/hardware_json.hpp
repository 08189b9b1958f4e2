#pragma once
// The texts of topo/specs/hardware.json and its schema, compiled in at configure time (hardware_json.cpp.in).
#include <string_view>

namespace ccbench::topo::detail {

/// topo/specs/hardware.json as it was when the build was configured.
std::string_view builtin_hardware_json();

/// topo/specs/hardware.schema.json, likewise: what every database is checked against before it is read.
std::string_view hardware_schema_json();

}  // namespace ccbench::topo::detail
