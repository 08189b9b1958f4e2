#include "ccbench/mpi/mpi_backend.hpp"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ccbench/pattern.hpp"
#include "ccbench/traffic.hpp"

namespace ccbench {
namespace {

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }  // NOLINT(cppcoreguidelines-no-malloc)
};

/// Page-aligned host memory that only grows; touched on allocation (first-touch placement).
class HostBuffer {
 public:
  std::byte* ensure(std::size_t bytes) {
    if (bytes > m_bytes) {
      const std::size_t size = rounded(bytes);
      // NOLINTNEXTLINE(cppcoreguidelines-no-malloc)
      m_data.reset(static_cast<std::byte*>(std::aligned_alloc(kAlign, size)));
      if (!m_data) {
        throw std::bad_alloc();
      }
      std::memset(m_data.get(), 0, size);
      m_bytes = size;
    }
    return m_data.get();
  }
  [[nodiscard]] std::byte* data() const { return m_data.get(); }
  /// What ensure(bytes) would allocate (the old block is freed only after): 0 when it fits already.
  [[nodiscard]] std::size_t growth(std::size_t bytes) const { return bytes > m_bytes ? rounded(bytes) : 0; }

 private:
  static constexpr std::size_t kAlign = 4096;
  static std::size_t rounded(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
  std::unique_ptr<std::byte, FreeDeleter> m_data;
  std::size_t m_bytes = 0;
};

class HostTimer final : public Timer {
 public:
  void start() override { m_start = std::chrono::steady_clock::now(); }
  double stop() override { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count(); }
  [[nodiscard]] std::string clock() const override { return "host steady_clock"; }

