// nccl-tests' text output (every 2.x layout) read into ImportedTest (see import.hpp): its lines and tables here,
// each test's collective and ranks in import_nccl_tests_runs.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>

#include "ccbench/registration.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/text.hpp"
#include "import_nccl_tests_text.hpp"

namespace ccbench::report::detail {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

/// The columns of a table header: the case's own (size, count, type, redop, root) and then one block of time,
/// algbw, busbw and a check (#wrong, or the old `error`) per placement (out-of-place, then in-place).
struct Columns {
  std::vector<std::string> lead;  // size, count, type, [redop], [root]
  int blocks = 0;
  bool error_column = false;  // 2.0-2.11: a float delta, not a count of wrong elements
  [[nodiscard]] std::size_t width() const { return lead.size() + 4 * static_cast<std::size_t>(blocks); }
};

std::optional<Columns> header_columns(std::string_view line) {
  if (!starts_with(line, "#")) {
    return std::nullopt;
  }
  std::vector<std::string> words;
  for (auto& t : tokens(line.substr(1))) {
    // "busbw#wrong" where a version glued them
    if (const auto hash = t.find('#'); hash != std::string::npos && hash > 0) {
      words.push_back(t.substr(0, hash));
      words.push_back(t.substr(hash));
    } else {
      words.push_back(t);
    }
  }
  if (words.size() < 7 || words[0] != "size" || words[1] != "count") {
    return std::nullopt;
  }
  Columns c;
  std::size_t i = 0;
  for (; i < words.size() && words[i] != "time"; ++i) {
    c.lead.push_back(words[i]);
  }
  for (; i + 3 < words.size() + 0 && words[i] == "time"; i += 4) {
    if (words[i + 1] != "algbw" || words[i + 2] != "busbw" || (words[i + 3] != "#wrong" && words[i + 3] != "error")) {
      return std::nullopt;
    }
    c.error_column = words[i + 3] == "error";
    ++c.blocks;
  }
  if (i != words.size() || c.blocks == 0 || c.blocks > 2) {
    return std::nullopt;
  }
  return c;
}

/// "#  Rank  0 Group  0 Pid 4180122 on cnode3-002 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3" (2.10+), and the
/// older line without its Group.
std::optional<ImportedDevice> device_line(const std::string& line) {
  if (!regex_safe(line) || !starts_with(line, "#") || line.find("Rank") == std::string::npos) {
    return std::nullopt;
  }
  static const std::regex re(
      R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[([^\]]*)\]\s*(.*)$)");
  std::smatch m;
  if (!std::regex_match(line, m, re)) {
    return std::nullopt;
  }
  return ImportedDevice{std::atoi(m[1].str().c_str()), m[2].str(), m[4].str(), m[3].str()};
}

class TextParser : TextRuns {
 public:
  TextParser(const std::string& file, const ImportOptions& options) : TextRuns(file, options) {}

