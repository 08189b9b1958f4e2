#pragma once
// Flat records (one JSON object per row) as the CSV and JSON printers write them.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ccbench::report::detail {

/// A number, or null when unknown.
nlohmann::ordered_json number_or_null(std::optional<double> value);

/// RFC 4180 CSV: a header line from the first record's keys, then one line per record (null is
/// an empty field, floats with 6 significant digits). Empty for no records.
std::string csv_of(const std::vector<nlohmann::ordered_json>& records);

}  // namespace ccbench::report::detail
