// The main of every bench binary: bench/apps/CMakeLists.txt builds one per row of the workload table
// (workloads.def) and names its bench in CCBENCH_BENCH_NAME.
#include <cstdio>

#include "bench_main.hpp"
#include "ccbench/collective.hpp"
#include "ccbench/errors.hpp"

#ifndef CCBENCH_BENCH_NAME
#error "CCBENCH_BENCH_NAME names the bench (a binary of workloads.def)"
#endif

int main(int argc, char** argv) {
  const auto collective = ccbench::parse_collective(CCBENCH_BENCH_NAME);
  if (!collective) {  // the build named a bench that is not a row: a build error, said before anything runs
    std::fputs(CCBENCH_BENCH_NAME ": error: not a bench of the workload table\n", stderr);
    return ccbench::kExitFailure;
  }
  return ccbench::bench_main(*collective, argc, argv);
}
