#pragma once
// A JSON Schema (2020-12) validator for the subset of keywords our schemas use (results, hardware.json, profiles). It
// refuses, at construction, any schema with a keyword it does not implement, so the schema file cannot grow a rule that
// this reader silently ignores. Reports the first problem with its JSON pointer.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench {

struct SchemaProblem {
  std::string pointer;  // JSON pointer into the instance; "" for the root
  std::string message;  // "expected integer, got string"
};

class JsonSchema {
 public:
  /// Throws std::invalid_argument on an unsupported keyword or an unresolvable $ref.
  explicit JsonSchema(nlohmann::json schema);
  [[nodiscard]] std::optional<SchemaProblem> first_problem(const nlohmann::json& instance) const;

 private:
  void check_keywords(const nlohmann::json& schema, const std::string& where);
  [[nodiscard]] const nlohmann::json& resolve(const std::string& ref) const;
  [[nodiscard]] std::optional<SchemaProblem> validate(const nlohmann::json& schema, const nlohmann::json& value,
                                                      const std::string& pointer, int depth) const;
  [[nodiscard]] static std::optional<SchemaProblem> validate_type(const nlohmann::json& schema,
                                                                  const nlohmann::json& value,
                                                                  const std::string& pointer);
  [[nodiscard]] std::optional<SchemaProblem> validate_value(const nlohmann::json& schema, const nlohmann::json& value,
                                                            const std::string& pointer) const;
  [[nodiscard]] std::optional<SchemaProblem> validate_object(const nlohmann::json& schema, const nlohmann::json& value,
                                                             const std::string& pointer, int depth) const;
  [[nodiscard]] std::optional<SchemaProblem> validate_array(const nlohmann::json& schema, const nlohmann::json& value,
                                                            const std::string& pointer, int depth) const;
  [[nodiscard]] std::optional<SchemaProblem> validate_combinators(const nlohmann::json& schema,
                                                                  const nlohmann::json& value,
                                                                  const std::string& pointer, int depth) const;

  nlohmann::json m_root;
  std::map<std::string, std::regex> m_patterns;
};

/// The assertion keywords the validator implements ("if" stands for if/then/else); any other keyword
/// but the annotations ($schema, $id, $defs, title, description, $comment, examples) is refused.
std::span<const std::string_view> implemented_keywords();

/// "string", "integer", "number", "object", "array", "boolean", "null".
std::string json_type_name(const nlohmann::json& value);
/// A short, printable rendering of a value for messages (strings quoted and cut at 40 characters).
std::string short_value(const nlohmann::json& value);
/// Appends one reference token to a JSON pointer (escaping ~ and /).
std::string pointer_append(const std::string& pointer, const std::string& token);

}  // namespace ccbench
