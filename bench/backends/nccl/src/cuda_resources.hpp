#pragma once
// RAII owners of CUDA objects: device memory, a stream, an event. Destructors ignore errors
// (a sticky CUDA error makes every later call fail; there is nothing left to do about it).
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

#include "cuda_check.hpp"

namespace ccbench::nccl_detail {

struct CudaFree {
  void operator()(std::byte* ptr) const noexcept { (void)cudaFree(ptr); }
};
struct CudaStreamDestroy {
  void operator()(cudaStream_t stream) const noexcept { (void)cudaStreamDestroy(stream); }
};
struct CudaEventDestroy {
  void operator()(cudaEvent_t event) const noexcept { (void)cudaEventDestroy(event); }
};

/// Device memory that only grows: reserve() keeps the allocation when it is big enough.
class DeviceBuffer {
 public:
  /// Makes the buffer hold at least `bytes`. Growing frees the old allocation first (its contents
  /// are lost), so the caller must have waited for every op that uses it.
  void reserve(std::size_t bytes) {
    if (bytes <= m_bytes) {
      return;
    }
    m_data.reset();
    m_bytes = 0;
    void* ptr = nullptr;
    cuda_check(cudaMalloc(&ptr, bytes), "cudaMalloc of " + std::to_string(bytes) + " bytes");
    m_data.reset(static_cast<std::byte*>(ptr));
    m_bytes = bytes;
  }
  [[nodiscard]] std::byte* data() const { return m_data.get(); }
  [[nodiscard]] std::size_t bytes() const { return m_bytes; }

 private:
  std::unique_ptr<std::byte, CudaFree> m_data;
  std::size_t m_bytes = 0;
};

/// A stream that does not synchronise with the legacy default stream (as nccl-tests uses).
class Stream {
 public:
  Stream() {
    cudaStream_t stream = nullptr;
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    m_stream.reset(stream);
  }
  [[nodiscard]] cudaStream_t get() const { return m_stream.get(); }

 private:
  std::unique_ptr<std::remove_pointer_t<cudaStream_t>, CudaStreamDestroy> m_stream;
};

/// An event with timing enabled; completion is polled, never waited on with a blocking sync.
class Event {
 public:
  Event() {
    cudaEvent_t event = nullptr;
    cuda_check(cudaEventCreateWithFlags(&event, cudaEventDefault), "cudaEventCreateWithFlags");
    m_event.reset(event);
  }
  [[nodiscard]] cudaEvent_t get() const { return m_event.get(); }

 private:
  std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, CudaEventDestroy> m_event;
};

/// Whether everything queued on `stream` is done; throws on a CUDA error.
inline bool stream_done(cudaStream_t stream) {
  const cudaError_t result = cudaStreamQuery(stream);
  if (result == cudaErrorNotReady) {
    return false;
  }
  cuda_check(result, "cudaStreamQuery");
  return true;
}

/// Whether `event` has completed; throws on a CUDA error.
inline bool event_done(cudaEvent_t event) {
  const cudaError_t result = cudaEventQuery(event);
  if (result == cudaErrorNotReady) {
    return false;
  }
  cuda_check(result, "cudaEventQuery");
  return true;
}

}  // namespace ccbench::nccl_detail
