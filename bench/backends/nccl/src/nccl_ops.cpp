#include "nccl_ops.hpp"

#include <algorithm>
#include <string>

#include "ccbench/errors.hpp"
#include "ccbench/traffic.hpp"
#include "nccl_compat.hpp"

namespace ccbench::nccl_detail {
namespace {

std::size_t span_bytes(Span span, const CaseSpec& spec, int nranks) {
  // a plan's buffers: the busiest rank's on every rank, so that every rank allocates alike (a symmetric window
  // under -R 2 is registered collectively)
  return (span == Span::Plan ? most_elements(spec, nranks) : elements(span, spec.count, nranks)) * size_of(spec.dtype);
}

// In a group, calls only queue work; ncclInProgress is not a failure (ncclGroupEnd settles it).
bool failed(ncclResult_t result) { return result != ncclSuccess && result != ncclInProgress; }

// Runs `calls` between ncclGroupStart and ncclGroupEnd; the group is always closed.
template <typename Calls>
ncclResult_t grouped(Calls&& calls) {
  const ncclResult_t started = nccl().GroupStart();
  if (started != ncclSuccess) {
    return started;
  }
  const ncclResult_t queued = calls();
  const ncclResult_t ended = nccl().GroupEnd();
  return failed(queued) ? queued : ended;
}

ncclResult_t ring_sendrecv(const OpArgs& a) {
  const int next = (a.rank + 1) % a.nranks;
  const int prev = (a.rank - 1 + a.nranks) % a.nranks;
  return grouped([&a, next, prev] {
    const ncclResult_t sent = nccl().Send(a.send, a.count, a.type, next, a.comm, a.stream);
    return failed(sent) ? sent : nccl().Recv(a.recv, a.count, a.type, prev, a.comm, a.stream);
  });
}

// Block `peer` of the input goes to `peer`; block `peer` of the output comes from `peer`.
ncclResult_t grouped_alltoall(const OpArgs& a) {
  const std::size_t block = a.count * a.type_size;
  return grouped([&a, block] {
    for (int peer = 0; peer < a.nranks; ++peer) {
      const std::size_t offset = static_cast<std::size_t>(peer) * block;
      const ncclResult_t sent = nccl().Send(a.send + offset, a.count, a.type, peer, a.comm, a.stream);
      if (failed(sent)) {
        return sent;
      }
      const ncclResult_t received = nccl().Recv(a.recv + offset, a.count, a.type, peer, a.comm, a.stream);
      if (failed(received)) {
        return received;
      }
    }
    return ncclSuccess;
  });
}

// nccl-tests' gather before NCCL 2.28: every rank sends its block to the root, which receives block q from q.
ncclResult_t grouped_gather(const OpArgs& a) {
  const std::size_t block = a.count * a.type_size;
  return grouped([&a, block] {
    const ncclResult_t sent = nccl().Send(a.send, a.count, a.type, a.root, a.comm, a.stream);
    for (int peer = 0; a.rank == a.root && peer < a.nranks && !failed(sent); ++peer) {
      const ncclResult_t received =
          nccl().Recv(a.recv + static_cast<std::size_t>(peer) * block, a.count, a.type, peer, a.comm, a.stream);
      if (failed(received)) {
        return received;
      }
    }
    return sent;
  });
}

// ... and scatter: the root sends block q to q, every rank receives its block from the root.
ncclResult_t grouped_scatter(const OpArgs& a) {
  const std::size_t block = a.count * a.type_size;
  return grouped([&a, block] {
    for (int peer = 0; a.rank == a.root && peer < a.nranks; ++peer) {
      const ncclResult_t sent =
          nccl().Send(a.send + static_cast<std::size_t>(peer) * block, a.count, a.type, peer, a.comm, a.stream);
      if (failed(sent)) {
        return sent;
      }
    }
    return nccl().Recv(a.recv, a.count, a.type, a.root, a.comm, a.stream);
  });
}

// As nccl-tests' AlltoAllvRunColl: to and from every peer in rank order, its segment of the plan (none where it
// is empty), each rank's segments packed in peer order.
ncclResult_t grouped_alltoallv(const OpArgs& a) {
  return grouped([&a] {
    const TrafficPlan& plan = *a.plan;
    for (int peer = 0; peer < a.nranks; ++peer) {
      if (const std::size_t n = plan.count(a.rank, peer); n > 0) {
        const ncclResult_t sent =
            nccl().Send(a.send + plan.send_offset(a.rank, peer) * a.type_size, n, a.type, peer, a.comm, a.stream);
        if (failed(sent)) {
          return sent;
        }
      }
      if (const std::size_t n = plan.count(peer, a.rank); n > 0) {
        const ncclResult_t received =
            nccl().Recv(a.recv + plan.recv_offset(a.rank, peer) * a.type_size, n, a.type, peer, a.comm, a.stream);
        if (failed(received)) {
          return received;
        }
      }
    }
    return ncclSuccess;
  });
}

}  // namespace

Footprint footprint(const CaseSpec& spec, int nranks) {
  const CollectiveInfo& coll = info(spec.collective);
  const std::size_t send = span_bytes(coll.send, spec, nranks);
  const std::size_t recv = span_bytes(coll.recv, spec, nranks);
  if (spec.in_place) {
    return Footprint{0, std::max(send, recv)};
  }
  return Footprint{send, recv};
}

Footprint largest_footprint(std::span<const CaseSpec> cases, int nranks) {
  Footprint out;
  for (const CaseSpec& spec : cases) {
    const Footprint f = footprint(spec, nranks);
    out.send_bytes = std::max(out.send_bytes, f.send_bytes);
    out.recv_bytes = std::max(out.recv_bytes, f.recv_bytes);
  }
  return out;
}

Layout layout(const CaseSpec& spec, int nranks, int rank, std::byte* send_alloc, std::byte* recv_alloc) {
  const CollectiveInfo& coll = info(spec.collective);
  Layout l;
  l.send_bytes = send_elements(spec, nranks, rank) * size_of(spec.dtype);  // this rank's own (a plan's differ)
  l.recv_bytes = recv_elements(spec, nranks, rank) * size_of(spec.dtype);
  if (!spec.in_place) {
    l.send = send_alloc;
    l.recv = recv_alloc;
    return l;
  }
  const std::size_t own_block = static_cast<std::size_t>(rank) * spec.count * size_of(spec.dtype);
  switch (spec.collective) {
    case Collective::AllReduce:
    case Collective::Broadcast:
    case Collective::Reduce:
      l.send = recv_alloc;
      l.recv = recv_alloc;
      return l;
    case Collective::AllGather:
    case Collective::Gather:  // (ncclGather's in place: sendbuff == recvbuff + rank * count)
      l.send = recv_alloc + own_block;
      l.recv = recv_alloc;
      return l;
    case Collective::ReduceScatter:
    case Collective::Scatter:  // (ncclScatter's in place: recvbuff == sendbuff + rank * count)
      l.send = recv_alloc;
      l.recv = recv_alloc + own_block;
      return l;
    case Collective::AllToAll:
    case Collective::AllToAllv:
    case Collective::SendRecv:
    case Collective::IbWriteBw:
    case Collective::IbWriteLat:
    case Collective::Copy:
      break;
  }
  throw BackendError("NCCL has no in-place " + std::string(coll.name));
}

ncclResult_t launch(const OpArgs& a) {
  switch (a.collective) {
    case Collective::AllReduce:
      return nccl().AllReduce(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream);
    case Collective::AllGather:
      return nccl().AllGather(a.send, a.recv, a.count, a.type, a.comm, a.stream);
    case Collective::ReduceScatter:
      return nccl().ReduceScatter(a.send, a.recv, a.count, a.type, a.op, a.comm, a.stream);
    case Collective::Broadcast:
      return nccl().Broadcast(a.send, a.recv, a.count, a.type, a.root, a.comm, a.stream);
    case Collective::Reduce:
      return nccl().Reduce(a.send, a.recv, a.count, a.type, a.op, a.root, a.comm, a.stream);
    case Collective::AllToAll:
      return a.native_alltoall ? native_alltoall(a.send, a.recv, a.count, a.type, a.comm, a.stream)
                               : grouped_alltoall(a);
    case Collective::AllToAllv:
      return grouped_alltoallv(a);
    case Collective::Gather:
      return a.native_alltoall && nccl().Gather != nullptr
                 ? nccl().Gather(a.send, a.recv, a.count, a.type, a.root, a.comm, a.stream)
                 : grouped_gather(a);
    case Collective::Scatter:
      return a.native_alltoall && nccl().Scatter != nullptr
                 ? nccl().Scatter(a.send, a.recv, a.count, a.type, a.root, a.comm, a.stream)
                 : grouped_scatter(a);
    case Collective::SendRecv:
      return ring_sendrecv(a);
    case Collective::IbWriteBw:
    case Collective::IbWriteLat:
    case Collective::Copy:
      break;  // the verbs backend's, copy_bench's
  }
  return ncclInvalidArgument;
}

}  // namespace ccbench::nccl_detail
