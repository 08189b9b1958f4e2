// regression's printers: terminal and Markdown (each bench's comparison as compare prints it, then the summary and
// the verdict line), JSON (the values, schema ccbench.report.regression).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ccbench/report/regression.hpp"
#include "ccbench/report/text.hpp"
#include "ccbench/report/verdict_text.hpp"
#include "renderers.hpp"

namespace ccbench::report {

namespace {

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : std::string{separator}) + printable(item);
  }
  return out;
}

std::string bench_summary(const RegressionVerdict& v, const BenchRegression& b) {
  using State = BenchRegression::State;
  std::string what;
  switch (b.state) {
    case State::NotInBase:
      what = fmt::format("MISSING in {}: not compared ({})", printable(v.label_a),
                         b.why.empty() ? std::string{"the baseline did not run it"} : printable(b.why));
      break;
    case State::NoResult:
      what = fmt::format("FAILED: no result in {} ({}see {})", printable(v.label_b),
                         b.why.empty() ? std::string{} : printable(b.why) + "; ", b.log.string());
      break;
    case State::NoVerdict:
      what = "NO VERDICT: " + printable(b.why);
      break;
    case State::Compared:
      what = summary_line(*b.comparison);
      break;
  }
  return fmt::format("{:<24} {}", printable(b.name), what);
}

/// "5 launches a side, paired", "3 launches of a, 1 of b": what the rows' intervals rest on.
std::string launches_text(const RegressionVerdict& v) {
  std::string out = v.launches_a == v.launches_b
                        ? fmt::format("{} launch{} a side", v.launches_a, v.launches_a == 1 ? "" : "es")
                        : fmt::format("{} launch(es) of {}, {} of {}", v.launches_a, printable(v.label_a), v.launches_b,
                                      printable(v.label_b));
  if (v.options.paired) {
    out += ", paired (interleaved)";
  }
  if (v.options.launch_noise > 0.0) {
    out += fmt::format(", launch noise at least {:g}% (--launch-noise)", v.options.launch_noise * 100.0);
  }
  out += fmt::format(", false-alarm rate {:g}% over the suite's rows", v.options.alarm_rate * 100.0);
  return out;
}

std::string render_text(const RegressionVerdict& v, const Renderer& renderer, bool md) {
  std::string out;
  for (const auto& b : v.benches) {
    if (b.state != BenchRegression::State::Compared && b.state != BenchRegression::State::NoVerdict) {
      continue;
    }
    out += fmt::format("\n{}== {}: {} -> {}\n", md ? "### " : "", printable(b.name), printable(v.label_a),
                       printable(v.label_b));
    if (!b.command_base.empty() && b.command_base != b.command_cand) {
      out += fmt::format("note: {} ran '{}', {} ran '{}': only rows of both are compared\n", printable(v.label_a),
                         printable(b.command_base), printable(v.label_b), printable(b.command_cand));
    }
    out += b.comparison ? renderer.render(*b.comparison) : fmt::format("ccbench-report: {}\n", printable(b.why));
  }
  out += fmt::format("\n{}== regression: {} against {}, threshold {:g}%, {}\n", md ? "### " : "", printable(v.label_b),
                     printable(v.label_a), v.options.threshold * 100.0, launches_text(v));
  for (const auto& b : v.benches) {
    out += fmt::format("{}{}\n", md ? "- " : "  ", bench_summary(v, b));
  }
  if (!v.only_in_base.empty()) {
    out += fmt::format("  only in {} (not in the suite now): {}\n", printable(v.label_a), joined(v.only_in_base, " "));
  }
  if (const auto missing = v.names(BenchRegression::State::NotInBase); !missing.empty()) {
    out += fmt::format("baseline {} lacks {} bench(es) of the suite: {}\n", printable(v.label_a), missing.size(),
                       joined(missing, ", "));
  }
  if (const auto failed = v.failed_benches(); !failed.empty()) {
    out += fmt::format("benches that failed: {}\n", joined(failed, ", "));
  }
  if (const auto timed_out = v.timed_out(); !timed_out.empty()) {
    out += fmt::format("benches that timed out: {}\n", joined(timed_out, ", "));
  }
  if (v.rows > 0) {
    out += fmt::format("rows: {} compared, {} judged ({} SLOWER, {} FASTER), {} UNSURE{}\n", v.rows, v.judged, v.slower,
                       v.faster, v.unsure,
                       v.unsure_why.empty() ? "" : fmt::format(" (the first: {})", printable(v.unsure_why)));
  }
  if (v.options.aa) {
    const std::size_t alarms = v.slower + v.faster;
    out += fmt::format(
        "A/A (the same software on both sides): {} false alarm(s) (SLOWER or FASTER) in {} rows "
        "compared: rate {}; {} judged SAME, {} UNSURE\n",
        alarms, v.rows,
        v.rows > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(alarms) / static_cast<double>(v.rows))
                   : std::string{"-"},
        v.judged - alarms, v.unsure);
  }
  out += fmt::format("verdict: {}; exit {}\n", v.text(), v.exit_code());
  return out;
}

