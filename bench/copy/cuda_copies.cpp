#include "cuda_copies.hpp"

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "ccbench/config.hpp"
#include "ccbench/cuda/device.hpp"
#include "ccbench/cuda/error.hpp"
#include "ccbench/cuda/resources.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/gpu_probe.hpp"
#include "ccbench/kernels.hpp"
#include "ccbench/pattern.hpp"
#include "ccbench/statistics.hpp"
#include "ccbench/text.hpp"

namespace ccbench::copy {
namespace {

using cuda::check;

/// "0000:1b:00.0", or empty when CUDA cannot say.
std::string bus_id_of(int device) {
  try {
    return cuda::topo_bus_id(device);
  } catch (const BackendError&) {
    (void)cudaGetLastError();
    return {};
  }
}

// The pattern of copy_bench's buffers: byte i holds (i mod 97), as pattern_math has it for a copy.
CaseSpec pattern_case(std::size_t bytes) { return {Collective::Copy, DType::Uint8, ReduceOp::Sum, 0, false, bytes}; }

struct FreePageable {
  void operator()(void* ptr) const noexcept { std::free(ptr); }  // NOLINT(cppcoreguidelines-no-malloc)
};

/// Memory of one side of a copy: device memory on a GPU, or pinned or pageable host memory.
class Buffer {
 public:
  enum class Where { Device, Pinned, Pageable };
  Buffer(Where where, int device, std::size_t bytes) : m_where(where), m_device(device) {
    switch (where) {
      case Where::Device:
        check(cudaSetDevice(device), "cudaSetDevice");
        m_on_device = cuda::DeviceBuffer(bytes, fmt::format("cudaMalloc of {} bytes on GPU {}", bytes, device));
        m_ptr = m_on_device.data();
        break;
      case Where::Pinned:
        m_pinned = cuda::PinnedBuffer(bytes, fmt::format("cudaMallocHost of {} bytes", bytes));
        m_ptr = m_pinned.data();
        break;
      case Where::Pageable:
        // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): plain pageable memory on purpose
        m_pageable.reset(std::malloc(bytes));
        m_ptr = m_pageable.get();
        if (m_ptr == nullptr) {
          throw BackendError(fmt::format("malloc of {} bytes failed", bytes));
        }
        std::memset(m_ptr, 0, bytes);  // touched: the first copy does not fault pages in
        break;
    }
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&&) = delete;
  Buffer& operator=(Buffer&&) = delete;
  ~Buffer() {
    if (m_where == Where::Device) {
      (void)cudaSetDevice(m_device);  // freed on its own GPU, by the members below
    }
  }
  [[nodiscard]] void* get() const { return m_ptr; }
  [[nodiscard]] bool on_device() const { return m_where == Where::Device; }
  [[nodiscard]] int device() const { return m_device; }

 private:
  Where m_where;
  int m_device;
  void* m_ptr = nullptr;
  cuda::DeviceBuffer m_on_device;
  cuda::PinnedBuffer m_pinned;
  std::unique_ptr<void, FreePageable> m_pageable;
};

// What copy_bench's errors call the creation of its streams and events (each made on the GPU it serves).
constexpr std::string_view kCreating = "creating a CUDA stream or event";

using Stream = cuda::Stream;  // non-blocking: no legacy-stream syncs
using Event = cuda::Event;

/// What evicts one GPU's L2 before each timed copy (H100: 50 MB of L2 would otherwise hold a small copy's
/// source and destination from the copy before): scratch of twice the L2, rewritten on the GPU's own stream.
struct L2Flush {
  int device = 0;
  std::unique_ptr<Buffer> scratch;
  std::size_t bytes = 0;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Event> done;
};

/// One direction of a path: source and destination, the stream (on the GPU that drives the copy).
struct Leg {
  std::unique_ptr<Buffer> src;
  std::unique_ptr<Buffer> dst;
  int driver = 0;  // the GPU whose stream issues the copy
  std::unique_ptr<Stream> stream;
};

/// The buffers, streams and events of one path, for sizes up to `max_bytes`.
class Copier {
 public:
  Copier(const Path& path, std::size_t max_bytes) : m_path(path) {
    using W = Buffer::Where;
    const W host = path.host == HostMemory::Pinned ? W::Pinned : W::Pageable;
    switch (path.kind) {
      case Kind::H2D:
        add_leg(host, W::Device, path.src, path.src, path.src, max_bytes);
        break;
      case Kind::D2H:
        add_leg(W::Device, host, path.src, path.src, path.src, max_bytes);
        break;
      case Kind::D2D:
        add_leg(W::Device, W::Device, path.src, path.src, path.src, max_bytes);
        break;
      case Kind::P2P:
        add_leg(W::Device, W::Device, path.src, path.dst, path.src, max_bytes);
        if (path.bidirectional) {
          add_leg(W::Device, W::Device, path.dst, path.src, path.dst, max_bytes);
        }
        break;
    }
    m_start = std::make_unique<Event>(path.src, kCreating);
    m_stop = std::make_unique<Event>(path.src, kCreating);
    if (m_legs.size() > 1) {
      m_other_done = std::make_unique<Event>(path.dst, kCreating);
    }
    add_flush(path.src);
    if ((path.kind == Kind::P2P) && path.dst != path.src) {
      add_flush(path.dst);
    }
  }

