#pragma once
// alltoallv's traffic (nccl-tests 2.19, src/alltoallv.cu): how many bytes each rank sends each rank, from a spread
// or a matrix file, and the case sizes that follow from it. The other collectives' buffers follow from their count
// and the rank count alone (Span::Count, Span::CountTimesRanks); alltoallv's differ per rank and per peer
// (Span::Plan), so the spec-aware functions here are what backends, patterns and results ask.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ccbench/case_spec.hpp"

namespace ccbench {

/// Where alltoallv's per-peer bytes come from (--alltoallv-spread, --alltoallv-matrix; nccl-tests'
/// NCCL_TESTS_ALLTOALLV_SPREAD, _MATRIX_FILE and _MATRIX_SCALE when the flags are not given).
struct Traffic {
  double spread = 1.0;                // 0: every peer alike; 1: bytes in proportion to the distance (j - i) mod n
  std::string matrix_file;            // empty: the generated pattern
  double scale = 1.0;                 // applied to the matrix's values
  int dim = 0;                        // the matrix is dim x dim
  std::vector<std::uint64_t> matrix;  // bytes[i * dim + j] from rank i to rank j, scaled, aligned down to 16 B
  [[nodiscard]] bool from_matrix() const { return !matrix_file.empty(); }
};

/// The matrix of a file as nccl-tests reads it: whitespace-separated non-negative numbers (bytes), a square, each
/// value times `scale` aligned down to 16 B. Throws UsageError (one line naming the file, the row and column) when
/// it cannot be read, is empty, not square, or holds a value that is not a non-negative number.
Traffic read_traffic_matrix(const std::string& path, double scale);
/// The same from text (tests, and the file's bytes).
Traffic parse_traffic_matrix(const std::string& text, const std::string& name, double scale);

/// One case's traffic among `nranks` ranks, in elements.
class TrafficPlan {
 public:
  /// Generated: `count` is nccl-tests' per-peer count (its total is count x nranks elements); matrix: count is not
  /// used. Throws UsageError when the matrix has fewer rows than there are ranks.
  TrafficPlan(const Traffic& traffic, std::uint64_t count, std::size_t type_size, int nranks);
  [[nodiscard]] int ranks() const { return m_ranks; }
  [[nodiscard]] std::uint64_t count(int src, int dst) const;
  [[nodiscard]] std::uint64_t send_count(int rank) const;
  [[nodiscard]] std::uint64_t recv_count(int rank) const;
  /// Elements of `src`'s input before its segment for `dst` (segments in peer order, as nccl-tests sends them).
  [[nodiscard]] std::uint64_t send_offset(int src, int dst) const;
  /// Elements of `dst`'s output before the segment from `src`.
  [[nodiscard]] std::uint64_t recv_offset(int dst, int src) const;
  /// The busiest rank's elements: max over ranks of max(send, receive). S = this x type size (nccl-tests' algbw
  /// counts that rank's bytes).
  [[nodiscard]] std::uint64_t most() const;

 private:
  int m_ranks = 0;
  std::vector<std::uint64_t> m_counts;  // [src * ranks + dst]
};

/// nccl-tests' per-peer bytes of the generated pattern: (1 - s) x total / n + s x d x total / (n (n - 1) / 2) with
/// d = (dst - src) mod n, aligned down to 16 B; one rank keeps total aligned down.
std::uint64_t spread_bytes(int src, int dst, int nranks, std::uint64_t total_bytes, double spread);

/// The plan of an alltoallv case (spec.traffic must be set).
TrafficPlan plan_of(const CaseSpec& spec, int nranks);

/// Elements of `rank`'s input and output, and the most any rank holds (the buffers every rank allocates alike).
std::uint64_t send_elements(const CaseSpec& spec, int nranks, int rank);
std::uint64_t recv_elements(const CaseSpec& spec, int nranks, int rank);
std::uint64_t most_elements(const CaseSpec& spec, int nranks);
/// S in bytes: nccl-tests' for every collective (algbw_bytes), the busiest rank's bytes for alltoallv.
std::uint64_t case_bytes(const CaseSpec& spec, int nranks);
/// The count of a case of `bytes` (count_for_bytes); alltoallv: per peer, its bytes / n aligned down to 16 B (the
/// generated pattern), or the busiest rank's elements (a matrix, whose values are the sizes).
std::uint64_t case_count(const CaseSpec& spec, std::uint64_t bytes, int nranks);

}  // namespace ccbench
