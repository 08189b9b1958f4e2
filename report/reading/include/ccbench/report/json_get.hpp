#pragma once
// `ccbench-report get`: values out of a JSON file for the workflow scripts, which read the verdicts of
// `compare`, `accept` and `fleet` (--format json), the profiles and the results through it instead of the
// terminal text (whose wording may change) or an interpreter the machine may lack (a bare node has no python3).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::report {

/// Nesting deeper than this is refused as it is parsed: no JSON file ccbench reads is nested half as deep, and
/// a document nested 100,000 deep would exhaust the stack when it is destroyed or printed.
inline constexpr int kMaxJsonNesting = 64;

/// Parses any JSON text for `get`, refusing nesting deeper than kMaxJsonNesting as it parses. Throws UsageError
/// ("NAME: not JSON (...)", "NAME: nested deeper than 64 levels ...").
nlohmann::json parse_json_text(std::string_view text, const std::string& name);

struct GetOptions {
  std::vector<std::string> fields;  // pointers relative to each value found: one tab-separated line per value
  bool missing_ok = false;          // a pointer that names nothing gives no line instead of an error
};

/// The lines `ccbench-report get` prints for `pointer` (RFC 6901, where a segment "*" stands for every element
/// of an array or every member of an object, in order): each value found is a line, a string as it is, a number,
/// true, false or null as JSON, an array or object as compact JSON, except that an array the pointer names as a
/// whole (its last segment not "*") gives one line per element. With fields, each value found gives one line
/// of the fields' values, tab-separated, each empty where that value lacks it. Throws UsageError for a malformed
/// pointer, and for one that names nothing unless missing_ok (under a "*" a member that is missing is left out).
std::vector<std::string> json_get(const nlohmann::json& doc, std::string_view pointer, const GetOptions& options);

}  // namespace ccbench::report
