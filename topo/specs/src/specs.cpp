// GCC 12 reports -Wmaybe-uninitialized inside libstdc++'s regex compiler (std::function in
// _Compiler::_M_disjunction) when optimising with sanitizers: GCC bug 105562, a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "ccbench/topo/specs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "ccbench/json_schema.hpp"
#include "hardware_json.hpp"

namespace ccbench::topo {
namespace {

using nlohmann::json;

constexpr int kMaxPcieWidth = 32;
// A reported port rate matches a rated port within this many Gb/s (rates are whole numbers).
constexpr double kRateTolerance_Gbps = 0.5;

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

[[noreturn]] void fail(std::string_view where, std::string_view what) {
  throw SpecError(fmt::format("hardware database: {}: {}", where, what));
}

/// topo/specs/hardware.schema.json: types, required and unknown keys, ranges and enums are its to say.
const JsonSchema& hardware_schema() {
  static const JsonSchema schema(json::parse(detail::hardware_schema_json()));
  return schema;
}

/// A text the schema has as a non-empty string; the reader also refuses one of white space alone.
std::string text(const json& obj, std::string_view key, std::string_view where) {
  auto value = obj.at(key).get<std::string>();
  if (trim(value).empty()) {
    fail(where, fmt::format("\"{}\" must be a non-empty string", key));
  }
  return value;
}

std::vector<std::regex> compile_patterns(const GpuSpec& gpu, std::string_view where) {
  std::vector<std::regex> out;
  for (const auto& pattern : gpu.nvml_names) {
    try {
      out.emplace_back(pattern, std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
      fail(where, fmt::format("nvml_names pattern \"{}\" is not a valid regular expression: {}", pattern, e.what()));
    }
  }
  return out;
}

/// The total the schema cannot check: links x the rate of one (0 x 0 for a GPU without NVLink).
void check_nvlink(const GpuSpec& gpu, std::string_view where) {
  const double product = gpu.nvlink_links * gpu.nvlink_link_GBps;
  if (std::abs(product - gpu.nvlink_total_GBps) > 1e-9 * std::max(1.0, product)) {
    fail(where, fmt::format("nvlink_total_GBps {:g} is not nvlink_links x nvlink_link_GBps = {:g}",
                            gpu.nvlink_total_GBps, product));
  }
}

std::pair<GpuSpec, std::vector<std::regex>> parse_gpu(const json& entry, std::size_t index) {
  GpuSpec gpu;
  gpu.model = text(entry, "model", fmt::format("gpus[{}]", index));
  const std::string where = fmt::format("gpus[{}] \"{}\"", index, gpu.model);
  gpu.nvml_names = entry.at("nvml_names").get<std::vector<std::string>>();
  gpu.nvml_names_source = text(entry, "nvml_names_source", where);
  gpu.nvlink_version = entry.at("nvlink_version").get<int>();
  gpu.nvlink_links = entry.at("nvlink_links").get<int>();
  gpu.nvlink_link_GBps = entry.at("nvlink_link_GBps").get<double>();
  gpu.nvlink_total_GBps = entry.at("nvlink_total_GBps").get<double>();
  gpu.hbm_GBps = entry.at("hbm_GBps").get<double>();
  gpu.pcie_gen = entry.at("pcie_gen").get<int>();
  gpu.source = text(entry, "source", where);
  check_nvlink(gpu, where);
  auto patterns = compile_patterns(gpu, where);
  return {std::move(gpu), std::move(patterns)};
}

/// A lane's rate per direction, GB/s: transfers per second times the encoding's payload fraction
/// (128 of 130 bits, ...), so that no rounded figure stands in for the exact one.
double lane_rate(const json& row, std::string_view where) {
  const auto gt_per_s = row.at("GT_per_s").get<double>();
  const auto encoding = row.at("encoding").get<std::array<std::int64_t, 2>>();  // two whole numbers >= 1
  if (encoding[1] < encoding[0]) {
    fail(where, "\"encoding\" must be [payload, line] bits, whole numbers with 0 < payload <= line");
  }
  constexpr double kBitsPerByte = 8.0;
  return gt_per_s * static_cast<double>(encoding[0]) / static_cast<double>(encoding[1]) / kBitsPerByte;
}

std::vector<double> parse_pcie_lanes(const json& pcie) {
  std::vector<double> lanes;
  for (const auto& row : pcie.at("lanes")) {
    const std::string where = fmt::format("pcie.lanes[{}]", lanes.size());
    if (row.at("gen").get<int>() != static_cast<int>(lanes.size()) + 1) {
      fail(where, fmt::format("expected gen {} (generations 1, 2, ... in order)", lanes.size() + 1));
    }
    lanes.push_back(lane_rate(row, where));
  }
  return lanes;
}

NicPortSpec parse_nic(const json& entry, std::size_t index) {
  NicPortSpec port;
  port.link.name = text(entry, "name", fmt::format("nics[{}]", index));
  const std::string where = fmt::format("nics[{}] \"{}\"", index, port.link.name);
  port.link_layer = entry.at("link_layer").get<std::string>();
  port.rate_Gbps = entry.at("rate_Gbps").get<double>();
  port.width = entry.value("width", 0);
  port.link.GBps = entry.at("GBps").get<double>();
  port.link.source = text(entry, "source", where);
  return port;
}

}  // namespace

SpecDatabase SpecDatabase::parse(std::string_view json_text) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    fail("document", fmt::format("not valid JSON: {}", e.what()));
  }
  // The one way JSON is read here: the schema first (one line with the JSON pointer), then typed reads of
  // what it guarantees, then the rules no schema says (unique models and ports, regexes that compile,
  // NVLink totals, PCIe generations in order).
  if (const auto problem = hardware_schema().first_problem(doc)) {
    fail(problem->pointer.empty() ? "document" : problem->pointer, problem->message);
  }
  SpecDatabase db;
  std::set<std::string> models;
  const json& gpus = doc.at("gpus");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    auto [gpu, patterns] = parse_gpu(gpus[i], i);
    if (!models.insert(gpu.model).second) {
      fail(fmt::format("gpus[{}]", i), fmt::format("model \"{}\" appears twice", gpu.model));
    }
    db.m_gpus.push_back(std::move(gpu));
    db.m_gpu_patterns.push_back(std::move(patterns));
  }
  db.m_pcie_source = text(doc.at("pcie"), "source", "pcie");
  db.m_pcie_lane_GBps = parse_pcie_lanes(doc.at("pcie"));
  const json& nics = doc.at("nics");
  for (std::size_t i = 0; i < nics.size(); ++i) {
    NicPortSpec port = parse_nic(nics[i], i);
    if (std::ranges::any_of(db.m_nic, [&port](const NicPortSpec& other) {
          return iequals(other.link_layer, port.link_layer) && other.width == port.width &&
                 std::abs(other.rate_Gbps - port.rate_Gbps) < kRateTolerance_Gbps;
        })) {
      fail(fmt::format("nics[{}]", i), "another port has the same link layer, width and rate");
    }
    db.m_nic.push_back(std::move(port));
  }
  return db;
}