  /// One copy of `bytes` per leg, all legs at once; the seconds between the first start and the last end.
  /// Pageable host memory: cudaMemcpyAsync stages it through a pinned buffer on the host, inside the call
  /// and at once (H2D), whatever the stream is still doing; behind the L2 flush, that staging ran before the
  /// start event and small copies read up to 20-30% fast. So the flush is waited for on the host first: the
  /// start event then completes on an idle stream before the call, and the staging is inside the window (the
  /// way nvbandwidth times pageable copies: the host's part counts).
  double timed_copy(std::size_t bytes) {
    const cudaStream_t first = m_legs.front().stream->get();
    const bool pageable = m_path.host == HostMemory::Pageable && (m_path.kind == Kind::H2D || m_path.kind == Kind::D2H);
    for (const L2Flush& f : m_flushes) {  // before the start event: not timed
      check(cudaSetDevice(f.device), "cudaSetDevice");
      check(kernels::flush_l2(f.scratch->get(), f.bytes, f.stream->get()), "the L2 flush kernel");
      check(cudaEventRecord(f.done->get(), f.stream->get()), "cudaEventRecord");
      if (pageable) {
        check(cudaEventSynchronize(f.done->get()), "cudaEventSynchronize (the L2 flush)");
      } else {
        check(cudaStreamWaitEvent(first, f.done->get(), 0), "cudaStreamWaitEvent");
      }
    }
    check(cudaSetDevice(m_path.src), "cudaSetDevice");
    check(cudaEventRecord(m_start->get(), first), "cudaEventRecord");
    for (std::size_t i = 1; i < m_legs.size(); ++i) {
      check(cudaStreamWaitEvent(m_legs[i].stream->get(), m_start->get(), 0), "cudaStreamWaitEvent");
    }
    for (const Leg& leg : m_legs) {
      issue(leg, bytes);
    }
    if (m_legs.size() > 1) {
      check(cudaSetDevice(m_path.dst), "cudaSetDevice");
      check(cudaEventRecord(m_other_done->get(), m_legs[1].stream->get()), "cudaEventRecord");
      check(cudaSetDevice(m_path.src), "cudaSetDevice");
      check(cudaStreamWaitEvent(first, m_other_done->get(), 0), "cudaStreamWaitEvent");
    }
    check(cudaEventRecord(m_stop->get(), first), "cudaEventRecord");
    check(cudaEventSynchronize(m_stop->get()), fmt::format("{} of {} bytes", m_path.id(), bytes));
    float ms = 0.0F;
    check(cudaEventElapsedTime(&ms, m_start->get(), m_stop->get()), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1e-3;
  }

  /// The pattern into every source, 0xff into every destination.
  void prepare_check(std::size_t bytes) {
    const CaseSpec spec = pattern_case(bytes);
    for (const Leg& leg : m_legs) {
      if (leg.src->on_device()) {
        check(cudaSetDevice(leg.src->device()), "cudaSetDevice");
        check(kernels::fill_input(pattern_params(spec, 1, 0), DType::Uint8, leg.src->get(), bytes, nullptr),
              "the pattern fill kernel");
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      } else {
        fill_input(spec, 1, 0, leg.src->get());
      }
      if (leg.dst->on_device()) {
        check(cudaSetDevice(leg.dst->device()), "cudaSetDevice");
        check(cudaMemset(leg.dst->get(), 0xff, bytes), "cudaMemset");
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // the copy streams do not wait for the memset
      } else {
        std::memset(leg.dst->get(), 0xff, bytes);
      }
    }
  }

  /// Bytes of every destination that differ from the pattern (counted on the device for device memory).
  std::uint64_t count_wrong_bytes(std::size_t bytes) {
    const CaseSpec spec = pattern_case(bytes);
    std::uint64_t wrong = 0;
    for (const Leg& leg : m_legs) {
      if (!leg.dst->on_device()) {
        wrong += count_wrong(spec, 1, 0, leg.dst->get());
        continue;
      }
      check(cudaSetDevice(leg.dst->device()), "cudaSetDevice");
      const cuda::DeviceBuffer memory(sizeof(unsigned long long), "cudaMalloc");
      auto* counter = reinterpret_cast<unsigned long long*>(memory.data());
      const cudaError_t e =
          kernels::count_wrong(pattern_params(spec, 1, 0), DType::Uint8, leg.dst->get(), bytes, counter, nullptr);
      unsigned long long n = 0;
      const cudaError_t copied = e == cudaSuccess ? cudaMemcpy(&n, counter, sizeof(n), cudaMemcpyDeviceToHost) : e;
      check(copied, "the pattern check kernel");
      wrong += n;
    }
    return wrong;
  }

 private:
  void add_leg(Buffer::Where from, Buffer::Where to, int src_device, int dst_device, int driver, std::size_t bytes) {
    Leg leg;
    leg.src = std::make_unique<Buffer>(from, src_device, bytes);
    leg.dst = std::make_unique<Buffer>(to, dst_device, bytes);
    leg.driver = driver;
    leg.stream = std::make_unique<Stream>(driver, kCreating);
    m_legs.push_back(std::move(leg));
  }

  void add_flush(int device) {
    int l2 = 0;
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute(L2 size)");
    L2Flush f;
    f.device = device;
    f.bytes = 2 * static_cast<std::size_t>(std::max(l2, 1 << 20));
    f.scratch = std::make_unique<Buffer>(Buffer::Where::Device, device, f.bytes);
    check(cudaMemset(f.scratch->get(), 0, f.bytes), "cudaMemset");
    f.stream = std::make_unique<Stream>(device, kCreating);
    f.done = std::make_unique<Event>(device, kCreating);
    m_flushes.push_back(std::move(f));
  }

  void issue(const Leg& leg, std::size_t bytes) const {
    const cudaStream_t s = leg.stream->get();
    check(cudaSetDevice(leg.driver), "cudaSetDevice");
    if (m_path.engine == Engine::Sm) {
      check(kernels::sm_copy(leg.dst->get(), leg.src->get(), bytes, 0, s), "the SM copy kernel");
    } else if (m_path.kind == Kind::P2P) {
      check(cudaMemcpyPeerAsync(leg.dst->get(), leg.dst->device(), leg.src->get(), leg.src->device(), bytes, s),
            "cudaMemcpyPeerAsync");
    } else {
      check(cudaMemcpyAsync(leg.dst->get(), leg.src->get(), bytes, cudaMemcpyDefault, s), "cudaMemcpyAsync");
    }
  }

  Path m_path;
  std::vector<Leg> m_legs;
  std::unique_ptr<Event> m_start;
  std::unique_ptr<Event> m_stop;
  std::unique_ptr<Event> m_other_done;
  std::vector<L2Flush> m_flushes;
};

/// One path's Copier at a time: the next path frees the last one's memory.
class CopierCache {
 public:
  CopierCache(std::vector<Path> paths, std::size_t max_bytes) : m_paths(std::move(paths)), m_max(max_bytes) {}
  Copier& get(std::size_t path) {
    if (!m_copier || m_current != path) {
      m_copier.reset();
      m_copier = std::make_unique<Copier>(m_paths[path], m_max);
      m_current = path;
    }
    return *m_copier;
  }

