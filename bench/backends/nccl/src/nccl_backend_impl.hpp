#pragma once
// The NCCL backend (nccl_backend.cpp: set-up, the plan of a sweep, registration and each case's preparation;
// nccl_measure.cpp: what the runner times and checks: the pattern, the ops, CUDA graphs, waiting, wrong elements).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "ccbench/backend.hpp"
#include "ccbench/cuda/resources.hpp"
#include "ccbench/group.hpp"
#include "ccbench/traffic.hpp"
#include "ccbench/types.hpp"
#include "communicator.hpp"
#include "event_timer.hpp"
#include "nccl_memory.hpp"
#include "nccl_ops.hpp"

namespace ccbench::nccl_detail {

struct Setup {
  ncclUniqueId id{};
  int rank = 0;
  int nranks = 1;
  int device = 0;
  std::string device_choice;  // how `device` was chosen (choose_device), for the result
  int nccl_version = 0;
  double timeout_s = 0.0;
  bool check = false;    // -c: cases whose result cannot be checked exactly are refused
  bool blocking = true;  // CCBENCH_NCCL_BLOCKING=0: the non-blocking communicator, to measure what it costs
  Registration registration = Registration::None;  // -R
  Group* group = nullptr;  // the backend's group (outlives it): -R's allocation and registration are agreed there
  // The lowest across the group: what every rank may use (each rank decides supports() alone, so a
  // job mixing GPU generations or NCCL libraries must decide alike, or one rank skips what others enter).
  int group_nccl_version = 0;
  int group_sm_major = 0;
};

class NcclBackend final : public Backend {
 public:
  explicit NcclBackend(const Setup& setup);

  [[nodiscard]] std::string name() const override { return "nccl"; }
  [[nodiscard]] std::map<std::string, std::string> versions() const override { return m_versions; }
  [[nodiscard]] std::string device_bus_id() const override { return m_bus_id; }
  [[nodiscard]] Support supports(const CaseSpec& spec) const override;
  [[nodiscard]] MemoryNeed memory_need(const CaseSpec& spec) const override;
  void expect(std::span<const CaseSpec> cases) override;
  void prepare(const CaseSpec& spec) override;
  [[nodiscard]] std::string registration() const override;
  void fill_pattern() override;
  void enqueue() override;
  void wait() override;
  std::uint64_t count_wrong() override;
  Timer& timer() override { return m_timer; }
  bool capture_graph(std::uint64_t ops) override;
  void launch_graph() override;
  void abandon() noexcept override { m_comm.request_abort(); }

 private:
  void drop_graph() noexcept;
  void release_graph() noexcept;
  void destroy_graph() noexcept;  // m_graph_mutex held

  void require_prepared() const;
#if CCBENCH_NCCL_KERNELS
  std::uint64_t count_wrong_on_device();
#endif
  [[nodiscard]] OpArgs op_args(const CaseSpec& spec) const;

  // Declaration order matters: members are destroyed in reverse, so the communicator is
  // finalised (its ops completed) before the buffers and the stream go.
  std::map<std::string, std::string> m_versions;
  std::string m_bus_id;
  bool m_native_alltoall;
  int m_group_nccl_version;  // the oldest NCCL loaded in the group
  int m_group_sm_major;      // the lowest compute capability in the group
  bool m_check;
  Group& m_group;                                  // never used by the destructor: a Membership may end its group first
  Registration m_registration;                     // -R, as asked
  nccl_detail::RegisteredEverywhere m_registered;  // agreed after each (re)registration
  cuda::Stream m_stream;
  nccl_detail::NcclMemory m_send_alloc;  // deregistered in the destructor, freed after the communicator
  nccl_detail::NcclMemory m_recv_alloc;
  cuda::DeviceBuffer m_wrong;  // the device-side wrong-element count (kernels)
  Communicator m_comm;
  std::string m_what = "queued NCCL work";  // the current case, for errors; read by m_timer
  CaseSpec m_spec;
  std::optional<TrafficPlan> m_plan;  // alltoallv's, for the current case
  Layout m_layout;
  OpArgs m_args;
  bool m_prepared = false;
  EventTimer m_timer;
  // --timing graph: the current case's ops, captured (destroyed before the communicator: declared after it).
  // Only the rank's thread uses them (the abort too: Communicator); recursive, as an abort inside a graph call
  // releases them.
  std::recursive_mutex m_graph_mutex;
  cuda::Graph m_graph;
  cuda::GraphExec m_graph_exec;

 public:
  ~NcclBackend() override {
    drop_graph();
    m_send_alloc.release(m_comm);  // registrations end before their communicator does, the memory after it
    m_recv_alloc.release(m_comm);
    m_comm.release_before_abort({});  // the graph's members go before the communicator (which may abort) does
  }
  NcclBackend(const NcclBackend&) = delete;
  NcclBackend& operator=(const NcclBackend&) = delete;
  NcclBackend(NcclBackend&&) = delete;
  NcclBackend& operator=(NcclBackend&&) = delete;
};

}  // namespace ccbench::nccl_detail