const SpecDatabase& SpecDatabase::builtin() {
  static const SpecDatabase db = parse(detail::builtin_hardware_json());
  return db;
}

std::vector<const GpuSpec*> SpecDatabase::matching_gpus(std::string_view nvml_name) const {
  std::vector<const GpuSpec*> out;
  const std::string name{trim(nvml_name)};
  if (name.empty()) {
    return out;
  }
  for (std::size_t i = 0; i < m_gpus.size(); ++i) {
    const auto& patterns = m_gpu_patterns[i];
    if (std::ranges::any_of(patterns, [&name](const std::regex& re) { return std::regex_match(name, re); })) {
      out.push_back(&m_gpus[i]);
    }
  }
  return out;
}

const GpuSpec* SpecDatabase::find_gpu(std::string_view nvml_name) const {
  const auto matches = matching_gpus(nvml_name);
  return matches.empty() ? nullptr : matches.front();
}

std::optional<LinkSpec> SpecDatabase::pcie(int gen, int width) const {
  if (gen < 1 || gen > static_cast<int>(m_pcie_lane_GBps.size()) || width < 1 || width > kMaxPcieWidth) {
    return std::nullopt;
  }
  const double lane = m_pcie_lane_GBps[static_cast<std::size_t>(gen - 1)];
  return LinkSpec{fmt::format("PCIe Gen{} x{}", gen, width), lane * width, m_pcie_source};
}

std::optional<LinkSpec> SpecDatabase::nic(double rate_Gbps, std::string_view link_layer, int width) const {
  std::vector<const NicPortSpec*> matches;
  for (const auto& port : m_nic) {
    const bool same_width = width <= 0 || port.width <= 0 || port.width == width;
    if (iequals(trim(link_layer), port.link_layer) && std::abs(rate_Gbps - port.rate_Gbps) < kRateTolerance_Gbps &&
        same_width) {
      matches.push_back(&port);
    }
  }
  if (matches.empty()) {
    return std::nullopt;
  }
  if (matches.size() == 1) {
    return matches.front()->link;
  }
  // Several ports have this rate (EDR and HDR100 both run 100 Gb/s) and the width was not reported:
  // the bandwidth is the same, the name must not pick one.
  return LinkSpec{fmt::format("{} {:g} Gb/s", matches.front()->link_layer, matches.front()->rate_Gbps),
                  matches.front()->link.GBps, matches.front()->link.source};
}

}  // namespace ccbench::topo
