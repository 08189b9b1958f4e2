#pragma once
// The backend interface: what the runner needs from a transport (MPI, NCCL, ...).
// Backends never print and never time on their own; the runner owns sampling and stopping.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ccbench/case_spec.hpp"
#include "ccbench/config.hpp"
#include "ccbench/rdma_info.hpp"

namespace ccbench {

/// Measures the time of what a backend enqueued. `stop()` waits until every op enqueued
/// since `start()` is complete on this rank and returns the elapsed seconds.
class Timer {
 public:
  Timer() = default;
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  Timer(Timer&&) = delete;
  Timer& operator=(Timer&&) = delete;
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual double stop() = 0;
  [[nodiscard]] virtual std::string clock() const = 0;  // "host steady_clock", "CUDA events"
};

/// Bytes a case adds, on the host and on this rank's GPU (with what that GPU has free).
struct MemoryNeed {
  std::uint64_t host_bytes = 0;
  std::uint64_t device_bytes = 0;
  std::uint64_t device_free_bytes = 0;  // meaningful only where device_bytes > 0
};

class Backend {
 public:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  Backend(Backend&&) = delete;
  Backend& operator=(Backend&&) = delete;
  virtual ~Backend() = default;

  [[nodiscard]] virtual std::string name() const = 0;
  /// Library versions and devices, for the JSON "environment" (e.g. {"mpi": "Open MPI v4.1.4"}).
  [[nodiscard]] virtual std::map<std::string, std::string> versions() const = 0;
  /// PCI bus id of the device this rank's buffers live on ("0000:18:00.0", lower case); empty
  /// for host memory. Topology uses it to find the rank's GPU and its links.
  [[nodiscard]] virtual std::string device_bus_id() const = 0;
  [[nodiscard]] virtual Support supports(const CaseSpec& spec) const = 0;
  /// Every case the sweep will prepare on this group (each size and placement, in order), before the first:
  /// a backend may size its buffers once for all of them (NCCL under -R allocates and registers once for the
  /// largest, as nccl-tests does, where that fits every rank). Collective over the group, before versions() is
  /// asked; the default does nothing.
  virtual void expect(std::span<const CaseSpec> cases) { (void)cases; }
  /// Allocates (or reuses) buffers for the case and makes it current.
  virtual void prepare(const CaseSpec& spec) = 0;
  /// The buffer registration the current case ran with, as the library granted it and agreed across the group
  /// (NCCL under -R: "local" or "symmetric"); empty for none. A result records this, never the mode asked for.
  [[nodiscard]] virtual std::string registration() const { return {}; }
  /// Writes the verification pattern into the current case's input (untimed).
  virtual void fill_pattern() = 0;
  /// Starts one op of the current case; may block until it is done (MPI does).
  virtual void enqueue() = 0;
  /// Waits until every enqueued op is complete on this rank.
  virtual void wait() = 0;
  /// Elements of this rank's output that differ from the expected pattern.
  virtual std::uint64_t count_wrong() = 0;
  virtual Timer& timer() = 0;
  /// --timing graph: captures `ops` ops of the current case into a CUDA graph (replacing any earlier
  /// one); false when the backend has no graphs (only NCCL has).
  virtual bool capture_graph(std::uint64_t ops) {
    (void)ops;
    return false;
  }
  /// Launches the captured graph: `ops` ops of the current case.
  virtual void launch_graph() {}
  /// Memory that prepare(spec) would allocate beyond what the backend holds already (its buffers
  /// only grow), so that a size that cannot fit is skipped before it is allocated.
  [[nodiscard]] virtual MemoryNeed memory_need(const CaseSpec& spec) const {
    (void)spec;
    return {};
  }
  /// Whether, under this timing, the backend's ops run back to back across samples as perftest runs them
  /// (ib_write_bw in batch timing; ib_write_lat's round trips in per_op and batch timing): stream_samples()
  /// then takes a chunk of samples instead of the runner timing them one by one.
  [[nodiscard]] virtual bool streams(TimingMode timing) const {
    (void)timing;
    return false;
  }
  /// The fewest ops a streamed sample should hold: what can be in flight at once (a sample shorter than that
  /// ends inside one burst of completions). A calibrated batch is raised to it; a --batch the user gave is not.
  [[nodiscard]] virtual std::uint64_t min_stream_ops() const { return 1; }
  /// Fills `per_op_s` with as many samples of `ops` ops each, timed within one continuous stream of ops
  /// (seconds per op as this rank sees them; zeros where this rank only receives). Every rank of the group
  /// calls it, after a barrier.
  virtual void stream_samples(std::uint64_t ops, std::span<double> per_op_s) {
    (void)ops;
    (void)per_op_s;
  }
  /// From the hang guard's thread when the job is being ended for a timeout, while this rank may be blocked
  /// inside the backend's library. Must return at once and only ask: the rank's own thread stops the library at
  /// its next poll (NCCL: ncclCommAbort there; NCCL allows it from another thread only on a non-blocking
  /// communicator with no thread inside NCCL). A rank blocked inside the library is ended with the job.
  virtual void abandon() noexcept {}
  /// The RDMA pair behind the current case (verbs only).
  [[nodiscard]] virtual std::optional<RdmaInfo> rdma_info() const { return std::nullopt; }
};

}  // namespace ccbench
