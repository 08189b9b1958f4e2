#pragma once
// A bench's command line, parsed once per process before anything starts, and how the process runs: the paths
// of bench_main (an MPI job, the standalone RDMA pair, --check-args) all run on this one outcome.
#include <exception>
#include <optional>
#include <span>
#include <variant>

#include "ccbench/cli.hpp"
#include "ccbench/collective.hpp"

namespace ccbench {

using Parsed = std::variant<RunConfig, EarlyExit>;

/// What the command line asked for (the run's config, or the text of --help / --version), or the error that
/// refuses it, kept to be said by whichever path speaks for the process.
class CommandLine {
 public:
  /// Parses `args` (parse_command_line); never throws.
  CommandLine(Collective collective, std::span<const char* const> args);
  /// The outcome, or the parse's error (a UsageError, one line) thrown again.
  [[nodiscard]] const Parsed& parsed() const;

 private:
  std::optional<Parsed> m_parsed;
  std::exception_ptr m_error;
};

/// How the process runs: through MPI (mpirun, srun), as one side of the standalone RDMA pair (--server /
/// --connect), or not at all (--check-args).
enum class Mode { CheckArgs, StandalonePair, MpiJob };

/// Read from the argv alone, for a refused command line too: the mode decides who says the refusal (this process,
/// or one rank for the whole MPI job); a parse that succeeded holds the same flags.
Mode mode_of(Collective collective, std::span<const char* const> args);

}  // namespace ccbench
