// Validation: a value against the schema's indexed nodes (construction and the $ref index: json_schema.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "ccbench/json_schema.hpp"

namespace ccbench {

namespace {

constexpr int kMaxDepth = 64;                  // schema recursion guard (our schema nests far less)
constexpr std::size_t kMaxPatternInput = 256;  // libstdc++'s regex recurses per character

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

/// Appends one reference token to a JSON pointer in place (escaping ~ and /).
void append_token(std::string& pointer, std::string_view token) {
  pointer += '/';
  if (token.find_first_of("~/") == std::string_view::npos) {
    pointer.append(token);
    return;
  }
  for (const char c : token) {
    if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer += c;
    }
  }
}

/// Takes the token appended after `length` off again when it goes out of scope.
class PointerMark {
 public:
  PointerMark(std::string& pointer, std::string_view token) : m_pointer(pointer), m_length(pointer.size()) {
    append_token(pointer, token);
  }
  PointerMark(const PointerMark&) = delete;
  PointerMark& operator=(const PointerMark&) = delete;
  PointerMark(PointerMark&&) = delete;
  PointerMark& operator=(PointerMark&&) = delete;
  ~PointerMark() { m_pointer.resize(m_length); }

 private:
  std::string& m_pointer;
  std::size_t m_length;
};

}  // namespace

std::optional<SchemaProblem> JsonSchema::validate(const nlohmann::json& schema, const nlohmann::json& value,
                                                  std::string& pointer, int depth) const {
  if (depth > kMaxDepth) {
    return problem(pointer, "nested too deeply");
  }
  if (schema.is_boolean()) {
    return schema.get<bool>() ? std::nullopt : std::optional(problem(pointer, "no value is allowed here"));
  }
  const Node& node = m_nodes.at(&schema);
  if (node.ref != nullptr) {
    if (auto p = validate(*node.ref, value, pointer, depth + 1)) {
      return p;
    }
  }
  if (auto p = validate_type(node, value, pointer)) {
    return p;
  }
  if (auto p = validate_value(node, value, pointer)) {
    return p;
  }
  if (value.is_object()) {
    if (auto p = validate_object(node, value, pointer, depth)) {
      return p;
    }
  }
  if (value.is_array()) {
    if (auto p = validate_array(node, value, pointer, depth)) {
      return p;
    }
  }
  return validate_combinators(node, value, pointer, depth);
}

std::optional<SchemaProblem> JsonSchema::validate_type(const Node& node, const nlohmann::json& value,
                                                       const std::string& pointer) {
  if (node.types.empty()) {
    return std::nullopt;
  }
  for (const auto& n : node.types) {
    if (has_type(value, n)) {
      return std::nullopt;
    }
  }
  return problem(pointer, fmt::format("expected {}, got {}", fmt::join(node.types, " or "),
                                      value.is_number() ? "number " + value.dump() : json_type_name(value)));
}

std::optional<SchemaProblem> JsonSchema::validate_value(const Node& node, const nlohmann::json& value,
                                                        const std::string& pointer) {
  if (node.constant != nullptr && value != *node.constant) {
    return problem(pointer, fmt::format("expected {}, got {}", short_value(*node.constant), short_value(value)));
  }
  if (node.enumeration != nullptr &&
      std::none_of(node.enumeration->begin(), node.enumeration->end(), [&](const auto& e) { return e == value; })) {
    std::vector<std::string> allowed;
    for (const auto& e : *node.enumeration) {
      allowed.push_back(e.dump());
    }
    return problem(pointer, fmt::format("expected one of {}, got {}", fmt::join(allowed, ", "), short_value(value)));
  }
  if (value.is_number()) {
    const double v = value.get<double>();
    if (node.minimum != nullptr && v < node.minimum->get<double>()) {
      return problem(pointer, fmt::format("expected a number >= {}, got {}", node.minimum->dump(), value.dump()));
    }
    if (node.maximum != nullptr && v > node.maximum->get<double>()) {
      return problem(pointer, fmt::format("expected a number <= {}, got {}", node.maximum->dump(), value.dump()));
    }
    if (node.exclusive_minimum != nullptr && !(v > node.exclusive_minimum->get<double>())) {
      return problem(pointer,
                     fmt::format("expected a number > {}, got {}", node.exclusive_minimum->dump(), value.dump()));
    }
  }
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (node.min_length != nullptr && code_points(text) < node.min_length->get<std::size_t>()) {
      return problem(pointer, fmt::format("expected a string of at least {} characters", node.min_length->dump()));
    }
    if (node.max_length != nullptr && code_points(text) > node.max_length->get<std::size_t>()) {
      return problem(pointer, fmt::format("expected a string of at most {} characters", node.max_length->dump()));
    }
    if (node.pattern != nullptr && (text.size() > kMaxPatternInput || !std::regex_search(text, *node.pattern))) {
      return problem(pointer,
                     fmt::format("expected a string matching {}, got {}", *node.pattern_text, short_value(value)));
    }
  }
  return std::nullopt;
}

