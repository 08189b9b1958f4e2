#include "ccbench/report/regression.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ccbench/errors.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report {

namespace {

namespace fs = std::filesystem;

/// One line of commands.tsv: the bench's result name, its exit code, the suite line that ran it.
struct Command {
  std::optional<int> exit;
  std::string line;
};

/// commands.tsv in suite order; empty when the folder has none (results stored by another tool).
std::vector<std::pair<std::string, Command>> read_commands(const fs::path& dir) {
  std::vector<std::pair<std::string, Command>> out;
  std::ifstream in(dir / "commands.tsv");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    std::string exit;
    Command c;
    if (!std::getline(fields, name, '\t') || name.empty()) {
      continue;
    }
    std::getline(fields, exit, '\t');
    std::getline(fields, c.line);
    try {
      c.exit = std::stoi(exit);
    } catch (const std::exception&) {
      c.exit.reset();  // a line without one: the exit code is not known
    }
    out.emplace_back(std::move(name), std::move(c));
  }
  return out;
}

/// The NAME.json entries of a folder, by name: true for a result file, false for an entry that is none (a dangling
/// symlink, a folder, a pipe). The one rule: a result that is absent and one that cannot be opened are alike absent.
std::map<std::string, bool> result_names(const fs::path& dir) {
  std::map<std::string, bool> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") {
      std::error_code type_ec;
      names[entry.path().stem().string()] = fs::is_regular_file(entry.path(), type_ec);  // follows a symlink
    }
  }
  if (ec) {
    throw UsageError(fmt::format("{}: cannot list it: {}", dir.string(), ec.message()));
  }
  return names;
}

/// Why NAME.json of `dir` is not a result that can be read: "", or "a dangling symlink", "not a regular file".
std::string why_absent(const fs::path& dir, const std::string& name) {
  const fs::path path = dir / (name + ".json");
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec)) && !fs::exists(path, ec)) {
    return fmt::format("{} is a dangling symlink", path.string());
  }
  if (fs::exists(fs::symlink_status(path, ec))) {
    return fmt::format("{} is not a regular file", path.string());
  }
  return {};
}

/// Every NAME.json of a stored run that the suite does not name must still be a result: a folder of results holds
/// results only, as compare reads one (a foreign JSON refuses it). Returns compare's one line for the first that is
/// not, or "".
std::string foreign_file(const fs::path& dir, const std::map<std::string, bool>& names,
                         const std::set<std::string>& read, std::uintmax_t max_bytes) {
  for (const auto& [name, regular] : names) {
    if (!regular || read.contains(name)) {
      continue;
    }
    try {
      (void)stream_result_file(dir / (name + ".json"), max_bytes, [](CaseResult&&, std::size_t) {});
    } catch (const UsageError& e) {
      return e.what();
    }
  }
  return {};
}

void check_folder(const fs::path& dir, std::string_view which) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw UsageError(
        fmt::format("{} {}: not a folder (a stored run: NAME.json results, and commands.tsv)", which, dir.string()));
  }
}

std::string folder_name(const fs::path& dir) {
  const fs::path clean = dir.lexically_normal();
  return (clean.has_filename() ? clean.filename() : clean.parent_path().filename()).string();
}

/// The launches of a stored run: its launch-1/ ... launch-N/ folders in order, or the folder itself (one launch).
std::vector<fs::path> launches_of(const fs::path& dir) {
  std::map<std::size_t, fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    constexpr std::string_view kPrefix = "launch-";
    if (!name.starts_with(kPrefix) || name.size() == kPrefix.size() || name.size() > kPrefix.size() + 4 ||
        !std::all_of(name.begin() + static_cast<std::ptrdiff_t>(kPrefix.size()), name.end(),
                     [](char ch) { return ch >= '0' && ch <= '9'; })) {
      continue;
    }
    std::error_code type_ec;
    if (!fs::is_directory(entry.path(), type_ec)) {
      throw UsageError(fmt::format("{}: not a folder (a launch of a stored run)", entry.path().string()));
    }
    found[std::stoul(name.substr(kPrefix.size()))] = entry.path();
  }
  if (ec) {
    throw UsageError(fmt::format("{}: cannot list it: {}", dir.string(), ec.message()));
  }
  if (found.empty()) {
    return {dir};
  }
  std::vector<fs::path> out;
  for (const auto& [k, path] : found) {
    if (k != out.size() + 1) {
      throw UsageError(
          fmt::format("{}: launch-{} is there but launch-{} is not (a stored run holds launch-1 to "
                      "launch-N)",
                      dir.string(), k, out.size() + 1));
    }
    out.push_back(path);
  }
  return out;
}

