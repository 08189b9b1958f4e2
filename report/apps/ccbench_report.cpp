// ccbench-report: result files in; tables, regression verdicts, acceptance verdicts and a web page
// out (DESIGN §1); `get` reads a value out of any JSON file, for the workflow scripts. Exit codes: 0 fine, 1 a
// regression (a row SLOWER, FAILED, or missing from the candidate), a failed check or a fleet's BAD HOST or BAD LINK, 2
// bad input (compare: also no row in common).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "baseline_command.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/version.hpp"
#include "report_commands.hpp"

namespace {

using ccbench::UsageError;
using namespace ccbench::report_cli;  // NOLINT(google-build-using-namespace): the subcommands this file parses for

void add_max_file_size(CLI::App* sub, Options& o) {
  sub->add_option("--max-file-size", o.max_file_size, "refuse an input file larger than this (like 256M, 2G)")
      ->capture_default_str();
}

void add_format(CLI::App* sub, Options& o) {
  sub->add_option("--format", o.format, "terminal | markdown | csv | json")->capture_default_str();
  sub->add_option("--colour,--color", o.colour, "auto | always | never (terminal format only)")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
}

/// compare's and regression's: how a change is judged, and what the two sides are called (`base_default` and
/// `cand_default` say what names them otherwise; empty: nothing said).
void add_verdict_options(CLI::App* sub, Options& o, std::string_view base_default, std::string_view cand_default) {
  sub->add_option("--threshold", o.threshold, "a change smaller than this percentage is SAME")->capture_default_str();
  sub->add_option("--min-samples", o.min_samples, "fewer samples on either side give UNSURE")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  const auto named = [](std::string_view side, std::string_view otherwise) {
    return otherwise.empty() ? fmt::format("name of {}", side)
                             : fmt::format("name of {} (default: {})", side, otherwise);
  };
  sub->add_option("--label-a", o.label_a, named("BASE", base_default));
  sub->add_option("--label-b", o.label_b, named("CAND", cand_default));
}

int run_cli(int argc, char** argv) {
  Options o;
  CLI::App app{"ccbench-report: tables, regression and acceptance verdicts, and a web page from ccbench results"};
  std::string version = ccbench::version_text(
      "ccbench-report", {{"cuda, nccl, mpi, verbs", "not linked: ccbench-report reads result files only"}});
  version.pop_back();  // CLI11 ends it with a newline of its own
  app.set_version_flag("--version", version);
  app.require_subcommand(1);

  auto* table = app.add_subcommand("table", "per bench and group: the nccl-tests-like table with median, p95, %peak");
  table->add_option("files", o.files, "result files or directories of them")->required();
  add_format(table, o);
  add_max_file_size(table, o);

  auto* compare = app.add_subcommand("compare",
                                     "regression: per row, the change of busbw and a verdict; exit 1 "
                                     "when any row is SLOWER, FAILED or MISSING in CAND, 2 when none is in both");
  auto* compare_files =
      compare->add_option("files", o.files, "BASE CAND (each a result file or a directory)")->expected(2);
  bool compare_check = false;
  compare->add_option("--html", o.compare_html, "also write the comparison as a web page");
  compare->add_flag("--check", compare_check,
                    "check the options only (no files): what a script asks before it runs what it compares");
  add_verdict_options(compare, o, "its label or file name", "");
  add_format(compare, o);
  add_max_file_size(compare, o);

  auto* regression = app.add_subcommand(
      "regression",
      "two stored runs of a suite (regression.sh's BASE and CAND label folders) compared bench by bench, one "
      "verdict: exit 0 none, 1 SLOWER/FAILED/MISSING rows or a failed bench, 2 no verdict, 3 a bench timed out");
  auto* regression_folders =
      regression
          ->add_option("folders", o.files,
                       "BASE CAND (stored runs: launch-K/ folders of NAME.json results); with --history, CAND only")
          ->expected(1, 2);
  regression->add_option("--history", o.db,
                         "a history index (ccbench-report index): the baseline is each bench's own latest runs in it, "
                         "on the same hosts with the same software, instead of BASE");
  regression
      ->add_option("--history-runs", o.history_runs,
                   "with --history: how many of the latest runs make the baseline (each one launch)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  regression->add_flag("--check", o.check_only,
                       "check the options only (no folders): what a script asks before it runs the suite");
  add_verdict_options(regression, o, "its folder's name", "its folder's name");
  regression->add_flag(
      "--paired", o.paired,
      "launch K of BASE ran next to launch K of CAND (interleaved): the verdict is taken from the pairs");
  regression->add_option("--launch-noise", o.launch_noise,
                         "PCT: the variation of a row's median from launch to launch (relative sd), a floor under "
                         "what the launches show; lets one launch a side be judged");
  regression
      ->add_option("--alarm-rate", o.alarm_rate,
                   "PCT: the false-alarm rate allowed over all the rows of the suite together")
      ->capture_default_str();
  regression->add_flag("--aa", o.aa,
                       "A/A: both sides ran the same software; count every SLOWER or FASTER row as a false alarm");
  add_format(regression, o);
  add_max_file_size(regression, o);

  auto* accept = app.add_subcommand("accept", "acceptance: the checks of a profile, PASS/FAIL each; exit 1 on a FAIL");
  auto* accept_files = accept->add_option("files", o.files, "result files or directories of them");
  bool accept_check = false;
  accept->add_flag("--check", accept_check,
                   "read the profile only (no files) and print its path: what a script asks before it runs benches");
  accept
      ->add_option(
          "--profile", o.profile,
          "an acceptance profile: a name (h100-sxm-8gpu: share/ccbench/profiles of the install, or profiles/ of "
          "the source tree) or a file's path")
      ->required();
  auto* accept_junit = accept->add_option("--junit", o.junit, "also write JUnit XML to this file");
  accept
      ->add_option("--waive-unjudged", o.waive_unjudged,
                   "check ids (or all) whose FAIL for evidence they lacked (no result matched, a host's fabric "
                   "unread, a counter unjudgeable) becomes WAIVED: listed, recorded in every format, exit 0 for "
                   "it; a FAIL on evidence against stays FAIL")
      ->delimiter(',');
  accept->add_option("--max-age", o.max_age,
                     "refuse to judge results that ended longer ago than this (24h, 90m, 7d; or with no time): "
                     "one line, exit 2, so a stale PASS is never re-used");
  add_format(accept, o);
  add_max_file_size(accept, o);

  auto* fleet = app.add_subcommand("fleet",
                                   "fleet: an --all-pairs sweep's FLEET LOW, SPLITs, BAD HOSTs and BAD LINKs, each "
                                   "pair against the fleet's healthy level and an anchor; exit 1 when anything is "
                                   "named");
  auto* fleet_files =
      fleet->add_option("files", o.files, "result files of one --all-pairs sweep, or directories of them");
  bool fleet_check = false;
  fleet->add_flag("--check", fleet_check, "check the options only (no files): what a script asks before a sweep");
  fleet
      ->add_option("--threshold", o.fleet_threshold,
                   "a pair more than this percentage below the fleet's reference is LOW")
      ->capture_default_str();
  fleet->add_option("--size", o.fleet_size, "the size judged (default: the sweep's largest)");
  fleet
      ->add_option("--stat", o.fleet_stat,
                   "median (each pair's median sample, as its busbw) | best (its fastest sample: what the link "
                   "can do when nothing else loads the hosts)")
      ->check(CLI::IsMember({"median", "best"}))
      ->capture_default_str();
  fleet->add_option("--reference", o.fleet_reference,
                    "the anchor: a healthy pair's figure (GB/s; us for ib_write_lat_bench); a fleet whose level is "
                    "below it by more than the threshold is LOW as a whole");
  fleet
      ->add_option("--expect-pct-of-peak", o.fleet_expect_pct,
                   "without --reference, the anchor is this share of each pair's spec peak (results with "
                   "peak_GBps)")
      ->capture_default_str();
  fleet->add_flag("--partial", o.fleet_partial,
                  "judge the pairs a sweep that stopped early measured (missing pairs are left out, and said)");
  auto* fleet_junit =
      fleet->add_option("--junit", o.junit, "also write JUnit XML to this file (a testcase per host and per finding)");
  add_format(fleet, o);
  fleet
      ->add_option("--max-file-size", o.max_file_size,
                   "refuse an input file larger than this (like 256M, 2G); the verdict streams its files")
      ->default_str(std::string{kFleetMaxFileSize});

  auto* get = app.add_subcommand(
      "get",
      "the value(s) at a JSON pointer of a JSON file (a verdict, a profile, a result), a line each: what "
      "scripts read instead of terminal text");
  get->add_option("file", o.file, "a JSON file: compare/accept/fleet --format json, a profile, a result")->required();
  get->add_option("pointer", o.pointer,
                  "RFC 6901 pointer; a segment * is every element or member (/failed, /counts/slower, "
                  "/checks/*/select/backend)")
      ->required();
  get->add_option("--fields", o.fields,
                  "comma-separated pointers relative to each value found: one tab-separated line per value");
  get->add_flag("--missing-ok", o.missing_ok, "a pointer that names nothing prints nothing (exit 0)");
  get->add_flag("--count", o.count, "print how many lines there would be");
  add_max_file_size(get, o);

  auto* benches = app.add_subcommand(
      "benches",
      "the benches of the workload table, a line each (or JSON): what scripts, suites and tests run as 'every "
      "bench' instead of a list of their own");
  benches->add_option("--kind", o.kind, "collective | rdma | copy");
  benches->add_option("--backend", o.backend, "the benches this backend runs: mpi | nccl | verbs | cuda");
  benches->add_flag("--pairwise", o.pairwise, "only the benches measured between the ranks of pairs (sendrecv, RDMA)");
  benches->add_flag("--groups", o.groups, "only the benches measured in groups of ranks (all_reduce, ...)");
  benches->add_option("--format", o.format, "text (a name a line) | json")->default_str("text");

  auto* html = app.add_subcommand("html", "one self-contained web page with tables and plots");
  html->add_option("files", o.files, "result files or directories of them")->required();
  html->add_option("-o,--out", o.out, "the page to write ('-' for stdout)")->required();
  html->add_option("--title", o.title, "the page's title")->capture_default_str();
  add_max_file_size(html, o);

  auto* import = app.add_subcommand(
      "import",
      "nccl-tests (text or -J JSON) or perftest ib_write_bw/ib_write_lat logs as one result document; "
      "several logs of one test become samples of its rows");
  import->add_option("files", o.files, "the logs of one tool")->required();
  import->add_option("-o,--out", o.out, "the result file to write ('-' for stdout)")->required();
  import->add_option("--test", o.test,
                     "the test of a nccl-tests log that does not name it (before 2.12): all_reduce, ...");
  import->add_option("--ranks", o.ranks, "the ranks of a log that names none")->check(CLI::Range(1, 1 << 20));
  import->add_option("--label", o.label, "the run's label (tables and compare name it so)");
  add_max_file_size(import, o);

  auto* exporter = app.add_subcommand(
      "export",
      "results, and the verdicts accept and fleet wrote with --format json, as Prometheus metrics: to stdout (a "
      "Pushgateway) or atomically into node_exporter's textfile-collector folder");
  exporter->add_option("files", o.files, "result files, accept/fleet JSON verdicts, or directories of them")
      ->required();
  exporter->add_option("--format", o.format, "openmetrics (the Prometheus text exposition, ending in # EOF)")
      ->check(CLI::IsMember({"openmetrics"}))
      ->default_str("openmetrics");
  exporter->add_option("--textfile-dir", o.textfile_dir,
                       "write NAME.prom into this folder (node_exporter's --collector.textfile.directory) instead of "
                       "stdout");
  exporter->add_option("--textfile-name", o.textfile_name, "the file's name in --textfile-dir, without .prom")
      ->capture_default_str();
  add_max_file_size(exporter, o);

  ccbench::report_cli::BaselineOptions baseline_options;
  auto* baseline = add_baseline_command(app, baseline_options);

  auto* index = app.add_subcommand(
      "index",
      "the history index (SQLite, one file): brought up to date with every *.json under the folders, a file "
      "added, changed or removed since the last update noticed; the files stay the source of truth");
  index->add_option("folders", o.files, "result folders (walked recursively) or files")->required();
  index->add_option("--db", o.db, "the index file (created if absent)")->required();
  index->add_flag("--rebuild", o.rebuild, "forget what the index holds and make it again from the files");
  add_max_file_size(index, o);

  auto* trend = app.add_subcommand(
      "trend",
      "each series (bench, row, hosts) over its runs with a drift verdict (Pettitt's change-point test, cut at "
      "software changes): exit 0 no drift, 1 drift, 2 no verdict");
  trend->add_option("folders", o.files, "result folders (walked recursively) or files; with --db, added to it");
  trend->add_option("--db", o.db, "a history index (ccbench-report index): read, and updated with the folders given");
  trend->add_option("--threshold", o.threshold, "a change of a series' median smaller than this percentage is no drift")
      ->capture_default_str();
  trend->add_option("--alarm-rate", o.alarm_rate, "PCT: the false-alarm rate over every series tested together")
      ->capture_default_str();
  trend->add_flag("--partial", o.fleet_partial,
                  "judge the series long enough to judge; the others (and unreadable results) are listed, not a "
                  "NO VERDICT");
  trend->add_option("--max-age", o.max_age,
                    "a series whose latest run started longer ago than this (48h, 7d) makes the verdict NO VERDICT: "
                    "a host that stopped reporting is never 'no drift'");
  trend->add_option("--html", o.trend_html, "also write the page: the verdict and an SVG plot per series");
  trend->add_option("--format", o.format, "terminal | markdown | json")->capture_default_str();
  add_max_file_size(trend, o);

  try {
    app.parse(argc, argv);
    if (import->parsed()) {
      return run_import(o, std::vector<std::string>(argv, argv + argc));
    }
    if (table->parsed()) {
      return run_table(o);
    }
    if (compare->parsed()) {
      if (compare_files->count() == 0 && !compare_check) {
        throw UsageError("compare: give BASE and CAND (or --check to check the options only)");
      }
      if (compare_files->count() > 0 && compare_check) {
        throw UsageError("compare: --check takes no files");
      }
      return run_compare(o);
    }
    if (regression->parsed()) {
      if ((regression_folders->count() == 0) != o.check_only) {
        throw UsageError(o.check_only
                             ? "regression: --check takes no folders"
                             : "regression: give BASE_DIR and CAND_DIR (or --check to check the options only)");
      }
      if (!o.check_only && regression_folders->count() != (o.db.empty() ? 2U : 1U)) {
        throw UsageError(o.db.empty() ? "regression: give BASE_DIR and CAND_DIR (or --history DB and CAND_DIR)"
                                      : "regression --history: give CAND_DIR only (the baseline is the history)");
      }
      return run_regression(o);
    }
    if (accept->parsed()) {
      o.junit_given = accept_junit->count() > 0;
      if ((accept_files->count() == 0) != accept_check) {
        throw UsageError(accept_check ? "accept: --check takes no files"
                                      : "accept: give result files (or --check to read the profile only)");
      }
      return run_accept(o);
    }
    if (fleet->parsed()) {
      o.junit_given = fleet_junit->count() > 0;
      if (fleet_files->count() == 0 && !fleet_check) {
        throw UsageError("fleet: give the result files of one sweep (or --check to check the options only)");
      }
      if (fleet->get_option("--max-file-size")->count() == 0) {
        o.max_file_size = std::string{kFleetMaxFileSize};
      }
      return run_fleet(o);
    }
    if (index->parsed()) {
      return run_index(o);
    }
    if (trend->parsed()) {
      return run_trend(o);
    }
    if (get->parsed()) {
      return run_get(o);
    }
    if (exporter->parsed()) {
      if (exporter->get_option("--format")->count() == 0) {
        o.format = "openmetrics";
      }
      return run_export(o);
    }
    if (baseline->parsed()) {
      return run_baseline(baseline_options);
    }
    if (benches->parsed()) {
      if (benches->get_option("--format")->count() == 0) {
        o.format = "text";
      }
      return run_benches(o);
    }
    return run_html(o);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccbench-report: %s (see ccbench-report --help)\n", e.what());
    return ccbench::kExitUsage;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ccbench-report: %s\n", e.what());
    return ccbench::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccbench-report: error: %s\n", e.what());
    return ccbench::kExitFailure;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (...) {  // building the command line itself failed (out of memory): still one line
    std::fputs("ccbench-report: error: unexpected failure\n", stderr);
    return ccbench::kExitFailure;
  }
}
