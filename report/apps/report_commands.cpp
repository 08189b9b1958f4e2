#include "report_commands.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

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

namespace ccbench::report_cli {

namespace report = ccbench::report;

namespace {

/// The files an argument names: a file as it is, a folder's entries (the reader takes its *.json).
std::vector<std::filesystem::path> files_named(const std::string& argument) {
  std::error_code ec;
  if (!std::filesystem::is_directory(argument, ec)) {
    return {argument};
  }
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(argument, ec)) {
    out.push_back(entry.path());
  }
  return out;
}

}  // namespace

/// --max-file-size: the most bytes read from one input file (its form as -b/-e: 256M, 1G).
std::uintmax_t max_file_bytes(const Options& o) {
  const auto bytes = ccbench::parse_bytes(o.max_file_size);
  if (!bytes || *bytes == 0) {
    throw UsageError(fmt::format("--max-file-size {}: expected a size like 256M or 2G", o.max_file_size));
  }
  return *bytes;
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

/// An output (-o, --html, --junit) is checked against every input before anything is read or written: the same
/// file by device and inode (a hard link, a symlink or another spelling of it is the same file), never by name.
/// No output ever replaces an input (a log may be the only copy there is). "" and "-" are no file.
void check_not_an_input(const std::string& output, std::string_view flag, const std::vector<std::string>& inputs) {
  if (output.empty() || output == "-") {
    return;
  }
  struct stat out {};
  if (::stat(output.c_str(), &out) != 0) {
    return;  // not there yet: no input
  }
  for (const auto& argument : inputs) {
    for (const auto& input : files_named(argument)) {
      struct stat in {};
      if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
        throw UsageError(
            fmt::format("{} {}: is the input {}; writing it would replace that input", flag, output, input.string()));
      }
    }
  }
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

/// A percentage given to OPTION, like 3 or 3%: above `lo`, at most `hi`; one line otherwise.
double parse_percent(std::string_view option, std::string text, double lo, double hi) {
  const std::string given = text;
  if (!text.empty() && text.back() == '%') {
    text.pop_back();
  }
  char* end = nullptr;
  const double pct = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !(pct > lo && pct <= hi)) {
    throw UsageError(
        fmt::format("{} {}: expected a percentage above {:g} and at most {:g}, like 3 or 3%", option, given, lo, hi));
  }
  return pct;
}

namespace {

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
  check_not_an_input(o.junit, "--junit", o.files);
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

}  // namespace

int run_get(const Options& o) {
  const std::string& path = o.file;
  const std::string text = report::read_input_file(path, max_file_bytes(o), "JSON file");
  const nlohmann::json doc = report::parse_json_text(text, path);
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
    check_not_an_input(o.compare_html, "--html", o.files);
  }
  if (o.files.empty()) {  // --check: the options alone, before the runs to compare are made
    return ccbench::kExitOk;
  }
  const auto base = report::read_result_files({o.files.at(0)}, max_bytes);
  const auto cand = report::read_result_files({o.files.at(1)}, max_bytes);
  const auto comparison = report::compare_runs(base, cand, options);
  // NO VERDICT before anything is printed: exit 2 leaves stdout empty
  report::stop_at_no_verdict(report::comparison_evidence(comparison, o.files.at(0), o.files.at(1)));
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
  options.paired = o.paired;
  options.aa = o.aa;
  if (!o.launch_noise.empty()) {
    options.launch_noise = parse_percent("--launch-noise", o.launch_noise, 0.0, 100.0) / 100.0;
  }
  options.alarm_rate = parse_percent("--alarm-rate", o.alarm_rate, 0.0, 50.0) / 100.0;
  if (o.check_only) {
    return ccbench::kExitOk;
  }
  const auto verdict = o.db.empty()
                           ? report::compare_run_folders(o.files.at(0), o.files.at(1), options, max_file_bytes(o))
                           : regression_against_history(o, options);
  emit(report::make_renderer(format, use_colour(o, format))->render(verdict), "");
  return verdict.exit_code();
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
  if (!o.max_age.empty()) {
    const auto max_age = report::parse_age(o.max_age);
    if (!max_age) {
      throw UsageError(fmt::format("--max-age {}: expected a number and s, m, h or d (24h)", o.max_age));
    }
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
    report::refuse_stale(runs, *max_age, now.count());
  }
  report::AcceptVerdict verdict{profile, report::evaluate(profile, runs), report::valid_until(profile, runs)};
  report::waive_unjudged(verdict.outcomes, o.waive_unjudged);
  emit(report::make_renderer(format, use_colour(o, format))->render(verdict), "");
  if (!o.junit.empty()) {
    emit(report::make_renderer(report::Format::Junit, false)->render(verdict), o.junit);
  }
  return report::all_passed(verdict.outcomes) ? ccbench::kExitOk : ccbench::kExitFailure;
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
    check_not_an_input(o.out, "-o", o.files);
  }
  const auto runs = report::read_result_files(o.files, max_file_bytes(o));
  report::HtmlOptions options;
  options.title = o.title;
  options.fleet = report::page_fleet_verdict(runs);
  emit(report::render_html(runs, options), o.out);
  if (o.out != "-") {
    std::fprintf(stderr, "ccbench-report: wrote %s\n", o.out.c_str());
  }
  return ccbench::kExitOk;
}

int run_import(const Options& o, const std::vector<std::string>& argv) {
  if (o.out != "-") {
    ccbench::check_output_path(o.out, "-o");
    check_not_an_input(o.out, "-o", o.files);
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

}  // namespace ccbench::report_cli
