// libFuzzer target for the reader (DESIGN §7: the reporter never crashes on input). Any byte string
// must end as either a result that every printer can render, or one InputError; anything else
// (another exception, a sanitizer report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ccbench/report/compare.hpp"
#include "ccbench/report/html.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/report/renderer.hpp"
#include "ccbench/report/table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace report = ccbench::report;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<report::LoadedRun> runs;
  try {
    runs.push_back(report::read_result_text(text, "fuzz-input.json"));
  } catch (const report::InputError&) {
    return 0;  // rejected with one line: the expected outcome for most inputs
  }
  const auto tables = report::make_table_model(runs);
  const auto comparison = report::compare_runs(runs, runs, report::CompareOptions{});
  for (const auto format :
       {report::Format::Terminal, report::Format::Markdown, report::Format::Csv, report::Format::Json}) {
    const auto renderer = report::make_renderer(format, true);
    (void)renderer->render(tables);
    (void)renderer->render(comparison);
  }
  report::HtmlOptions page;
  page.fleet = report::page_fleet_verdict(runs);  // as `html` does: a sweep's page has a fleet section
  (void)report::render_html(runs, page);
  return 0;
}
