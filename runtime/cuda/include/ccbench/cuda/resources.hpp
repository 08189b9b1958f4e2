#pragma once
// RAII owners of CUDA objects: streams, events, device and pinned host memory, graphs. Destructors ignore
// errors (a sticky CUDA error makes every later call fail; there is nothing left to do about it).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>

#include "ccbench/cuda/error.hpp"

namespace ccbench::cuda {
namespace detail {

/// A stream or an event; `Kind` says which: its handle type and how it is made and destroyed.
template <typename Kind>
class Handle {
 public:
  using Raw = typename Kind::Raw;

  /// On the current device, which is left as it is; an error names Kind's create call.
  Handle() { create(Kind::kCreate); }
  /// On `device`, made current to create the handle and again to destroy it (one process that drives several
  /// GPUs moves between them); `what` names the creation in an error.
  Handle(int device, std::string_view what) : m_handle(nullptr, Destroy{device}) {
    check(cudaSetDevice(device), "cudaSetDevice");
    create(what);
  }
  [[nodiscard]] Raw get() const { return m_handle.get(); }

 private:
  struct Destroy {
    std::optional<int> device;
    void operator()(Raw raw) const noexcept {
      if (device) {
        (void)cudaSetDevice(*device);
      }
      (void)Kind::destroy(raw);
    }
  };

  void create(std::string_view what) {
    Raw raw = nullptr;
    check(Kind::create(&raw), what);
    m_handle.reset(raw);
  }

  std::unique_ptr<std::remove_pointer_t<Raw>, Destroy> m_handle;
};

struct StreamKind {
  using Raw = cudaStream_t;
  static constexpr std::string_view kCreate = "cudaStreamCreateWithFlags";
  static cudaError_t create(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking); }
  static cudaError_t destroy(cudaStream_t stream) { return cudaStreamDestroy(stream); }
};

struct EventKind {
  using Raw = cudaEvent_t;
  static constexpr std::string_view kCreate = "cudaEventCreateWithFlags";
  static cudaError_t create(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }
  static cudaError_t destroy(cudaEvent_t event) { return cudaEventDestroy(event); }
};

struct FreeDevice {
  void operator()(std::byte* ptr) const noexcept { (void)cudaFree(ptr); }
};
struct FreeHost {
  void operator()(std::byte* ptr) const noexcept { (void)cudaFreeHost(ptr); }
};
struct DestroyGraph {
  void operator()(cudaGraph_t graph) const noexcept { (void)cudaGraphDestroy(graph); }
};
struct DestroyGraphExec {
  void operator()(cudaGraphExec_t exec) const noexcept { (void)cudaGraphExecDestroy(exec); }
};

}  // namespace detail

/// A stream that does not synchronise with the legacy default stream (as nccl-tests uses).
using Stream = detail::Handle<detail::StreamKind>;
/// An event with timing enabled; completion is polled (event_done) or waited for by the caller.
using Event = detail::Handle<detail::EventKind>;

/// Whether everything queued on `stream` is done; throws on a CUDA error.
bool stream_done(cudaStream_t stream);
/// Whether `event` has completed; throws on a CUDA error.
bool event_done(cudaEvent_t event);

/// Device memory of the device current when it was allocated; empty until then.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// `bytes` of it; `what` names the allocation in an error.
  DeviceBuffer(std::size_t bytes, std::string_view what);
  /// Makes the buffer hold at least `bytes`. Growing frees the old allocation first (its contents
  /// are lost), so the caller must have waited for every op that uses it.
  void reserve(std::size_t bytes);
  [[nodiscard]] std::byte* data() const { return m_data.get(); }
  [[nodiscard]] std::size_t bytes() const { return m_bytes; }

 private:
  void allocate(std::size_t bytes, std::string_view what);

  std::unique_ptr<std::byte, detail::FreeDevice> m_data;
  std::size_t m_bytes = 0;
};

/// Page-locked host memory (cudaMallocHost); empty until allocated.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  /// `bytes` of it; `what` names the allocation in an error.
  PinnedBuffer(std::size_t bytes, std::string_view what);
  [[nodiscard]] std::byte* data() const { return m_data.get(); }

 private:
  std::unique_ptr<std::byte, detail::FreeHost> m_data;
};

/// A CUDA graph (what a stream capture made) and the executable instantiated from it.
using Graph = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, detail::DestroyGraph>;
using GraphExec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, detail::DestroyGraphExec>;

}  // namespace ccbench::cuda
