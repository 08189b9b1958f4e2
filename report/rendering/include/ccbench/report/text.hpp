#pragma once
// Small text helpers shared by the printers: escaping and number formatting.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ccbench/text.hpp"  // printable, format_size: the model's, for every printer

namespace ccbench::report {

/// Output formats (renderer.hpp): --format names the first four; --junit FILE (accept, fleet) the last.
enum class Format { Terminal, Markdown, Csv, Json, Junit };
/// "terminal" | "markdown" | "md" | "csv" | "json"; nullopt otherwise.
std::optional<Format> parse_format(std::string_view text);

/// Escapes & < > " ' for HTML text and attribute values, and replaces control characters and invalid UTF-8 with
/// U+FFFD (as xml_escape).
std::string html_escape(std::string_view text);
/// Escapes & < > " ' for XML, and replaces what XML 1.0 cannot hold (control characters, invalid UTF-8) with U+FFFD.
std::string xml_escape(std::string_view text);
/// Text for Markdown: HTML escaped (Markdown renders inline HTML), Markdown's own marks (\ ` * _ [ ] | #)
/// backslashed, and on one line.
std::string markdown_escape(std::string_view text);
/// One CSV field (RFC 4180): control characters and invalid UTF-8 as '?' (one record a line), quoted when it
/// holds a comma or a quote.
std::string csv_field(std::string_view text);
/// Fixed notation with `digits` after the point; "-" for nullopt.
std::string format_number(std::optional<double> value, int digits);

}  // namespace ccbench::report
