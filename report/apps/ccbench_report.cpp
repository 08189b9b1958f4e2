// ccbench-report: result files in; tables, regression verdicts, acceptance verdicts and a web page
// out (DESIGN §1); `get` reads a value out of any JSON file, for the workflow scripts. Exit codes: 0 fine, 1 a
// regression (a row SLOWER, FAILED, or missing from the candidate), a failed check or a fleet's BAD HOST or BAD LINK, 2
// bad input (compare: also no row in common).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/config.hpp"  // parse_bytes
#include "ccbench/data_dir.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/output_file.hpp"
#include "ccbench/report/accept.hpp"
#include "ccbench/report/benches.hpp"
#include "ccbench/report/compare.hpp"
#include "ccbench/report/fleet.hpp"
#include "ccbench/report/html.hpp"
#include "ccbench/report/import.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/report/json_get.hpp"
#include "ccbench/report/regression.hpp"
#include "ccbench/report/renderer.hpp"
#include "ccbench/report/table.hpp"
#include "ccbench/report/text.hpp"
#include "ccbench/result_json.hpp"
#include "ccbench/version.hpp"

namespace {

using ccbench::UsageError;
namespace report = ccbench::report;

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
  // every subcommand
  std::string max_file_size = "256M";
  bool junit_given = false;  // --junit was on the command line (an empty one is refused, not ignored)
};

/// The fleet verdict streams its files: its memory does not grow with them, so it reads larger ones by default.
constexpr std::string_view kFleetMaxFileSize = "16G";

/// --max-file-size: the most bytes read from one input file (its form as -b/-e: 256M, 1G).
std::uintmax_t max_file_bytes(const Options& o) {
  const auto bytes = ccbench::parse_bytes(o.max_file_size);
  if (!bytes || *bytes == 0) {
    throw UsageError(fmt::format("--max-file-size {}: expected a size like 256M or 2G", o.max_file_size));
  }
  return *bytes;
}

report::Format format_of(const Options& o) {
  const auto f = report::parse_format(o.format);
  if (!f) {
    throw UsageError(fmt::format("--format {}: expected terminal, markdown, csv or json", o.format));
  }
  return *f;
}

bool use_colour(const Options& o, report::Format format) {
  if (format != report::Format::Terminal || o.colour == "never") {
    return false;
  }
  if (o.colour == "always") {
    return true;
  }
  const char* term = std::getenv("TERM");
  return ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr &&
         (term == nullptr || std::string(term) != "dumb");
}

/// "5", "5%" -> 0.05. Percent in (0, 100).
double parse_threshold(std::string text) {
  if (!text.empty() && text.back() == '%') {
    text.pop_back();
  }
  char* end = nullptr;
  const double pct = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !(pct > 0.0 && pct < 100.0)) {
    throw UsageError(fmt::format("--threshold {}: expected a percentage between 0 and 100, like 5 or 5%", text));
  }
  return pct / 100.0;
}

void emit(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    try {
      ccbench::write_file_atomically(path, text);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {  // a path that cannot be written is the caller's: exit 2, as a bench's --out
      throw UsageError(e.what());
    }
  }
}

/// get FILE POINTER: the value(s) there, a line each (json_get.hpp), or with --count how many.
int run_get(const Options& o) {
  const std::string& path = o.file;
  const std::string text = report::read_input_file(path, max_file_bytes(o), "JSON file");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("{}: not JSON ({})", path, e.what()));
  }
  report::GetOptions options;
  options.missing_ok = o.missing_ok;
  for (std::size_t start = 0; !o.fields.empty() && start <= o.fields.size();) {
    const std::size_t comma = std::min(o.fields.find(',', start), o.fields.size());
    const std::string field = o.fields.substr(start, comma - start);
    options.fields.push_back(field.starts_with('/') ? field : "/" + field);  // relative: "select/benchmark"
    start = comma + 1;
  }
  std::vector<std::string> lines;
  try {
    lines = report::json_get(doc, o.pointer, options);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", path, e.what()));
  }
  std::string out = o.count ? fmt::format("{}\n", lines.size()) : std::string{};
  for (const auto& line : o.count ? std::vector<std::string>{} : lines) {
    out += line + "\n";
  }
  emit(out, "");
  return ccbench::kExitOk;
}

