#include "nccl_memory.hpp"

#include <fmt/format.h>

#include "nccl_api.hpp"
#include "nccl_check.hpp"

namespace ccbench::nccl_detail {

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
static_assert(kWindowSymmetric == NCCL_WIN_COLL_SYMMETRIC, "nccl.h's NCCL_WIN_COLL_SYMMETRIC");
#endif

NcclMemory::~NcclMemory() {
  if (m_ptr != nullptr && nccl().MemFree != nullptr) {
    (void)nccl().MemFree(m_ptr);  // never registered, or its communicator is gone: the memory alone
  }
}

std::byte* NcclMemory::data() const {
  return m_mode == Registration::None ? m_plain.data() : static_cast<std::byte*>(m_ptr);
}

void NcclMemory::reserve(std::size_t bytes, Communicator& comm) {
  if (m_mode == Registration::None) {
    m_plain.reserve(bytes);
    return;
  }
  if (bytes <= m_bytes) {
    return;
  }
  release(comm);
  const auto& api = nccl();
  if (api.MemAlloc == nullptr || api.CommRegister == nullptr ||
      (m_mode == Registration::Symmetric && api.CommWindowRegister == nullptr)) {
    throw BackendError(
        fmt::format("-R {}: the NCCL library {} lacks the registration calls", static_cast<int>(m_mode), api.file));
  }
  nccl_check(api.MemAlloc(&m_ptr, bytes), nullptr, fmt::format("ncclMemAlloc of {} bytes ({})", bytes, m_what));
  m_bytes = bytes;
  if (m_mode == Registration::Local) {
    comm.complete(api.CommRegister(comm.get(), m_ptr, bytes, &m_handle), "ncclCommRegister of the " + m_what);
  } else {
    comm.complete(api.CommWindowRegister(comm.get(), m_ptr, bytes, &m_handle, kWindowSymmetric),
                  "ncclCommWindowRegister of the " + m_what);
  }
}

void NcclMemory::release(Communicator& comm) noexcept {
  if (m_ptr == nullptr) {
    return;
  }
  try {
    const auto& api = nccl();
    if (m_handle != nullptr) {
      const ncclComm_t c = comm.get();
      (void)(m_mode == Registration::Local ? api.CommDeregister(c, m_handle) : api.CommWindowDeregister(c, m_handle));
    }
  } catch (...) {  // the communicator was aborted: its registrations went with it
  }
  m_handle = nullptr;
  if (nccl_api() != nullptr && nccl().MemFree != nullptr) {
    (void)nccl().MemFree(m_ptr);
  }
  m_ptr = nullptr;
  m_bytes = 0;
}

}  // namespace ccbench::nccl_detail
