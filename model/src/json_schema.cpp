#include "ccbench/json_schema.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "ccbench/text.hpp"

namespace ccbench {

namespace {

constexpr int kMaxDepth = 64;                  // schema recursion guard (our schema nests far less)
constexpr std::size_t kMaxPatternInput = 256;  // libstdc++'s regex recurses per character

constexpr std::array<std::string_view, 7> kAnnotations = {"$schema",     "$id",      "$defs",   "title",
                                                          "description", "$comment", "examples"};
constexpr std::array<std::string_view, 20> kAssertions = {"type",
                                                          "enum",
                                                          "const",
                                                          "properties",
                                                          "required",
                                                          "additionalProperties",
                                                          "items",
                                                          "minItems",
                                                          "maxItems",
                                                          "minLength",
                                                          "maxLength",
                                                          "minimum",
                                                          "maximum",
                                                          "pattern",
                                                          "$ref",
                                                          "oneOf",
                                                          "anyOf",
                                                          "allOf",
                                                          "exclusiveMinimum",
                                                          "if"};

bool is_known(std::string_view key) {
  for (auto k : kAnnotations) {
    if (k == key) {
      return true;
    }
  }
  for (auto k : kAssertions) {
    if (k == key) {
      return true;
    }
  }
  return key == "then" || key == "else";
}

bool has_type(const nlohmann::json& value, std::string_view type) {
  if (type == "integer") {
    // Stricter than the standard (which also takes 5.0): our writer never writes integers as floats,
    // and a float here would be cast to an integer type later.
    return value.is_number_integer();
  }
  if (type == "number") {
    return value.is_number();
  }
  return json_type_name(value) == type;
}

std::size_t code_points(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text) {
    n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
  }
  return n;
}

SchemaProblem problem(const std::string& pointer, std::string message) { return {pointer, std::move(message)}; }

}  // namespace

std::span<const std::string_view> implemented_keywords() { return kAssertions; }

std::string json_type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return "boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "integer";
    case nlohmann::json::value_t::number_float:
      return "number";
    case nlohmann::json::value_t::string:
      return "string";
    case nlohmann::json::value_t::array:
      return "array";
    case nlohmann::json::value_t::object:
      return "object";
    default:
      return "unknown";
  }
}

std::string short_value(const nlohmann::json& value) {
  if (value.is_string()) {
    auto text = value.get<std::string>();
    if (text.size() > 40) {
      text = text.substr(0, 40) + "...";
    }
    return "\"" + printable(text) + "\"";
  }
  if (value.is_object() || value.is_array()) {
    return json_type_name(value);
  }
  return value.dump();
}

