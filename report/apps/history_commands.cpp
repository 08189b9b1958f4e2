// index and trend (docs/history.md): the history index brought up to date, and the drift verdict over it. The command
// reads (the index), asks the judge (judge_trend) and hands its verdict to the printers.
#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "ccbench/errors.hpp"
#include "ccbench/report/history_index.hpp"
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
  const auto verdict = report::judge_trend(index.points(), index.problems(), options);
  emit(o.format == "json" ? report::render_trend_json(verdict) : report::render_trend_text(verdict, markdown), "");
  if (!o.trend_html.empty()) {
    emit(report::render_trend_html(verdict, "ccbench trend"), o.trend_html);
    std::fprintf(stderr, "ccbench-report: wrote %s\n", o.trend_html.c_str());
  }
  return verdict.exit_code();
}

}  // namespace ccbench::report_cli
