// Memory admission with a scripted group: what each rank sends to the reductions, and the one line a
// refused case gets, worked out by hand from the numbers given.
#include "ccbench/memory_admission.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace ccbench {
namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;

/// One rank of a group whose other ranks' values are scripted: each max_all records what this rank sent,
/// then takes the element-wise maximum with the next scripted vector (none: this rank alone).
class ScriptedGroup final : public Group {
 public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 2; }
  void barrier() override {}
  void max_all(std::span<double> values) override {
    sent.emplace_back(values.begin(), values.end());
    if (others.empty()) {
      return;
    }
    const std::vector<double> other = others.front();
    others.pop_front();
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = std::max(values[i], other.at(i));
    }
  }
  void sum_all(std::span<std::uint64_t> /*values*/) override {}
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override {}
  std::vector<std::string> all_gather(const std::string& mine) override { return {mine}; }
  std::deque<std::vector<double>> others;
  std::vector<std::vector<double>> sent;
};

std::function<std::optional<HostMemory>()> room(std::uint64_t bytes) {
  return [bytes] { return HostMemory{bytes, "MemAvailable"}; };
}

TEST(MemoryAdmission, FitsWithOneReduction) {
  ScriptedGroup g;
  EXPECT_EQ(memory_refusal(g, MemoryNeed{.host_bytes = kGiB}, 4, room(8 * kGiB)), std::nullopt);
  ASSERT_EQ(g.sent.size(), 1U);
  EXPECT_DOUBLE_EQ(g.sent[0][0], 4.0 / (0.9 * 8));  // 4 GiB of 7.2 usable
}

TEST(MemoryAdmission, HostShortCountsEveryRankOnTheHost) {
  ScriptedGroup g;
  EXPECT_EQ(memory_refusal(g, MemoryNeed{.host_bytes = kGiB}, 4, room(2 * kGiB)),
            "needs 4.00 GiB of host memory (1.00 GiB per rank x 4 rank(s) on a host) where 2.00 GiB is available "
            "(MemAvailable, 90% usable): skipped before allocating");
  ASSERT_EQ(g.sent.size(), 2U);  // the ratios, then the numbers of the rank that has the worst
  EXPECT_DOUBLE_EQ(g.sent[1][0], 4.0 * kGiB);
}

TEST(MemoryAdmission, DeviceShort) {
  ScriptedGroup g;
  bool asked = false;
  const auto host = [&asked]() -> std::optional<HostMemory> {
    asked = true;
    return std::nullopt;
  };
  EXPECT_EQ(memory_refusal(g, MemoryNeed{.device_bytes = 10 * kGiB, .device_free_bytes = 8 * kGiB}, 1, host),
            "needs 10.00 GiB more of GPU memory where 8.00 GiB is free (cudaMemGetInfo, 90% usable): skipped "
            "before allocating");
  EXPECT_FALSE(asked);  // no host memory needed: the host is not asked
}

TEST(MemoryAdmission, AnotherRankShortGivesItsNumbersAndThisOneSendsNone) {
  ScriptedGroup g;
  g.others = {{3.0, 0.0}, {6.0 * kGiB, 2.0 * kGiB, 2.0}};  // the other rank: 6 GiB needed for 2 ranks, 2 GiB there
  EXPECT_EQ(memory_refusal(g, MemoryNeed{.host_bytes = kGiB}, 1, room(8 * kGiB)),
            "needs 6.00 GiB of host memory (3.00 GiB per rank x 2 rank(s) on a host) where 2.00 GiB is available "
            "(MemAvailable, 90% usable): skipped before allocating");
  ASSERT_EQ(g.sent.size(), 2U);
  EXPECT_EQ(g.sent[1], (std::vector<double>{0.0, 0.0, 0.0}));  // not the shortest: its numbers stay out
}

}  // namespace
}  // namespace ccbench
