#pragma once
// --bind on this process (Linux): the plan of ccbench/binding.hpp applied to the main thread, and
// what is in force read back from the kernel, for the result's environment.binding.
#include <string>
#include <vector>

#include "ccbench/binding.hpp"
#include "ccbench/group.hpp"
#include "ccbench/result.hpp"
#include "ccbench/topo/topology.hpp"

namespace ccbench {

/// Plans this rank's place on `host` and, with --bind auto, applies it to the calling thread: its CPU
/// affinity (sched_setaffinity), its preferred memory node (set_mempolicy), and for a GPU rank
/// for a GPU rank the NIC nearest its GPU, recorded (NCCL_IB_HCA is left to the user: NCCL needs one value
/// for the whole job). Call it from the main thread before the
/// backend starts its threads, so they inherit both (threads that exist already, such as MPI's, keep
/// theirs). With --bind none nothing changes; the record says what --bind auto would choose.
BindingRecord bind_rank(BindPolicy policy, const topo::HostTopology& host, const BindingInputs& in);

/// Once set-up is done: the affinity in force, read back (a backend may change it too), its NUMA node
/// for --bind none, and a note when the backend drives another GPU than the plan assumed.
void read_back_binding(BindingRecord& record, const topo::HostTopology& host, const std::string& backend_bus_id);

/// Collective: every world rank's record, in rank order.
std::vector<BindingRecord> gather_binding(Group& world, const BindingRecord& mine);

/// The calling thread's CPU affinity (sorted OS cpu indices); empty if it cannot be read.
std::vector<int> current_affinity();

}  // namespace ccbench
