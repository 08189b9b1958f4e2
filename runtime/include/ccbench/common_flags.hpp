#pragma once
// The flags every bench takes, whatever it measures (--check-args, --bind, --timeout), so that a workflow asks
// each bench the same questions and gets the same answers: one definition, for the collective benches' command
// line (cli.cpp) and copy_bench's alike.
#include <string>

#include "ccbench/config.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace ccbench {

/// The common flags' values, checked.
struct CommonOptions {
  bool check_args = false;
  BindPolicy bind = BindPolicy::None;
  double timeout_s = kDefaultTimeoutS;
};

/// The common flags as given: each added to a bench's CLI11 app where that bench's --help lists it, with what it
/// means there, and read back after the parse.
class CommonFlags {
 public:
  void add_check_args(CLI::App& app, const std::string& help);
  void add_bind(CLI::App& app, const std::string& help);
  void add_timeout(CLI::App& app, const std::string& help);

  [[nodiscard]] bool check_args() const { return m_check_args; }
  /// --bind's policy. Throws UsageError (one line naming --bind) for anything but none or auto.
  [[nodiscard]] BindPolicy bind() const;
  /// --timeout as given: checked() holds it to timeout_error(), as validate() holds a run's config.
  [[nodiscard]] double timeout_s() const { return m_timeout_s; }
  /// All three, checked. Throws UsageError (one line naming the flag) for a value no bench takes.
  [[nodiscard]] CommonOptions checked() const;

 private:
  bool m_check_args = false;
  std::string m_bind = "none";
  double m_timeout_s = kDefaultTimeoutS;
};

}  // namespace ccbench