/// The candidate's suite: its first launch's commands.tsv in order, a bench's exit code the first non-zero of its
/// launches; without commands.tsv, the results of every launch by name.
std::vector<std::pair<std::string, Command>> suite_of(const std::vector<fs::path>& launches,
                                                      const std::vector<std::map<std::string, bool>>& results) {
  auto suite = read_commands(launches.front());
  for (std::size_t k = 1; k < launches.size(); ++k) {
    for (auto& entry : read_commands(launches[k])) {
      auto& c = entry.second;
      const auto it =
          std::find_if(suite.begin(), suite.end(), [&entry](const auto& e) { return e.first == entry.first; });
      if (it == suite.end()) {
        suite.emplace_back(entry.first, std::move(c));
      } else if (c.exit && *c.exit != 0 && (!it->second.exit || *it->second.exit == 0)) {
        it->second.exit = c.exit;
      }
    }
  }
  if (suite.empty()) {  // not stored by regression.sh: its results are the suite
    std::set<std::string> names;
    for (const auto& launch : results) {
      for (const auto& entry : launch) {
        names.insert(entry.first);
      }
    }
    for (const auto& name : names) {
      suite.emplace_back(name, Command{});
    }
  }
  return suite;
}

/// NAME.json of every launch that holds it as a readable file.
std::vector<std::string> files_of(const std::vector<fs::path>& launches,
                                  const std::vector<std::map<std::string, bool>>& results, const std::string& name) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < launches.size(); ++k) {
    if (const auto it = results[k].find(name); it != results[k].end() && it->second) {
      out.push_back((launches[k] / (name + ".json")).string());
    }
  }
  return out;
}

/// Why a launch lacks NAME.json: "launch 3 of 5 has none" (and why it is absent, where it says), or "" for one
/// launch; `log` is set to that launch's log of the bench.
std::string absent_in(const std::vector<fs::path>& launches, const std::vector<std::map<std::string, bool>>& results,
                      const std::string& name, fs::path& log) {
  for (std::size_t k = 0; k < launches.size(); ++k) {
    if (const auto it = results[k].find(name); it == results[k].end() || !it->second) {
      log = launches[k] / "logs" / (name + ".log");
      auto why = why_absent(launches[k], name);
      if (launches.size() == 1) {
        return why;
      }
      return fmt::format("launch {} of {} has none{}", k + 1, launches.size(), why.empty() ? "" : ": " + why);
    }
  }
  return {};
}

std::vector<std::vector<LoadedRun>> read_launches(const std::vector<std::string>& files, std::uintmax_t max_bytes) {
  std::vector<std::vector<LoadedRun>> out;
  out.reserve(files.size());
  for (const auto& f : files) {
    out.push_back(read_result_files({f}, max_bytes));
  }
  return out;
}

}  // namespace

int RegressionVerdict::exit_code() const {
  switch (outcome) {
    case Outcome::NoRegression:
      return kExitOk;
    case Outcome::Regression:
      return kExitFailure;
    case Outcome::NoVerdict:
      return evidence.exit_code(kExitOk);
    case Outcome::TimedOut:
      return kExitTimeout;
  }
  return kExitFailure;
}

std::vector<std::string> RegressionVerdict::names(BenchRegression::State state) const {
  std::vector<std::string> out;
  for (const auto& b : benches) {
    if (b.state == state) {
      out.push_back(b.name);
    }
  }
  return out;
}

std::vector<std::string> RegressionVerdict::timed_out() const {
  std::vector<std::string> out;
  for (const auto& b : benches) {
    if (b.bench_exit == kExitTimeout) {
      out.push_back(b.name);
    }
  }
  return out;
}

std::vector<std::string> RegressionVerdict::failed_benches() const {
  std::vector<std::string> out;
  for (const auto& b : benches) {
    if (b.bench_exit && *b.bench_exit != kExitOk && *b.bench_exit != kExitTimeout) {
      out.push_back(fmt::format("{} (exit {})", b.name, *b.bench_exit));
    }
  }
  return out;
}

