// ccbench-report export: result files, and the verdicts that accept and fleet wrote as JSON, as Prometheus metrics
// (report/rendering/openmetrics.hpp words them). Verdicts are read back, not judged again: the verdict exported is
// the one the operator acted on (its exit code, its valid_until), whatever the profile or the options say today.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <tuple>

#include "ccbench/errors.hpp"
#include "ccbench/output_file.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/report/json_get.hpp"
#include "ccbench/report/openmetrics.hpp"
#include "report_commands.hpp"

namespace ccbench::report_cli {

namespace {

namespace report = ccbench::report;
using nlohmann::json;
using report::LoadedRun;

/// Reads one verdict document's values, naming the file and the JSON pointer of what is wrong.
class VerdictDoc {
 public:
  VerdictDoc(const json& doc, std::string file) : m_doc(doc), m_file(std::move(file)) {}

  [[nodiscard]] const json& at(const std::string& pointer, json::value_t type, std::string_view expected) const {
    const json::json_pointer p(pointer);
    if (!m_doc.contains(p)) {
      throw report::InputError(m_file, pointer, fmt::format("missing: expected {}", expected));
    }
    const json& value = m_doc.at(p);
    const bool number = type == json::value_t::number_float;
    if (number ? !value.is_number() : value.type() != type) {
      throw report::InputError(m_file, pointer, fmt::format("expected {}", expected));
    }
    return value;
  }
  [[nodiscard]] std::string text(const std::string& pointer) const {
    return at(pointer, json::value_t::string, "a string").get<std::string>();
  }
  [[nodiscard]] double number(const std::string& pointer) const {
    return at(pointer, json::value_t::number_float, "a number").get<double>();
  }
  [[nodiscard]] std::uint64_t count(const std::string& pointer) const {
    const json& value = at(pointer, json::value_t::number_float, "a count");
    if (!value.is_number_unsigned()) {
      throw report::InputError(m_file, pointer, "expected a count (a whole number, 0 or more)");
    }
    return value.get<std::uint64_t>();
  }
  [[nodiscard]] std::optional<double> number_or_null(const std::string& pointer) const {
    const json::json_pointer p(pointer);
    return m_doc.contains(p) && m_doc.at(p).is_null() ? std::nullopt : std::optional(number(pointer));
  }
  /// None where the key is absent or null.
  [[nodiscard]] std::optional<std::string> text_or_null(const std::string& pointer) const {
    const json::json_pointer p(pointer);
    return !m_doc.contains(p) || m_doc.at(p).is_null() ? std::nullopt : std::optional(text(pointer));
  }
  [[nodiscard]] const json& array(const std::string& pointer) const {
    return at(pointer, json::value_t::array, "an array");
  }
  [[nodiscard]] std::size_t length_if_any(const std::string& pointer) const {
    return m_doc.contains(json::json_pointer(pointer)) ? array(pointer).size() : 0;
  }
  [[nodiscard]] const std::string& file() const { return m_file; }

