#include "text_table.hpp"

#include <algorithm>
#include <stdexcept>

#include "ccbench/report/text.hpp"

namespace ccbench::report::detail {

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U; }));
}

TextTable::TextTable(std::vector<Column> columns) : m_columns(std::move(columns)) {}

void TextTable::add_row(std::vector<Cell> cells) {
  if (cells.size() != m_columns.size()) {
    throw std::logic_error("TextTable: row width differs from the header");
  }
  m_rows.push_back(std::move(cells));
}

std::string TextTable::terminal(bool colour) const {
  std::vector<std::size_t> width(m_columns.size());
  for (std::size_t c = 0; c < m_columns.size(); ++c) {
    width[c] = display_width(m_columns[c].title);
    for (const auto& row : m_rows) {
      width[c] = std::max(width[c], display_width(row[c].text));
    }
  }
  const auto line = [&](const std::vector<Cell>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const auto pad = std::string(width[c] - display_width(cells[c].text), ' ');
      std::string text = cells[c].text;
      if (colour && cells[c].colour != nullptr) {
        text = std::string("\x1b[").append(cells[c].colour).append("m").append(text).append("\x1b[0m");
      }
      out += c == 0 ? "" : "  ";
      out += m_columns[c].align == Align::Right ? pad + text : text + (c + 1 == cells.size() ? "" : pad);
    }
    return out + "\n";
  };
  std::vector<Cell> header;
  for (const auto& col : m_columns) {
    header.push_back({col.title});
  }
  std::string out = line(header);
  for (const auto& row : m_rows) {
    out += line(row);
  }
  return out;
}

std::string TextTable::markdown() const {
  const auto escape = [](const std::string& text) {
    // Markdown renders inline HTML: escape it, and the cell separator, and keep one line.
    std::string out;
    for (const char c : html_escape(text)) {
      out += c == '|' ? std::string("\\|") : (c == '\n' || c == '\r') ? std::string(" ") : std::string(1, c);
    }
    return out;
  };
  std::string out = "|";
  std::string rule = "|";
  for (const auto& col : m_columns) {
    out += " " + escape(col.title) + " |";
    rule += col.align == Align::Right ? "---:|" : ":---|";
  }
  out += "\n" + rule + "\n";
  for (const auto& row : m_rows) {
    out += "|";
    for (const auto& cell : row) {
      out += " " + escape(cell.text) + " |";
    }
    out += "\n";
  }
  return out;
}

std::string TextTable::html() const {
  std::string out = "<table>\n<thead><tr>";
  for (const auto& col : m_columns) {
    out += "<th>" + html_escape(col.title) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : m_rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool num = i < m_columns.size() && m_columns[i].align == Align::Right;
      out += (num ? "<td class=\"num\">" : "<td>") + html_escape(row[i].text) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace ccbench::report::detail
