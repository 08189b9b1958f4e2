#pragma once
// The verbs backend's device layer: RAII owners of the libibverbs objects, and what a device, its port
// and its GID table say (queried, not chosen: verbs_choice.hpp chooses). Private to the backend.
#include <infiniband/verbs.h>

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ccbench/verbs/verbs_choice.hpp"

namespace ccbench::verbs_detail {

/// Throws BackendError "CALL failed: strerror(err)".
[[noreturn]] void fail(std::string_view call, int err);

/// "::ffff:127.0.0.1", "fe80::..."
std::string gid_text(const ibv_gid& gid);

// RAII for the verbs objects; the backend destroys them in reverse order of creation (its member order).
struct DeviceList {
  ibv_device** list = nullptr;
  int count = 0;
  DeviceList() {  // in the body: a member initializer would reset count after the call set it
    list = ::ibv_get_device_list(&count);
    if (list == nullptr) {
      // No kernel support (no /sys/class/infiniband) reads as "no device", which is what it means.
      count = 0;
    }
  }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
  DeviceList(DeviceList&&) = delete;
  DeviceList& operator=(DeviceList&&) = delete;
  ~DeviceList() {
    if (list != nullptr) {
      ::ibv_free_device_list(list);
    }
  }
  [[nodiscard]] std::span<ibv_device*> devices() const { return {list, static_cast<std::size_t>(count)}; }
};

template <typename T, int (*Destroy)(T*)>
struct Owned {
  T* ptr = nullptr;
  Owned() = default;
  explicit Owned(T* p) : ptr(p) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Owned(Owned&& o) noexcept : ptr(std::exchange(o.ptr, nullptr)) {}
  Owned& operator=(Owned&& o) noexcept {
    std::swap(ptr, o.ptr);
    return *this;
  }
  ~Owned() {
    if (ptr != nullptr) {
      Destroy(ptr);
    }
  }
  [[nodiscard]] T* get() const { return ptr; }
};

using Context = Owned<ibv_context, ::ibv_close_device>;
using ProtectionDomain = Owned<ibv_pd, ::ibv_dealloc_pd>;
using MemoryRegion = Owned<ibv_mr, ::ibv_dereg_mr>;
using CompletionQueue = Owned<ibv_cq, ::ibv_destroy_cq>;
using QueuePair = Owned<ibv_qp, ::ibv_destroy_qp>;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }  // NOLINT(cppcoreguidelines-no-malloc)
};

// What the device tells about the port asked for (-i).
struct PortFacts {
  ibv_port_attr attr{};
  std::string link_layer;
};

/// The port `port` of `ctx`; throws on failure.
PortFacts query_port(ibv_context* ctx, int port);

/// What device `dev` says of port `port`, for the choice of a device.
verbs::DeviceView view_of(ibv_device* dev, int port);

/// The GID entries of `port` (every type), in index order.
std::vector<verbs::GidView> gid_table(ibv_context* ctx, int port, int table_size);

}  // namespace ccbench::verbs_detail