std::string pointer_append(const std::string& pointer, const std::string& token) {
  std::string out = pointer + "/";
  for (const char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

JsonSchema::JsonSchema(nlohmann::json schema) : m_root(std::move(schema)) { check_keywords(m_root, ""); }

void JsonSchema::check_keywords(const nlohmann::json& schema, const std::string& where) {
  if (schema.is_boolean()) {
    return;
  }
  if (!schema.is_object()) {
    throw std::invalid_argument(fmt::format("schema {}: not an object", where));
  }
  for (const auto& [key, sub] : schema.items()) {
    if (!is_known(key)) {
      throw std::invalid_argument(fmt::format("schema {}: keyword '{}' is not implemented by this reader", where, key));
    }
    const auto at = pointer_append(where, key);
    if (key == "properties" || key == "$defs") {
      for (const auto& [name, child] : sub.items()) {
        check_keywords(child, pointer_append(at, name));
      }
    } else if (key == "oneOf" || key == "anyOf" || key == "allOf") {
      for (std::size_t i = 0; i < sub.size(); ++i) {
        check_keywords(sub[i], pointer_append(at, std::to_string(i)));
      }
    } else if (key == "items" || key == "if" || key == "then" || key == "else" ||
               (key == "additionalProperties" && sub.is_object())) {
      check_keywords(sub, at);
    } else if (key == "$ref") {
      (void)resolve(sub.get<std::string>());
    } else if (key == "pattern") {
      m_patterns.emplace(sub.get<std::string>(), std::regex(sub.get<std::string>(), std::regex::ECMAScript));
    }
  }
}

const nlohmann::json& JsonSchema::resolve(const std::string& ref) const {
  if (ref.rfind("#/", 0) != 0) {
    throw std::invalid_argument("schema: only local $refs (#/...) are supported, not " + ref);
  }
  const nlohmann::json::json_pointer ptr(ref.substr(1));
  if (!m_root.contains(ptr)) {
    throw std::invalid_argument("schema: $ref " + ref + " does not resolve");
  }
  return m_root.at(ptr);
}

std::optional<SchemaProblem> JsonSchema::first_problem(const nlohmann::json& instance) const {
  return validate(m_root, instance, "", 0);
}

std::optional<SchemaProblem> JsonSchema::validate(const nlohmann::json& schema, const nlohmann::json& value,
                                                  const std::string& pointer, int depth) const {
  if (depth > kMaxDepth) {
    return problem(pointer, "nested too deeply");
  }
  if (schema.is_boolean()) {
    return schema.get<bool>() ? std::nullopt : std::optional(problem(pointer, "no value is allowed here"));
  }
  if (schema.contains("$ref")) {
    if (auto p = validate(resolve(schema["$ref"].get<std::string>()), value, pointer, depth + 1)) {
      return p;
    }
  }
  if (auto p = validate_type(schema, value, pointer)) {
    return p;
  }
  if (auto p = validate_value(schema, value, pointer)) {
    return p;
  }
  if (value.is_object()) {
    if (auto p = validate_object(schema, value, pointer, depth)) {
      return p;
    }
  }
  if (value.is_array()) {
    if (auto p = validate_array(schema, value, pointer, depth)) {
      return p;
    }
  }
  return validate_combinators(schema, value, pointer, depth);
}

std::optional<SchemaProblem> JsonSchema::validate_type(const nlohmann::json& schema, const nlohmann::json& value,
                                                       const std::string& pointer) {
  if (!schema.contains("type")) {
    return std::nullopt;
  }
  const auto& type = schema["type"];
  std::vector<std::string> names;
  if (type.is_string()) {
    names.push_back(type.get<std::string>());
  } else {
    names = type.get<std::vector<std::string>>();
  }
  for (const auto& n : names) {
    if (has_type(value, n)) {
      return std::nullopt;
    }
  }
  return problem(pointer, fmt::format("expected {}, got {}", fmt::join(names, " or "),
                                      value.is_number() ? "number " + value.dump() : json_type_name(value)));
}

std::optional<SchemaProblem> JsonSchema::validate_value(const nlohmann::json& schema, const nlohmann::json& value,
                                                        const std::string& pointer) const {
  if (schema.contains("const") && value != schema["const"]) {
    return problem(pointer, fmt::format("expected {}, got {}", short_value(schema["const"]), short_value(value)));
  }
  if (schema.contains("enum")) {
    bool found = false;
    std::vector<std::string> allowed;
    for (const auto& e : schema["enum"]) {
      found = found || e == value;
      allowed.push_back(e.dump());
    }
    if (!found) {
      return problem(pointer, fmt::format("expected one of {}, got {}", fmt::join(allowed, ", "), short_value(value)));
    }
  }
  if (value.is_number()) {
    const double v = value.get<double>();
    if (schema.contains("minimum") && v < schema["minimum"].get<double>()) {
      return problem(pointer, fmt::format("expected a number >= {}, got {}", schema["minimum"].dump(), value.dump()));
    }
    if (schema.contains("maximum") && v > schema["maximum"].get<double>()) {
      return problem(pointer, fmt::format("expected a number <= {}, got {}", schema["maximum"].dump(), value.dump()));
    }
    if (schema.contains("exclusiveMinimum") && !(v > schema["exclusiveMinimum"].get<double>())) {
      return problem(pointer,
                     fmt::format("expected a number > {}, got {}", schema["exclusiveMinimum"].dump(), value.dump()));
    }
  }
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (schema.contains("minLength") && code_points(text) < schema["minLength"].get<std::size_t>()) {
      return problem(pointer, fmt::format("expected a string of at least {} characters", schema["minLength"].dump()));
    }
    if (schema.contains("maxLength") && code_points(text) > schema["maxLength"].get<std::size_t>()) {
      return problem(pointer, fmt::format("expected a string of at most {} characters", schema["maxLength"].dump()));
    }
    if (schema.contains("pattern")) {
      const auto& pattern = schema["pattern"].get_ref<const std::string&>();
      if (text.size() > kMaxPatternInput || !std::regex_search(text, m_patterns.at(pattern))) {
        return problem(pointer, fmt::format("expected a string matching {}, got {}", pattern, short_value(value)));
      }
    }
  }
  return std::nullopt;
}

std::optional<SchemaProblem> JsonSchema::validate_object(const nlohmann::json& schema, const nlohmann::json& value,
                                                         const std::string& pointer, int depth) const {
  if (schema.contains("required")) {
    for (const auto& key : schema["required"]) {
      if (!value.contains(key.get<std::string>())) {
        return problem(pointer, fmt::format("missing required key \"{}\"", key.get<std::string>()));
      }
    }
  }
  const auto* properties = schema.contains("properties") ? &schema["properties"] : nullptr;
  for (const auto& [key, child] : value.items()) {
    const auto at = pointer_append(pointer, key);
    if (properties != nullptr && properties->contains(key)) {
      if (auto p = validate((*properties)[key], child, at, depth + 1)) {
        return p;
      }
    } else if (schema.contains("additionalProperties")) {
      const auto& extra = schema["additionalProperties"];
      if (extra.is_boolean() && !extra.get<bool>()) {
        return problem(at, "unknown key (not in the schema)");
      }
      if (auto p = validate(extra, child, at, depth + 1)) {
        return p;
      }
    }
  }
  return std::nullopt;
}

std::optional<SchemaProblem> JsonSchema::validate_array(const nlohmann::json& schema, const nlohmann::json& value,
                                                        const std::string& pointer, int depth) const {
  if (schema.contains("minItems") && value.size() < schema["minItems"].get<std::size_t>()) {
    return problem(pointer,
                   fmt::format("expected at least {} item(s), got {}", schema["minItems"].dump(), value.size()));
  }
  if (schema.contains("maxItems") && value.size() > schema["maxItems"].get<std::size_t>()) {
    return problem(pointer,
                   fmt::format("expected at most {} item(s), got {}", schema["maxItems"].dump(), value.size()));
  }
  if (schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (auto p = validate(schema["items"], value[i], pointer_append(pointer, std::to_string(i)), depth + 1)) {
        return p;
      }
    }
  }
  return std::nullopt;
}

