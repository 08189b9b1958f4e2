// Acceptance printers: the PASS/FAIL table (terminal, Markdown), CSV, JSON and JUnit XML.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ccbench/report/accept.hpp"
#include "ccbench/report/text.hpp"
#include "renderers.hpp"
#include "text_table.hpp"

namespace ccbench::report {

namespace {

using nlohmann::json;

std::string count_of(std::size_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

std::string_view verdict_name(CheckVerdict v) {
  switch (v) {
    case CheckVerdict::Pass:
      return "PASS";
    case CheckVerdict::Waived:
      return "WAIVED";
    case CheckVerdict::Warning:
      return "WARNING";
    case CheckVerdict::Fail:
      break;
  }
  return "FAIL";
}

std::string_view json_verdict(CheckVerdict v) {
  switch (v) {
    case CheckVerdict::Pass:
      return "pass";
    case CheckVerdict::Waived:
      return "waived";
    case CheckVerdict::Warning:
      return "warning";
    case CheckVerdict::Fail:
      break;
  }
  return "fail";
}

std::size_t count_of_verdict(const std::vector<CheckOutcome>& outcomes, CheckVerdict verdict) {
  return static_cast<std::size_t>(
      std::count_if(outcomes.begin(), outcomes.end(), [verdict](const auto& o) { return o.verdict == verdict; }));
}

std::size_t count_failed(const std::vector<CheckOutcome>& outcomes) {
  return count_of_verdict(outcomes, CheckVerdict::Fail);
}

std::string summary_line(const std::vector<CheckOutcome>& outcomes) {
  const auto failed = count_failed(outcomes);
  const auto waived = count_of_verdict(outcomes, CheckVerdict::Waived);
  const auto warned = count_of_verdict(outcomes, CheckVerdict::Warning);
  return fmt::format(
      "{}: {} passed, {} failed{}{}\n", count_of(outcomes.size(), "check"), outcomes.size() - failed - waived - warned,
      failed,
      warned == 0
          ? std::string{}
          : fmt::format(", {} {} (warning-level checks that missed: {})", warned, warned == 1 ? "warning" : "warnings",
                        failed == 0 ? "alone they exit 0" : "the failures exit 1"),
      waived == 0 ? std::string{}
                  : fmt::format(", {} waived (--waive-unjudged: FAILs for evidence they lacked)", waived));
}

/// "next steps:" and a line per check that missed with one; "" when none has.
std::string next_steps(const std::vector<CheckOutcome>& outcomes, bool markdown) {
  std::string out;
  for (const auto& o : outcomes) {
    if (!o.next_step.empty()) {
      out += markdown ? fmt::format("- `{}` ({}): {}\n", o.id, name(o.level), html_escape(o.next_step))
                      : fmt::format("  {} ({}): {}\n", printable(o.id), name(o.level), printable(o.next_step));
    }
  }
  if (out.empty()) {
    return out;
  }
  return (markdown ? "\n**next steps**\n\n" : "next steps:\n") + out;
}

std::string culprit_and_detail(const CheckOutcome& o) {
  return o.culprit.empty() ? o.detail : fmt::format("{} -- {}", o.culprit, o.detail);
}

std::string render_table(const Profile& p, const std::vector<CheckOutcome>& outcomes, bool markdown, bool colour) {
  using detail::Align;
  std::vector<detail::Column> columns = {{"check", Align::Left},
                                         {"verdict", Align::Left},
                                         {"measured", Align::Left},
                                         {"threshold", Align::Left},
                                         {markdown ? "culprit" : "culprit -- detail", Align::Left}};
  if (markdown) {
    columns.push_back({"detail", Align::Left});
    columns.push_back({"source", Align::Left});
  }
  detail::TextTable table(columns);
  for (const auto& o : outcomes) {
    const char* sgr = o.verdict == CheckVerdict::Pass      ? "32"
                      : o.verdict == CheckVerdict::Waived  ? "33"
                      : o.verdict == CheckVerdict::Warning ? "1;33"
                                                           : "1;31";
    std::vector<detail::Cell> cells = {
        {o.id}, {std::string(verdict_name(o.verdict)), sgr}, {o.measured}, {o.threshold}};
    if (markdown) {
      cells.insert(cells.end(), {{o.culprit}, {o.detail}, {o.source}});
    } else {
      cells.push_back({culprit_and_detail(o)});
      for (auto& cell : cells) {
        cell.text = printable(cell.text);
      }
    }
    table.add_row(std::move(cells));
  }
  const std::string title = fmt::format("ccbench accept: {} ({}, {} {})", p.name, p.path, p.id, p.version);
  const std::string units = "busbw in GB/s (1 GB/s = 1e9 B/s); sizes binary (1 GiB = 2^30 B)";
  if (markdown) {
    return fmt::format("### {}\n\n{}\n\n{}{}\n{}", html_escape(title), units, table.markdown(),
                       next_steps(outcomes, true), summary_line(outcomes));
  }
  return fmt::format("{}\n{}\n{}\n{}{}", printable(title), units, table.terminal(colour), next_steps(outcomes, false),
                     summary_line(outcomes));
}

std::string junit_body(const CheckOutcome& o) {
  std::string body = fmt::format("{}\nmeasured: {}\nthreshold: {}\n", o.description,
                                 o.measured.empty() ? "-" : o.measured, o.threshold);
  if (!o.culprit.empty()) {
    body += fmt::format("culprit: {}\n", o.culprit);
  }
  body += fmt::format("detail: {}\n", o.detail);
  if (!o.next_step.empty()) {
    body += fmt::format("level: {}\nnext step: {}\n", name(o.level), o.next_step);
  }
  if (!o.source.empty()) {
    body += fmt::format("source: {}\n", o.source);
  }
  return xml_escape(body);
}

}  // namespace

namespace detail {

std::string TerminalRenderer::render(const AcceptVerdict& verdict) const {
  return render_table(verdict.profile, verdict.outcomes, false, m_colour);
}

std::string MarkdownRenderer::render(const AcceptVerdict& verdict) const {
  return render_table(verdict.profile, verdict.outcomes, true, false);
}

std::string CsvRenderer::render(const AcceptVerdict& verdict) const {
  const auto& outcomes = verdict.outcomes;
  std::string out = "check,kind,verdict,measured,threshold,culprit,detail,source,level,next_step\n";
  for (const auto& o : outcomes) {
    const std::vector<std::string> fields = {
        o.id,     o.kind,   std::string(verdict_name(o.verdict)), o.measured, o.threshold, o.culprit,
        o.detail, o.source, std::string(name(o.level)),           o.next_step};
    std::vector<std::string> cells;
    std::transform(fields.begin(), fields.end(), std::back_inserter(cells), [](const auto& f) { return csv_field(f); });
    out += fmt::format("{}\n", fmt::join(cells, ","));
  }
  return out;
}

std::string JsonRenderer::render(const AcceptVerdict& verdict) const {
  const auto& p = verdict.profile;
  const auto& outcomes = verdict.outcomes;
  json checks = json::array();
  for (const auto& o : outcomes) {
    checks.push_back({{"id", o.id},
                      {"kind", o.kind},
                      {"description", o.description},
                      {"verdict", json_verdict(o.verdict)},
                      {"level", name(o.level)},
                      {"next_step", o.next_step},
                      {"lacked_evidence", o.evidence.lacked()},
                      {"measured", o.measured},
                      {"threshold", o.threshold},
                      {"culprit", o.culprit},
                      {"detail", o.detail},
                      {"source", o.source}});
  }
  const auto failed = count_failed(outcomes);
  const auto waived = count_of_verdict(outcomes, CheckVerdict::Waived);
  const auto warned = count_of_verdict(outcomes, CheckVerdict::Warning);
  json doc = {{"profile", {{"id", p.id}, {"name", p.name}, {"path", p.path}, {"profile_version", p.version}}},
              {"checks", checks},
              {"passed", outcomes.size() - failed - waived - warned},
              {"failed", failed},
              {"warnings", warned},
              {"valid_until", verdict.valid_until ? json(*verdict.valid_until) : json(nullptr)},
              {"verdict", failed > 0   ? "fail"
                          : waived > 0 ? "waived"
                          : warned > 0 ? "warning"
                                       : "pass"}};
  if (waived > 0) {  // recorded where it happened; verdicts without a waiver read as before
    doc["waived"] = waived;
    doc["waived_by"] = "--waive-unjudged";
  }
  // Replace invalid UTF-8 (a hostile hostname) instead of throwing.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string JunitRenderer::render(const AcceptVerdict& verdict) const {
  const auto& profile = verdict.profile;
  const auto& outcomes = verdict.outcomes;
  const auto failed = count_failed(outcomes);
  const auto counts = fmt::format(R"(tests="{}" failures="{}" errors="0" skipped="{}")", outcomes.size(), failed,
                                  count_of_verdict(outcomes, CheckVerdict::Waived));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"ccbench accept\" {}>\n", counts);
  out += fmt::format("  <testsuite name=\"{}\" {}>\n", xml_escape("ccbench accept: " + profile.name), counts);
  out += "    <properties>\n";
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"profile", profile.path},
                                   {"profile_id", profile.id},
                                   {"profile_version", profile.version}}) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", key, xml_escape(value));
  }
  out += "    </properties>\n";
  const std::string classname = xml_escape("ccbench.accept." + profile.id);
  for (const auto& o : outcomes) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", classname, xml_escape(o.id));
    if (o.verdict == CheckVerdict::Pass) {
      out += fmt::format("      <system-out>{}</system-out>\n", junit_body(o));
    } else if (o.verdict == CheckVerdict::Warning) {  // not a failure: a warning alone exits 0
      out += fmt::format("      <system-out>{}</system-out>\n", xml_escape("WARNING: ") + junit_body(o));
    } else if (o.verdict == CheckVerdict::Waived) {
      out += fmt::format("      <skipped message=\"{}\"/>\n      <system-out>{}</system-out>\n",
                         xml_escape(o.id + ": waived by --waive-unjudged: " + o.detail), junit_body(o));
    } else {
      const std::string message = o.culprit.empty() ? o.detail : o.culprit;
      out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml_escape(o.id + ": " + message),
                         xml_escape(o.kind), junit_body(o));
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace detail

}  // namespace ccbench::report
