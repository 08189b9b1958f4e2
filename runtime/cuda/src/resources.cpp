#include "ccbench/cuda/resources.hpp"

#include <string>

namespace ccbench::cuda {

namespace {

/// A query's answer: cudaErrorNotReady is "not yet", any other error throws.
bool done(cudaError_t result, std::string_view query) {
  if (result == cudaErrorNotReady) {
    return false;
  }
  check(result, query);
  return true;
}

}  // namespace

bool stream_done(cudaStream_t stream) { return done(cudaStreamQuery(stream), "cudaStreamQuery"); }

bool event_done(cudaEvent_t event) { return done(cudaEventQuery(event), "cudaEventQuery"); }

DeviceBuffer::DeviceBuffer(std::size_t bytes, std::string_view what) { allocate(bytes, what); }

void DeviceBuffer::reserve(std::size_t bytes) {
  if (bytes <= m_bytes) {
    return;
  }
  m_data.reset();
  m_bytes = 0;
  allocate(bytes, "cudaMalloc of " + std::to_string(bytes) + " bytes");
}

void DeviceBuffer::allocate(std::size_t bytes, std::string_view what) {
  void* ptr = nullptr;
  check(cudaMalloc(&ptr, bytes), what);
  m_data.reset(static_cast<std::byte*>(ptr));
  m_bytes = bytes;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes, std::string_view what) {
  void* ptr = nullptr;
  check(cudaMallocHost(&ptr, bytes), what);
  m_data.reset(static_cast<std::byte*>(ptr));
}

}  // namespace ccbench::cuda