 private:
  const json& m_doc;
  std::string m_file;
};

/// The number before `unit` in accept's words ("1.41 GB/s", ">= 80% of peak"); none when they hold none.
std::optional<double> figure_before(const std::string& words, const std::string& unit) {
  static const std::string number = R"(([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?))";
  std::smatch m;
  if (std::regex_search(words, m, std::regex(number + std::regex_replace(unit, std::regex(R"([/%.])"), R"(\$&)")))) {
    return std::stod(m[1].str());
  }
  return std::nullopt;
}

/// accept's figures are its words: a busbw check's "1.41 GB/s, 93.1% of peak" against ">= 0.1 GB/s, >= 80% of
/// peak"; every other check's count at the head of its figure ("3 of 169 rows", "0 wrong in 134 verified rows",
/// "2 over bound, ...", "1 of 8 link readings below ..."). Words without them give no figure.
report::ExportedCheck check_of(const VerdictDoc& d, const std::string& at) {
  report::ExportedCheck c;
  c.id = d.text(at + "/id");
  c.kind = d.text(at + "/kind");
  c.verdict = d.text(at + "/verdict");
  const std::string measured = d.text(at + "/measured");
  const std::string threshold = d.text(at + "/threshold");
  if (c.kind == "busbw") {
    constexpr double kGiga = 1e9;
    const auto times = [](std::optional<double> v, double by) { return v ? std::optional(*v * by) : v; };
    c.busbw_Bps = times(figure_before(measured, " GB/s"), kGiga);
    c.min_busbw_Bps = times(figure_before(threshold, " GB/s"), kGiga);
    c.peak_ratio = times(figure_before(measured, "% of peak"), 0.01);
    c.min_peak_ratio = times(figure_before(threshold, "% of peak"), 0.01);
  } else if (std::smatch m; std::regex_search(measured, m, std::regex("^([0-9]+) "))) {
    c.findings = std::stod(m[1].str());
  }
  return c;
}

report::ExportedAccept accept_of(const VerdictDoc& d) {
  report::ExportedAccept a;
  a.profile = d.text("/profile/id");
  a.verdict = d.text("/verdict");
  for (std::size_t i = 0; i < d.array("/checks").size(); ++i) {
    a.checks.push_back(check_of(d, fmt::format("/checks/{}", i)));
  }
  // until when the verdict holds (RFC 3339, or null), where accept says so
  if (const auto until = d.text_or_null("/valid_until")) {
    a.valid_until_s = report::epoch_seconds(*until);
    if (!a.valid_until_s) {
      throw report::InputError(d.file(), "/valid_until",
                               fmt::format("'{}': expected an RFC 3339 time or null", *until));
    }
  }
  return a;
}

report::ExportedFleet fleet_of(const VerdictDoc& d) {
  report::ExportedFleet f;
  f.bench = d.text("/benchmark");
  f.size_bytes = d.count("/size_bytes");
  const std::string unit = d.text("/unit");
  if (unit != "GB/s" && unit != "us") {
    throw report::InputError(d.file(), "/unit", fmt::format("'{}': expected GB/s or us", unit));
  }
  f.latency = unit == "us";
  f.verdict = d.text("/verdict");
  f.threshold = d.number("/threshold");
  for (std::size_t lane = 0; lane < d.array("/level").size(); ++lane) {
    f.level.push_back(d.number_or_null(fmt::format("/level/{}", lane)));
    f.reference.push_back(d.number_or_null(fmt::format("/reference/{}", lane)));
    f.low.push_back(d.at(fmt::format("/fleet_low/{}", lane), json::value_t::boolean, "true or false").get<bool>());
  }
  f.measured = d.count("/measured");
  f.missing = d.count("/missing_pairs");
  for (const auto& [finding, key] : std::map<std::string, std::string>{{"bad_host", "/bad_hosts"},
                                                                       {"bad_link", "/bad_links"},
                                                                       {"split", "/splits"},
                                                                       {"low_group", "/low_groups"},
                                                                       {"suspicious", "/suspicious_pairs"},
                                                                       {"cannot_tell", "/cannot_tell"}}) {
    f.findings[finding] = d.length_if_any(key);
  }
  for (std::size_t i = 0; i < d.array("/hosts").size(); ++i) {
    const std::string at = fmt::format("/hosts/{}", i);
    report::ExportedFleetHost h;
    h.host = d.text(at + "/host");
    h.local_rank = static_cast<int>(d.count(at + "/local_rank"));
    h.bad = d.text(at + "/verdict") == "bad_host";
    h.pairs = d.count(at + "/pairs");
    h.low = d.count(at + "/low");
    h.of_reference = d.number_or_null(at + "/median_of_reference");
    f.hosts.push_back(std::move(h));
  }
  return f;
}

/// One input file: a result, or a verdict that accept or fleet wrote with --format json; anything else is one line.
void read_input(const std::filesystem::path& path, std::uintmax_t max_bytes, report::ExportInput& in) {
  const std::string name = path.string();
  const std::string text = report::read_input_file(path, max_bytes, "input file");
  const json doc = report::parse_json_text(text, name);
  if (doc.is_object() && doc.contains("schema")) {  // a result (the reader refuses another schema, by name)
    in.runs.push_back(report::read_result_text(text, name));
    return;
  }
  const VerdictDoc d(doc, name);
  const auto holds = [&](const char* key, json::value_t type) {
    return doc.is_object() && doc.contains(key) && doc.at(key).type() == type;
  };
  // accept's verdict: {"profile": {...}, "checks": [...], "verdict": ...} (a profile has "profile": "ccbench.accept")
  if (holds("profile", json::value_t::object) && holds("checks", json::value_t::array) && doc.contains("verdict")) {
    in.accepts.push_back(accept_of(d));
  } else if (holds("pairs", json::value_t::array) && holds("level", json::value_t::array) && doc.contains("verdict")) {
    in.fleets.push_back(fleet_of(d));
  } else {
    throw report::InputError(
        name, "", "neither a result (schema ccbench.result) nor a verdict of accept or fleet (--format json)");
  }
}

double run_time(const LoadedRun& run) {
  const auto& info = run.doc.run;
  return report::epoch_seconds(info.ended_utc.empty() ? info.started_utc : info.ended_utc).value_or(0);
}

/// The newest run of each bench, backend, timing, set of hosts and number of ranks (a launch repeated): a
/// results/ folder that keeps every launch would otherwise give an older launch's rows beside the newer one's, as
/// current. Each run left out is said on stderr.
std::vector<LoadedRun> newest_runs(std::vector<LoadedRun> runs) {
  std::stable_sort(runs.begin(), runs.end(),
                   [](const LoadedRun& a, const LoadedRun& b) { return run_time(a) < run_time(b); });
  using Key = std::tuple<std::string, std::string, std::string, std::set<std::string>, std::size_t>;
  const auto key_of = [](const LoadedRun& run) {
    std::set<std::string> hosts;
    std::size_t ranks = 0;
    for (const auto& h : run.doc.environment.hosts) {
      hosts.insert(h.hostname);
      ranks += h.ranks.size();
    }
    const CaseResult* first = run.doc.results.empty() ? nullptr : &run.doc.results.front();
    return Key{run.doc.run.benchmark, first != nullptr ? first->backend : "",
               first != nullptr ? std::string(name(first->timing)) : "", hosts, ranks};
  };
  std::map<Key, std::size_t> newest;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    newest[key_of(runs[i])] = i;
  }
  std::vector<LoadedRun> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::size_t kept = newest.at(key_of(runs[i]));
    if (kept == i) {
      out.push_back(std::move(runs[i]));
    } else {
      std::fprintf(stderr, "ccbench-report: export: left out %s: %s is a newer run of %s on the same hosts and ranks\n",
                   runs[i].path.c_str(), runs[kept].path.c_str(), runs[i].doc.run.benchmark.c_str());
    }
  }
  return out;
}

