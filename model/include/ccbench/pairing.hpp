#pragma once
// Which ranks meet in a pairwise bench (ib_write_bw_bench, ib_write_lat_bench). Pure functions
// of the number of ranks, so every rank computes the same schedule without talking.
#include <utility>
#include <vector>

namespace ccbench {

/// One pair of ranks; the lower rank first.
using PairOfRanks = std::pair<int, int>;

/// The largest rank count the pairing functions accept. all_pairs_rounds(n) holds n(n-1)/2
/// pairs, so this is far more than anything measured pairwise.
inline constexpr int kMaxPairingRanks = 65536;

/// Rounds of disjoint pairs in which every unordered pair of ranks 0..n-1 meets exactly once
/// (the circle method of a round-robin tournament). Even n: n-1 rounds of n/2 pairs. Odd n: n
/// rounds of (n-1)/2 pairs, a different rank sitting out each round. Within a round the pairs
/// are sorted by their lower rank. n < 2: no rounds. Throws std::invalid_argument when n < 0 or
/// n > kMaxPairingRanks.
std::vector<std::vector<PairOfRanks>> all_pairs_rounds(int n);

/// Disjoint pairs of consecutive ranks: 0-1, 2-3, ...; an odd last rank is left out (as
/// --split pairs does). n < 2: none. Throws std::invalid_argument when n < 0 or
/// n > kMaxPairingRanks.
std::vector<PairOfRanks> consecutive_pairs(int n);

}  // namespace ccbench
