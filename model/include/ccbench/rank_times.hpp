#pragma once
// Each rank's own times (--per-rank, issue 27) and the straggler view built on them.
//
// A collective ends on every rank at about the same moment: the last rank to arrive. A rank that is late to
// every op (a CPU-starved process, a late kernel launch) therefore has the SHORTEST time of its sample: the
// others spent theirs waiting for it. So the straggler is the rank that is most often the fastest of a sample
// ("last to arrive"), not the slowest; the slowest ranks are its victims. nccl-tests' analysis script
// (tools/analyze_perf_json.py --straggler, 2.19) ranks processes by their average time and names the slowest;
// both are kept here (`last` and `slowest`), and only the first names a straggler. A rank that is slow inside
// the op (a slow link or GPU) slows every rank alike: per-rank times do not show it (the fleet sweep does).
#include <cstdint>
#include <string>
#include <vector>

namespace ccbench {

struct RankTimes {
  int rank = 0;  // world rank
  double p50_s = 0;
  double mean_s = 0;
  double min_s = 0;
  double max_s = 0;
  double cv = 0;                  // standard deviation over mean
  std::uint64_t last = 0;         // samples in which this rank had the shortest time: it arrived last
  std::uint64_t slowest = 0;      // samples in which it had the longest time: it waited longest
  std::vector<double> samples_s;  // per op, this rank's own, in sample order
};

/// Each rank's summary from its own per-op sample times (`by_rank[g]`: group rank g, all the same length);
/// `world_ranks[g]` is its world rank.
std::vector<RankTimes> summarize_ranks(const std::vector<std::vector<double>>& by_rank,
                                       const std::vector<int>& world_ranks);

/// One group's straggler evidence over the cases of a run that kept per-rank times.
struct StragglerVerdict {
  std::string group_id;
  int ranks = 0;
  std::uint64_t samples = 0;  // samples over every case
  int rank = -1;              // world rank most often last to arrive
  double share = 0;           // ... its share of the samples
  double threshold = 0;       // the share that names it: halfway between the fair share 1/n and always
  double wait_ratio = 0;      // the median over cases of (the others' median time / its own)
  double wait_s = 0;          // the median over cases of (the others' median time - its own): how long they wait
  bool named = false;         // share >= threshold, wait_s >= kStragglerMinWaitS, samples >= kStragglerMinSamples
};

inline constexpr std::uint64_t kStragglerMinSamples = 20;
/// The wait that names a straggler. A rank's role in the algorithm also shows in its times (MPI's small-message
/// all-reduce on 4 ranks here: one rank's op 0.6 us against the others' 4-7 us, every sample), and so does the
/// order in which a barrier releases the ranks (one rank "last" in 91% of 180 samples, the others waiting 10 us
/// for it at 64 KiB): a few microseconds, where a straggler worth naming costs the others tens or hundreds.
inline constexpr double kStragglerMinWaitS = 20e-6;

struct CaseResult;
struct ResultDocument;
/// Per group (in order of first appearance), over its cases with per-rank times.
std::vector<StragglerVerdict> straggler_verdicts(const std::vector<CaseResult>& results);

/// One line per group with per-rank times: the straggler named with its host and device (from the document's
/// binding records), or the rank nearest to being named and why it is not.
std::vector<std::string> straggler_findings(const ResultDocument& doc);

}  // namespace ccbench