std::string state_name(BenchRegression::State state) {
  switch (state) {
    case BenchRegression::State::Compared:
      return "compared";
    case BenchRegression::State::NotInBase:
      return "not_in_a";
    case BenchRegression::State::NoResult:
      return "no_result";
    case BenchRegression::State::NoVerdict:
      return "no_verdict";
  }
  return {};
}

std::string render_json(const RegressionVerdict& v) {
  auto benches = nlohmann::ordered_json::array();
  for (const auto& b : v.benches) {
    nlohmann::ordered_json j = {{"name", b.name}, {"state", state_name(b.state)}};
    j["bench_exit"] = b.bench_exit ? nlohmann::ordered_json(*b.bench_exit) : nlohmann::ordered_json(nullptr);
    j["command_a"] = b.command_base;
    j["command_b"] = b.command_cand;
    if (b.comparison) {
      const auto count = [&b](Verdict verdict) { return count_rows(*b.comparison, verdict); };
      j["regression"] = b.comparison->any_regression() || b.comparison->any_missing();
      j["counts"] = {{"rows", b.comparison->rows.size()},         {"same", count(Verdict::Same)},
                     {"faster", count(Verdict::Faster)},          {"slower", count(Verdict::Slower)},
                     {"unsure", count(Verdict::Unsure)},          {"failed", count(Verdict::Failed)},
                     {"missing", b.comparison->only_base.size()}, {"only_b", b.comparison->only_cand.size()},
                     {"skipped", b.comparison->skipped.size()}};
    }
    if (!b.why.empty()) {
      j["why"] = b.why;
    }
    benches.push_back(std::move(j));
  }
  const nlohmann::ordered_json doc = {
      {"schema", "ccbench.report.regression"},
      {"schema_version", "1.1.0"},
      {"label_a", v.label_a},
      {"label_b", v.label_b},
      {"threshold", v.options.threshold},
      {"min_samples", v.options.min_samples},
      {"launches_a", v.launches_a},
      {"launches_b", v.launches_b},
      {"paired", v.options.paired},
      {"launch_noise",
       v.options.launch_noise > 0.0 ? nlohmann::ordered_json(v.options.launch_noise) : nlohmann::ordered_json(nullptr)},
      {"alarm_rate", v.options.alarm_rate},
      {"aa", v.options.aa},
      {"verdict", v.text()},
      {"exit", v.exit_code()},
      {"totals",
       {{"benches_compared", v.compared},
        {"rows", v.rows},
        {"judged", v.judged},
        {"unsure", v.unsure},
        {"faster", v.faster},
        {"slower", v.slower},
        {"failed", v.failed},
        {"missing", v.missing}}},
      {"benches", benches},
      {"not_in_a", v.names(BenchRegression::State::NotInBase)},
      {"only_in_a", v.only_in_base},
      {"failed_benches", v.failed_benches()},
      {"timed_out", v.timed_out()}};
  return doc.dump(2) + "\n";
}

}  // namespace

namespace detail {

std::string TerminalRenderer::render(const RegressionVerdict& verdict) const {
  return render_text(verdict, *this, false);
}

std::string MarkdownRenderer::render(const RegressionVerdict& verdict) const {
  return render_text(verdict, *this, true);
}

std::string JsonRenderer::render(const RegressionVerdict& verdict) const { return render_json(verdict); }

std::string CsvRenderer::render(const RegressionVerdict& /*verdict*/) const {
  throw std::logic_error("a regression verdict has no CSV form");
}

std::string JunitRenderer::render(const RegressionVerdict& /*verdict*/) const {
  throw std::logic_error("a regression verdict has no JUnit form");
}

}  // namespace detail

}  // namespace ccbench::report