std::optional<SchemaProblem> JsonSchema::validate_combinators(const nlohmann::json& schema, const nlohmann::json& value,
                                                              const std::string& pointer, int depth) const {
  if (schema.contains("allOf")) {
    for (const auto& sub : schema["allOf"]) {
      if (auto p = validate(sub, value, pointer, depth + 1)) {
        return p;
      }
    }
  }
  for (const char* key : {"oneOf", "anyOf"}) {
    if (!schema.contains(key)) {
      continue;
    }
    int matches = 0;
    std::vector<SchemaProblem> problems;
    for (const auto& sub : schema[key]) {
      if (auto p = validate(sub, value, pointer, depth + 1)) {
        problems.push_back(std::move(*p));
      } else {
        ++matches;
      }
    }
    if (matches == 0 && problems.empty()) {
      return problem(pointer, "no allowed form (empty " + std::string(key) + ")");
    }
    if (matches == 0) {
      // The branch that got furthest into the value explains best; if none got past the value
      // itself, say every form that was allowed.
      std::size_t best = 0;
      for (std::size_t i = 1; i < problems.size(); ++i) {
        if (problems[i].pointer.size() > problems[best].pointer.size()) {
          best = i;
        }
      }
      if (problems[best].pointer != pointer) {
        return problems[best];
      }
      std::vector<std::string> messages;
      messages.reserve(problems.size());
      for (const auto& p : problems) {
        messages.push_back(p.message);
      }
      return problem(pointer, fmt::format("{}", fmt::join(messages, "; or ")));
    }
    if (matches > 1 && std::string_view(key) == "oneOf") {
      return problem(pointer, "matches more than one of the allowed forms");
    }
  }
  if (schema.contains("if") && !validate(schema["if"], value, pointer, depth + 1)) {
    if (schema.contains("then")) {
      return validate(schema["then"], value, pointer, depth + 1);
    }
  } else if (schema.contains("if") && schema.contains("else")) {
    return validate(schema["else"], value, pointer, depth + 1);
  }
  return std::nullopt;
}

}  // namespace ccbench
