// Acceptance profiles (profiles/*.json; the format is in profiles/README.md): read strictly. Every
// problem is one InputError naming the file, the JSON pointer and what was expected; unknown keys
// are errors too, so a misspelt threshold cannot silently vanish.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <system_error>

#include "ccbench/config.hpp"
#include "ccbench/report/accept.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report {

namespace {

using nlohmann::json;

constexpr std::uintmax_t kMaxProfileBytes = std::uintmax_t{1} << 20;
// The group kinds a result row can carry (the model's GroupPlan::kind).
constexpr std::array<std::string_view, 5> kGroupKinds = {"world", "node", "cross-node", "rail", "pair"};
constexpr std::array<CheckKind, 4> kCheckKinds = {CheckKind::Busbw, CheckKind::NoWrongElements, CheckKind::NoTimedOut,
                                                  CheckKind::NoFailed};

std::string pointer_token(std::string_view key) {
  std::string out;
  for (const char c : key) {
    out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  }
  return out;
}

template <typename Range>
std::string join(const Range& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : std::string(sep)) + fmt::format("{}", item);
  }
  return out;
}

bool is_identifier(std::string_view text) {
  const auto ok = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  };
  return !text.empty() && std::isalnum(static_cast<unsigned char>(text.front())) != 0 &&
         std::all_of(text.begin(), text.end(), ok);
}

/// One JSON object of a profile, read key by key. Keys never asked for are errors (finish()).
class Fields {
 public:
  Fields(std::string file, std::string pointer, const json& object, std::string what)
      : m_file(std::move(file)), m_pointer(std::move(pointer)), m_json(object), m_what(std::move(what)) {
    if (!m_json.is_object()) {
      throw InputError(m_file, m_pointer, fmt::format("expected {} (a JSON object), got {}", m_what, type(m_json)));
    }
  }

  [[nodiscard]] const std::string& file() const { return m_file; }
  [[nodiscard]] std::string at(std::string_view key) const { return m_pointer + "/" + pointer_token(key); }
  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    throw InputError(m_file, at(key), message);
  }
  [[noreturn]] void fail_here(const std::string& message) const { throw InputError(m_file, m_pointer, message); }

  /// The value of `key`, or nullptr when absent. Every key asked for counts as known.
  const json* get(std::string_view key) {
    m_known.emplace_back(key);
    const auto it = m_json.find(key);
    return it == m_json.end() ? nullptr : &*it;
  }
  const json& require(std::string_view key, std::string_view expected) {
    const json* value = get(key);
    if (value == nullptr) {
      fail(key, fmt::format("missing: {} needs '{}' ({})", m_what, key, expected));
    }
    return *value;
  }

  std::optional<std::string> string(std::string_view key, bool required) {
    const json* value = required ? &require(key, "a string") : get(key);
    if (value == nullptr) {
      return std::nullopt;
    }
    if (!value->is_string() || value->get_ref<const std::string&>().empty()) {
      fail(key, fmt::format("expected a non-empty string, got {}", describe(*value)));
    }
    return value->get<std::string>();
  }

  std::optional<double> positive(std::string_view key) {
    const json* value = get(key);
    if (value == nullptr) {
      return std::nullopt;
    }
    if (!value->is_number() || !(value->get<double>() > 0.0) || !std::isfinite(value->get<double>())) {
      fail(key, fmt::format("expected a positive number, got {}", describe(*value)));
    }
    return value->get<double>();
  }

  std::optional<int> integer(std::string_view key, int min) {
    const json* value = get(key);
    if (value == nullptr) {
      return std::nullopt;
    }
    constexpr std::int64_t kMax = 1 << 24;
    const bool ok =
        value->is_number_integer() && value->get<std::int64_t>() >= min && value->get<std::int64_t>() <= kMax;
    if (!ok) {
      fail(key, fmt::format("expected an integer from {} to {}, got {}", min, kMax, describe(*value)));
    }
    return static_cast<int>(value->get<std::int64_t>());
  }

  std::optional<bool> boolean(std::string_view key) {
    const json* value = get(key);
    if (value != nullptr && !value->is_boolean()) {
      fail(key, fmt::format("expected true or false, got {}", describe(*value)));
    }
    return value == nullptr ? std::nullopt : std::optional<bool>(value->get<bool>());
  }

  /// Throws on the first key that was never asked for.
  void finish() const {
    for (const auto& [key, value] : m_json.items()) {
      if (std::find(m_known.begin(), m_known.end(), key) == m_known.end()) {
        fail(key, fmt::format("unknown key '{}' ({} has: {})", key, m_what, join(m_known)));
      }
    }
  }

  static std::string type(const json& value) { return value.type_name(); }
  static std::string describe(const json& value) {
    if (value.is_null() || value.is_structured()) {
      return type(value);
    }
    const std::string text = value.dump();
    return text.size() > 40 ? type(value) : fmt::format("{} {}", type(value), text);
  }

 private:
  std::string m_file;
  std::string m_pointer;
  const json& m_json;
  std::string m_what;
  std::vector<std::string> m_known;
};

