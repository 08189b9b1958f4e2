// nccl-tests' text output (every 2.x layout) read into ImportedTest (see import.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>

#include "ccbench/registration.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/text.hpp"
#include "import_logs.hpp"

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

/// The row of a test with the largest printed algbw: its busbw / algbw is the bus factor to the most digits.
struct Best {
  double alg = 0.0;
  double ratio = 0.0;
  int line = 0;
};

class TextParser {
 public:
  TextParser(const std::string& file, const ImportOptions& options) : m_file(file), m_options(options) {}

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
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(m_file, "", fmt::format("line {}: {}", m_line, what));
  }

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

  void set_test(ImportedTest& t, std::string name, bool from_log) {
    const std::string given = name;
    if (name.size() > 5 && name.substr(name.size() - 5) == "_perf") {
      name.resize(name.size() - 5);
    }
    const auto coll = parse_collective(name);
    if (!coll || is_rdma(*coll) || is_copy(*coll)) {
      if (from_log) {
        fail(fmt::format("nccl-tests' {} has no ccbench bench to be read as", given));
      }
      throw UsageError(
          fmt::format("--test {}: expected a nccl-tests test such as all_reduce or all_gather_perf", given));
    }
    t.coll = *coll;
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

  /// Ranks from the Rank lines, --ranks, the sizes (S = count x ranks x type size) or the printed rates
  /// (busbw / algbw = the bus factor), in that order; then each row's size checked against its count.
  void finish(ImportedTest& t, const Best& best) {
    const int named_ranks = static_cast<int>(t.devices.size());
    if (named_ranks > 0 && m_options.ranks && *m_options.ranks != named_ranks) {
      throw InputError(m_file, "",
                       fmt::format("--ranks {}: the log's Rank lines name {} ranks", *m_options.ranks, named_ranks));
    }
    if (t.argv.empty()) {
      if (!m_options.test.empty()) {
        set_test(t, m_options.test, false);
      } else if (const auto inferred =
                     infer_test(t, best, named_ranks > 0 ? named_ranks : m_options.ranks.value_or(0))) {
        t.coll = *inferred;
        t.notes.push_back(fmt::format(
            "{}: the log does not name its test; {} inferred from its table (size against count, redop, root and "
            "busbw / algbw {:.4f} on line {})",
            m_file, test_name(t), best.ratio, best.line));
      } else {
        throw InputError(m_file, "",
                         "the log does not name its test (no '# Collective test starting' line) and its table does "
                         "not tell it: give --test all_reduce, all_gather, ...");
      }
    } else if (!m_options.test.empty()) {
      ImportedTest given = t;
      set_test(given, m_options.test, false);
      if (given.coll != t.coll) {
        throw InputError(m_file, "", fmt::format("--test {}: the log names its test {}", m_options.test, test_name(t)));
      }
    }
    const auto& coll = info(t.coll);
    const auto& first = t.rows.front();
    const auto type_size = size_of(first.dtype);
    if (!t.devices.empty()) {
      t.ranks = static_cast<int>(t.devices.size());
    } else if (m_options.ranks) {
      t.ranks = *m_options.ranks;
      t.notes.push_back(fmt::format("{}: ranks {} from --ranks (the log has no Rank lines)", m_file, t.ranks));
    } else if (coll.algbw_bytes == Span::CountTimesRanks && first.count > 0) {
      t.ranks = static_cast<int>(first.size_bytes / (first.count * type_size));
      t.notes.push_back(
          fmt::format("{}: ranks {} from size / (count x type size) (the log has no Rank lines)", m_file, t.ranks));
    } else if (coll.factor != BusFactor::One && best.alg > 0) {
      t.ranks = ranks_from_ratio(t, best);
    } else {
      throw InputError(m_file, "",
                       fmt::format("the log names no rank and {}'s sizes and rates do not tell how many: "
                                   "give --ranks",
                                   test_name(t)));
    }
    check_rates(t, best);
    for (const auto& r : t.rows) {
      const bool rooted = info(t.coll).has_root;
      if (r.failed.empty() && t.root_column && (rooted ? r.root < 0 || r.root >= t.ranks : r.root != -1)) {
        throw InputError(m_file, "",
                         fmt::format("line {}: root {} {}", r.line, r.root,
                                     rooted ? fmt::format("is not a rank of the {} ranks of {}", t.ranks, test_name(t))
                                            : fmt::format("where {} has none (-1)", test_name(t))));
      }
    }
    for (const auto& r : t.rows) {
      // alltoallv's size is its busiest rank's bytes under a spread or matrix the log does not give
      if (r.failed.empty() && coll.algbw_bytes != Span::Plan &&
          algbw_bytes(coll, r.count, size_of(r.dtype), t.ranks) != r.size_bytes) {
        throw InputError(m_file, "",
                         fmt::format("line {}: size {} is not what {} elements of {} on {} ranks make "
                                     "for {}",
                                     r.line, r.size_bytes, r.count, name(r.dtype), t.ranks, test_name(t)));
      }
    }
  }

  /// The log's own busbw / algbw against the bus factor of its test at its ranks, wherever they came from (the
  /// log, --test, --ranks): a flag the figures contradict is refused with both (a 2.0-era all_reduce log read as
  /// all_gather became 1 rank with busbw 0; --ranks 5 on a log of 32 gave 12.40 against its printed 15.02).
  void check_rates(const ImportedTest& t, const Best& b) const {
    if (b.alg <= 0 || info(t.coll).algbw_bytes == Span::Plan) {
      return;
    }
    const double expected = bus_factor(info(t.coll).factor, t.ranks);
    const double uncertainty = b.ratio * (0.01 / b.alg) * 2 + 0.005;
    if (std::abs(expected - b.ratio) > uncertainty) {
      throw InputError(m_file, "",
                       fmt::format("line {}: busbw / algbw is {:.4f}, where {} on {} rank(s) gives {:.4f}: the log "
                                   "is not what the test and ranks say (--test, --ranks, or its Rank lines)",
                                   b.line, b.ratio, test_name(t), t.ranks, expected));
    }
  }

  /// The one nccl-tests test a 2.12+ table fits (size against count, redop, root, busbw / algbw at `ranks`), or
  /// none when the table cannot tell (all_gather and alltoall, gather and scatter print alike).
  [[nodiscard]] static std::optional<Collective> infer_test(const ImportedTest& t, const Best& b, int ranks) {
    if (!t.root_column || ranks < 2 || b.alg <= 0) {
      return std::nullopt;
    }
    const auto& row = t.rows.front();
    std::vector<Collective> fits;
    for (const Collective c :
         {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll,
          Collective::Broadcast, Collective::Reduce, Collective::SendRecv, Collective::Gather, Collective::Scatter}) {
      const auto& ci = info(c);
      const bool size_fits = algbw_bytes(ci, row.count, size_of(row.dtype), ranks) == row.size_bytes;
      const bool redop_fits = ci.has_reduce_op != row.no_redop;
      const bool root_fits = ci.has_root == (row.root >= 0);
      const double factor = bus_factor(ci.factor, ranks);
      const bool rate_fits = std::abs(factor - b.ratio) <= b.ratio * (0.01 / b.alg) * 2 + 0.005;
      if (size_fits && redop_fits && root_fits && rate_fits) {
        fits.push_back(c);
      }
    }
    return fits.size() == 1 ? std::optional(fits.front()) : std::nullopt;
  }

  int ranks_from_ratio(ImportedTest& t, const Best& b) const {
    const auto factor = info(t.coll).factor;
    int best = 0;
    double best_err = 1e9;
    for (int n = 2; n <= 1 << 16; ++n) {
      const double err = std::abs(bus_factor(factor, n) - b.ratio);
      if (err < best_err) {
        best_err = err;
        best = n;
      }
    }
    // the printed rates have two decimals: the ratio is known to about 0.01 / algbw of itself
    const double uncertainty = b.ratio * (0.01 / b.alg) * 2;
    const double gap = std::min(std::abs(bus_factor(factor, best + 1) - bus_factor(factor, best)),
                                std::abs(bus_factor(factor, best) - bus_factor(factor, best - 1)));
    if (best < 2 || uncertainty >= gap / 2 || best_err >= gap / 2) {
      throw InputError(m_file, "",
                       fmt::format("the log names no rank and its rates cannot tell how many (busbw / "
                                   "algbw {:.4f} on line {}): give --ranks",
                                   b.ratio, b.line));
    }
    t.notes.push_back(fmt::format("{}: ranks {} from busbw / algbw = {:.4f} on line {} (the log has no Rank lines)",
                                  m_file, best, b.ratio, b.line));
    return best;
  }

  static std::string test_name(const ImportedTest& t) { return fmt::format("{}_perf", info(t.coll).name); }

  const std::string& m_file;
  const ImportOptions& m_options;
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
  int m_line = 0;
};

}  // namespace

std::vector<ImportedTest> parse_nccl_tests_text(std::string_view text, const std::string& file,
                                                const ImportOptions& options) {
  return TextParser(file, options).parse(text);
}

}  // namespace ccbench::report::detail
