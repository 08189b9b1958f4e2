// libFuzzer target for ccbench-report import (issue 27): any bytes as a log must end as either a result document
// that the reader takes back and every printer renders, or one InputError / UsageError (a line, exit 2). Anything
// else (another exception, a document the reader refuses, a sanitizer report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ccbench/errors.hpp"
#include "ccbench/report/html.hpp"
#include "ccbench/report/import.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/report/renderer.hpp"
#include "ccbench/report/table.hpp"
#include "ccbench/result_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace report = ccbench::report;
  const std::vector<report::ImportLog> logs = {
      {"fuzz.log", std::string(reinterpret_cast<const char*>(data), size), "2026-01-01T00:00:00Z"}};
  report::ImportOptions options;
  options.test = "all_reduce";  // what a log before 2.12 needs; a log that names its test keeps its own
  ccbench::ResultDocument doc;
  try {
    doc = report::import_logs(logs, options);
  } catch (const ccbench::UsageError&) {  // InputError too: refused with one line
    return 0;
  }
  // Outside the try: a document the reader refuses escapes as an exception, which libFuzzer reports.
  std::vector<report::LoadedRun> runs;
  runs.push_back(report::read_result_text(ccbench::json_text(ccbench::to_json(doc)), "imported.json"));
  const auto tables = report::make_table_model(runs);
  for (const auto format : {report::Format::Terminal, report::Format::Json}) {
    (void)report::make_renderer(format, false)->render(tables);
  }
  report::HtmlOptions page;
  page.fleet = report::page_fleet_verdict(runs);  // as `html` does: a sweep's page has a fleet section
  (void)report::render_html(runs, page);
  return 0;
}