 private:
  std::chrono::steady_clock::time_point m_start;
};

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::Int8:
      return MPI_INT8_T;
    case DType::Uint8:
      return MPI_UINT8_T;
    case DType::Int32:
      return MPI_INT32_T;
    case DType::Uint32:
      return MPI_UINT32_T;
    case DType::Int64:
      return MPI_INT64_T;
    case DType::Uint64:
      return MPI_UINT64_T;
    case DType::Float32:
      return MPI_FLOAT;
    case DType::Float64:
      return MPI_DOUBLE;
    case DType::Float16:
    case DType::Bfloat16:
    case DType::Float8e4m3:
    case DType::Float8e5m2:
      break;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return MPI_SUM;
    case ReduceOp::Prod:
      return MPI_PROD;
    case ReduceOp::Max:
      return MPI_MAX;
    case ReduceOp::Min:
      return MPI_MIN;
    case ReduceOp::Avg:
      break;
  }
  return MPI_OP_NULL;
}

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(MpiGroup& group) : m_comm(group.comm()), m_rank(group.rank()), m_size(group.size()) {}

  [[nodiscard]] std::string name() const override { return "mpi"; }

  [[nodiscard]] std::map<std::string, std::string> versions() const override {
    int major = 0;
    int minor = 0;
    MPI_Get_version(&major, &minor);
    return {{"mpi", mpi_library_version()}, {"mpi_standard", fmt::format("{}.{}", major, minor)}};
  }

  [[nodiscard]] std::string device_bus_id() const override { return {}; }

  [[nodiscard]] Support supports(const CaseSpec& spec) const override {
    const auto& coll = info(spec.collective);
    if (is_rdma(spec.collective)) {
      return {false, fmt::format("{} runs on the verbs backend only", coll.name)};
    }
    if (is_copy(spec.collective)) {
      return {false, "GPU copies are copy_bench's"};
    }
    if (mpi_type(spec.dtype) == MPI_DATATYPE_NULL) {
      return {false, fmt::format("MPI has no {} type; use --backend nccl or -d float32", name_of(spec.dtype))};
    }
    if (coll.has_reduce_op && mpi_op(spec.op) == MPI_OP_NULL) {
      return {false, "MPI has no average reduction; use -o sum"};
    }
    if (spec.collective == Collective::Broadcast && !spec.in_place) {
      return {false, "MPI_Bcast has no out-of-place form (it always works in place)"};
    }
    if (Support generic = generic_support(spec); !generic.supported) {
      return generic;
    }
    if (spec.collective == Collective::AllToAllv && spec.in_place) {
      return {false, "no in-place alltoallv (nccl-tests has none either)"};
    }
    const std::uint64_t most = most_elements(spec, m_size);
    if (most > static_cast<std::uint64_t>(INT_MAX)) {
      return {false, "count exceeds MPI's int count limit"};
    }
    return {};
  }

  [[nodiscard]] MemoryNeed memory_need(const CaseSpec& spec) const override {
    const auto& coll = info(spec.collective);
    const std::size_t elem = size_of(spec.dtype);
    const std::uint64_t send = send_elements(spec, m_size, m_rank) * elem;
    const std::uint64_t recv = recv_elements(spec, m_size, m_rank) * elem;
    MemoryNeed need;
    need.host_bytes = m_recv.growth(std::max(send, recv)) + (spec.in_place ? 0 : m_send.growth(send));
    if (coll.has_reduce_op) {
      need.host_bytes += std::max(send, recv);  // the library's scratch for the reduction (Open MPI allocates one)
    }
    return need;
  }

  void prepare(const CaseSpec& spec) override {
    m_spec = spec;
    m_type = mpi_type(spec.dtype);
    const std::size_t elem = size_of(spec.dtype);
    m_send_elems = send_elements(spec, m_size, m_rank);
    m_recv_elems = recv_elements(spec, m_size, m_rank);
    m_count = static_cast<int>(spec.count);
    if (spec.collective == Collective::AllToAllv) {
      plan_alltoallv();
    }
    m_recv.ensure(std::max(m_send_elems, m_recv_elems) * elem);  // in place, one buffer holds either
    if (!spec.in_place) {
      m_send.ensure(m_send_elems * elem);
    }
  }

  void fill_pattern() override {
    std::byte* input = m_spec.in_place ? m_recv.data() : m_send.data();
    const bool own_block = m_spec.collective == Collective::AllGather || m_spec.collective == Collective::Gather;
    if (m_spec.in_place && own_block) {
      input += own_block_bytes();  // in place, a rank's input is its block of the gathered buffer
    }
    fill_input(m_spec, m_size, m_rank, input);
  }

  void enqueue() override;
  void wait() override {}
  std::uint64_t count_wrong() override {
    // In place, a scattered block lands where it lies in the root's buffer (nccl-tests' layout).
    const bool scattered_in_place = m_spec.in_place && m_spec.collective == Collective::Scatter;
    return ccbench::count_wrong(m_spec, m_size, m_rank, m_recv.data() + (scattered_in_place ? own_block_bytes() : 0));
  }
  Timer& timer() override { return m_timer; }

 private:
  static std::string_view name_of(DType t) { return ccbench::name(t); }
  [[nodiscard]] const void* send_or_in_place() const {
    return m_spec.in_place ? MPI_IN_PLACE : static_cast<const void*>(m_send.data());
  }
  [[nodiscard]] std::size_t own_block_bytes() const {
    return static_cast<std::size_t>(m_rank) * m_spec.count * size_of(m_spec.dtype);
  }
  void gather();
  void scatter();
  void plan_alltoallv();

  // alltoallv: MPI_Alltoallv's counts and displacements (elements), from the case's traffic plan
  std::vector<int> m_send_counts;
  std::vector<int> m_send_displs;
  std::vector<int> m_recv_counts;
  std::vector<int> m_recv_displs;

  MPI_Comm m_comm;
  int m_rank;
  int m_size;
  CaseSpec m_spec;
  MPI_Datatype m_type = MPI_DATATYPE_NULL;
  int m_count = 0;
  std::uint64_t m_send_elems = 0;
  std::uint64_t m_recv_elems = 0;
  HostBuffer m_send;
  HostBuffer m_recv;
  HostTimer m_timer;
};

