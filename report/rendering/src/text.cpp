#include "ccbench/report/text.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace ccbench::report {

std::optional<Format> parse_format(std::string_view text) {
  if (text == "terminal") {
    return Format::Terminal;
  }
  if (text == "markdown" || text == "md") {
    return Format::Markdown;
  }
  if (text == "csv") {
    return Format::Csv;
  }
  if (text == "json") {
    return Format::Json;
  }
  return std::nullopt;
}

namespace {

// Appends `c` escaped for HTML/XML text and attributes; false if `c` needs no escaping.
bool append_entity(std::string& out, char c) {
  switch (c) {
    case '&':
      out += "&amp;";
      return true;
    case '<':
      out += "&lt;";
      return true;
    case '>':
      out += "&gt;";
      return true;
    case '"':
      out += "&quot;";
      return true;
    case '\'':
      out += "&#39;";
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string html_escape(std::string_view text) { return xml_escape(text); }

std::string markdown_escape(std::string_view text) {
  std::string out;
  for (const char c : html_escape(text)) {
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
      continue;
    }
    if (std::string_view("\\`*_[]|#").find(c) != std::string_view::npos) {
      out += '\\';
    }
    out += c;
  }
  return out;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto len = utf8_length(text, i);
    if (len == 1 && append_entity(out, c)) {
      i += 1;
    } else if (len == 0 ||
               (len == 1 && is_control(static_cast<unsigned char>(c)) && c != '\t' && c != '\n' && c != '\r')) {
      out += "\xEF\xBF\xBD";  // U+FFFD: XML 1.0 has no way to write these
      i += 1;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string csv_field(std::string_view text) {
  std::string clean = printable(text);  // one record a line: no control character
  if (clean.find_first_of(",\"") == std::string_view::npos) {
    return clean;
  }
  std::string out = "\"";
  for (const char c : clean) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  out += '"';
  return out;
}

std::string format_number(std::optional<double> value, int digits) {
  if (!value || !std::isfinite(*value)) {
    return "-";
  }
  return fmt::format("{:.{}f}", *value, digits);
}

}  // namespace ccbench::report