std::string RegressionVerdict::text() const {
  switch (outcome) {
    case Outcome::TimedOut:
      return "TIMED OUT";
    case Outcome::NoVerdict:
      if (compared == 0 && !names(BenchRegression::State::NotInBase).empty()) {
        return fmt::format("NO VERDICT (baseline {} holds none of the benches of the suite)", printable(label_a));
      }
      return no_verdict_why.empty()
                 ? std::
                       string{"NO VERDICT (ccbench-report compare found no row in common or rejected its input, above)"}
                 : fmt::format("NO VERDICT ({})", printable(no_verdict_why));
    case Outcome::Regression:
      return fmt::format("REGRESSION ({} SLOWER, {} FAILED, {} MISSING rows)", slower, failed, missing);
    case Outcome::NoRegression:
      break;
  }
  const std::string judged_text = unsure == 0 ? fmt::format("all {} rows judged", rows)
                                              : fmt::format("{} of {} rows judged, {} UNSURE", judged, rows, unsure);
  if (const auto not_in_base = names(BenchRegression::State::NotInBase); !not_in_base.empty()) {
    return fmt::format("no regression in the {} benches compared ({}); {} not compared (missing in {})", compared,
                       judged_text, not_in_base.size(), printable(label_a));
  }
  return fmt::format("no regression (0 SLOWER, 0 FAILED rows in {} benches; {})", compared, judged_text);
}

