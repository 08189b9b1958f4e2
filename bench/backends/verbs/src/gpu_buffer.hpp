#pragma once
// GPU memory as the RDMA buffer (--mem cuda:N). cudaMalloc'd memory registered with the protection domain
// through dmabuf (ibv_reg_dmabuf_mr on the fd from cuMemGetHandleForAddressRange), else through peer
// memory (ibv_reg_mr on the device pointer; needs nvidia-peermem). Compiled only when CUDA was found;
// the driver is reached through the runtime's entry-point query, so the benches never link libcuda and
// still start on hosts without a GPU driver.
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ccbench::verbs {

/// GPU memory cannot serve as the RDMA buffer here (no CUDA device, or neither registration works): the
/// cases are skipped with this reason.
class GpuUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class GpuBuffer {
 public:
  /// `bytes` of device `device`, registered with `pd` for `access`. Throws UsageError for a device index
  /// out of range, GpuUnsupported when GPU memory cannot be used here, BackendError for other failures.
  GpuBuffer(int device, std::size_t bytes, ibv_pd* pd, unsigned access);
  ~GpuBuffer();
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;
  GpuBuffer(GpuBuffer&&) = delete;
  GpuBuffer& operator=(GpuBuffer&&) = delete;

  /// The device address: what the work requests and the peer's remote address use.
  [[nodiscard]] std::uint8_t* data() const { return static_cast<std::uint8_t*>(m_ptr); }
  [[nodiscard]] ibv_mr* mr() const { return m_mr; }
  /// "cuda:0 NVIDIA H100 80GB HBM3 (0000:1b:00.0), registered through dmabuf"
  [[nodiscard]] const std::string& description() const { return m_description; }
  [[nodiscard]] const std::string& bus_id() const { return m_bus_id; }
  void upload(std::size_t offset, const void* src, std::size_t n);
  void download(std::size_t offset, void* dst, std::size_t n) const;
  void zero(std::size_t offset, std::size_t n);

 private:
  void register_with(ibv_pd* pd, std::size_t total, unsigned access, const std::string& name);
  void release() noexcept;
  void set_sync_memops();

  int m_device;
  void* m_ptr = nullptr;
  ibv_mr* m_mr = nullptr;
  int m_dmabuf_fd = -1;
  std::string m_description;
  std::string m_bus_id;
};

}  // namespace ccbench::verbs