  std::vector<ImportedTest> parse(std::string_view text) {
    if (const auto stray = stray_rank_row(text)) {  // it would be merged as a sample of its size
      throw InputError(m_file, "",
                       fmt::format("line {}: a table row printed by rank {}, inside the table another rank printed: "
                                   "nccl-tests prints its table from one rank",
                                   stray->first, stray->second));
    }
    const auto lines = log_lines(text);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      m_line = static_cast<int>(i) + 1;
      take(lines[i]);
    }
    if (m_tests.empty() || m_tests.front().rows.empty()) {
      if (m_columns) {
        fail("truncated: a table header and no row after it");
      }
      throw InputError(m_file, "", "not a nccl-tests log: no table header ('#  size  count  type ...')");
    }
    if (m_columns) {
      end_early(m_tests.back());
    }
    for (const auto& t : m_tests) {
      if (t.rows.empty()) {
        throw InputError(m_file, "",
                         fmt::format("line {}: truncated: the test that starts there has no table (the "
                                     "run ended before its first size?)",
                                     t.line));
      }
    }
    for (std::size_t i = 0; i < m_tests.size(); ++i) {
      finish(m_tests[i], m_best[i]);
    }
    return std::move(m_tests);
  }

 private:
  /// A table that ends without its '# Avg bus bandwidth' line: the run failed (a "Test NCCL failure" line, kept
  /// as the reason) or the log was cut. Its rows are kept; a failed row at the next size says why, so that table
  /// shows it and accept's no_failed FAILs it. A table that never had a row is refused as before.
  void end_early(ImportedTest& t) {
    m_columns.reset();
    if (t.rows.empty()) {
      return;
    }
    const ImportedRow& last = t.rows.back();
    const std::string why =
        m_failure.empty()
            ? fmt::format(
                  "truncated: the table of the test from line {} ends after line {} without its '# Avg bus "
                  "bandwidth' line (a run cut short, or a log cut)",
                  t.line, last.line)
            : fmt::format("failed: line {}: {}", m_failure_line, m_failure);
    t.notes.push_back(fmt::format("{}: {}", m_file, why));
    ImportedRow failed = last;
    failed.in_place = false;
    failed.time_s.reset();
    failed.wrong.reset();
    failed.failed = fmt::format("the run ended before this size: {}", why);
    failed.line = m_failure.empty() ? last.line : m_failure_line;
    const auto size = static_cast<double>(last.size_bytes);
    const double next = m_step_factor > 1.0 ? size * m_step_factor
                                            : size + static_cast<double>(std::max<std::uint64_t>(m_step_bytes, 1));
    // a next size past what a double holds exactly (a hostile step) is only "after the last": one byte more
    failed.size_bytes = whole(std::floor(next)).value_or(last.size_bytes + 1);
    failed.count =
        last.size_bytes == 0
            ? 0
            : whole(std::floor(static_cast<double>(last.count) * static_cast<double>(failed.size_bytes) / size))
                  .value_or(last.count);
    t.rows.push_back(std::move(failed));
    m_failure.clear();
  }

  ImportedTest& fresh() {
    if (m_columns && !m_tests.empty()) {
      end_early(m_tests.back());  // a new test while a table was open: that one ended early
    }
    ImportedTest t;
    t.file = m_file;
    t.line = m_line;
    t.tool = "nccl-tests";
    t.format = "text";
    t.version = m_version;
    t.nccl_version = m_nccl;
    m_tests.push_back(std::move(t));
    m_best.emplace_back();
    m_open = true;
    m_named = false;
    return m_tests.back();
  }
  ImportedTest& current() { return m_open ? m_tests.back() : fresh(); }

  void take(const std::string& line) {
    static const std::regex version_re(R"(^# nccl-tests version (\S+)(?:.*nccl-library=(\d+))?)");
    static const std::regex nccl_re(R"(NCCL version (\d+\.\d+\.\d+))");
    static const std::regex iters_re(R"(^# nThread .*\biters: (\d+))");
    static const std::regex step_re(R"(\bstep: (\d+)\((factor|bytes)\))");
    std::smatch m;
    const bool short_line = regex_safe(line);
    if (short_line && starts_with(line, "# nccl-tests version") && std::regex_search(line, m, version_re)) {
      m_version = m[1].str();
      m_nccl = m[2].matched ? nccl_version_text(std::atoi(m[2].str().c_str())) : "";
      fresh();
    } else if (starts_with(line, "# Collective test starting:")) {
      auto& t = m_open && !m_named && current().rows.empty() ? current() : fresh();
      t.argv = {tokens(line.substr(27)).empty() ? std::string() : tokens(line.substr(27)).front()};
      set_test(t, t.argv.front(), true);
      m_named = true;
    } else if (short_line && starts_with(line, "# nThread") && std::regex_search(line, m, iters_re)) {
      m_iters = std::strtoull(m[1].str().c_str(), nullptr, 10);
      if (std::smatch step; std::regex_search(line, step, step_re)) {
        const double value = std::strtod(step[1].str().c_str(), nullptr);
        m_step_factor = step[2].str() == "factor" && std::isfinite(value) ? value : 0.0;
        m_step_bytes = step[2].str() == "bytes" ? whole(value).value_or(0) : 0;
      }
    } else if (line.find("Test NCCL failure") != std::string::npos ||
               line.find("Test CUDA failure") != std::string::npos || line.find("Test failure") != std::string::npos) {
      if (m_failure.empty()) {
        m_failure = printable(line.substr(0, std::min<std::size_t>(line.size(), 300)));
        m_failure_line = m_line;
      }
    } else if (auto dev = device_line(line)) {
      current().devices.push_back(std::move(*dev));
    } else if (short_line && m_nccl.empty() && line.find("NCCL version") != std::string::npos &&
               std::regex_search(line, m, nccl_re)) {
      m_nccl = m[1].str();
      if (m_open) {
        current().nccl_version = m_nccl;
      }
    } else if (auto cols = header_columns(line)) {
      if (m_open && !current().rows.empty()) {  // a second table without a version line of its own
        const auto previous = current();
        auto& t = fresh();
        t.devices = previous.devices;
        t.coll = previous.coll;
        t.argv = previous.argv;
      }
      current().root_column = std::find(cols->lead.begin(), cols->lead.end(), "root") != cols->lead.end() &&
                              std::find(cols->lead.begin(), cols->lead.end(), "redop") != cols->lead.end();
      m_columns = *cols;
    } else if (starts_with(line, "# Avg bus bandwidth")) {
      if (!m_columns) {
        fail("'# Avg bus bandwidth' without a table before it");
      }
      m_columns.reset();
      m_open = false;
    } else if (m_columns && !line.empty() && line[0] >= '0' && line[0] <= '9') {
      row(line);
    } else if (m_columns && line.size() > 1 && line[0] == '-' && line[1] >= '0' && line[1] <= '9') {
      fail(fmt::format("size '{}' is negative: not a row nccl-tests prints", tokens(line).front()));
    } else if (m_columns && starts_with(line, "# Out of bounds values")) {
      out_of_bounds(line);
    }
  }

  /// "# Out of bounds values : 5 FAILED": nccl-tests' own count of wrong elements in the table above; rows that
  /// count none beside a footer that counts some is a log that contradicts itself.
  void out_of_bounds(const std::string& line) {
    const auto words = tokens(line);
    const auto colon = std::find(words.begin(), words.end(), ":");
    if (colon == words.end() || colon + 1 == words.end()) {
      return;
    }
    const auto count = whole(number(*(colon + 1)));
    if (!count || *count == 0 || m_tests.empty()) {
      return;
    }
    std::uint64_t rows = 0;
    bool checked = false;
    for (const auto& r : m_tests.back().rows) {
      rows += r.wrong.value_or(0);
      checked = checked || r.wrong.has_value();
    }
    if (checked && rows == 0) {
      fail(fmt::format("the footer counts {} out-of-bounds values, and no row of the table counts a wrong element",
                       *count));
    }
  }

  void row(const std::string& line) {
    const auto t = tokens(line);
    const auto& c = *m_columns;
    // a row may leave the in-place block out (runs of forks that measured out-of-place only)
    const int blocks = t.size() == c.width() ? c.blocks : t.size() == c.lead.size() + 4 ? 1 : 0;
    if (blocks == 0) {
      fail(fmt::format("a row of {} fields under a header of {} (cut or broken): '{}'", t.size(), c.width(), line));
    }
    ImportedRow base;
    base.line = m_line;
    base.iterations = m_iters;
    for (std::size_t i = 0; i < c.lead.size(); ++i) {
      const auto& col = c.lead[i];
      if (col == "size" || col == "count") {
        const auto v = whole(number(t[i]));
        if (!v) {
          const auto n = number(t[i]);
          fail(n && *n > 9.0e15
                   ? fmt::format("{} '{}' is too large (above 2^53, what a double holds exactly)", col, t[i])
                   : fmt::format("{} '{}' is not a whole number", col, t[i]));
        }
        (col == "size" ? base.size_bytes : base.count) = *v;
      } else if (col == "type") {
        const auto d = parse_dtype(t[i]);
        if (!d) {
          fail(fmt::format("unknown type '{}'", t[i]));
        }
        base.dtype = *d;
      } else if (col == "redop") {
        base.no_redop = t[i] == "none";
        if (t[i] != "none") {
          const auto op = parse_reduce_op(t[i]);
          if (!op) {
            fail(fmt::format("unknown redop '{}'", t[i]));
          }
          base.op = *op;
        }
      } else if (col == "root") {
        const auto v = small_int(number(t[i]));
        if (!v) {
          fail(fmt::format("root '{}' is not a rank", t[i]));
        }
        base.root = *v;
      }
    }
    auto& test = current();
    for (int b = 0; b < blocks; ++b) {
      const std::size_t at = c.lead.size() + 4 * static_cast<std::size_t>(b);
      ImportedRow r = base;
      r.in_place = b == 1;
      if (t[at] != "N/A") {
        const auto time = number(t[at]);
        if (!time || !(*time > 0)) {
          fail(fmt::format("time '{}' is not a positive number of microseconds", t[at]));
        }
        r.time_s = *time * 1e-6;
      }
      if (!c.error_column && t[at + 3] != "N/A") {
        const auto wrong = whole(number(t[at + 3]));
        if (!wrong) {
          fail(fmt::format("#wrong '{}' is not a count", t[at + 3]));
        }
        r.wrong = *wrong;
      }
      // the printed rates, for the ranks when the log names none
      const auto alg = number(t[at + 1]);
      const auto bus = number(t[at + 2]);
      if (auto& best = m_best.back(); alg && bus && *alg > best.alg && r.time_s) {
        best = Best{*alg, *bus / *alg, m_line};
      }
      test.rows.push_back(std::move(r));
    }
  }

  std::vector<ImportedTest> m_tests;
  std::optional<Columns> m_columns;
  std::string m_version;
  std::string m_nccl;
  std::uint64_t m_iters = 0;
  double m_step_factor = 2.0;  // nccl-tests' default -f 2 where the log has no nThread line
  std::uint64_t m_step_bytes = 0;
  std::string m_failure;  // a "Test NCCL failure ..." line not yet charged to a table
  int m_failure_line = 0;
  bool m_open = false;
  bool m_named = false;
  std::vector<Best> m_best;  // per test: its row with the largest algbw, for ranks_from_ratio
};

}  // namespace

std::vector<ImportedTest> parse_nccl_tests_text(std::string_view text, const std::string& file,
                                                const ImportOptions& options) {
  return TextParser(file, options).parse(text);
}

}  // namespace ccbench::report::detail
