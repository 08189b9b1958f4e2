#include "nccl_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "nccl_api.hpp"
#include "nccl_check.hpp"

namespace ccbench::nccl_detail {

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
static_assert(kWindowSymmetric == NCCL_WIN_COLL_SYMMETRIC, "nccl.h's NCCL_WIN_COLL_SYMMETRIC");
#endif

NcclMemory::~NcclMemory() {
  if (nccl_api() == nullptr || nccl().MemFree == nullptr) {
    return;
  }
  for (void* ptr : m_outgrown) {
    (void)nccl().MemFree(ptr);  // its communicator has ended: the memory alone
  }
  if (m_ptr != nullptr) {
    (void)nccl().MemFree(m_ptr);
  }
}

std::byte* NcclMemory::data() const {
  return m_mode == Registration::None ? m_plain.data() : static_cast<std::byte*>(m_ptr);
}

void NcclMemory::plan(std::size_t bytes) {
  if (m_mode != Registration::None) {
    m_planned = std::max(m_planned, bytes);
  }
}

std::size_t NcclMemory::growth(std::size_t bytes) const {
  if (m_mode == Registration::None) {
    return bytes > m_plain.bytes() ? bytes - m_plain.bytes() : 0;
  }
  return bytes > m_bytes ? std::max(bytes, m_planned) : 0;
}

bool NcclMemory::reserve(std::size_t bytes, Communicator& comm) {
  if (m_mode == Registration::None) {
    const bool grows = bytes > m_plain.bytes();
    m_plain.reserve(bytes);
    return grows;
  }
  if (bytes <= m_bytes) {
    return false;
  }
  bytes = std::max(bytes, m_planned);
  const auto& api = nccl();
  if (api.MemAlloc == nullptr || api.CommRegister == nullptr ||
      (m_mode == Registration::Symmetric && api.CommWindowRegister == nullptr)) {
    throw BackendError(
        fmt::format("-R {}: the NCCL library {} lacks the registration calls", static_cast<int>(m_mode), api.file));
  }
  deregister(comm);
  if (m_ptr != nullptr) {
    m_outgrown.push_back(m_ptr);  // a graph's registration of it may live on in NCCL: never handed out again
  }
  m_ptr = nullptr;
  m_bytes = 0;
  nccl_check(api.MemAlloc(&m_ptr, bytes), nullptr, fmt::format("ncclMemAlloc of {} bytes ({})", bytes, m_what));
  m_bytes = bytes;
  if (m_mode == Registration::Local) {
    comm.settle(api.CommRegister(comm.get(), m_ptr, bytes, &m_handle), "ncclCommRegister of the " + m_what);
  } else {
    comm.settle(api.CommWindowRegister(comm.get(), m_ptr, bytes, &m_handle, kWindowSymmetric),
                "ncclCommWindowRegister of the " + m_what);
  }
  return true;
}

void NcclMemory::deregister(Communicator& comm) noexcept {
  if (m_handle == nullptr) {
    return;
  }
  try {
    const auto& api = nccl();
    const ncclComm_t c = comm.get();
    comm.settle(m_mode == Registration::Local ? api.CommDeregister(c, m_handle) : api.CommWindowDeregister(c, m_handle),
                "deregistering the " + m_what);
  } catch (...) {  // the communicator was aborted (its registrations went with it), or it failed: nothing to do
  }
  m_handle = nullptr;
}

void NcclMemory::release(Communicator& comm) noexcept { deregister(comm); }

RegisteredEverywhere agree_registered(Group& group, const NcclMemory& send, const NcclMemory& recv) {
  const auto missing = [](const NcclMemory& m) { return m.allocated() && !m.registered() ? 1.0 : 0.0; };
  std::array<double, 2> flags{missing(send), missing(recv)};
  group.max_all(flags);
  return RegisteredEverywhere{flags[0] == 0.0, flags[1] == 0.0};
}

Registration obtained_registration(Registration asked, bool in_place, RegisteredEverywhere agreed) {
  return agreed.recv && (in_place || agreed.send) ? asked : Registration::None;
}

std::string describe_registration(Registration asked, RegisteredEverywhere agreed) {
  const std::string flag = fmt::format("-R {}", static_cast<int>(asked));
  if (asked == Registration::None) {
    return "none";
  }
  if (agreed.send && agreed.recv) {
    return fmt::format("{} ({}: NCCL registered every rank's buffers{})", name(asked), flag,
                       asked == Registration::Symmetric ? " as symmetric windows" : "");
  }
  const std::string which = !agreed.send && !agreed.recv ? "send and receive buffers"
                            : agreed.send                ? "receive buffer (every case)"
                                                         : "send buffer (out-of-place cases)";
  const std::string why =
      asked == Registration::Symmetric
          ? "ncclCommWindowRegister returned a null window: this system has no symmetric memory for NCCL (2.27 and "
            "2.28 register windows within one node only)"
          : "ncclCommRegister returned a null handle (NCCL_LOCAL_REGISTER=0, or P2P through memcpy)";
  return fmt::format("none ({} asked; for the {} on some rank {}): those results carry no registration", flag, which,
                     why);
}

}  // namespace ccbench::nccl_detail
