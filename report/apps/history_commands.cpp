// index, trend and regression --history (docs/history.md): the history index brought up to date, the drift verdict
// over it, and a bench judged against its own history. The commands read (the index), ask the judge (judge_trend,
// compare_run_folders) and hand the verdict to the printers.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>  // mkdtemp (POSIX)
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "ccbench/errors.hpp"
#include "ccbench/report/accept.hpp"  // parse_age
#include "ccbench/report/history_index.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/report/trend.hpp"
#include "ccbench/report/trend_render.hpp"
#include "report_commands.hpp"

namespace ccbench::report_cli {

namespace {

constexpr std::size_t kPathsListed = 20;

/// --db: never a result (a *.json would be read as one, and never written over one).
void check_db(const Options& o) {
  if (o.db.size() >= 5 && o.db.compare(o.db.size() - 5, 5, ".json") == 0) {
    throw UsageError(
        fmt::format("--db {}: a history index is no .json file (results are); name it like history.sqlite", o.db));
  }
  check_not_an_input(o.db, "--db", o.files);
}

std::string update_line(const std::string& db, const report::IndexUpdate& u, std::size_t indexed) {
  std::string out = fmt::format(
      "index {}: {} result file(s) under the folders: {} added, {} changed, {} removed, {} touched (same bytes), {} "
      "unchanged; {} row(s) written; {} file(s) indexed in all\n",
      db, u.files, u.added, u.changed, u.removed, u.touched, u.unchanged, u.rows, indexed);
  const auto list = [&](std::string_view what, const std::vector<std::string>& paths) {
    for (std::size_t i = 0; i < paths.size() && i < kPathsListed; ++i) {
      out += fmt::format("  {} {}\n", what, paths[i]);
    }
    if (paths.size() > kPathsListed) {
      out += fmt::format("  ... and {} more {}\n", paths.size() - kPathsListed, what);
    }
  };
  list("changed", u.changed_paths);
  list("removed", u.removed_paths);
  return out;
}

}  // namespace

int run_index(const Options& o) {
  if (o.db.empty()) {
    throw UsageError("index: give --db FILE, the index to keep");
  }
  check_db(o);
  report::HistoryIndex index(o.db);
  const auto u = o.rebuild ? index.rebuild(o.files, max_file_bytes(o)) : index.update(o.files, max_file_bytes(o));
  std::string out = update_line(o.db, u, index.file_count());
  for (const auto& p : index.problems()) {
    out += fmt::format("  {} {}: {}\n", p.unreadable ? "UNREADABLE" : "not a result", p.path, p.message);
  }
  std::fputs(out.c_str(), stdout);
  return ccbench::kExitOk;
}

int run_trend(const Options& o) {
  const bool markdown = o.format == "markdown";
  if (o.format != "terminal" && o.format != "json" && !markdown) {
    throw UsageError(fmt::format("--format {}: trend prints terminal, markdown or json", o.format));
  }
  report::TrendOptions options;
  options.threshold = parse_threshold(o.threshold);
  options.alarm_rate = parse_percent("--alarm-rate", o.alarm_rate, 0.0, 50.0) / 100.0;
  options.partial = o.fleet_partial;
  if (!o.max_age.empty()) {
    options.max_age_s = report::parse_age(o.max_age);
    if (!options.max_age_s) {
      throw UsageError(fmt::format("--max-age {}: expected a number and s, m, h or d (48h)", o.max_age));
    }
    options.now_s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  if (o.db.empty() && o.files.empty()) {
    throw UsageError("trend: give result folders, or --db FILE (an index), or both");
  }
  check_db(o);
  check_not_an_input(o.trend_html, "--html", o.files);
  report::HistoryIndex index(o.db.empty() ? std::string{":memory:"} : o.db);
  if (!o.files.empty()) {
    const auto u = index.update(o.files, max_file_bytes(o));
    if (!o.db.empty()) {
      std::fputs(update_line(o.db, u, index.file_count()).c_str(), stderr);
    }
  }
  const auto verdict = report::judge_trend(index, options);
  emit(o.format == "json" ? report::render_trend_json(verdict) : report::render_trend_text(verdict, markdown), "");
  if (!o.trend_html.empty()) {
    emit(report::render_trend_html(verdict, "ccbench trend"), o.trend_html);
    std::fprintf(stderr, "ccbench-report: wrote %s\n", o.trend_html.c_str());
  }
  return verdict.exit_code();
}

namespace {

namespace fs = std::filesystem;

/// A folder of its own under the temporary directory, removed with everything in it when this goes.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (fs::temp_directory_path() / "ccbench-history-baseline-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("regression --history: no temporary folder for the baseline");
    }
    m_path = pattern;
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  ScratchFolder(ScratchFolder&&) = delete;
  ScratchFolder& operator=(ScratchFolder&&) = delete;
  [[nodiscard]] const fs::path& path() const { return m_path; }

 private:
  fs::path m_path;
};

/// What the baseline of one bench (NAME.json in CAND's launches) must match.
struct CandidateBench {
  std::set<std::string> series;
  std::string software;
  std::string earliest_utc;
};

/// CAND's results as regression reads a label: NAME.json in CAND/launch-K/ (or in CAND itself).
std::map<std::string, CandidateBench> candidate_benches(const fs::path& cand, std::uintmax_t max_bytes) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cand, ec)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("launch-", 0) == 0) {
      for (const auto& inner : fs::directory_iterator(entry.path(), ec)) {
        if (inner.path().extension() == ".json") {
          files.push_back(inner.path());
        }
      }
    } else if (entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  if (ec) {
    throw report::InputError(cand.string(), "", fmt::format("cannot be listed: {}", ec.message()));
  }
  std::map<std::string, CandidateBench> benches;
  for (const auto& path : files) {
    const auto run = report::read_result_file(path, max_bytes);
    auto& b = benches[path.filename().string()];
    const auto software = report::software_of(run.doc);
    if (!b.software.empty() && b.software != software) {
      throw UsageError(
          fmt::format("regression --history: the launches of {} recorded other software ({} and {}): "
                      "no one history is theirs",
                      path.filename().string(), b.software, software));
    }
    b.software = software;
    if (b.earliest_utc.empty() || run.doc.run.started_utc < b.earliest_utc) {
      b.earliest_utc = run.doc.run.started_utc;
    }
    for (const auto& r : run.doc.results) {
      b.series.insert(report::series_key(r));
    }
  }
  return benches;
}

}  // namespace