/// --textfile-dir DIR [--textfile-name NAME]: DIR/NAME.prom, checked before any input is read.
std::string textfile_path(const Options& o) {
  if (o.textfile_dir.empty()) {
    return "";
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(o.textfile_dir, ec)) {
    throw UsageError(fmt::format("--textfile-dir {}: not a folder (node_exporter's --collector.textfile.directory)",
                                 o.textfile_dir));
  }
  if (!std::regex_match(o.textfile_name, std::regex("[A-Za-z0-9_][A-Za-z0-9_.-]*"))) {
    throw UsageError(
        fmt::format("--textfile-name '{}': expected letters, digits, '_', '-' and '.' (NAME.prom)", o.textfile_name));
  }
  std::string path = (std::filesystem::path(o.textfile_dir) / (o.textfile_name + ".prom")).string();
  ccbench::check_output_path(path, "--textfile-dir");
  check_not_an_input(path, "--textfile-dir", o.files);
  return path;
}

}  // namespace

int run_export(const Options& o) {
  if (o.format != "openmetrics") {
    throw UsageError(fmt::format("export: --format '{}' is not openmetrics", o.format));
  }
  const std::string path = textfile_path(o);
  const auto max_bytes = max_file_bytes(o);
  report::ExportInput in;
  for (const auto& file : report::result_file_paths(o.files)) {
    read_input(file, max_bytes, in);
  }
  in.runs = newest_runs(std::move(in.runs));
  const auto e = report::render_openmetrics(in);
  emit(e.text, path);
  if (e.replaced > 0) {
    std::fprintf(stderr,
                 "ccbench-report: export: %zu series given twice (two verdicts of one profile or sweep): "
                 "the later input's value kept\n",
                 e.replaced);
  }
  std::fprintf(stderr,
               "ccbench-report: %zu series in %zu families (%zu run(s), %zu accept and %zu fleet verdict(s))%s%s\n",
               e.series, e.families, in.runs.size(), in.accepts.size(), in.fleets.size(),
               path.empty() ? "" : "; wrote ", path.c_str());
  return ccbench::kExitOk;
}

}  // namespace ccbench::report_cli