std::vector<std::string> group_kinds(Fields& f) {
  const json* value = f.get("group");
  if (value == nullptr) {
    return {};
  }
  std::vector<std::string> kinds;
  const json list = value->is_array() ? *value : json::array({*value});
  for (const auto& item : list) {
    const bool known = item.is_string() && std::find(kGroupKinds.begin(), kGroupKinds.end(),
                                                     item.get_ref<const std::string&>()) != kGroupKinds.end();
    if (!known) {
      f.fail("group", fmt::format("expected a group kind or a list of them ({}), got {}", join(kGroupKinds),
                                  Fields::describe(item)));
    }
    kinds.push_back(item.get<std::string>());
  }
  if (kinds.empty()) {
    f.fail("group", "expected a group kind or a non-empty list of them");
  }
  return kinds;
}

template <typename T, typename Parse>
std::optional<T> named(Fields& f, std::string_view key, Parse parse, const std::string& expected) {
  const auto text = f.string(key, false);
  if (!text) {
    return std::nullopt;
  }
  auto value = parse(*text);
  if (!value) {
    f.fail(key, fmt::format("unknown {} '{}' (expected {})", key, *text, expected));
  }
  return value;
}

std::string bench_names() {
  std::vector<std::string_view> names;
  for (const auto& c : all_collectives()) {
    names.push_back(c.bench);
  }
  return join(names);
}

std::string op_names() {
  std::vector<std::string_view> names;
  for (const auto& c : all_collectives()) {
    names.push_back(c.name);
  }
  return join(names);
}

RowFilter parse_filter(Fields& f) {
  RowFilter s;
  s.benchmark = named<std::string>(
      f, "benchmark",
      [](const std::string& t) {
        const auto& all = all_collectives();
        const bool known = std::any_of(all.begin(), all.end(), [&](const auto& c) { return c.bench == t; });
        return known ? std::optional<std::string>(t) : std::nullopt;
      },
      bench_names());
  s.backend = named<std::string>(
      f, "backend",
      [](const std::string& t) { return t == "mpi" || t == "nccl" || t == "verbs" ? std::optional(t) : std::nullopt; },
      "mpi, nccl, verbs");
  s.op = named<Collective>(
      f, "op",
      [](const std::string& t) {
        const auto c = parse_collective(t);
        return c && info(*c).name == t ? c : std::nullopt;
      },
      op_names());
  s.dtype = named<DType>(
      f, "dtype", [](const std::string& t) { return parse_dtype(t); }, dtype_names());
  s.redop = named<ReduceOp>(
      f, "redop", [](const std::string& t) { return parse_reduce_op(t); }, reduce_op_names());
  s.in_place = f.boolean("in_place");
  s.groups = group_kinds(f);
  s.ranks = f.integer("ranks", 1);
  s.nodes = f.integer("nodes", 1);
  f.finish();
  return s;
}

std::uint64_t parse_size(Fields& f) {
  const json& value = f.require("size", "bytes, or a size like \"16G\"");
  std::optional<std::uint64_t> bytes;
  if (value.is_number_unsigned()) {
    bytes = value.get<std::uint64_t>();
  } else if (value.is_string()) {
    bytes = parse_bytes(value.get<std::string>());
  }
  if (!bytes || *bytes == 0) {
    f.fail("size", fmt::format("expected bytes (a positive integer) or a size like \"16G\" (K, M, G are binary: "
                               "1K = 1024), got {}",
                               Fields::describe(value)));
  }
  return *bytes;
}

CheckKind parse_kind(Fields& f) {
  const auto text = *f.string("kind", true);
  for (const CheckKind kind : kCheckKinds) {
    if (name(kind) == text) {
      return kind;
    }
  }
  std::vector<std::string_view> names;
  std::transform(kCheckKinds.begin(), kCheckKinds.end(), std::back_inserter(names),
                 [](CheckKind k) { return name(k); });
  f.fail("kind", fmt::format("unknown check kind '{}' (expected {})", text, join(names)));
}

void parse_busbw(Fields& f, AcceptCheck& check) {
  check.size_bytes = parse_size(f);
  check.min_GBps = f.positive("min_GBps");
  check.min_pct_of_peak = f.positive("min_pct_of_peak");
  check.min_groups = f.integer("min_groups", 1).value_or(0);
  if (!check.min_GBps && !check.min_pct_of_peak) {
    f.fail_here("a busbw check needs min_GBps or min_pct_of_peak (or both)");
  }
  if (!check.select.benchmark) {
    f.fail("select", R"(a busbw check must select a benchmark ("select": {"benchmark": "allreduce_bench"}))");
  }
}

