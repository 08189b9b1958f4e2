// Acceptance profiles (profiles/*.json; the format is in profiles/README.md), read as hardware.json is: the
// document's identity first (which schema applies), then the schema (report/schema/ccbench.accept.schema.json:
// types, required and unknown keys, ranges, enums, each kind's keys), then typed reads of what it guarantees, then
// the rules a schema cannot say. Every problem is one InputError naming the file and the JSON pointer.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "accept_schema_json.hpp"
#include "ccbench/config.hpp"
#include "ccbench/json_schema.hpp"
#include "ccbench/report/accept.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report {

namespace {

using nlohmann::json;

constexpr std::uintmax_t kMaxProfileBytes = std::uintmax_t{1} << 20;

const JsonSchema& accept_schema() {
  static const JsonSchema schema(json::parse(detail::builtin_accept_schema()));
  return schema;
}

/// A value as the identity's messages name it: "string \"x\"", "number -1", "array".
std::string value_text(const json& value) {
  if (value.is_null() || value.is_structured()) {
    return value.type_name();
  }
  const std::string text = value.dump();
  return text.size() > 40 ? value.type_name() : fmt::format("{} {}", value.type_name(), text);
}

/// What the document is, before the schema: a result given as a profile is named so, and a profile of another
/// major version has another schema.
void check_identity(const json& root, const std::string& file) {
  if (!root.is_object()) {
    throw InputError(file, "", fmt::format("expected an accept profile (a JSON object), got {}", root.type_name()));
  }
  const auto kind = root.find("profile");
  if (kind == root.end()) {
    throw InputError(file, "/profile",
                     fmt::format("missing: an accept profile needs 'profile' (\"{}\")", kProfileName));
  }
  if (*kind != kProfileName) {
    throw InputError(file, "/profile",
                     fmt::format("expected \"{}\", got {}: not an accept profile", kProfileName, value_text(*kind)));
  }
  static const std::regex kVersion(R"(^([0-9]{1,6})\.[0-9]{1,6}\.[0-9]{1,6}$)");
  const auto version = root.value("profile_version", json{});
  std::smatch parts;
  const std::string text = version.is_string() ? version.get<std::string>() : std::string{};
  if (std::regex_match(text, parts, kVersion) && std::stoi(parts[1].str()) != kProfileMajorVersion) {
    throw InputError(file, "/profile_version",
                     fmt::format("version {} is not readable here: this ccbench-report reads {}.x.y profiles", text,
                                 kProfileMajorVersion));
  }
}

template <typename T>
std::optional<T> optional_at(const json& object, const std::string& key) {
  const auto it = object.find(key);
  return it == object.end() ? std::nullopt : std::optional<T>(it->get<T>());
}

std::string text_at(const json& object, const std::string& key) { return object.value(key, std::string{}); }

/// A name the schema holds to a pattern only, so that the workload table stays the one list of them.
template <typename T, typename Parse>
std::optional<T> named(const std::string& file, const std::string& pointer, const json& select, const std::string& key,
                       Parse parse, std::string_view expected) {
  const auto text = optional_at<std::string>(select, key);
  if (!text) {
    return std::nullopt;
  }
  auto value = parse(*text);
  if (!value) {
    throw InputError(file, pointer_append(pointer, key),
                     fmt::format("unknown {} '{}' (expected {})", key, *text, expected));
  }
  return value;
}

std::string workload_names(std::string_view CollectiveInfo::*field) {
  std::vector<std::string_view> names;
  for (const auto& c : all_collectives()) {
    names.push_back(c.*field);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

RowFilter read_filter(const std::string& file, const std::string& pointer, const json& j) {
  RowFilter s;
  s.benchmark = named<std::string>(
      file, pointer, j, "benchmark",
      [](const std::string& t) {
        const auto& all = all_collectives();
        const bool known = std::any_of(all.begin(), all.end(), [&](const auto& c) { return c.bench == t; });
        return known ? std::optional<std::string>(t) : std::nullopt;
      },
      workload_names(&CollectiveInfo::bench));
  s.backend = optional_at<std::string>(j, "backend");
  s.op = named<Collective>(
      file, pointer, j, "op",
      [](const std::string& t) {
        const auto c = parse_collective(t);
        return c && info(*c).name == t ? c : std::nullopt;
      },
      workload_names(&CollectiveInfo::name));
  // The schema's enums are the type table's names (tests/unit/report/schemas_test.cpp keeps them so).
  s.dtype = named<DType>(
      file, pointer, j, "dtype", [](const std::string& t) { return parse_dtype(t); }, dtype_names());
  s.redop = named<ReduceOp>(
      file, pointer, j, "redop", [](const std::string& t) { return parse_reduce_op(t); }, reduce_op_names());
  s.in_place = optional_at<bool>(j, "in_place");
  if (const auto it = j.find("group"); it != j.end()) {
    s.groups = it->is_array() ? it->get<std::vector<std::string>>() : std::vector{it->get<std::string>()};
  }
  s.ranks = optional_at<int>(j, "ranks");
  s.nodes = optional_at<int>(j, "nodes");
  return s;
}

/// The schema says the form of a size; whether its value fits 64 bits is parse_bytes' to say.
std::uint64_t read_size(const std::string& file, const std::string& pointer, const json& value) {
  const auto bytes = value.is_string() ? parse_bytes(value.get<std::string>()) : value.get<std::uint64_t>();
  if (!bytes || *bytes == 0) {
    throw InputError(file, pointer,
                     fmt::format("expected bytes (a positive integer) or a size like \"16G\" (K, M, G are binary: "
                                 "1K = 1024), got {}",
                                 value_text(value)));
  }
  return *bytes;
}

CheckKind kind_of(const std::string& text) {
  for (const CheckKind kind : {CheckKind::Busbw, CheckKind::NoWrongElements, CheckKind::NoTimedOut, CheckKind::NoFailed,
                               CheckKind::Counters, CheckKind::Links}) {
    if (name(kind) == text) {
      return kind;
    }
  }
  throw std::logic_error("the accept schema lets through a check kind the reader does not know: " + text);
}

bool is_identifier(std::string_view text) {
  const auto ok = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  };
  return !text.empty() && std::isalnum(static_cast<unsigned char>(text.front())) != 0 &&
         std::all_of(text.begin(), text.end(), ok);
}

AcceptCheck read_check(const std::string& file, const std::string& pointer, const json& j, const Profile& profile) {
  AcceptCheck check;
  check.id = j.at("id").get<std::string>();
  check.kind = kind_of(j.at("kind").get<std::string>());
  check.description = text_at(j, "description");
  check.note = text_at(j, "note");
  check.source = text_at(j, "source");
  check.level = text_at(j, "level") == "warning" ? CheckLevel::Warning : CheckLevel::Critical;
  if (!check.source.empty() && !profile.sources.contains(check.source)) {
    std::vector<std::string> keys;
    std::transform(profile.sources.begin(), profile.sources.end(), std::back_inserter(keys),
                   [](const auto& kv) { return kv.first; });
    throw InputError(
        file, pointer + "/source",
        fmt::format("'{}' is not a key of /sources ({})", check.source,
                    keys.empty() ? std::string("there are none") : fmt::format("{}", fmt::join(keys, ", "))));
  }
  if (const auto it = j.find("select"); it != j.end()) {
    check.select = read_filter(file, pointer + "/select", *it);
  }
  if (check.kind == CheckKind::Busbw) {
    check.size_bytes = read_size(file, pointer + "/size", j.at("size"));
    check.min_GBps = optional_at<double>(j, "min_GBps");
    check.min_pct_of_peak = optional_at<double>(j, "min_pct_of_peak");
    check.min_groups = optional_at<int>(j, "min_groups").value_or(0);
  }
  check.require_checked = optional_at<bool>(j, "require_checked").value_or(false);
  if (check.kind == CheckKind::Counters) {
    check.fatal = j.value("fatal", std::vector<std::string>{});
    for (const auto& r : j.value("rates", json::array())) {
      check.rates.push_back(
          {r.at("counter").get<std::string>(), r.at("max").get<double>(), r.at("per").get<std::string>()});
    }
  }
  check.one_firmware_per_model = optional_at<bool>(j, "one_firmware_per_model").value_or(true);
  return check;
}

std::map<std::string, ProfileSource> read_sources(const std::string& file, const json& root) {
  std::map<std::string, ProfileSource> sources;
  const json all = root.value("sources", json::object());
  for (const auto& [key, item] : all.items()) {
    if (!is_identifier(key)) {
      throw InputError(file, pointer_append("/sources", key),
                       fmt::format("'{}' is not a source key (letters, digits, '.', '_', '-')", key));
    }
    sources.emplace(key, ProfileSource{item.at("title").get<std::string>(), text_at(item, "url"), text_at(item, "says"),
                                       text_at(item, "note")});
  }
  return sources;
}

std::vector<AcceptCheck> read_checks(const std::string& file, const json& root, const Profile& profile) {
  std::vector<AcceptCheck> checks;
  std::map<std::string, std::size_t> seen;
  for (const auto& j : root.at("checks")) {
    const std::string pointer = fmt::format("/checks/{}", checks.size());
    AcceptCheck check = read_check(file, pointer, j, profile);
    if (const auto [it, fresh] = seen.emplace(check.id, checks.size()); !fresh) {
      throw InputError(file, pointer + "/id",
                       fmt::format("duplicate check id '{}' (also /checks/{}/id)", check.id, it->second));
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace

std::string_view name(CheckLevel level) { return level == CheckLevel::Warning ? "warning" : "critical"; }

std::string_view name(CheckKind kind) {
  switch (kind) {
    case CheckKind::Busbw:
      return "busbw";
    case CheckKind::NoWrongElements:
      return "no_wrong_elements";
    case CheckKind::NoTimedOut:
      return "no_timed_out";
    case CheckKind::NoFailed:
      return "no_failed";
    case CheckKind::Counters:
      return "counters";
    case CheckKind::Links:
      return "links";
  }
  return "unknown";
}

std::string describe(const RowFilter& f) {
  std::vector<std::string> parts;
  const auto add = [&](bool present, const auto& text) {
    if (present) {
      parts.push_back(fmt::format("{}", text));
    }
  };
  add(f.benchmark.has_value(), f.benchmark.value_or(""));
  add(f.backend.has_value(), f.backend.value_or(""));
  add(f.op.has_value(), f.op ? info(*f.op).name : "");
  add(f.dtype.has_value(), f.dtype ? name(*f.dtype) : "");
  add(f.redop.has_value(), f.redop ? name(*f.redop) : "");
  add(f.in_place.has_value(), f.in_place.value_or(false) ? "in-place" : "out-of-place");
  add(!f.groups.empty(), fmt::format("group {}", fmt::join(f.groups, "|")));
  add(f.ranks.has_value(), fmt::format("of {} ranks", f.ranks.value_or(0)));
  add(f.nodes.has_value(), fmt::format("on {} node{}", f.nodes.value_or(0), f.nodes.value_or(0) == 1 ? "" : "s"));
  return parts.empty() ? std::string("every result") : fmt::format("{}", fmt::join(parts, " "));
}

std::string threshold_text(const AcceptCheck& c) {
  std::vector<std::string> parts;
  if (c.min_GBps) {
    parts.push_back(fmt::format(">= {} GB/s", *c.min_GBps));
  }
  if (c.min_pct_of_peak) {
    parts.push_back(fmt::format(">= {}% of peak", *c.min_pct_of_peak));
  }
  if (c.min_groups > 0) {
    parts.push_back(fmt::format("in >= {} groups", c.min_groups));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string describe(const AcceptCheck& c) {
  if (!c.description.empty()) {
    return c.description;
  }
  std::string what = describe(c.select);
  switch (c.kind) {
    case CheckKind::Busbw:
      return fmt::format("{} busbw at {} {}, every group", what, format_size(c.size_bytes, SizeStyle::Binary),
                         threshold_text(c));
    case CheckKind::NoWrongElements:
      return fmt::format("no wrong elements in {}{}", what, c.require_checked ? ", every result verified (-c 1)" : "");
    case CheckKind::NoTimedOut:
      return fmt::format("no timed-out op in {}", what);
    case CheckKind::NoFailed:
      return fmt::format("no failed case in {}", what);
    case CheckKind::Counters: {
      std::vector<std::string> parts;
      if (!c.fatal.empty()) {
        parts.push_back(fmt::format("no rise of {}", fmt::join(c.fatal, ", ")));
      }
      for (const auto& r : c.rates) {
        parts.push_back(fmt::format("{} <= {:g}/{}", r.counter, r.max, r.per));
      }
      return fmt::format("fabric counters of every host: {}", fmt::join(parts, "; "));
    }
    case CheckKind::Links:
      return c.one_firmware_per_model
                 ? std::string("every RDMA port and PCIe link at its capability, one firmware per HCA model")
                 : std::string("every RDMA port and PCIe link at its capability");
  }
  return what;
}

Profile parse_profile(const std::string& text, const std::string& name) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    const std::string what = e.what();
    const auto bracket = what.find("] ");
    throw InputError(name, "", "not valid JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
  check_identity(root, name);
  if (const auto problem = accept_schema().first_problem(root)) {
    throw InputError(name, printable(problem->pointer), problem->message);
  }
  Profile profile;
  profile.path = name;
  profile.version = root.at("profile_version").get<std::string>();
  profile.id = root.at("id").get<std::string>();
  profile.name = root.at("name").get<std::string>();
  profile.description = text_at(root, "description");
  profile.sources = read_sources(name, root);
  profile.checks = read_checks(name, root, profile);
  profile.validity = text_at(root, "validity");
  if (!profile.validity.empty()) {
    profile.validity_s = parse_age(profile.validity);
    if (!profile.validity_s) {
      throw InputError(name, "/validity", "expected a number and s, m, h or d (\"24h\")");
    }
  }
  return profile;
}

Profile load_profile(const std::filesystem::path& path) {
  return parse_profile(read_input_file(path, kMaxProfileBytes, "profile (.json)"), path.string());
}

}  // namespace ccbench::report