RegressionVerdict compare_run_folders(const fs::path& base, const fs::path& cand, const CompareOptions& options,
                                      std::uintmax_t max_file_bytes) {
  check_folder(base, "BASE");
  check_folder(cand, "CAND");
  RegressionVerdict v;
  v.label_a = options.label_a.empty() ? folder_name(base) : options.label_a;
  v.label_b = options.label_b.empty() ? folder_name(cand) : options.label_b;
  v.cand_dir = cand;
  v.options = options;
  v.options.label_a = v.label_a;
  v.options.label_b = v.label_b;
  const auto base_launches = launches_of(base);
  const auto cand_launches = launches_of(cand);
  v.launches_a = base_launches.size();
  v.launches_b = cand_launches.size();
  if (options.paired && v.launches_a != v.launches_b) {
    throw UsageError(fmt::format("--paired: {} holds {} launch(es), {} holds {}; pairs need as many a side",
                                 base.string(), v.launches_a, cand.string(), v.launches_b));
  }
  std::vector<std::map<std::string, bool>> base_results;
  std::vector<std::map<std::string, bool>> cand_results;
  base_results.reserve(base_launches.size());
  cand_results.reserve(cand_launches.size());
  for (const auto& dir : base_launches) {
    base_results.push_back(result_names(dir));
  }
  for (const auto& dir : cand_launches) {
    cand_results.push_back(result_names(dir));
  }
  auto suite = suite_of(cand_launches, cand_results);
  std::map<std::string, std::string> base_lines;
  for (auto& [name, c] : read_commands(base_launches.front())) {
    base_lines[name] = std::move(c.line);
  }
  std::set<std::string> in_suite;
  for (const auto& [name, command] : suite) {
    in_suite.insert(name);
    BenchRegression b;
    b.name = name;
    b.bench_exit = command.exit;
    b.command_cand = command.line;
    if (const auto line = base_lines.find(name); line != base_lines.end()) {
      b.command_base = line->second;
    }
    const auto base_files = files_of(base_launches, base_results, name);
    const auto cand_files = files_of(cand_launches, cand_results, name);
    if (base_files.empty() || (options.paired && base_files.size() < base_launches.size())) {
      b.state = BenchRegression::State::NotInBase;
      b.why = base_files.empty() ? why_absent(base_launches.front(), name)
                                 : fmt::format("--paired: {} of {} launches of the baseline hold it", base_files.size(),
                                               base_launches.size());
    } else if (cand_files.size() < cand_launches.size()) {
      b.state = BenchRegression::State::NoResult;
      b.why = absent_in(cand_launches, cand_results, name, b.log);
      ++v.failed;
    } else {
      try {
        auto runs =
            std::make_shared<const std::pair<std::vector<std::vector<LoadedRun>>, std::vector<std::vector<LoadedRun>>>>(
                read_launches(base_files, max_file_bytes), read_launches(cand_files, max_file_bytes));
        Comparison comparison = compare_launches(runs->first, runs->second, v.options);  // its rows point into runs
        if (auto e = comparison_evidence(comparison, base_files.front(), cand_files.front());
            e.ruling == Ruling::NoVerdict) {
          b.state = BenchRegression::State::NoVerdict;
          b.why = e.gaps.front().what;
        } else {
          ++v.compared;
          b.comparison = std::move(comparison);
          b.runs = std::move(runs);
        }
      } catch (const UsageError& e) {  // an unreadable or malformed file: this bench has no verdict
        b.state = BenchRegression::State::NoVerdict;
        b.why = e.what();
      }
    }
    v.benches.push_back(std::move(b));
  }
  std::vector<Comparison*> compared;
  for (auto& b : v.benches) {
    if (b.comparison) {
      compared.push_back(&*b.comparison);
    }
  }
  decide_launch_rows(compared, v.options);
  bool regressed = false;
  for (const auto* c : compared) {
    v.slower += count_rows(*c, Verdict::Slower);
    v.faster += count_rows(*c, Verdict::Faster);
    v.failed += count_rows(*c, Verdict::Failed);
    v.missing += c->only_base.size();
    v.rows += c->rows.size();
    v.judged += count_rows(*c, Verdict::Same) + count_rows(*c, Verdict::Faster) + count_rows(*c, Verdict::Slower);
    v.unsure += count_rows(*c, Verdict::Unsure);
    for (const auto& r : c->rows) {
      if (r.verdict == Verdict::Unsure && v.unsure_why.empty()) {
        v.unsure_why = r.why;
      }
    }
    regressed = regressed || c->any_regression() || c->any_missing();
  }
  for (const auto& entry : base_results.front()) {
    if (!in_suite.contains(entry.first)) {
      v.only_in_base.push_back(entry.first);
    }
  }
  std::string foreign;
  for (std::size_t k = 0; k < cand_launches.size() && foreign.empty(); ++k) {
    foreign = foreign_file(cand_launches[k], cand_results[k], in_suite, max_file_bytes);
  }
  for (std::size_t k = 0; k < base_launches.size() && foreign.empty(); ++k) {
    foreign = foreign_file(base_launches[k], base_results[k], in_suite, max_file_bytes);
  }
  const bool broke = v.slower + v.failed + v.missing > 0 || !v.failed_benches().empty();
  std::vector<Gap> gaps;  // the suite's own first, then each bench compare could not judge
  if (!foreign.empty()) {
    gaps.push_back({Lack::Inconsistent, std::move(foreign)});
  } else if (v.benches.empty()) {
    gaps.push_back({Lack::Absent, fmt::format("{} holds no result and no bench in commands.tsv: the suite produced "
                                              "nothing",
                                              printable(v.label_b))});
  } else if (v.compared == 0 && v.failed == 0 && v.failed_benches().empty()) {
    gaps.push_back(
        {Lack::Absent, fmt::format("no bench of {} was compared with {}", printable(v.label_b), printable(v.label_a))});
  } else if (v.judged == 0 && !broke) {
    gaps.push_back(
        {Lack::Unjudgeable, fmt::format("none of the {} rows compared could be judged: {}", v.rows, v.unsure_why)});
  }
  v.no_verdict_why = gaps.empty() ? std::string{} : gaps.front().what;
  for (const auto& b : v.benches) {
    if (b.state == BenchRegression::State::NoVerdict) {
      gaps.push_back({Lack::Unjudgeable, b.name + ": " + b.why});
    }
  }
  v.evidence = rule_on(Stakes::Comparison, std::move(gaps));
  using Outcome = RegressionVerdict::Outcome;
  if (!v.timed_out().empty()) {
    v.outcome = Outcome::TimedOut;
  } else if (v.evidence.ruling == Ruling::NoVerdict) {
    v.outcome = Outcome::NoVerdict;
  } else if (regressed || broke) {
    v.outcome = Outcome::Regression;
  } else {
    v.outcome = Outcome::NoRegression;
  }
  return v;
}

}  // namespace ccbench::report
