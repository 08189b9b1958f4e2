#pragma once
// The NCCL backend's send and receive buffers under -R (nccl-tests' --local_register): cudaMalloc (0), or
// ncclMemAlloc registered with the communicator (1: ncclCommRegister) or as a symmetric window (2:
// ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC). Registered memory must be deregistered before its
// communicator ends: the backend calls release() first.
#include <cstddef>
#include <string>

#include "ccbench/cuda/resources.hpp"
#include "ccbench/registration.hpp"
#include "communicator.hpp"

namespace ccbench::nccl_detail {

class NcclMemory {
 public:
  NcclMemory(Registration mode, std::string what) : m_mode(mode), m_what(std::move(what)) {}
  NcclMemory(const NcclMemory&) = delete;
  NcclMemory& operator=(const NcclMemory&) = delete;
  NcclMemory(NcclMemory&&) = delete;
  NcclMemory& operator=(NcclMemory&&) = delete;
  ~NcclMemory();

  /// At least `bytes`. Growing deregisters and frees the old memory first (the caller has waited for every op
  /// on it). A symmetric window is registered collectively: every rank grows in the same prepare(), as the
  /// buffers' sizes depend on the case and the rank count only (footprint()).
  void reserve(std::size_t bytes, Communicator& comm);
  /// Deregisters and frees; called before the communicator ends. Never throws; a second call does nothing.
  void release(Communicator& comm) noexcept;
  [[nodiscard]] std::byte* data() const;
  [[nodiscard]] std::size_t bytes() const { return m_mode == Registration::None ? m_plain.bytes() : m_bytes; }

 private:
  Registration m_mode;
  std::string m_what;          // "send buffer", for errors
  cuda::DeviceBuffer m_plain;  // -R 0
  void* m_ptr = nullptr;       // -R 1, 2: from ncclMemAlloc
  std::size_t m_bytes = 0;
  void* m_handle = nullptr;  // ncclCommRegister's handle, or the ncclWindow_t
};

}  // namespace ccbench::nccl_detail
