#include "gpu_buffer.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ccbench/cuda/device.hpp"
#include "ccbench/cuda/error.hpp"
#include "ccbench/errors.hpp"

namespace ccbench::verbs {
namespace {

using cuda::check;  // "what failed: cudaErrorX (description)", as every CUDA error of the project says it

// dmabuf registration wants the range aligned to host pages; cudaMalloc of whole 2 MiB pages gives that.
constexpr std::size_t kGpuPage = std::size_t{2} << 20U;

// A driver API function through the runtime (the benches never link libcuda), in its ABI of CUDA
// `version` (11070 = 11.7); nullptr when the driver has none.
void* driver_function(const char* name, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  const cudaError_t e = ::cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found);
#else
  (void)version;
  const cudaError_t e = ::cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found);
#endif
  if (e != cudaSuccess || found != cudaDriverEntryPointSuccess) {
    (void)::cudaGetLastError();
    return nullptr;
  }
  return fn;
}

// The dmabuf fd of [ptr, ptr + bytes), or -1 with `why` set.
int dmabuf_fd(void* ptr, std::size_t bytes, std::string& why) {
  void* fn = driver_function("cuMemGetHandleForAddressRange", 11070);
  if (fn == nullptr) {
    why = "the CUDA driver has no cuMemGetHandleForAddressRange (driver older than CUDA 11.7)";
    return -1;
  }
  const auto get = reinterpret_cast<PFN_cuMemGetHandleForAddressRange_v11070>(fn);
  int fd = -1;
  const CUresult r = get(&fd, reinterpret_cast<CUdeviceptr>(ptr), bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (r != CUDA_SUCCESS) {
    why = fmt::format(
        "cuMemGetHandleForAddressRange(DMA_BUF_FD) returned CUresult {} (no dmabuf from this driver "
        "or kernel)",
        static_cast<int>(r));
    return -1;
  }
  return fd;
}

}  // namespace

GpuBuffer::GpuBuffer(int device, std::size_t bytes, ibv_pd* pd, unsigned access) : m_device(device) {
  int count = 0;
  if (const cudaError_t e = ::cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    throw GpuUnsupported(
        fmt::format("--mem cuda:{}: no CUDA device here ({})", device,
                    e != cudaSuccess ? cuda::error_text(e) : std::string{"cudaGetDeviceCount says 0"}));
  }
  if (device >= count) {
    throw UsageError(
        fmt::format("--mem cuda:{}: this host has {} CUDA device(s), cuda:0..cuda:{}", device, count, count - 1));
  }
  check(::cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  cudaDeviceProp prop{};
  check(::cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  try {
    m_bus_id = cuda::pci_bus_id(device);  // as CUDA writes it, as the result's rdma_buffer has had it
  } catch (const BackendError&) {
    // unknown: the memory still serves, and an empty id is compared with no other rank's
  }
  const std::size_t total = (bytes + kGpuPage - 1) / kGpuPage * kGpuPage;
  check(::cudaMalloc(&m_ptr, total), fmt::format("cudaMalloc of {} bytes on cuda:{}", total, device));
  try {
    register_with(pd, total, access, prop.name);
  } catch (...) {
    release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

void GpuBuffer::register_with(ibv_pd* pd, std::size_t total, unsigned access, const std::string& name) {
  set_sync_memops();
  check(::cudaMemset(m_ptr, 0, total), "cudaMemset");
  check(::cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  std::string dmabuf_why;
  m_dmabuf_fd = dmabuf_fd(m_ptr, total, dmabuf_why);
  std::string how;
  if (m_dmabuf_fd >= 0) {
    m_mr = ::ibv_reg_dmabuf_mr(pd, 0, total, reinterpret_cast<std::uintptr_t>(m_ptr), m_dmabuf_fd,
                               static_cast<int>(access));
    if (m_mr != nullptr) {
      how = "dmabuf";
    } else {
      dmabuf_why = fmt::format("ibv_reg_dmabuf_mr: {}", std::strerror(errno));
    }
  }
  if (m_mr == nullptr) {
    m_mr = ::ibv_reg_mr(pd, m_ptr, total, access);
    if (m_mr != nullptr) {
      how = "peer memory (nvidia-peermem)";
    } else {
      const std::string peer_why = std::strerror(errno);
      throw GpuUnsupported(
          fmt::format("GPU memory of cuda:{} cannot be registered for RDMA here: {}; ibv_reg_mr on device memory: {} "
                      "(is nvidia-peermem loaded?)",
                      m_device, dmabuf_why, peer_why));
    }
  }
  m_description = fmt::format("cuda:{} {} ({}), registered through {}", m_device, name, m_bus_id, how);
}

GpuBuffer::~GpuBuffer() { release(); }

// CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, as NVIDIA's GPUDirect RDMA guide asks for memory that a NIC reads and
// writes: CUDA's own copies and sets of it then complete before they return. Best effort: a driver without
// the entry point leaves it as it is (the copies here synchronize anyway).
void GpuBuffer::set_sync_memops() {
  void* fn = driver_function("cuPointerSetAttribute", 6000);
  if (fn == nullptr) {
    return;
  }
  unsigned int one = 1;
  (void)reinterpret_cast<PFN_cuPointerSetAttribute_v6000>(fn)(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                                                              reinterpret_cast<CUdeviceptr>(m_ptr));
}

void GpuBuffer::release() noexcept {
  if (m_mr != nullptr) {
    ::ibv_dereg_mr(m_mr);
    m_mr = nullptr;
  }
  if (m_dmabuf_fd >= 0) {
    ::close(m_dmabuf_fd);
    m_dmabuf_fd = -1;
  }
  if (m_ptr != nullptr) {
    ::cudaFree(m_ptr);
    m_ptr = nullptr;
  }
}

// NOLINTNEXTLINE(readability-make-member-function-const): writes the GPU memory this object owns
void GpuBuffer::upload(std::size_t offset, const void* src, std::size_t n) {
  check(::cudaMemcpy(data() + offset, src, n, cudaMemcpyHostToDevice), "cudaMemcpy host to device");
  check(::cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // from pageable memory the copy may still be in flight
}

// What the peer's RDMA writes put in GPU memory is made visible to CUDA first (GPUDirect RDMA writes need
// not be ordered with the GPU's own accesses); where the device orders them already the call is a no-op,
// and where it is not supported there is nothing to flush.
void GpuBuffer::download(std::size_t offset, void* dst, std::size_t n) const {
  check(::cudaSetDevice(m_device), "cudaSetDevice");
  if (::cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                           cudaFlushGPUDirectRDMAWritesToOwner) != cudaSuccess) {
    (void)::cudaGetLastError();
  }
  check(::cudaMemcpy(dst, data() + offset, n, cudaMemcpyDeviceToHost), "cudaMemcpy device to host");
}

// NOLINTNEXTLINE(readability-make-member-function-const): writes the GPU memory this object owns
void GpuBuffer::zero(std::size_t offset, std::size_t n) {
  check(::cudaMemset(data() + offset, 0, n), "cudaMemset");
  check(::cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

}  // namespace ccbench::verbs
