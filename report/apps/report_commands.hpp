#pragma once
// ccbench-report's subcommands behind its command line (ccbench_report.cpp parses it): each run_* takes the
// options and returns the exit code; bad input throws UsageError (exit 2).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/report/regression.hpp"

namespace ccbench::report_cli {

struct Options {
  std::vector<std::string> files;
  std::string format = "terminal";
  std::string colour = "auto";
  // compare
  std::string threshold = "5";
  std::uint64_t min_samples = 5;
  std::string label_a;
  std::string label_b;
  std::string compare_html;  // compare --html PAGE
  // regression
  bool paired = false;
  std::string launch_noise;      // PCT, "" for none
  std::string alarm_rate = "5";  // PCT
  bool aa = false;
  bool check_only = false;  // regression --check: the options only
  // accept
  std::string profile;
  std::string junit;
  // fleet
  std::string fleet_threshold = "20";
  std::string fleet_size;
  std::string fleet_stat = "median";
  std::optional<double> fleet_reference;
  double fleet_expect_pct = 80;
  bool fleet_partial = false;
  // get
  std::string file;
  std::string pointer;
  std::string fields;
  bool missing_ok = false;
  bool count = false;
  // benches
  std::string kind;
  std::string backend;
  bool pairwise = false;
  bool groups = false;
  // import
  std::string test;
  int ranks = 0;
  std::string label;
  // html, import
  std::string out;
  std::string title = "ccbench report";
  // export
  std::string textfile_dir;               // node_exporter's --collector.textfile.directory; "" for stdout
  std::string textfile_name = "ccbench";  // NAME.prom in it
  // index, trend, regression --history
  std::string db;                // the history index's file; "" for one in memory (trend over folders)
  bool rebuild = false;          // index --rebuild
  std::string trend_html;        // trend --html PAGE
  std::size_t history_runs = 5;  // regression --history: the latest runs taken as the baseline
  // every subcommand
  std::string max_file_size = "256M";
  std::vector<std::string> waive_unjudged;  // accept --waive-unjudged: check ids, or all
  std::string max_age;                      // accept --max-age 24h: older results are refused ("": any age)
  bool junit_given = false;                 // --junit was on the command line (an empty one is refused, not ignored)
};

/// The fleet verdict streams its files: its memory does not grow with them, so it reads larger ones by default.
constexpr std::string_view kFleetMaxFileSize = "16G";

/// --max-file-size: the most bytes read from one input file (its form as -b/-e: 256M, 1G).
std::uintmax_t max_file_bytes(const Options& o);
/// `text` to stdout ("" or "-") or atomically to the file `path` (a path that cannot be written: UsageError).
void emit(const std::string& text, const std::string& path);
/// An output (-o, --html, --junit, --textfile-dir) is checked against every input before anything is read or
/// written: the same file by device and inode, never by name; UsageError when it is one. "" and "-" are no file.
void check_not_an_input(const std::string& output, std::string_view flag, const std::vector<std::string>& inputs);

/// --threshold: "5", "5%" -> 0.05; a percentage in (0, 100), else UsageError.
double parse_threshold(std::string text);
/// A percentage given to `option`, like 3 or 3%: above `lo`, at most `hi`; UsageError otherwise.
double parse_percent(std::string_view option, std::string text, double lo, double hi);

int run_get(const Options& o);
int run_benches(const Options& o);
int run_table(const Options& o);
int run_compare(const Options& o);
int run_regression(const Options& o);
int run_accept(const Options& o);
int run_fleet(const Options& o);
int run_html(const Options& o);
/// export: results and accept's and fleet's JSON verdicts as Prometheus metrics (stdout or --textfile-dir).
int run_export(const Options& o);
/// index: the history index (--db) brought up to date with the folders' results (--rebuild: made again).
int run_index(const Options& o);
/// trend: each series of the history over its runs, with the drift verdict (exit 0 none, 1 drift, 2 no verdict).
int run_trend(const Options& o);
/// regression --history DB CAND: each bench of CAND against its own history in the index: the result files of the
/// --history-runs latest runs before CAND's that hold its rows on its hosts with the same software, as the baseline's
/// launches (in a temporary folder, removed after), judged as regression judges two labels.
report::RegressionVerdict regression_against_history(const Options& o, const report::CompareOptions& options);
/// `argv`: the importer's own command line, for a log that keeps none.
int run_import(const Options& o, const std::vector<std::string>& argv);

}  // namespace ccbench::report_cli
