#pragma once
// `ccbench-report regression BASE_DIR CAND_DIR`: two stored runs of a suite (regression.sh's labels) compared
// bench by bench, and one verdict for the suite with its exit code. The verdict is worked out from the
// comparisons' values, never from their text.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/report/compare.hpp"
#include "ccbench/report/input.hpp"

namespace ccbench::report {

/// One bench of the candidate's suite.
struct BenchRegression {
  enum class State {
    Compared,   // both sides have a result with rows in common
    NotInBase,  // the baseline did not run it: not compared
    NoResult,   // the candidate has no result: it failed
    NoVerdict,  // compare refused (no row in common, an unreadable file)
  };
  std::string name;  // "allreduce_bench", "allreduce_bench-2" (a bench's second line)
  State state = State::Compared;
  std::optional<int> bench_exit;  // the candidate's bench exit code (commands.tsv), when recorded
  std::string command_base;       // the suite lines that made each side (commands.tsv), when recorded
  std::string command_cand;
  /// The two sides' runs, which `comparison`'s rows point into: shared, so a copy of the verdict points into them too.
  std::shared_ptr<const std::pair<std::vector<std::vector<LoadedRun>>, std::vector<std::vector<LoadedRun>>>> runs;
  std::optional<Comparison> comparison;  // Compared
  std::filesystem::path log;             // NoResult: the log of the candidate's launch without a result
  std::string
      why;  // NoVerdict: compare's one line; NotInBase, NoResult: why a file there is none ("", a dangling symlink)
};

struct RegressionVerdict {
  enum class Outcome { NoRegression, Regression, NoVerdict, TimedOut };
  std::string label_a;
  std::string label_b;
  std::filesystem::path cand_dir;
  CompareOptions options;
  std::vector<BenchRegression> benches;   // in the candidate's suite order
  std::vector<std::string> only_in_base;  // results of the baseline the candidate's suite has not
  std::size_t slower = 0;                 // rows, over the benches compared
  std::size_t failed = 0;                 // rows FAILED, and benches without a result
  std::size_t missing = 0;                // rows of the baseline the candidate lacks
  std::size_t compared = 0;               // benches compared
  std::size_t launches_a = 0;             // the launches of each side (launch-K/ folders; 1 for a folder without)
  std::size_t launches_b = 0;
  std::size_t rows = 0;    // rows compared, over the benches
  std::size_t judged = 0;  // rows SAME, FASTER or SLOWER: those a verdict was drawn on
  std::size_t unsure = 0;  // rows UNSURE: not judged
  std::size_t faster = 0;
  std::string unsure_why;  // the first UNSURE row's reason
  Outcome outcome = Outcome::NoRegression;
  std::string no_verdict_why;  // the suite's own reason for NO VERDICT: nothing ran, a file that is not a result
  EvidenceRuling evidence;     // the evidence rule's ruling: the suite's gaps, then each bench compare refused
  [[nodiscard]] int exit_code() const;     // 0, 1, 2 (no verdict), 3 (a bench timed out)
  [[nodiscard]] std::string text() const;  // "REGRESSION (2 SLOWER, 0 FAILED, 0 MISSING rows)", ...
  [[nodiscard]] std::vector<std::string> names(BenchRegression::State state) const;
  [[nodiscard]] std::vector<std::string> timed_out() const;       // benches that exited 3
  [[nodiscard]] std::vector<std::string> failed_benches() const;  // "name (exit N)": other non-zero exits
};

/// A stored run: launch-1/ ... launch-N/ folders (regression.sh --launches N), each a launch of the whole suite as
/// below, or one such folder itself (one launch). A launch: a folder of NAME.json results and, from regression.sh,
/// commands.tsv (NAME, exit code, suite line, tab-separated, in suite order). Without commands.tsv its results are the
/// benches, in name order. Labels default to the folders' names. Throws UsageError (one line) when a folder cannot be
/// read. The evidence rule: a verdict needs a bench compared or one failed. A candidate that holds nothing, or whose
/// benches all lack a baseline, is NO VERDICT (exit 2), never "no regression"; a NAME.json that is no readable
/// file (missing, a dangling symlink) is absent alike (the candidate's: FAILED; the baseline's: MISSING); every
/// other *.json of either folder must be a result, as compare reads a folder: one that is not is NO VERDICT.
/// Rows are compared between launches (compare_launches), the false-alarm rate held over all the suite's rows
/// (decide_launch_rows); a suite none of whose rows could be judged (one launch a side) is NO VERDICT too.
RegressionVerdict compare_run_folders(const std::filesystem::path& base, const std::filesystem::path& cand,
                                      const CompareOptions& options, std::uintmax_t max_file_bytes);

// Rendered by the renderers (renderer.hpp): terminal and Markdown, each bench's comparison as `compare` prints it,
// then the summary and the verdict line; JSON, the values (schema ccbench.report.regression).

}  // namespace ccbench::report
