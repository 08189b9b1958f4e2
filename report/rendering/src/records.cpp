#include "records.hpp"

#include <fmt/format.h>

#include "ccbench/report/text.hpp"

namespace ccbench::report::detail {

namespace {

std::string csv_cell(const nlohmann::ordered_json& v) {
  if (v.is_null()) {
    return "";
  }
  if (v.is_string()) {
    return csv_field(v.get<std::string>());
  }
  return v.is_number_float() ? fmt::format("{:.6g}", v.get<double>()) : csv_field(v.dump());
}

}  // namespace

nlohmann::ordered_json number_or_null(std::optional<double> value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

std::string csv_of(const std::vector<nlohmann::ordered_json>& records) {
  std::string out;
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::vector<std::string> names;
    std::vector<std::string> cells;
    for (const auto& [key, value] : records[i].items()) {
      names.push_back(key);
      cells.push_back(csv_cell(value));
    }
    if (i == 0) {
      out += fmt::format("{}\n", fmt::join(names, ","));
    }
    out += fmt::format("{}\n", fmt::join(cells, ","));
  }
  return out;
}

}  // namespace ccbench::report::detail