std::optional<SchemaProblem> JsonSchema::validate_object(const Node& node, const nlohmann::json& value,
                                                         std::string& pointer, int depth) const {
  if (node.required != nullptr) {
    for (const auto& key : *node.required) {
      if (!value.contains(key.get_ref<const std::string&>())) {
        return problem(pointer, fmt::format("missing required key \"{}\"", key.get<std::string>()));
      }
    }
  }
  for (const auto& [key, child] : value.items()) {
    const PointerMark mark(pointer, key);
    const auto property = node.properties != nullptr ? node.properties->find(key) : nlohmann::json::const_iterator{};
    if (node.properties != nullptr && property != node.properties->end()) {
      if (auto p = validate(*property, child, pointer, depth + 1)) {
        return p;
      }
    } else if (node.additional != nullptr) {
      if (node.additional->is_boolean() && !node.additional->get<bool>()) {
        if (node.properties == nullptr || node.properties->empty()) {
          return problem(pointer, "unknown key (not in the schema)");
        }
        std::vector<std::string> keys;  // what was meant, most often: a key misspelt
        for (const auto& [name, ignored] : node.properties->items()) {
          keys.push_back(name);
        }
        return problem(pointer, fmt::format("unknown key (not in the schema; expected {})", fmt::join(keys, ", ")));
      }
      if (auto p = validate(*node.additional, child, pointer, depth + 1)) {
        return p;
      }
    }
  }
  return std::nullopt;
}

std::optional<SchemaProblem> JsonSchema::validate_array(const Node& node, const nlohmann::json& value,
                                                        std::string& pointer, int depth) const {
  if (node.min_items != nullptr && value.size() < node.min_items->get<std::size_t>()) {
    return problem(pointer, fmt::format("expected at least {} item(s), got {}", node.min_items->dump(), value.size()));
  }
  if (node.max_items != nullptr && value.size() > node.max_items->get<std::size_t>()) {
    return problem(pointer, fmt::format("expected at most {} item(s), got {}", node.max_items->dump(), value.size()));
  }
  if (node.items != nullptr) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      const PointerMark mark(pointer, std::to_string(i));
      if (auto p = validate(*node.items, value[i], pointer, depth + 1)) {
        return p;
      }
    }
  }
  return std::nullopt;
}

std::optional<SchemaProblem> JsonSchema::validate_combinators(const Node& node, const nlohmann::json& value,
                                                              std::string& pointer, int depth) const {
  if (node.all_of != nullptr) {
    for (const auto& sub : *node.all_of) {
      if (auto p = validate(sub, value, pointer, depth + 1)) {
        return p;
      }
    }
  }
  for (const auto& [key, subs] : {std::pair{"oneOf", node.one_of}, std::pair{"anyOf", node.any_of}}) {
    if (subs == nullptr) {
      continue;
    }
    int matches = 0;
    std::vector<SchemaProblem> problems;
    for (const auto& sub : *subs) {
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
  if (node.if_schema != nullptr && !validate(*node.if_schema, value, pointer, depth + 1)) {
    if (node.then_schema != nullptr) {
      return validate(*node.then_schema, value, pointer, depth + 1);
    }
  } else if (node.if_schema != nullptr && node.else_schema != nullptr) {
    return validate(*node.else_schema, value, pointer, depth + 1);
  }
  return std::nullopt;
}

}  // namespace ccbench
