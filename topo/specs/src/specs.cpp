// GCC 12 reports -Wmaybe-uninitialized inside libstdc++'s regex compiler (std::function in
// _Compiler::_M_disjunction) when optimising with sanitizers: GCC bug 105562, a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "ccbench/topo/specs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "hardware_json.hpp"

namespace ccbench::topo {
namespace {

using nlohmann::json;

constexpr std::string_view kSchema = "ccbench.hardware";
constexpr int kMaxPcieGen = 6;
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

/// Rejects keys the format does not know: a misspelt key would otherwise be silently ignored.
void reject_unknown_keys(const json& obj, std::initializer_list<std::string_view> allowed, std::string_view where) {
  if (!obj.is_object()) {
    fail(where, "expected an object");
  }
  for (const auto& item : obj.items()) {
    if (std::ranges::find(allowed, std::string_view{item.key()}) == allowed.end()) {
      fail(where, fmt::format("unknown key \"{}\"", item.key()));
    }
  }
}

const json& require(const json& obj, std::string_view key, std::string_view where) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    fail(where, fmt::format("missing \"{}\"", key));
  }
  return *it;
}

std::string require_string(const json& obj, std::string_view key, std::string_view where) {
  const json& value = require(obj, key, where);
  if (!value.is_string() || trim(value.get_ref<const std::string&>()).empty()) {
    fail(where, fmt::format("\"{}\" must be a non-empty string", key));
  }
  return value.get<std::string>();
}

double require_number(const json& obj, std::string_view key, std::string_view where) {
  const json& value = require(obj, key, where);
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0.0) {
    fail(where, fmt::format("\"{}\" must be a number >= 0", key));
  }
  return value.get<double>();
}

int require_int(const json& obj, std::string_view key, std::string_view where) {
  const json& value = require(obj, key, where);
  if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > 1000000) {
    fail(where, fmt::format("\"{}\" must be a whole number >= 0", key));
  }
  return value.get<int>();
}