int run_benches(const Options& o) {
  const auto filter = report::bench_filter(o.kind, o.backend, o.pairwise, o.groups);
  if (o.format != "text" && o.format != "json") {
    throw UsageError(fmt::format("benches: --format '{}' is not text or json", o.format));
  }
  emit(report::render_benches(filter, o.format == "json"), "");
  return ccbench::kExitOk;
}

int run_table(const Options& o) {
  const auto format = format_of(o);
  const auto runs = report::read_result_files(o.files, max_file_bytes(o));
  emit(report::make_renderer(format, use_colour(o, format))->render(report::make_table_model(runs)), "");
  return ccbench::kExitOk;
}

int run_compare(const Options& o) {
  const auto format = format_of(o);
  report::CompareOptions options;
  options.threshold = parse_threshold(o.threshold);
  options.min_samples = o.min_samples;
  options.label_a = o.label_a;
  options.label_b = o.label_b;
  const auto max_bytes = max_file_bytes(o);
  if (!o.compare_html.empty()) {
    ccbench::check_output_path(o.compare_html, "--html");
  }
  if (o.files.empty()) {  // --check: the options alone, before the runs to compare are made
    return ccbench::kExitOk;
  }
  const auto base = report::read_result_files({o.files.at(0)}, max_bytes);
  const auto cand = report::read_result_files({o.files.at(1)}, max_bytes);
  const auto comparison = report::compare_runs(base, cand, options);
  if (auto why = report::why_nothing_compared(comparison, o.files.at(0), o.files.at(1))) {
    throw UsageError(*why);  // said before anything is printed: exit 2 leaves stdout empty
  }
  emit(report::make_renderer(format, use_colour(o, format))->render(comparison), "");
  if (!o.compare_html.empty()) {
    emit(report::render_compare_html(comparison, fmt::format("{} against {}", comparison.label_b, comparison.label_a)),
         o.compare_html);
    std::fprintf(stderr, "ccbench-report: wrote %s\n", o.compare_html.c_str());
  }
  return comparison.any_regression() || comparison.any_missing() ? ccbench::kExitFailure : ccbench::kExitOk;
}

int run_regression(const Options& o) {
  const auto format = format_of(o);
  if (format == report::Format::Csv) {
    throw UsageError("--format csv: regression prints terminal, markdown or json");
  }
  report::CompareOptions options;
  options.threshold = parse_threshold(o.threshold);
  options.min_samples = o.min_samples;
  options.label_a = o.label_a;
  options.label_b = o.label_b;
  const auto verdict = report::compare_run_folders(o.files.at(0), o.files.at(1), options, max_file_bytes(o));
  emit(report::make_renderer(format, use_colour(o, format))->render(verdict), "");
  return verdict.exit_code();
}

/// --junit: a path that can be written and that is no input (writing it would replace a result), checked
/// before any work so that its failure cannot be read as a verdict; "" when not given.
void check_junit(const Options& o) {
  if (o.junit_given && o.junit.empty()) {
    throw UsageError("--junit '': expected a file path ('-' for stdout)");
  }
  if (o.junit.empty() || o.junit == "-") {
    return;
  }
  ccbench::check_output_path(o.junit, "--junit");
  std::error_code ec;
  for (const auto& input : report::result_file_paths(o.files)) {
    if (std::filesystem::equivalent(input, o.junit, ec)) {
      throw UsageError(
          fmt::format("--junit {}: is the input {}; writing it would replace that result", o.junit, input.string()));
    }
  }
}

int run_accept(const Options& o) {
  const auto format = format_of(o);
  check_junit(o);
  const auto path = ccbench::find_profile(o.profile);
  const auto profile = report::load_profile(path);
  if (o.files.empty()) {  // --check: the profile read as a verdict reads it; its path for the script that asked
    emit(path.string() + "\n", "");
    return ccbench::kExitOk;
  }
  const auto runs = report::read_result_files(o.files, max_file_bytes(o));
  const report::AcceptVerdict verdict{profile, report::evaluate(profile, runs)};
  emit(report::make_renderer(format, use_colour(o, format))->render(verdict), "");
  if (!o.junit.empty()) {
    emit(report::make_renderer(report::Format::Junit, false)->render(verdict), o.junit);
  }
  return report::all_passed(verdict.outcomes) ? ccbench::kExitOk : ccbench::kExitFailure;
}

