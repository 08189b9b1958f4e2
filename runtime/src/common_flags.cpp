#include "ccbench/common_flags.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "ccbench/binding.hpp"
#include "ccbench/errors.hpp"

namespace ccbench {

void CommonFlags::add_check_args(CLI::App& app, const std::string& help) {
  app.add_flag("--check-args", m_check_args, help);
}

void CommonFlags::add_bind(CLI::App& app, const std::string& help) { app.add_option("--bind", m_bind, help); }

void CommonFlags::add_timeout(CLI::App& app, const std::string& help) {
  app.add_option("--timeout", m_timeout_s, help);
}

BindPolicy CommonFlags::bind() const {
  if (const auto policy = parse_bind_policy(m_bind)) {
    return *policy;
  }
  throw UsageError(fmt::format("--bind '{}' is not none or auto", m_bind));
}

CommonOptions CommonFlags::checked() const {
  const BindPolicy policy = bind();
  if (auto error = timeout_error(m_timeout_s)) {
    throw UsageError(*error);
  }
  return {m_check_args, policy, m_timeout_s};
}

}  // namespace ccbench
