#pragma once
// The renderers, a class per format. Each model's file defines how every format renders it (table.cpp,
// compare_print.cpp, accept_render.cpp, fleet_render.cpp, fleet_json.cpp, regression.cpp), beside the helpers its
// formats share.
#include <string>

#include "ccbench/report/renderer.hpp"

namespace ccbench::report::detail {

class TerminalRenderer final : public Renderer {
 public:
  explicit TerminalRenderer(bool colour) : m_colour(colour) {}
  [[nodiscard]] std::string render(const TableModel& tables) const override;
  [[nodiscard]] std::string render(const Comparison& comparison) const override;
  [[nodiscard]] std::string render(const AcceptVerdict& verdict) const override;
  [[nodiscard]] std::string render(const FleetVerdict& verdict) const override;
  [[nodiscard]] std::string render(const RegressionVerdict& verdict) const override;

 private:
  bool m_colour;
};

class MarkdownRenderer final : public Renderer {
 public:
  [[nodiscard]] std::string render(const TableModel& tables) const override;
  [[nodiscard]] std::string render(const Comparison& comparison) const override;
  [[nodiscard]] std::string render(const AcceptVerdict& verdict) const override;
  [[nodiscard]] std::string render(const FleetVerdict& verdict) const override;
  [[nodiscard]] std::string render(const RegressionVerdict& verdict) const override;
};

class CsvRenderer final : public Renderer {
 public:
  [[nodiscard]] std::string render(const TableModel& tables) const override;
  [[nodiscard]] std::string render(const Comparison& comparison) const override;
  [[nodiscard]] std::string render(const AcceptVerdict& verdict) const override;
  [[nodiscard]] std::string render(const FleetVerdict& verdict) const override;
  [[nodiscard]] std::string render(const RegressionVerdict& verdict) const override;
};

class JsonRenderer final : public Renderer {
 public:
  [[nodiscard]] std::string render(const TableModel& tables) const override;
  [[nodiscard]] std::string render(const Comparison& comparison) const override;
  [[nodiscard]] std::string render(const AcceptVerdict& verdict) const override;
  [[nodiscard]] std::string render(const FleetVerdict& verdict) const override;
  [[nodiscard]] std::string render(const RegressionVerdict& verdict) const override;
};

class JunitRenderer final : public Renderer {
 public:
  [[nodiscard]] std::string render(const TableModel& tables) const override;
  [[nodiscard]] std::string render(const Comparison& comparison) const override;
  [[nodiscard]] std::string render(const AcceptVerdict& verdict) const override;
  [[nodiscard]] std::string render(const FleetVerdict& verdict) const override;
  [[nodiscard]] std::string render(const RegressionVerdict& verdict) const override;
};

}  // namespace ccbench::report::detail