report::FleetOptions fleet_options(const Options& o) {
  report::FleetOptions options;
  options.threshold = parse_threshold(o.fleet_threshold);
  options.best = o.fleet_stat == "best";
  if (!o.fleet_size.empty()) {
    const auto bytes = ccbench::parse_bytes(o.fleet_size);
    if (!bytes) {
      throw UsageError(fmt::format("--size {}: expected a size like 4M or 1048576", o.fleet_size));
    }
    options.size = *bytes;
  }
  if (o.fleet_reference && !(*o.fleet_reference > 0.0 && std::isfinite(*o.fleet_reference))) {
    throw UsageError(fmt::format("--reference {}: expected a positive figure (GB/s; us for ib_write_lat_bench)",
                                 *o.fleet_reference));
  }
  options.reference = o.fleet_reference;
  if (!(o.fleet_expect_pct > 0.0 && o.fleet_expect_pct <= 100.0)) {
    throw UsageError(fmt::format("--expect-pct-of-peak {}: expected a percentage in (0, 100]", o.fleet_expect_pct));
  }
  options.expect_of_peak = o.fleet_expect_pct / 100.0;
  options.partial = o.fleet_partial;
  return options;
}

int run_fleet(const Options& o) {
  const auto format = format_of(o);
  const auto options = fleet_options(o);
  check_junit(o);
  if (o.files.empty()) {  // --check: the options alone, before a sweep is run
    return ccbench::kExitOk;
  }
  const auto verdict = report::evaluate_fleet(report::FleetSweep::read(o.files, max_file_bytes(o)), options);
  emit(report::make_renderer(format, use_colour(o, format))->render(verdict), "");
  if (!o.junit.empty()) {
    emit(report::make_renderer(report::Format::Junit, false)->render(verdict), o.junit);
  }
  return verdict.anything_named() ? ccbench::kExitFailure : ccbench::kExitOk;
}

int run_html(const Options& o) {
  if (o.out != "-") {
    ccbench::check_output_path(o.out, "-o");
  }
  const auto runs = report::read_result_files(o.files, max_file_bytes(o));
  report::HtmlOptions options;
  options.title = o.title;
  emit(report::render_html(runs, options), o.out);
  if (o.out != "-") {
    std::fprintf(stderr, "ccbench-report: wrote %s\n", o.out.c_str());
  }
  return ccbench::kExitOk;
}

int run_import(const Options& o, const std::vector<std::string>& argv) {
  if (o.out != "-") {
    ccbench::check_output_path(o.out, "-o");
  }
  report::ImportOptions options;
  options.test = o.test;
  options.ranks = o.ranks > 0 ? std::optional<int>(o.ranks) : std::nullopt;
  options.label = o.label;
  options.argv = argv;
  const auto doc = report::import_logs(report::read_logs(o.files, max_file_bytes(o)), options);
  const auto text = ccbench::json_text(ccbench::to_json(doc), 2) + "\n";
  try {
    report::read_result_text(text, "the imported document");  // what import writes, the reader takes
  } catch (const report::InputError& e) {
    throw std::runtime_error(fmt::format("import made a document its own reader refuses: {}", e.what()));
  }
  emit(text, o.out);
  std::fprintf(stderr, "ccbench-report: %zu case(s) of %s from %zu log(s) of %s%s%s\n", doc.results.size(),
               doc.run.benchmark.c_str(), doc.run.source->files.size(), doc.run.source->tool.c_str(),
               o.out == "-" ? "" : "; wrote ", o.out == "-" ? "" : o.out.c_str());
  return ccbench::kExitOk;
}

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
  regression->add_option("folders", o.files, "BASE CAND (folders of NAME.json results and commands.tsv)")
      ->expected(2)
      ->required();
  add_verdict_options(regression, o, "its folder's name", "its folder's name");
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
    if (get->parsed()) {
      return run_get(o);
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
