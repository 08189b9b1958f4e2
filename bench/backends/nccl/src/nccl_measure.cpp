// The NCCL backend's measured part: what the runner times and checks on the current case (the input pattern, the
// ops, their CUDA graph, waiting for the stream, wrong elements). Set-up and each case's preparation: nccl_backend.cpp.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/cuda/error.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/pattern.hpp"
#include "nccl_backend_impl.hpp"
#if CCBENCH_NCCL_KERNELS
#include "ccbench/kernels.hpp"
#endif

namespace ccbench::nccl_detail {

// The output is poisoned first (0xff bytes), so a result that was never written cannot pass as
// correct; in place, the input copy then overwrites its own part of it.
void NcclBackend::fill_pattern() {
  require_prepared();
  wait();
  const cudaStream_t stream = m_stream.get();
  if (m_layout.recv_bytes > 0) {
    cuda::check(cudaMemsetAsync(m_layout.recv, 0xff, m_layout.recv_bytes, stream), "cudaMemsetAsync");
  }
#if CCBENCH_NCCL_KERNELS
  cuda::check(kernels::fill_input(pattern_params(m_spec, m_comm.size(), m_comm.rank()), m_spec.dtype, m_layout.send,
                                  m_layout.send_bytes / size_of(m_spec.dtype), stream),
              "the pattern fill kernel");
  wait();
#else
  std::vector<std::byte> input(m_layout.send_bytes);
  fill_input(m_spec, m_comm.size(), m_comm.rank(), input.data());
  if (!input.empty()) {
    cuda::check(cudaMemcpyAsync(m_layout.send, input.data(), input.size(), cudaMemcpyHostToDevice, stream),
                "cudaMemcpyAsync (input pattern to device)");
  }
  wait();  // `input` must outlive the copy
#endif
}

void NcclBackend::enqueue() {
  require_prepared();
  m_args.comm = m_comm.get();
  m_comm.complete(nccl_detail::launch(m_args), m_what);
}

void NcclBackend::drop_graph() noexcept {
  const std::lock_guard lock(m_graph_mutex);
  destroy_graph();
}

// Before an abort, on the rank's thread (after an error, a timeout, or the watchdog's request): CUDA frees an
// executable graph whose work is still in flight when that work completes, or when the abort ends its kernels.
void NcclBackend::release_graph() noexcept {
  const std::lock_guard lock(m_graph_mutex);
  destroy_graph();
}

void NcclBackend::destroy_graph() noexcept {
  m_graph_exec.reset();
  m_graph.reset();
}

// Captures `ops` NCCL calls on the backend's stream (NCCL supports stream capture since 2.9); every rank
// captures the same count (the runner's calibration is agreed across ranks), so launches stay matched.
bool NcclBackend::capture_graph(std::uint64_t ops) {
  require_prepared();
  wait();
  const std::lock_guard lock(m_graph_mutex);
  destroy_graph();
  const cudaStream_t stream = m_stream.get();
  m_args.comm = m_comm.get();
  cuda::check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  try {
    for (std::uint64_t i = 0; i < ops; ++i) {
      m_comm.complete(nccl_detail::launch(m_args), m_what + " (captured into a CUDA graph)");
    }
  } catch (...) {
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(stream, &partial);
    const cuda::Graph discarded(partial);  // what was captured before the error
    throw;
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  m_graph.reset(graph);
  cuda::check(ended, "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, m_graph.get(), 0);
  m_graph_exec.reset(exec);
  cuda::check(instantiated, "cudaGraphInstantiate");
  return true;
}

void NcclBackend::launch_graph() {
  const std::lock_guard lock(m_graph_mutex);
  if (!m_graph_exec) {
    throw BackendError("no CUDA graph captured for " + m_what);
  }
  cuda::check(cudaGraphLaunch(m_graph_exec.get(), m_stream.get()), "cudaGraphLaunch (" + m_what + ")");
}

void NcclBackend::wait() {
  const cudaStream_t stream = m_stream.get();
  m_comm.wait_until([stream] { return cuda::stream_done(stream); }, m_what);
}

std::uint64_t NcclBackend::count_wrong() {
  require_prepared();
  wait();
  if (!has_checked_output(m_spec, m_comm.rank())) {
    return 0;
  }
#if CCBENCH_NCCL_KERNELS
  if (info(m_spec.collective).recv != Span::Plan) {  // alltoallv's segments are checked on the host (pattern.cpp)
    return count_wrong_on_device();
  }
#endif
  std::vector<std::byte> output(m_layout.recv_bytes);
  if (!output.empty()) {
    cuda::check(cudaMemcpyAsync(output.data(), m_layout.recv, output.size(), cudaMemcpyDeviceToHost, m_stream.get()),
                "cudaMemcpyAsync (output to host)");
    wait();
  }
  return ccbench::count_wrong(m_spec, m_comm.size(), m_comm.rank(), output.data());
}

#if CCBENCH_NCCL_KERNELS
std::uint64_t NcclBackend::count_wrong_on_device() {
  m_wrong.reserve(sizeof(unsigned long long));
  auto* count = reinterpret_cast<unsigned long long*>(m_wrong.data());
  cuda::check(kernels::count_wrong(pattern_params(m_spec, m_comm.size(), m_comm.rank()), m_spec.dtype, m_layout.recv,
                                   m_layout.recv_bytes / size_of(m_spec.dtype), count, m_stream.get()),
              "the pattern check kernel");
  unsigned long long wrong = 0;
  cuda::check(cudaMemcpyAsync(&wrong, count, sizeof(wrong), cudaMemcpyDeviceToHost, m_stream.get()),
              "cudaMemcpyAsync (wrong-element count to host)");
  wait();
  return wrong;
}
#endif

}  // namespace ccbench::nccl_detail
