#include "ccbench/json_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "ccbench/text.hpp"

namespace ccbench {

namespace {

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

namespace {
const nlohmann::json* keyword(const nlohmann::json& schema, const char* name) {
  const auto it = schema.find(name);
  return it == schema.end() ? nullptr : &*it;
}

}  // namespace

JsonSchema::JsonSchema(nlohmann::json schema) : m_root(std::make_shared<const nlohmann::json>(std::move(schema))) {
  check_keywords(*m_root, "");
}

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
  index_node(schema);
}

void JsonSchema::index_node(const nlohmann::json& schema) {
  Node n;
  if (const auto* ref = keyword(schema, "$ref")) {
    n.ref = &resolve(ref->get<std::string>());
  }
  if (const auto* type = keyword(schema, "type")) {
    n.types =
        type->is_string() ? std::vector<std::string>{type->get<std::string>()} : type->get<std::vector<std::string>>();
  }
  n.constant = keyword(schema, "const");
  n.enumeration = keyword(schema, "enum");
  n.minimum = keyword(schema, "minimum");
  n.maximum = keyword(schema, "maximum");
  n.exclusive_minimum = keyword(schema, "exclusiveMinimum");
  n.min_length = keyword(schema, "minLength");
  n.max_length = keyword(schema, "maxLength");
  if (const auto* pattern = keyword(schema, "pattern")) {
    n.pattern_text = &pattern->get_ref<const std::string&>();
    n.pattern = &m_patterns.at(*n.pattern_text);
  }
  n.required = keyword(schema, "required");
  n.properties = keyword(schema, "properties");
  n.additional = keyword(schema, "additionalProperties");
  n.items = keyword(schema, "items");
  n.min_items = keyword(schema, "minItems");
  n.max_items = keyword(schema, "maxItems");
  n.all_of = keyword(schema, "allOf");
  n.one_of = keyword(schema, "oneOf");
  n.any_of = keyword(schema, "anyOf");
  n.if_schema = keyword(schema, "if");
  n.then_schema = keyword(schema, "then");
  n.else_schema = keyword(schema, "else");
  m_nodes[&schema] = std::move(n);
}

const nlohmann::json& JsonSchema::resolve(const std::string& ref) const {
  if (ref.rfind("#/", 0) != 0) {
    throw std::invalid_argument("schema: only local $refs (#/...) are supported, not " + ref);
  }
  const nlohmann::json::json_pointer ptr(ref.substr(1));
  if (!m_root->contains(ptr)) {
    throw std::invalid_argument("schema: $ref " + ref + " does not resolve");
  }
  return m_root->at(ptr);
}

std::optional<SchemaProblem> JsonSchema::first_problem(const nlohmann::json& instance) const {
  std::string pointer;
  return validate(*m_root, instance, pointer, 0);
}

std::optional<SchemaProblem> JsonSchema::first_problem_in(const nlohmann::json& instance, const std::string& ref,
                                                          const std::string& pointer) const {
  std::string buffer = pointer;
  return validate(resolve(ref), instance, buffer, 0);
}

}  // namespace ccbench
