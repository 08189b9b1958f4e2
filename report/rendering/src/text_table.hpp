#pragma once
// A table of text cells printed aligned for a terminal or as Markdown (GitHub's pipe tables).
#include <string>
#include <vector>

namespace ccbench::report::detail {

enum class Align { Left, Right };

struct Column {
  std::string title;
  Align align = Align::Right;
};

struct Cell {
  std::string text;
  const char* colour = nullptr;  // ANSI SGR code ("31" red) or nullptr
};

class TextTable {
 public:
  explicit TextTable(std::vector<Column> columns);
  void add_row(std::vector<Cell> cells);
  [[nodiscard]] bool empty() const { return m_rows.empty(); }
  /// Aligned columns, two spaces apart; `colour` turns the cells' ANSI colours on.
  [[nodiscard]] std::string terminal(bool colour) const;
  /// A Markdown pipe table ('|' in cells escaped).
  [[nodiscard]] std::string markdown() const;
  /// An HTML <table> (cells escaped; right-aligned columns in class "num").
  [[nodiscard]] std::string html() const;

 private:
  std::vector<Column> m_columns;
  std::vector<std::vector<Cell>> m_rows;
};

/// Display width of UTF-8 text (code points; our cells hold no wide characters).
std::size_t display_width(const std::string& text);

}  // namespace ccbench::report::detail
