// nccl-tests' text output, the run each test is: its collective (named by the log, --test, or inferred from its
// table) and its ranks (Rank lines, --ranks, its sizes or its rates), and the table checked against both. The
// lines and tables themselves are read in import_nccl_tests.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/registration.hpp"
#include "ccbench/report/input.hpp"
#include "import_nccl_tests_text.hpp"

namespace ccbench::report::detail {

void TextRuns::fail(const std::string& what) const {
  throw InputError(m_file, "", fmt::format("line {}: {}", m_line, what));
}

void TextRuns::set_test(ImportedTest& t, std::string name, bool from_log) {
  const std::string given = name;
  if (name.size() > 5 && name.substr(name.size() - 5) == "_perf") {
    name.resize(name.size() - 5);
  }
  const auto coll = parse_collective(name);
  if (!coll || is_rdma(*coll) || is_copy(*coll)) {
    if (from_log) {
      fail(fmt::format("nccl-tests' {} has no ccbench bench to be read as", given));
    }
    throw UsageError(fmt::format("--test {}: expected a nccl-tests test such as all_reduce or all_gather_perf", given));
  }
  t.coll = *coll;
}

/// Ranks from the Rank lines, --ranks, the sizes (S = count x ranks x type size) or the printed rates
/// (busbw / algbw = the bus factor), in that order; then each row's size checked against its count.
void TextRuns::finish(ImportedTest& t, const Best& best) {
  const int named_ranks = static_cast<int>(t.devices.size());
  if (named_ranks > 0 && m_options.ranks && *m_options.ranks != named_ranks) {
    throw InputError(m_file, "",
                     fmt::format("--ranks {}: the log's Rank lines name {} ranks", *m_options.ranks, named_ranks));
  }
  if (t.argv.empty()) {
    if (!m_options.test.empty()) {
      set_test(t, m_options.test, false);
    } else if (const auto inferred = infer_test(t, best, named_ranks > 0 ? named_ranks : m_options.ranks.value_or(0))) {
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
void TextRuns::check_rates(const ImportedTest& t, const Best& b) const {
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
std::optional<Collective> TextRuns::infer_test(const ImportedTest& t, const Best& b, int ranks) {
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

int TextRuns::ranks_from_ratio(ImportedTest& t, const Best& b) const {
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

std::string TextRuns::test_name(const ImportedTest& t) { return fmt::format("{}_perf", info(t.coll).name); }

}  // namespace ccbench::report::detail
