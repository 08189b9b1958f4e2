// The log text every importer reads through: tokens and numbers of a line, and the lines of a log with a
// launcher's prefix (mpirun --tag-output, srun --label) taken off. Declared in import_logs.hpp.
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "import_logs.hpp"

namespace ccbench::report::detail {

std::vector<std::string> tokens(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
      ++i;
    }
    const auto start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      ++i;
    }
    if (i > start) {
      out.emplace_back(line.substr(start, i - start));
    }
  }
  return out;
}

std::optional<std::uint64_t> whole(std::optional<double> value) {
  if (!value || !(*value >= 0.0) || *value > 9.0e15 || std::floor(*value) != *value) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(*value);
}

std::optional<int> small_int(std::optional<double> value) {
  if (!value || !(std::abs(*value) <= 1048576.0) || std::floor(*value) != *value) {
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

std::optional<double> number(std::string_view token) {
  if (token.empty() || token.size() > 64) {
    return std::nullopt;
  }
  const std::string s(token);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || s.find_first_of("xXnN") != std::string::npos || !std::isfinite(v)) {
    return std::nullopt;  // no hex, inf or nan, nor 1e999
  }
  return v;
}

namespace {

/// The length of a launcher's prefix at the start of `line`: Open MPI's --tag-output "[1,0]<stdout>:" (or
/// <stderr>), srun's --label "0: " (a table row never has a colon); 0 for none.
std::size_t tag_length(std::string_view line) {
  const auto digits = [&line](std::size_t at) {
    std::size_t end = at;
    while (end < line.size() && line[end] >= '0' && line[end] <= '9') {
      ++end;
    }
    return end;
  };
  if (!line.empty() && line[0] == '[') {
    const std::size_t comma = digits(1);
    if (comma > 1 && comma < line.size() && line[comma] == ',') {
      const std::size_t close = digits(comma + 1);
      for (const std::string_view stream : {"]<stdout>:", "]<stderr>:"}) {
        if (close > comma + 1 && line.substr(close, stream.size()) == stream) {
          const std::size_t end = close + stream.size();
          return end < line.size() && line[end] == ' ' ? end + 1 : end;
        }
      }
    }
    return 0;
  }
  std::size_t at = 0;
  while (at < line.size() && line[at] == ' ') {
    ++at;
  }
  const std::size_t end = digits(at);
  return end > at && line.substr(end, 2) == ": " ? end + 2 : 0;
}

/// The rank a launcher's prefix names ("[1,3]<stdout>:" is rank 3, "3: " too); -1 for none.
int tag_rank(std::string_view line) {
  const std::size_t length = tag_length(line);
  if (length == 0) {
    return -1;
  }
  std::string_view tag = line.substr(0, length);
  if (tag.front() == '[') {
    tag = tag.substr(tag.find(',') + 1);
  }
  const auto at = tag.find_first_of("0123456789");
  return at == std::string_view::npos ? -1 : std::atoi(std::string(tag.substr(at, 7)).c_str());
}

}  // namespace

std::optional<std::pair<int, int>> stray_rank_row(std::string_view text) {
  int table_rank = -1;
  int number = 0;
  for (std::size_t pos = 0; pos < text.size(); ++number) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const int rank = tag_rank(line);
    const std::string_view body = line.substr(tag_length(line));
    const auto first = body.find_first_not_of(" \t");
    if (rank < 0 || first == std::string_view::npos || body[first] < '0' || body[first] > '9') {
      continue;
    }
    if (table_rank < 0) {
      table_rank = rank;
    } else if (rank != table_rank) {
      return std::pair{number + 1, rank};
    }
  }
  return std::nullopt;
}

std::vector<std::string> log_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    line.remove_prefix(tag_length(line));
    const auto first = line.find_first_not_of(" \t\r");
    const auto last = line.find_last_not_of(" \t\r");
    lines.emplace_back(first == std::string_view::npos ? std::string_view() : line.substr(first, last - first + 1));
  }
  return lines;
}

}  // namespace ccbench::report::detail