AcceptCheck parse_check(const std::string& file, const std::string& pointer, const json& j, const Profile& profile) {
  Fields f(file, pointer, j, "a check");
  AcceptCheck check;
  check.id = *f.string("id", true);
  if (!is_identifier(check.id)) {
    f.fail("id", fmt::format("'{}' is not an id (letters, digits, '.', '_', '-'; a letter or digit first)", check.id));
  }
  check.kind = parse_kind(f);
  check.description = f.string("description", false).value_or("");
  check.note = f.string("note", false).value_or("");
  check.source = f.string("source", false).value_or("");
  if (!check.source.empty() && !profile.sources.contains(check.source)) {
    std::vector<std::string> keys;
    std::transform(profile.sources.begin(), profile.sources.end(), std::back_inserter(keys),
                   [](const auto& kv) { return kv.first; });
    f.fail("source", fmt::format("'{}' is not a key of /sources ({})", check.source,
                                 keys.empty() ? std::string("there are none") : join(keys)));
  }
  if (const json* select = f.get("select")) {
    Fields s(file, f.at("select"), *select, "select");
    check.select = parse_filter(s);
  }
  if (check.kind == CheckKind::Busbw) {
    parse_busbw(f, check);
  } else if (check.kind == CheckKind::NoWrongElements) {
    check.require_checked = f.boolean("require_checked").value_or(false);
  }
  f.finish();
  return check;
}

std::map<std::string, ProfileSource> parse_sources(Fields& top) {
  std::map<std::string, ProfileSource> sources;
  const json* value = top.get("sources");
  if (value == nullptr) {
    return sources;
  }
  Fields all(top.file(), top.at("sources"), *value, "sources");
  for (const auto& [key, item] : value->items()) {
    all.get(key);
    if (!is_identifier(key)) {
      all.fail(key, fmt::format("'{}' is not a source key (letters, digits, '.', '_', '-')", key));
    }
    Fields f(top.file(), all.at(key), item, "a source");
    ProfileSource s;
    s.title = *f.string("title", true);
    s.url = f.string("url", false).value_or("");
    s.says = f.string("says", false).value_or("");
    s.note = f.string("note", false).value_or("");
    f.finish();
    sources.emplace(key, std::move(s));
  }
  return sources;
}

void check_version(Fields& top, const std::string& version) {
  std::vector<std::string> parts(1);
  for (const char c : version) {
    if (c == '.') {
      parts.emplace_back();
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 && parts.back().size() < 6) {
      parts.back() += c;
    } else {
      parts.clear();
      break;
    }
  }
  const bool ok =
      parts.size() == 3 && std::none_of(parts.begin(), parts.end(), [](const auto& p) { return p.empty(); });
  if (!ok) {
    top.fail("profile_version", fmt::format("'{}' is not a version like \"1.0.0\"", version));
  }
  if (std::stoi(parts[0]) != kProfileMajorVersion) {
    top.fail("profile_version", fmt::format("version {} is not readable here: this ccbench-report reads {}.x.y "
                                            "profiles",
                                            version, kProfileMajorVersion));
  }
}

void parse_checks(Fields& top, Profile& profile) {
  const json& checks = top.require("checks", "a list of checks");
  if (!checks.is_array() || checks.empty()) {
    top.fail("checks", fmt::format("expected a non-empty list of checks, got {}", Fields::describe(checks)));
  }
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const std::string pointer = top.at("checks") + "/" + std::to_string(i);
    AcceptCheck check = parse_check(top.file(), pointer, checks[i], profile);
    if (const auto [it, fresh] = seen.emplace(check.id, i); !fresh) {
      throw InputError(top.file(), pointer + "/id",
                       fmt::format("duplicate check id '{}' (also /checks/{}/id)", check.id, it->second));
    }
    profile.checks.push_back(std::move(check));
  }
}

std::string read_text(const std::filesystem::path& path) {
  return read_input_file(path, kMaxProfileBytes, "profile (.json)");
}

}  // namespace

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
  Fields top(name, "", root, "an accept profile");
  const json& kind = top.require("profile", "\"ccbench.accept\"");
  if (!kind.is_string() || kind.get<std::string>() != kProfileName) {
    top.fail("profile",
             fmt::format("expected \"{}\", got {}: not an accept profile", kProfileName, Fields::describe(kind)));
  }
  Profile profile;
  profile.path = name;
  profile.version = *top.string("profile_version", true);
  check_version(top, profile.version);
  profile.id = *top.string("id", true);
  if (!is_identifier(profile.id)) {
    top.fail("id", fmt::format("'{}' is not an id (letters, digits, '.', '_', '-')", profile.id));
  }
  profile.name = *top.string("name", true);
  profile.description = top.string("description", false).value_or("");
  profile.sources = parse_sources(top);
  parse_checks(top, profile);
  top.finish();
  return profile;
}

Profile load_profile(const std::filesystem::path& path) { return parse_profile(read_text(path), path.string()); }

}  // namespace ccbench::report
