#pragma once
// How one case maps onto device buffers and onto NCCL calls, with nccl-tests' layouts.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <span>

#include "ccbench/backend.hpp"
#include "ccbench/traffic.hpp"

namespace ccbench::nccl_detail {

/// Bytes a case needs in the backend's two allocations. In place, everything lives in the
/// receive allocation (as in nccl-tests) and the send allocation is not used.
struct Footprint {
  std::size_t send_bytes = 0;
  std::size_t recv_bytes = 0;
};
Footprint footprint(const CaseSpec& spec, int nranks);
/// The largest of each allocation over `cases` (a sweep's): what -R allocates once.
Footprint largest_footprint(std::span<const CaseSpec> cases, int nranks);

/// Where a case's buffers are. In place (NCCL's definitions): all_reduce, broadcast, reduce use
/// send == recv; all_gather sends from recv + rank*count; reduce_scatter receives into
/// send + rank*count, its input being the whole count*n buffer.
struct Layout {
  std::byte* send = nullptr;   // NCCL's sendbuff: this rank's input pattern goes here
  std::byte* recv = nullptr;   // NCCL's recvbuff: this rank's output is checked here
  std::size_t send_bytes = 0;  // elements(info.send) x type size
  std::size_t recv_bytes = 0;  // elements(info.recv) x type size
};
/// Throws BackendError for an in-place case that NCCL has no layout for (sendrecv, alltoall).
Layout layout(const CaseSpec& spec, int nranks, int rank, std::byte* send_alloc, std::byte* recv_alloc);

/// Everything one NCCL call needs.
struct OpArgs {
  Collective collective = Collective::AllReduce;
  const std::byte* send = nullptr;
  std::byte* recv = nullptr;
  std::size_t count = 0;  // nccl-tests' count: per rank (all_gather, reduce_scatter), per peer (alltoall)
  std::size_t type_size = 0;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;
  int rank = 0;
  int nranks = 1;
  bool native_alltoall = false;       // ncclAlltoAll, ncclGather, ncclScatter (2.28), else grouped ncclSend/ncclRecv
  const TrafficPlan* plan = nullptr;  // alltoallv: every peer's segment (the backend's, for the current case)
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

/// Enqueues one op on args.stream. Returns what NCCL returned (ncclInProgress included), for
/// Communicator::complete(). sendrecv is a ring: send to rank+1, receive from rank-1.
ncclResult_t launch(const OpArgs& args);

}  // namespace ccbench::nccl_detail