const json& require_array(const json& obj, std::string_view key, std::string_view where) {
  const json& value = require(obj, key, where);
  if (!value.is_array() || value.empty()) {
    fail(where, fmt::format("\"{}\" must be a non-empty array", key));
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

void check_nvlink(const GpuSpec& gpu, std::string_view where) {
  if (gpu.nvlink_version == 0) {
    if (gpu.nvlink_links != 0 || gpu.nvlink_link_GBps != 0.0 || gpu.nvlink_total_GBps != 0.0) {
      fail(where, "nvlink_version 0 (no NVLink) needs nvlink_links and the NVLink rates at 0");
    }
    return;
  }
  if (gpu.nvlink_links <= 0 || gpu.nvlink_link_GBps <= 0.0) {
    fail(where, "an NVLink GPU needs nvlink_links > 0 and nvlink_link_GBps > 0");
  }
  const double product = gpu.nvlink_links * gpu.nvlink_link_GBps;
  if (std::abs(product - gpu.nvlink_total_GBps) > 1e-9 * std::max(1.0, product)) {
    fail(where, fmt::format("nvlink_total_GBps {:g} is not nvlink_links x nvlink_link_GBps = {:g}",
                            gpu.nvlink_total_GBps, product));
  }
}

std::pair<GpuSpec, std::vector<std::regex>> parse_gpu(const json& entry, std::size_t index) {
  std::string where = fmt::format("gpus[{}]", index);
  reject_unknown_keys(entry,
                      {"model", "nvml_names", "nvml_names_source", "nvlink_version", "nvlink_links", "nvlink_link_GBps",
                       "nvlink_total_GBps", "hbm_GBps", "pcie_gen", "source", "note"},
                      where);
  GpuSpec gpu;
  gpu.model = require_string(entry, "model", where);
  where = fmt::format("gpus[{}] \"{}\"", index, gpu.model);
  for (const auto& name : require_array(entry, "nvml_names", where)) {
    if (!name.is_string() || name.get_ref<const std::string&>().empty()) {
      fail(where, "nvml_names must hold non-empty strings");
    }
    gpu.nvml_names.push_back(name.get<std::string>());
  }
  gpu.nvml_names_source = require_string(entry, "nvml_names_source", where);
  gpu.nvlink_version = require_int(entry, "nvlink_version", where);
  gpu.nvlink_links = require_int(entry, "nvlink_links", where);
  gpu.nvlink_link_GBps = require_number(entry, "nvlink_link_GBps", where);
  gpu.nvlink_total_GBps = require_number(entry, "nvlink_total_GBps", where);
  gpu.hbm_GBps = require_number(entry, "hbm_GBps", where);
  gpu.pcie_gen = require_int(entry, "pcie_gen", where);
  gpu.source = require_string(entry, "source", where);
  check_nvlink(gpu, where);
  if (gpu.hbm_GBps <= 0.0) {
    fail(where, "hbm_GBps must be > 0");
  }
  if (gpu.pcie_gen < 1 || gpu.pcie_gen > kMaxPcieGen) {
    fail(where, fmt::format("pcie_gen must be 1..{}", kMaxPcieGen));
  }
  auto patterns = compile_patterns(gpu, where);
  return {std::move(gpu), std::move(patterns)};
}

/// A lane's rate per direction: transfers per second times the encoding's payload fraction
/// (128 of 130 bits, ...), so that no rounded figure stands in for the exact one.
double lane_GBps(const json& row, std::string_view where) {
  const double gt_per_s = require_number(row, "GT_per_s", where);
  const json& encoding = require_array(row, "encoding", where);
  if (encoding.size() != 2 || !encoding[0].is_number_integer() || !encoding[1].is_number_integer() ||
      encoding[0].get<long long>() <= 0 || encoding[1].get<long long>() < encoding[0].get<long long>()) {
    fail(where, "\"encoding\" must be [payload, line] bits, whole numbers with 0 < payload <= line");
  }
  constexpr double kBitsPerByte = 8.0;
  return gt_per_s * encoding[0].get<double>() / encoding[1].get<double>() / kBitsPerByte;
}

std::vector<double> parse_pcie_lanes(const json& pcie) {
  constexpr std::string_view where = "pcie";
  std::vector<double> lanes;
  std::size_t i = 0;
  for (const auto& row : require_array(pcie, "lanes", where)) {
    const std::string row_where = fmt::format("pcie.lanes[{}]", i++);
    reject_unknown_keys(row, {"gen", "GT_per_s", "encoding"}, row_where);
    const int gen = require_int(row, "gen", row_where);
    const double lane = lane_GBps(row, row_where);
    if (gen != static_cast<int>(lanes.size()) + 1) {
      fail(row_where, fmt::format("expected gen {} (generations 1, 2, ... in order)", lanes.size() + 1));
    }
    if (gen > kMaxPcieGen || lane <= 0.0) {
      fail(row_where, fmt::format("gen must be 1..{} and GT_per_s > 0", kMaxPcieGen));
    }
    lanes.push_back(lane);
  }
  return lanes;
}

NicPortSpec parse_nic(const json& entry, std::size_t index) {
  std::string where = fmt::format("nics[{}]", index);
  reject_unknown_keys(entry, {"name", "link_layer", "rate_Gbps", "width", "GBps", "source", "note"}, where);
  NicPortSpec port;
  port.link.name = require_string(entry, "name", where);
  where = fmt::format("nics[{}] \"{}\"", index, port.link.name);
  port.link_layer = require_string(entry, "link_layer", where);
  port.rate_Gbps = require_number(entry, "rate_Gbps", where);
  port.width = entry.contains("width") ? require_int(entry, "width", where) : 0;
  port.link.GBps = require_number(entry, "GBps", where);
  port.link.source = require_string(entry, "source", where);
  if (!iequals(port.link_layer, "InfiniBand") && !iequals(port.link_layer, "Ethernet")) {
    fail(where, R"(link_layer must be "InfiniBand" or "Ethernet")");
  }
  if (port.rate_Gbps <= 0.0 || port.link.GBps <= 0.0) {
    fail(where, "rate_Gbps and GBps must be > 0");
  }
  return port;
}

void check_header(const json& doc) {
  reject_unknown_keys(doc, {"schema", "schema_version", "note", "gpus", "pcie", "nics"}, "document");
  if (require_string(doc, "schema", "document") != kSchema) {
    fail("document", fmt::format(R"("schema" must be "{}")", kSchema));
  }
  if (!require_string(doc, "schema_version", "document").starts_with("1.")) {
    fail("document", "unsupported \"schema_version\" (this build reads 1.x)");
  }
}

}  // namespace

SpecDatabase SpecDatabase::parse(std::string_view json_text) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::parse_error& e) {
    fail("document", fmt::format("not valid JSON: {}", e.what()));
  }
  check_header(doc);
  SpecDatabase db;
  std::set<std::string> models;
  const json& gpus = require_array(doc, "gpus", "document");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    auto [gpu, patterns] = parse_gpu(gpus[i], i);
    if (!models.insert(gpu.model).second) {
      fail(fmt::format("gpus[{}]", i), fmt::format("model \"{}\" appears twice", gpu.model));
    }
    db.m_gpus.push_back(std::move(gpu));
    db.m_gpu_patterns.push_back(std::move(patterns));
  }
  const json& pcie = require(doc, "pcie", "document");
  reject_unknown_keys(pcie, {"note", "source", "lanes"}, "pcie");
  db.m_pcie_source = require_string(pcie, "source", "pcie");
  db.m_pcie_lane_GBps = parse_pcie_lanes(pcie);
  const json& nics = require_array(doc, "nics", "document");
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
