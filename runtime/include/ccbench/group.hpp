#pragma once
// The processes that take part in a run, as the runner needs them: rank, size, and the
// few collective operations the harness itself uses (never the measured operation).
// Implemented by the MPI backend; core never includes a vendor header.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ccbench {

class Group {
 public:
  Group() = default;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  Group(Group&&) = delete;
  Group& operator=(Group&&) = delete;
  virtual ~Group() = default;

  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  virtual void barrier() = 0;
  /// Element-wise maximum across ranks, result on every rank.
  virtual void max_all(std::span<double> values) = 0;
  /// Element-wise sum across ranks, result on every rank.
  virtual void sum_all(std::span<std::uint64_t> values) = 0;
  virtual void broadcast(std::span<std::byte> bytes, int root) = 0;
  /// Every rank's string, in rank order, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
};

}  // namespace ccbench
