#include "ccbench/pairing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace ccbench {
namespace {

void check_rank_count(int n, const char* function) {
  if (n < 0 || n > kMaxPairingRanks) {
    throw std::invalid_argument(fmt::format("{}: {} ranks is outside 0..{}", function, n, kMaxPairingRanks));
  }
}

PairOfRanks ordered(int a, int b) { return a < b ? PairOfRanks{a, b} : PairOfRanks{b, a}; }

}  // namespace

std::vector<std::vector<PairOfRanks>> all_pairs_rounds(int n) {
  check_rank_count(n, "all_pairs_rounds");
  if (n < 2) {
    return {};
  }
  // The circle method over an even count m: seat m-1 stays put, the others turn one place a
  // round. In round r seat m-1 meets r, and r+i meets r-i (mod m-1) for i = 1..m/2-1. For odd n
  // the extra seat m-1 = n is empty, so whoever would meet it sits the round out.
  const int m = n % 2 == 0 ? n : n + 1;
  const int turning = m - 1;
  std::vector<std::vector<PairOfRanks>> rounds(static_cast<std::size_t>(turning));
  for (int r = 0; r < turning; ++r) {
    auto& round = rounds[static_cast<std::size_t>(r)];
    round.reserve(static_cast<std::size_t>(n / 2));
    if (turning < n) {
      round.push_back(ordered(turning, r));
    }
    for (int i = 1; i < m / 2; ++i) {
      round.push_back(ordered((r + i) % turning, (r - i + turning) % turning));
    }
    std::sort(round.begin(), round.end());
  }
  return rounds;
}

std::vector<PairOfRanks> consecutive_pairs(int n) {
  check_rank_count(n, "consecutive_pairs");
  std::vector<PairOfRanks> pairs;
  pairs.reserve(static_cast<std::size_t>(n / 2));
  for (int r = 0; r + 1 < n; r += 2) {
    pairs.emplace_back(r, r + 1);
  }
  return pairs;
}

}  // namespace ccbench
