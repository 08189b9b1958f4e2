#pragma once
#include "ccbench/collective.hpp"

namespace ccbench {

/// The whole program of one bench binary: MPI start-up, CLI, backend, sweep, table, JSON.
/// Returns the process exit code (0 ok, 1 failed/wrong, 2 bad input, 3 timeout).
int bench_main(Collective collective, int argc, char** argv);

}  // namespace ccbench
