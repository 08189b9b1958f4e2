#include "event_timer.hpp"

#include "ccbench/cuda/error.hpp"
#include "ccbench/errors.hpp"

namespace ccbench::nccl_detail {

EventTimer::EventTimer(Communicator& comm, cudaStream_t stream, const std::string& what)
    : m_comm(comm), m_stream(stream), m_what(what) {}

void EventTimer::start() {
  cuda::check(cudaEventRecord(m_start.get(), m_stream), "cudaEventRecord (start)");
  m_running = true;
}

double EventTimer::stop() {
  if (!m_running) {
    throw BackendError("CUDA event timer stopped without being started");
  }
  m_running = false;
  cuda::check(cudaEventRecord(m_stop.get(), m_stream), "cudaEventRecord (stop)");
  const cudaEvent_t stop_event = m_stop.get();
  m_comm.wait_until([stop_event] { return cuda::event_done(stop_event); }, m_what);
  float ms = 0.0F;
  cuda::check(cudaEventElapsedTime(&ms, m_start.get(), m_stop.get()), "cudaEventElapsedTime");
  return static_cast<double>(ms) / 1e3;
}

}  // namespace ccbench::nccl_detail