void MpiBackend::enqueue() {
  void* recv = m_recv.data();
  const int next = (m_rank + 1) % m_size;
  const int prev = (m_rank + m_size - 1) % m_size;
  switch (m_spec.collective) {
    case Collective::AllReduce:
      mpi_check(MPI_Allreduce(send_or_in_place(), recv, m_count, m_type, mpi_op(m_spec.op), m_comm), "MPI_Allreduce");
      return;
    case Collective::AllGather:
      mpi_check(m_spec.in_place ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, m_count, m_type, m_comm)
                                : MPI_Allgather(m_send.data(), m_count, m_type, recv, m_count, m_type, m_comm),
                "MPI_Allgather");
      return;
    case Collective::ReduceScatter:
      mpi_check(MPI_Reduce_scatter_block(send_or_in_place(), recv, m_count, m_type, mpi_op(m_spec.op), m_comm),
                "MPI_Reduce_scatter_block");
      return;
    case Collective::AllToAll:
      mpi_check(m_spec.in_place ? MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, m_count, m_type, m_comm)
                                : MPI_Alltoall(m_send.data(), m_count, m_type, recv, m_count, m_type, m_comm),
                "MPI_Alltoall");
      return;
    case Collective::AllToAllv:
      mpi_check(MPI_Alltoallv(m_send.data(), m_send_counts.data(), m_send_displs.data(), m_type, recv,
                              m_recv_counts.data(), m_recv_displs.data(), m_type, m_comm),
                "MPI_Alltoallv");
      return;
    case Collective::Broadcast:
      mpi_check(MPI_Bcast(recv, m_count, m_type, m_spec.root, m_comm), "MPI_Bcast");
      return;
    case Collective::Reduce: {
      // In place, the root passes MPI_IN_PLACE; the other ranks send from the one buffer.
      const bool root = m_rank == m_spec.root;
      const void* send = m_spec.in_place ? (root ? MPI_IN_PLACE : recv) : m_send.data();
      mpi_check(MPI_Reduce(send, recv, m_count, m_type, mpi_op(m_spec.op), m_spec.root, m_comm), "MPI_Reduce");
      return;
    }
    case Collective::Gather:
      gather();
      return;
    case Collective::Scatter:
      scatter();
      return;
    case Collective::SendRecv:
      mpi_check(m_spec.in_place
                    ? MPI_Sendrecv_replace(recv, m_count, m_type, next, 0, prev, 0, m_comm, MPI_STATUS_IGNORE)
                    : MPI_Sendrecv(m_send.data(), m_count, m_type, next, 0, recv, m_count, m_type, prev, 0, m_comm,
                                   MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
      return;
    case Collective::IbWriteBw:
    case Collective::IbWriteLat:
    case Collective::Copy:
      break;  // supports() refuses them: the verbs backend's, copy_bench's
  }
}

// Segments in peer order, as nccl-tests sends them: this rank's for peer j at send_offset(rank, j) of its input,
// the one from peer i at recv_offset(rank, i) of its output. supports() checked every total fits an int.
void MpiBackend::plan_alltoallv() {
  const TrafficPlan plan = plan_of(m_spec, m_size);
  const auto n = static_cast<std::size_t>(m_size);
  m_send_counts.assign(n, 0);
  m_send_displs.assign(n, 0);
  m_recv_counts.assign(n, 0);
  m_recv_displs.assign(n, 0);
  for (int peer = 0; peer < m_size; ++peer) {
    const auto p = static_cast<std::size_t>(peer);
    m_send_counts[p] = static_cast<int>(plan.count(m_rank, peer));
    m_send_displs[p] = static_cast<int>(plan.send_offset(m_rank, peer));
    m_recv_counts[p] = static_cast<int>(plan.count(peer, m_rank));
    m_recv_displs[p] = static_cast<int>(plan.recv_offset(m_rank, peer));
  }
}

// In place (nccl-tests' layout): every rank's input is its block of the one buffer; the root's already lies
// where it belongs (MPI_IN_PLACE), the others send it from there.
void MpiBackend::gather() {
  std::byte* recv = m_recv.data();
  const bool root = m_rank == m_spec.root;
  const void* send = m_spec.in_place ? (root ? MPI_IN_PLACE : recv + own_block_bytes()) : m_send.data();
  mpi_check(MPI_Gather(send, m_count, m_type, root ? recv : nullptr, m_count, m_type, m_spec.root, m_comm),
            "MPI_Gather");
}

// In place: the root scatters from the one buffer, keeping its own block where it lies (MPI_IN_PLACE); the
// others receive theirs at its place in that buffer.
void MpiBackend::scatter() {
  std::byte* recv = m_recv.data();
  const bool root = m_rank == m_spec.root;
  const void* send = root ? (m_spec.in_place ? recv : m_send.data()) : nullptr;
  void* into = m_spec.in_place ? (root ? MPI_IN_PLACE : static_cast<void*>(recv + own_block_bytes())) : recv;
  mpi_check(MPI_Scatter(send, m_count, m_type, into, m_count, m_type, m_spec.root, m_comm), "MPI_Scatter");
}

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(MpiGroup& group) { return std::make_unique<MpiBackend>(group); }

}  // namespace ccbench
