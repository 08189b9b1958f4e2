#pragma once
// Times what was enqueued on one stream with a pair of CUDA events. stop() polls the stop event
// through the communicator, so a hung op ends in TimeoutError instead of a hang.
#include <cuda_runtime.h>

#include <string>

#include "ccbench/backend.hpp"
#include "ccbench/cuda/resources.hpp"
#include "communicator.hpp"

namespace ccbench::nccl_detail {

class EventTimer final : public Timer {
 public:
  /// `what` names the timed op in errors; it is read at stop(), so it may change between samples.
  EventTimer(Communicator& comm, cudaStream_t stream, const std::string& what);

  void start() override;
  double stop() override;
  [[nodiscard]] std::string clock() const override { return "CUDA events"; }

 private:
  Communicator& m_comm;
  cudaStream_t m_stream;
  const std::string& m_what;
  cuda::Event m_start;
  cuda::Event m_stop;
  bool m_running = false;
};

}  // namespace ccbench::nccl_detail
