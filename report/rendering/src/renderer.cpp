#include "ccbench/report/renderer.hpp"

#include <stdexcept>

#include "renderers.hpp"

namespace ccbench::report {

namespace detail {

// No command asks for these: --junit is an option of accept and fleet only.
std::string JunitRenderer::render(const TableModel& /*tables*/) const {
  throw std::logic_error("JUnit XML renders verdicts; a table has none");
}

std::string JunitRenderer::render(const Comparison& /*comparison*/) const {
  throw std::logic_error("JUnit XML renders accept's and fleet's verdicts; compare has exit codes");
}

}  // namespace detail

std::unique_ptr<Renderer> make_renderer(Format format, bool colour) {
  switch (format) {
    case Format::Terminal:
      return std::make_unique<detail::TerminalRenderer>(colour);
    case Format::Markdown:
      return std::make_unique<detail::MarkdownRenderer>();
    case Format::Csv:
      return std::make_unique<detail::CsvRenderer>();
    case Format::Json:
      return std::make_unique<detail::JsonRenderer>();
    case Format::Junit:
      return std::make_unique<detail::JunitRenderer>();
  }
  throw std::logic_error("no renderer for this format");
}

}  // namespace ccbench::report
