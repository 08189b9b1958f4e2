#pragma once
// A JSON Schema (2020-12) validator for the subset of keywords our schemas use (results, hardware.json, profiles). It
// refuses, at construction, any schema with a keyword it does not implement, so the schema file cannot grow a rule that
// this reader silently ignores. Reports the first problem with its JSON pointer.
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
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
  /// The first problem of `instance` against the subschema `ref` ("#/$defs/result"), as if it stood at `pointer`
  /// in a document (a part read on its own, as a streamed result). Throws std::invalid_argument on a bad `ref`.
  [[nodiscard]] std::optional<SchemaProblem> first_problem_in(const nlohmann::json& instance, const std::string& ref,
                                                              const std::string& pointer) const;

 private:
  /// One schema object's keywords, looked up once at construction: validating a result touches each of its
  /// schema's nodes for each value, and a map lookup per keyword per value was most of the reader's time.
  struct Node {
    const nlohmann::json* ref = nullptr;  // $ref, resolved
    std::vector<std::string> types;       // type ([] when absent)
    const nlohmann::json* constant = nullptr;
    const nlohmann::json* enumeration = nullptr;
    const nlohmann::json* minimum = nullptr;
    const nlohmann::json* maximum = nullptr;
    const nlohmann::json* exclusive_minimum = nullptr;
    const nlohmann::json* min_length = nullptr;
    const nlohmann::json* max_length = nullptr;
    const std::regex* pattern = nullptr;
    const std::string* pattern_text = nullptr;
    const nlohmann::json* required = nullptr;
    const nlohmann::json* properties = nullptr;
    const nlohmann::json* additional = nullptr;  // additionalProperties
    const nlohmann::json* items = nullptr;
    const nlohmann::json* min_items = nullptr;
    const nlohmann::json* max_items = nullptr;
    const nlohmann::json* all_of = nullptr;
    const nlohmann::json* one_of = nullptr;
    const nlohmann::json* any_of = nullptr;
    const nlohmann::json* if_schema = nullptr;
    const nlohmann::json* then_schema = nullptr;
    const nlohmann::json* else_schema = nullptr;
  };

  void check_keywords(const nlohmann::json& schema, const std::string& where);
  void index_node(const nlohmann::json& schema);
  [[nodiscard]] const nlohmann::json& resolve(const std::string& ref) const;
  // `pointer` is a buffer that each level appends its token to and takes it off again (no string per value).
  [[nodiscard]] std::optional<SchemaProblem> validate(const nlohmann::json& schema, const nlohmann::json& value,
                                                      std::string& pointer, int depth) const;
  [[nodiscard]] static std::optional<SchemaProblem> validate_type(const Node& node, const nlohmann::json& value,
                                                                  const std::string& pointer);
  [[nodiscard]] static std::optional<SchemaProblem> validate_value(const Node& node, const nlohmann::json& value,
                                                                   const std::string& pointer);
  [[nodiscard]] std::optional<SchemaProblem> validate_object(const Node& node, const nlohmann::json& value,
                                                             std::string& pointer, int depth) const;
  [[nodiscard]] std::optional<SchemaProblem> validate_array(const Node& node, const nlohmann::json& value,
                                                            std::string& pointer, int depth) const;
  [[nodiscard]] std::optional<SchemaProblem> validate_combinators(const Node& node, const nlohmann::json& value,
                                                                  std::string& pointer, int depth) const;

  std::shared_ptr<const nlohmann::json> m_root;  // shared: the nodes' addresses are the index's keys
  std::map<std::string, std::regex> m_patterns;
  std::unordered_map<const nlohmann::json*, Node> m_nodes;
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
