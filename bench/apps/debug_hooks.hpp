#pragma once
// Test hooks, read from the environment (CCBENCH_DEBUG_*). Each makes one order of events happen on purpose,
// so that a test forces what a loaded machine does by chance; none is set in a real run.
#include <string_view>

namespace ccbench::debug {

/// CCBENCH_DEBUG_STOP=POINT:RANK: rank RANK stops itself (SIGSTOP) at POINT, as a debugger or a wedged
/// process would. Points: setup; sweep (as the third size starts, counted over the rounds of --all-pairs).
void stop_if_asked(std::string_view point, int rank);

/// CCBENCH_DEBUG_FAIL=POINT:RANK: rank RANK alone throws a fatal error at POINT (a failure one rank meets;
/// the points of CCBENCH_DEBUG_STOP).
void fail_if_asked(std::string_view point, int rank);

/// CCBENCH_DEBUG_EXPIRE_FIRST=RANK: every other rank's --timeout is this much longer, so that RANK is the
/// first to give up on a hang and ends the job (0 without the hook).
double extra_timeout_s(int rank);

/// CCBENCH_DEBUG_GPUS=N: this process's GPU probe answers N usable GPUs without asking CUDA, as a GPU node
/// would (-1 without the hook); set on some ranks only (mpirun's MPMD form), it makes --backend auto's ranks
/// disagree on a machine without a GPU.
int gpus_claimed();

/// CCBENCH_DEBUG_SLOW_RECORD=S: world rank 0 waits S seconds before it records a hang (a slow file system),
/// longer than a rank that gives up waits for it (0 without the hook).
double record_delay_s();

/// CCBENCH_DEBUG_LATE=RANK:US: world rank RANK waits US microseconds after each sample's barrier before its
/// timer starts, every sample: a rank late to every op, as a CPU-starved process is, so that the others wait
/// for it inside their timed op (0 without the hook, and on every other rank).
double late_s(int rank);

}  // namespace ccbench::debug