 private:
  std::vector<Path> m_paths;
  std::size_t m_max;
  std::unique_ptr<Copier> m_copier;
  std::size_t m_current = 0;
};

}  // namespace

int visible_devices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::string no_device_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  (void)cudaGetLastError();
  return e == cudaSuccess ? std::string{"cudaGetDeviceCount says 0"} : cuda::error_text(e);
}

std::vector<std::vector<bool>> peer_access_matrix(int devices) {
  const auto n = static_cast<std::size_t>(devices);
  std::vector<std::vector<bool>> m(n, std::vector<bool>(n, false));
  for (int a = 0; a < devices; ++a) {
    for (int b = 0; b < devices; ++b) {
      int can = 0;
      if (a == b || cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || can == 0) {
        (void)cudaGetLastError();
        continue;
      }
      check(cudaSetDevice(a), "cudaSetDevice");
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled) {
        m[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = true;
      }
      (void)cudaGetLastError();
    }
  }
  return m;
}

std::vector<int> match_topology(const topo::HostTopology& host, int devices) {
  std::vector<int> out;
  for (int d = 0; d < devices; ++d) {
    const std::string bus = bus_id_of(d);
    int found = -1;
    for (std::size_t g = 0; g < host.gpus.size(); ++g) {
      if (!bus.empty() && host.gpus[g].bus_id == bus) {
        found = static_cast<int>(g);
      }
    }
    out.push_back(found);
  }
  return out;
}

std::map<std::string, std::string> cuda_versions() {
  std::map<std::string, std::string> v;
  if (const auto runtime = cuda::runtime_version()) {
    v["cuda_runtime"] = cuda_version_text(*runtime);
  }
  if (const auto driver = cuda::driver_version(); driver && *driver > 0) {
    v["cuda_driver"] = cuda_version_text(*driver);
  } else {
    v["cuda_driver"] = "none (no libcuda.so.1 here)";
  }
  v["kernels"] = fmt::format("sm {}", kernels::built_architectures());
  for (int d = 0; d < visible_devices(); ++d) {
    try {
      v[fmt::format("gpu{}", d)] = fmt::format("{} ({})", cuda::device_name(d), bus_id_of(d));
    } catch (const BackendError&) {
      // a GPU that CUDA cannot describe is left out
    }
  }
  return v;
}

const CallSamples& Samples::last(const std::string& name) const {
  static const CallSamples none;
  const auto it = calls.find(name);
  return it == calls.end() || it->second.empty() ? none : it->second.back();
}

void register_benchmarks(const std::vector<Path>& paths, const std::vector<std::optional<double>>& peaks_GBps,
                         const std::vector<std::uint64_t>& sizes, bool check_copies, double min_time_s,
                         Samples& samples) {
  std::uint64_t largest = 0;
  for (const auto s : sizes) {
    largest = std::max(largest, s);
  }
  auto cache = std::make_shared<CopierCache>(paths, static_cast<std::size_t>(largest));
  for (std::size_t p = 0; p < paths.size(); ++p) {
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      const std::string name = fmt::format("{}/{}", paths[p].id(), format_size(sizes[s], SizeStyle::Short));
      samples.index[name] = {p, s};
      const auto bytes = static_cast<std::size_t>(sizes[s]);
      const double factor = paths[p].bus_factor();
      const std::uint64_t moved = paths[p].bytes_moved(bytes);
      const std::optional<double> peak = peaks_GBps[p];
      auto fn = [cache, p, bytes, factor, moved, peak, name, check_copies, &samples](benchmark::State& state) {
        CallSamples& call = samples.calls[name].emplace_back();
        const auto began = std::chrono::steady_clock::now();
        try {
          Copier& copier = cache->get(p);
          if (check_copies) {
            copier.prepare_check(bytes);
          }
          (void)copier.timed_copy(bytes);  // warm-up: first-touch, peer mappings
          for (auto _ : state) {
            const double t = copier.timed_copy(bytes);
            state.SetIterationTime(t);
            call.seconds.push_back(t);
          }
          if (check_copies) {
            call.wrong = copier.count_wrong_bytes(bytes);
          }
        } catch (const std::exception& e) {
          state.SkipWithError(e.what());
          return;
        }
        call.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
        if (!call.seconds.empty()) {
          const Summary sum = summarize(call.seconds);
          const double busbw = static_cast<double>(moved) / sum.p50 / 1e9 * factor;
          state.counters["busbw_GBps"] = busbw;
          if (peak && *peak > 0.0) {
            state.counters["pct_peak"] = 100.0 * busbw / *peak;
          }
        }
        if (call.wrong) {
          state.counters["wrong"] = static_cast<double>(*call.wrong);
        }
        state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(moved));
      };
      benchmark::RegisterBenchmark(name.c_str(), fn)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(min_time_s);
    }
  }
}

}  // namespace ccbench::copy
