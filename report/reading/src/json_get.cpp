#include "ccbench/report/json_get.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "ccbench/errors.hpp"

namespace ccbench::report {
namespace {

using json = nlohmann::json;

/// The segments of an RFC 6901 pointer, unescaped (~1 is '/', ~0 is '~'); "" is the whole document.
std::vector<std::string> segments_of(std::string_view pointer) {
  std::vector<std::string> out;
  if (pointer.empty()) {
    return out;
  }
  if (pointer.front() != '/') {
    throw UsageError(fmt::format("{}: a JSON pointer starts with '/' (like /failed or /checks/*/id)", pointer));
  }
  std::string current;
  for (std::size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      out.push_back(std::move(current));
      current.clear();
      continue;
    }
    if (pointer[i] == '~') {
      const char next = i + 1 < pointer.size() ? pointer[i + 1] : '\0';
      if (next != '0' && next != '1') {
        throw UsageError(fmt::format("{}: '~' must be followed by 0 or 1 (RFC 6901)", pointer));
      }
      current += next == '0' ? '~' : '/';
      ++i;
      continue;
    }
    current += pointer[i];
  }
  return out;
}

/// The member or element `segment` of `value`, or null when there is none.
const json* child(const json& value, const std::string& segment) {
  if (value.is_object()) {
    const auto it = value.find(segment);
    return it == value.end() ? nullptr : &*it;
  }
  if (value.is_array() && !segment.empty() && segment.find_first_not_of("0123456789") == std::string::npos &&
      (segment == "0" || segment[0] != '0')) {
    const std::size_t index = std::stoul(segment);
    return index < value.size() ? &value[index] : nullptr;
  }
  return nullptr;
}

/// Every value the segments from `at` on name below `value`; `missing` gets the first pointer that names
/// nothing outside a wildcard.
void collect(const json& value, const std::vector<std::string>& segs, std::size_t at, bool under_wildcard,
             std::vector<const json*>& found, std::optional<std::string>& missing, const std::string& walked) {
  if (at == segs.size()) {
    found.push_back(&value);
    return;
  }
  if (segs[at] == "*" && (value.is_array() || value.is_object())) {
    std::size_t index = 0;
    for (const auto& item : value) {
      collect(item, segs, at + 1, true, found, missing,
              walked + "/" + (value.is_array() ? std::to_string(index) : std::string{"*"}));
      ++index;
    }
    return;
  }
  const json* next = child(value, segs[at]);
  if (next == nullptr) {
    if (!under_wildcard && !missing) {
      missing = walked + "/" + segs[at];
    }
    return;
  }
  collect(*next, segs, at + 1, under_wildcard, found, missing, walked + "/" + segs[at]);
}

std::string text_of(const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& name) {
  const json::parser_callback_t refuse_deep = [&name](int depth, json::parse_event_t /*event*/, json& /*parsed*/) {
    if (depth > kMaxJsonNesting) {
      throw UsageError(
          fmt::format("{}: nested deeper than {} levels: not a JSON file ccbench reads", name, kMaxJsonNesting));
    }
    return true;
  };
  try {
    return json::parse(text, refuse_deep);
  } catch (const json::parse_error& e) {
    throw UsageError(fmt::format("{}: not JSON ({})", name, e.what()));
  }
}

std::vector<std::string> json_get(const json& doc, std::string_view pointer, const GetOptions& options) {
  const auto segs = segments_of(pointer);
  std::vector<const json*> found;
  std::optional<std::string> missing;
  collect(doc, segs, 0, false, found, missing, "");
  if (missing && !options.missing_ok) {
    throw UsageError(fmt::format("{}: nothing at {}", pointer, *missing));
  }
  std::vector<std::vector<std::string>> field_segs;
  for (const auto& f : options.fields) {
    field_segs.push_back(segments_of(f));
  }
  std::vector<std::string> lines;
  const bool whole_array = !segs.empty() && segs.back() != "*";
  for (const json* value : found) {
    if (!options.fields.empty()) {
      std::string line;
      for (std::size_t i = 0; i < field_segs.size(); ++i) {
        std::vector<const json*> got;
        std::optional<std::string> none;
        collect(*value, field_segs[i], 0, false, got, none, "");
        line += (i == 0 ? "" : "\t") + (got.empty() || none ? std::string{} : text_of(*got.front()));
      }
      lines.push_back(std::move(line));
    } else if (value->is_array() && (whole_array || segs.empty())) {
      for (const auto& item : *value) {
        lines.push_back(text_of(item));
      }
    } else {
      lines.push_back(text_of(*value));
    }
  }
  return lines;
}

}  // namespace ccbench::report
