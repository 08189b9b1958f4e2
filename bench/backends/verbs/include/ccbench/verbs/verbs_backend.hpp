#pragma once
// The verbs backend: ib_write_bw and ib_write_lat between the two ranks of a pair, over RC queue
// pairs on libibverbs (InfiniBand and RoCE). The pair's Group (MPI, or TCP in the standalone mode)
// carries the out-of-band exchange of queue pair numbers, addresses, keys and GIDs.
#include <memory>
#include <string>

#include "ccbench/backend.hpp"
#include "ccbench/config.hpp"
#include "ccbench/group.hpp"
#include "ccbench/version.hpp"

namespace ccbench {

/// The libibverbs the loader chose: "libibverbs 1.14.44.0 (/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0)".
std::string loaded_verbs_version();

/// --version's line for verbs: the library loaded beside the one built against.
LibraryLines verbs_library_lines();

/// Collective over `pair` (2 ranks; group rank 0 writes, rank 1 is written to, both with
/// --bidirectional). `world_rank` and `host` name this side in the result. Throws UsageError for
/// what the user can fix (no device, a bad device name, port, GID index or MTU, a port that is not
/// ACTIVE, a peer started with other flags) and BackendError when a verbs call fails.
std::unique_ptr<Backend> make_verbs_backend(Group& pair, const RunConfig& config, int world_rank,
                                            const std::string& host);

}  // namespace ccbench
