#pragma once
// The backend interface: what the runner needs from a transport (MPI, NCCL, ...).
// Backends never print and never time on their own; the runner owns sampling and stopping.
#include <cstdint>
#include <map>
#include <string>

#include "ccbench/collective.hpp"
#include "ccbench/types.hpp"

namespace ccbench {

/// One measured case: which collective, on which data, in place or not.
struct CaseSpec {
  Collective collective = Collective::AllReduce;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  bool in_place = false;
  std::uint64_t count = 0;  // nccl-tests' count (see collective.hpp)
};

struct Support {
  bool supported = true;
  std::string reason;  // why not, when not
};

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
  /// Allocates (or reuses) buffers for the case and makes it current.
  virtual void prepare(const CaseSpec& spec) = 0;
  /// Writes the verification pattern into the current case's input (untimed).
  virtual void fill_pattern() = 0;
  /// Starts one op of the current case; may block until it is done (MPI does).
  virtual void enqueue() = 0;
  /// Waits until every enqueued op is complete on this rank.
  virtual void wait() = 0;
  /// Elements of this rank's output that differ from the expected pattern.
  virtual std::uint64_t count_wrong() = 0;
  virtual Timer& timer() = 0;
};

}  // namespace ccbench
