#pragma once
// One model, rendered many ways (google/benchmark's reporters, nvbench's printers): each command builds its model
// once (TableModel, Comparison, AcceptVerdict, FleetVerdict) and hands it to the renderer of the format asked for.
// A renderer never computes a verdict; it only words one.
#include <memory>
#include <string>

#include "ccbench/report/accept.hpp"
#include "ccbench/report/compare.hpp"
#include "ccbench/report/fleet.hpp"
#include "ccbench/report/regression.hpp"
#include "ccbench/report/table.hpp"
#include "ccbench/report/text.hpp"

namespace ccbench::report {

class Renderer {
 public:
  Renderer() = default;
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;
  Renderer(Renderer&&) = delete;
  Renderer& operator=(Renderer&&) = delete;
  virtual ~Renderer() = default;

  [[nodiscard]] virtual std::string render(const TableModel& tables) const = 0;
  [[nodiscard]] virtual std::string render(const Comparison& comparison) const = 0;
  [[nodiscard]] virtual std::string render(const AcceptVerdict& verdict) const = 0;
  [[nodiscard]] virtual std::string render(const FleetVerdict& verdict) const = 0;
  [[nodiscard]] virtual std::string render(const RegressionVerdict& verdict) const = 0;
};

/// The renderer of a format; `colour` (ANSI) is the terminal's only. JUnit renders accept's and fleet's verdicts
/// (a table or a comparison has no test cases: std::logic_error); a regression verdict has no CSV or JUnit form
/// (std::logic_error: the command refuses those formats first).
std::unique_ptr<Renderer> make_renderer(Format format, bool colour);

}  // namespace ccbench::report
