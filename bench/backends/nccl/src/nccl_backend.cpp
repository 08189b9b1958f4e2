#include "ccbench/nccl/nccl_backend.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/cuda/device.hpp"
#include "ccbench/cuda/error.hpp"
#include "ccbench/cuda/resources.hpp"
#include "ccbench/environment.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/gpu_probe.hpp"
#include "ccbench/memory_admission.hpp"
#include "ccbench/pattern.hpp"
#include "ccbench/types.hpp"
#include "communicator.hpp"
#include "device_facts.hpp"
#include "device_select.hpp"
#include "event_timer.hpp"
#include "nccl_api.hpp"
#include "nccl_backend_impl.hpp"
#include "nccl_check.hpp"
#include "nccl_compat.hpp"
#include "nccl_memory.hpp"
#include "nccl_ops.hpp"
#if CCBENCH_NCCL_KERNELS
#include "ccbench/kernels.hpp"
#endif

namespace ccbench {
namespace {

using nccl_detail::NcclBackend;
using nccl_detail::select_device_everywhere;
using nccl_detail::Setup;

/// Rank 0's ncclGetUniqueId, broadcast with a leading success flag so that a failure on rank 0
/// ends every rank instead of leaving them to wait.
ncclUniqueId share_unique_id(Group& group) {
  std::array<std::byte, 1 + sizeof(ncclUniqueId)> message{};
  ncclUniqueId id{};
  std::string failure;
  if (group.rank() == 0) {
    const ncclResult_t result = nccl_detail::nccl().GetUniqueId(&id);
    if (result == ncclSuccess) {
      message[0] = std::byte{1};
      std::memcpy(message.data() + 1, &id, sizeof(id));
    } else {
      failure = nccl_detail::nccl_error_message(result, nullptr, "ncclGetUniqueId on rank 0");
    }
  }
  group.broadcast(message, 0);
  if (message[0] != std::byte{1}) {
    throw BackendError(failure.empty() ? "ncclGetUniqueId failed on rank 0; see rank 0's error" : failure);
  }
  std::memcpy(&id, message.data() + 1, sizeof(id));
  return id;
}

/// Names a case in errors: "all_reduce (4194304 B = 1048576 x float32, sum, in place)".
std::string describe(const CaseSpec& spec, int nranks) {
  const CollectiveInfo& coll = info(spec.collective);
  std::string text = std::string(coll.name) + " (" + std::to_string(case_bytes(spec, nranks)) +
                     " B = " + std::to_string(spec.count) + " x " + std::string(name(spec.dtype));
  if (coll.has_reduce_op) {
    text += ", " + std::string(name(spec.op));
  }
  if (coll.has_root) {
    text += ", root " + std::to_string(spec.root);
  }
  if (spec.in_place) {
    text += ", in place";
  }
  return text + ")";
}

Support unsupported(std::string reason) { return Support{false, std::move(reason)}; }

}  // namespace

namespace nccl_detail {

NcclBackend::NcclBackend(const Setup& setup)
    : m_versions(collect_versions(setup.device, setup.nccl_version, setup.blocking)),
      m_bus_id(cuda::topo_bus_id(setup.device)),
      m_native_alltoall(nccl_detail::use_native_alltoall(setup.nccl_version)),
      m_group_nccl_version(setup.group_nccl_version),
      m_group_sm_major(setup.group_sm_major),
      m_check(setup.check),
      m_group(*setup.group),
      m_registration(setup.registration),
      m_send_alloc(setup.registration, "send buffer"),
      m_recv_alloc(setup.registration, "receive buffer"),
      m_comm(setup.id, setup.nranks, setup.rank, setup.timeout_s, setup.blocking),
      m_timer(m_comm, m_stream.get(), m_what) {
  // ncclCommAbort waits for the references of a captured graph: an error under --timing graph would
  // otherwise become a timeout and lose NCCL's message.
  m_comm.release_before_abort([this] { release_graph(); });
  m_versions["cuda_device"] = setup.device_choice;
  // all_to_all's implementation: a time is only comparable with another made the same way
  m_versions["nccl_alltoall"] =
      m_native_alltoall ? "ncclAlltoAll (native, NCCL 2.28 and later)"
                        : "grouped ncclSend/ncclRecv (ncclAlltoAll needs NCCL 2.28 built against and loaded)";
}

Support NcclBackend::supports(const CaseSpec& spec) const {
  const CollectiveInfo& coll = info(spec.collective);
  if (is_rdma(spec.collective)) {
    return unsupported(std::string(coll.name) + " runs on the verbs backend only");
  }
  if (is_copy(spec.collective)) {
    return unsupported("GPU copies are copy_bench's");
  }
  if (Support generic = generic_support(spec); !generic.supported) {
    return generic;
  }
  if (!nccl_detail::to_nccl(spec.dtype)) {
    return unsupported("NCCL " + m_versions.at("nccl") + " as built has no " + std::string(ccbench::name(spec.dtype)) +
                       " type");
  }
  if (is_fp8(spec.dtype) && !nccl_detail::has_fp8(m_group_nccl_version)) {
    return unsupported("the NCCL library loaded (" + nccl_detail::version_string(m_group_nccl_version) +
                       " on some rank) has no " + std::string(ccbench::name(spec.dtype)) +
                       " type (NCCL 2.24 and newer)");
  }
  if (is_fp8(spec.dtype) && coll.has_reduce_op && !nccl_detail::fp8_reduces_on(m_group_sm_major)) {
    return unsupported("NCCL reduces " + std::string(ccbench::name(spec.dtype)) +
                       " on compute capability 9.0 and newer only; a GPU of this group is " +
                       std::to_string(m_group_sm_major) + ".x");
  }
  if (const auto inexact = nccl_avg_unverifiable(spec, m_comm.size()); m_check && inexact) {
    return unsupported(*inexact);
  }
  if (coll.has_reduce_op && !nccl_detail::to_nccl(spec.op)) {
    return unsupported("NCCL has no " + std::string(ccbench::name(spec.op)) + " reduction");
  }
  if (spec.in_place && (spec.collective == Collective::AllToAll || spec.collective == Collective::AllToAllv ||
                        spec.collective == Collective::SendRecv)) {
    return unsupported("NCCL has no in-place " + std::string(coll.name) + " (send and receive buffers must differ)");
  }
  if (coll.has_root && (spec.root < 0 || spec.root >= m_comm.size())) {
    return unsupported("root " + std::to_string(spec.root) + " is not a rank of this run (0.." +
                       std::to_string(m_comm.size() - 1) + ")");
  }
  return Support{};
}

OpArgs NcclBackend::op_args(const CaseSpec& spec) const {
  OpArgs args;
  args.collective = spec.collective;
  args.send = m_layout.send;
  args.recv = m_layout.recv;
  args.count = spec.count;
  args.type_size = size_of(spec.dtype);
  args.type = nccl_detail::to_nccl(spec.dtype).value_or(ncclFloat32);  // supports() checked it
  args.op = nccl_detail::to_nccl(spec.op).value_or(ncclSum);
  args.root = spec.root;
  args.rank = m_comm.rank();
  args.nranks = m_comm.size();
  args.native_alltoall = m_native_alltoall;
  args.plan = m_plan ? &*m_plan : nullptr;
  args.stream = m_stream.get();
  return args;
}

// Without -R a growing buffer frees its old allocation first: it needs what it grows by. Under -R it needs the
// planned allocation whole (nothing registered is freed before the communicator ends).
MemoryNeed NcclBackend::memory_need(const CaseSpec& spec) const {
  const nccl_detail::Footprint need = nccl_detail::footprint(spec, m_comm.size());
  MemoryNeed out;
  out.device_bytes = m_send_alloc.growth(need.send_bytes) + m_recv_alloc.growth(need.recv_bytes);
  if (out.device_bytes > 0) {
    std::size_t free = 0;
    std::size_t total = 0;
    cuda::check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    out.device_free_bytes = free;
  }
  return out;
}

// Under -R the buffers are allocated and registered once, for the largest case this backend will run (issue
// 38, section 1: nothing registered is freed while the communicator lives, see nccl_memory.hpp).
void NcclBackend::expect(std::span<const CaseSpec> cases) {
  std::vector<CaseSpec> runnable;
  std::copy_if(cases.begin(), cases.end(), std::back_inserter(runnable),
               [this](const CaseSpec& spec) { return supports(spec).supported; });
  const nccl_detail::Footprint largest = nccl_detail::largest_footprint(runnable, m_comm.size());
  m_send_alloc.plan(largest.send_bytes);
  m_recv_alloc.plan(largest.recv_bytes);
  if (m_registration == Registration::None) {
    return;
  }
  // Allocated and registered now where it fits every rank (agreed), so that the table header can say what NCCL
  // granted; else as the cases grow, each skipped where it does not fit.
  MemoryNeed need;
  need.device_bytes = m_send_alloc.growth(largest.send_bytes) + m_recv_alloc.growth(largest.recv_bytes);
  if (need.device_bytes > 0) {
    std::size_t total = 0;
    cuda::check(cudaMemGetInfo(&need.device_free_bytes, &total), "cudaMemGetInfo");
  }
  if (memory_refusal(m_group, need, 1)) {
    m_versions["nccl_registration"] = fmt::format(
        "-R {} asked; the sweep's largest case does not fit one allocation: registered as the cases "
        "grow, each result's registration is what NCCL granted",
        static_cast<int>(m_registration));
    return;
  }
  const bool send = m_send_alloc.reserve(largest.send_bytes, m_comm);
  if (m_recv_alloc.reserve(largest.recv_bytes, m_comm) || send) {
    m_registered = nccl_detail::agree_registered(m_group, m_send_alloc, m_recv_alloc);
  }
  m_versions["nccl_registration"] = nccl_detail::describe_registration(m_registration, m_registered);
}

std::string NcclBackend::registration() const {
  const Registration granted = m_prepared
                                   ? nccl_detail::obtained_registration(m_registration, m_spec.in_place, m_registered)
                                   : Registration::None;
  return granted == Registration::None ? std::string{} : std::string(ccbench::name(granted));
}

void NcclBackend::prepare(const CaseSpec& spec) {
  const Support support = supports(spec);
  if (!support.supported) {
    throw BackendError("the NCCL backend cannot run " + describe(spec, m_comm.size()) + ": " + support.reason);
  }
  m_prepared = false;
  wait();        // the previous case's ops may still use buffers that are about to grow
  drop_graph();  // it holds the previous case's buffers and count
  const nccl_detail::Footprint need = nccl_detail::footprint(spec, m_comm.size());
  const bool send_grew = m_send_alloc.reserve(need.send_bytes, m_comm);
  const bool recv_grew = m_recv_alloc.reserve(need.recv_bytes, m_comm);
  if (m_registration != Registration::None && (send_grew || recv_grew)) {  // alike on every rank (footprint())
    m_registered = nccl_detail::agree_registered(m_group, m_send_alloc, m_recv_alloc);
  }
  m_spec = spec;
  m_plan.reset();
  if (info(spec.collective).send == Span::Plan) {
    m_plan.emplace(plan_of(spec, m_comm.size()));
  }
  m_layout = nccl_detail::layout(spec, m_comm.size(), m_comm.rank(), m_send_alloc.data(), m_recv_alloc.data());
  m_args = op_args(spec);
  m_what = describe(spec, m_comm.size());
  m_prepared = true;
}

void NcclBackend::require_prepared() const {
  if (!m_prepared) {
    throw BackendError("the NCCL backend has no current case; prepare() must succeed first");
  }
}

}  // namespace nccl_detail

CudaAnswer cuda_answer() noexcept { return cuda::ask(); }

std::string nccl_unavailable() { return nccl_detail::nccl_load_error(); }

std::unique_ptr<Backend> make_nccl_backend(Group& group, int local_rank, int local_size, double timeout_s, bool check,
                                           Registration registration, std::string_view algo) {
  if (!algo.empty() && ::setenv("NCCL_ALGO", std::string{algo}.c_str(), 1) != 0) {
    throw std::runtime_error("setenv(NCCL_ALGO) failed");
  }
  Setup setup;
  setup.nccl_version = nccl_detail::loaded_version();
  const DeviceChoice chosen = select_device_everywhere(group, local_rank, local_size, setup.nccl_version);
  setup.device = chosen.device;
  setup.device_choice = chosen.how;
  setup.group_nccl_version = setup.nccl_version;
  setup.group_sm_major = cuda::compute_capability_major(setup.device);
  for (const std::string& rank :
       group.all_gather(std::to_string(setup.nccl_version) + " " + std::to_string(setup.group_sm_major))) {
    const auto space = rank.find(' ');
    setup.group_nccl_version = std::min(setup.group_nccl_version, std::stoi(rank.substr(0, space)));
    setup.group_sm_major = std::min(setup.group_sm_major, std::stoi(rank.substr(space + 1)));
  }
  // -R: refused alike on every rank (the oldest library loaded decides), before a communicator is made
  if (auto why = registration_refusal(registration, NCCL_VERSION_CODE, setup.group_nccl_version); !why.empty()) {
    throw UsageError(why);
  }
  setup.registration = registration;
  setup.group = &group;
  setup.id = share_unique_id(group);
  setup.rank = group.rank();
  setup.nranks = group.size();
  setup.timeout_s = timeout_s;
  setup.check = check;
  const char* blocking = std::getenv("CCBENCH_NCCL_BLOCKING");
  setup.blocking = blocking == nullptr || std::string_view(blocking) != "0";
  return std::make_unique<NcclBackend>(setup);
}

}  // namespace ccbench
