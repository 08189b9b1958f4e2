#pragma once
// The bench binaries' command line (CLI11): flags into a RunConfig, or the text of --help / --version.
#include <span>
#include <string>
#include <variant>

#include "ccbench/collective.hpp"
#include "ccbench/config.hpp"

namespace ccbench {

/// `--help` / `--version` text to print instead of running.
struct EarlyExit {
  std::string text;
  bool version = false;  // --version: the caller adds the libraries' lines (they are the backends')
};

/// Parses argv. Throws UsageError (one line) on syntax errors and on anything validate() rejects.
std::variant<RunConfig, EarlyExit> parse_command_line(Collective collective, std::span<const char* const> argv);

}  // namespace ccbench
