#pragma once
// The NCCL backend's send and receive buffers under -R (nccl-tests' --local_register): cudaMalloc (0), or
// ncclMemAlloc registered with the communicator (1: ncclCommRegister) or as a symmetric window (2:
// ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC).
//
// Registered memory is allocated once, for the sweep's largest case (plan()), as nccl-tests allocates once for
// its largest size, and freed only after the communicator has ended. NCCL keeps the registration a captured
// graph made of an allocation until the graph's destructor is polled (every few group launches), and
// ncclCommDeregister leaves that cache slot alive: freed and allocated again, the same range would adopt it, and
// the next collective would move data through mappings of the old physical memory. So an allocation outgrown
// beyond the plan is deregistered and kept, never freed, until the destructor runs (after the communicator's).
#include <cstddef>
#include <string>
#include <vector>

#include "ccbench/cuda/resources.hpp"
#include "ccbench/group.hpp"
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
  /// Frees every ncclMemAlloc allocation: declared before the communicator, so this runs after it has ended.
  ~NcclMemory();

  /// Under -R: the least a registered allocation will have (the sweep's largest case), so that one allocation,
  /// registered once, serves every case. Without -R it does nothing (cudaMalloc memory is freed as it grows).
  void plan(std::size_t bytes);
  /// At least `bytes`: true when it allocated (and registered) anew. Without -R, growing frees the old memory.
  /// Under -R an allocation is max(bytes, plan); an outgrown one is deregistered and kept until the destructor.
  /// A symmetric window is registered collectively: every rank grows in the same prepare(), as the buffers'
  /// sizes depend on the case and the rank count only (footprint()).
  bool reserve(std::size_t bytes, Communicator& comm);
  /// Device bytes that reserve(bytes) would add to what is held (nothing it holds is freed first under -R).
  [[nodiscard]] std::size_t growth(std::size_t bytes) const;
  /// Deregisters; called before the communicator ends (the memory stays until the destructor). Never throws;
  /// a second call does nothing.
  void release(Communicator& comm) noexcept;
  [[nodiscard]] std::byte* data() const;
  [[nodiscard]] std::size_t bytes() const { return m_mode == Registration::None ? m_plain.bytes() : m_bytes; }
  /// Whether NCCL registered the current allocation: a null handle or window is none (NCCL_LOCAL_REGISTER=0,
  /// no symmetric memory on this system). False without -R.
  [[nodiscard]] bool registered() const { return m_handle != nullptr; }
  /// Whether it holds memory (a buffer no case has used yet holds none).
  [[nodiscard]] bool allocated() const { return bytes() > 0; }

 private:
  void deregister(Communicator& comm) noexcept;

  Registration m_mode;
  std::string m_what;          // "send buffer", for errors
  cuda::DeviceBuffer m_plain;  // -R 0
  std::size_t m_planned = 0;   // -R 1, 2: the least an allocation has
  void* m_ptr = nullptr;       // -R 1, 2: from ncclMemAlloc
  std::size_t m_bytes = 0;
  void* m_handle = nullptr;       // ncclCommRegister's handle, or the ncclWindow_t
  std::vector<void*> m_outgrown;  // deregistered, freed after the communicator
};

/// Whether each buffer is registered on every rank of the group; a buffer a rank holds no memory in counts as
/// registered (no case has used it).
struct RegisteredEverywhere {
  bool send = false;
  bool recv = false;
};
/// Collective over `group` (one max_all): every rank calls it after the same reserve()s (their sizes depend on
/// the case and the rank count only).
RegisteredEverywhere agree_registered(Group& group, const NcclMemory& send, const NcclMemory& recv);
/// The registration a case ran with (issue 38, section 3): `asked` when every buffer it uses (in place, the
/// receive buffer alone) was registered on every rank; else none, as NCCL returned a null handle or window.
Registration obtained_registration(Registration asked, bool in_place, RegisteredEverywhere agreed);
/// For the table header and environment.libraries.nccl_registration: what NCCL granted for -R `asked`, and why
/// not where it did not.
std::string describe_registration(Registration asked, RegisteredEverywhere agreed);

}  // namespace ccbench::nccl_detail