report::RegressionVerdict regression_against_history(const Options& o, const report::CompareOptions& options) {
  const fs::path cand = fs::weakly_canonical(fs::absolute(o.files.at(0)));
  if (!fs::is_directory(cand)) {
    throw UsageError(fmt::format("regression --history: {}: not a folder of results", o.files.at(0)));
  }
  check_db(o);
  const auto benches = candidate_benches(cand, max_file_bytes(o));
  const report::HistoryIndex index(o.db);
  const ScratchFolder base;
  for (const auto& [name, bench] : benches) {
    const auto files = index.recent_files({bench.series.begin(), bench.series.end()}, bench.software,
                                          bench.earliest_utc, o.history_runs, cand.string() + "/");
    for (std::size_t i = 0; i < files.size(); ++i) {
      const auto launch = base.path() / fmt::format("launch-{}", i + 1);
      fs::create_directories(launch);
      fs::copy_file(files[i], launch / name);
    }
    std::fprintf(stderr, "regression --history: %s: %zu run(s) of its history as the baseline%s%s\n", name.c_str(),
                 files.size(), files.empty() ? "" : ", latest ", files.empty() ? "" : files.front().c_str());
  }
  auto with_names = options;
  if (with_names.label_a.empty()) {
    with_names.label_a = fmt::format("history (latest {} runs, same software)", o.history_runs);
  }
  if (with_names.label_b.empty()) {
    with_names.label_b = cand.filename().string();
  }
  return report::compare_run_folders(base.path(), cand, with_names, max_file_bytes(o));
}

}  // namespace ccbench::report_cli
