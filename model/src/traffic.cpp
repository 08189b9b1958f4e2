#include "ccbench/traffic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ccbench/errors.hpp"

namespace ccbench {

namespace {

constexpr std::uint64_t kAlign = 15;  // nccl-tests aligns every per-peer size down to 16 bytes

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

}  // namespace

Traffic parse_traffic_matrix(const std::string& text, const std::string& name, double scale) {
  if (!(scale >= 0.0) || !std::isfinite(scale)) {
    throw UsageError(fmt::format("--alltoallv-matrix-scale {}: expected a non-negative number", scale));
  }
  Traffic t;
  t.matrix_file = name;
  t.scale = scale;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t in_row = 0;
  const auto end_row = [&] {
    if (in_row == 0) {
      return;
    }
    if (rows > 0 && in_row != cols) {
      throw UsageError(fmt::format("{}: row {} has {} values, row 1 has {}: the matrix must be square", name, rows + 1,
                                   in_row, cols));
    }
    cols = in_row;
    ++rows;
    in_row = 0;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      end_row();
      ++i;
      continue;
    }
    if (space(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && !space(text[j])) {
      ++j;
    }
    const std::string word = text.substr(i, j - i);
    char* stop = nullptr;
    errno = 0;
    const double v = std::strtod(word.c_str(), &stop);
    if (stop != word.c_str() + word.size() || errno == ERANGE || !std::isfinite(v) || v < 0.0) {
      throw UsageError(fmt::format("{}: row {} column {}: '{}' is not a non-negative number of bytes", name, rows + 1,
                                   in_row + 1, word));
    }
    const long double scaled = static_cast<long double>(v) * static_cast<long double>(scale);
    if (scaled >= 1.8e19L) {
      throw UsageError(
          fmt::format("{}: row {} column {}: {} x {} bytes is too large", name, rows + 1, in_row + 1, word, scale));
    }
    t.matrix.push_back(static_cast<std::uint64_t>(scaled) & ~kAlign);
    ++in_row;
    i = j;
  }
  end_row();
  if (rows == 0) {
    throw UsageError(fmt::format("{}: an empty traffic matrix", name));
  }
  if (rows != cols) {
    throw UsageError(fmt::format("{}: a {} x {} matrix; it must be square (row i: the bytes rank i sends each rank)",
                                 name, rows, cols));
  }
  t.dim = static_cast<int>(rows);
  return t;
}

Traffic read_traffic_matrix(const std::string& path, double scale) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(fmt::format("--alltoallv-matrix {}: cannot be read", path));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_traffic_matrix(text.str(), path, scale);
}

std::uint64_t spread_bytes(int src, int dst, int nranks, std::uint64_t total_bytes, double spread) {
  if (nranks == 1) {
    return total_bytes & ~kAlign;
  }
  const int distance = (dst - src + nranks) % nranks;
  const auto n = static_cast<double>(nranks);
  const double sum_distances = n * (n - 1.0) / 2.0;
  const auto total = static_cast<double>(total_bytes);
  const double bytes = (1.0 - spread) * (total / n) + spread * (static_cast<double>(distance) * total / sum_distances);
  return static_cast<std::uint64_t>(bytes) & ~kAlign;
}

TrafficPlan::TrafficPlan(const Traffic& traffic, std::uint64_t count, std::size_t type_size, int nranks)
    : m_ranks(nranks), m_counts(static_cast<std::size_t>(nranks) * static_cast<std::size_t>(nranks)) {
  if (traffic.from_matrix() && traffic.dim < nranks) {
    throw UsageError(fmt::format("--alltoallv-matrix {}: {} rows for {} ranks (it needs a row per rank at least)",
                                 traffic.matrix_file, traffic.dim, nranks));
  }
  const std::uint64_t total = count * static_cast<std::uint64_t>(nranks) * type_size;
  for (int i = 0; i < nranks; ++i) {
    for (int j = 0; j < nranks; ++j) {
      const std::uint64_t bytes =
          traffic.from_matrix() ? traffic.matrix[static_cast<std::size_t>(i) * static_cast<std::size_t>(traffic.dim) +
                                                 static_cast<std::size_t>(j)]
                                : spread_bytes(i, j, nranks, total, traffic.spread);
      m_counts[(static_cast<std::size_t>(i) * static_cast<std::size_t>(nranks)) + static_cast<std::size_t>(j)] =
          bytes / type_size;
    }
  }
}

std::uint64_t TrafficPlan::count(int src, int dst) const {
  return m_counts[(static_cast<std::size_t>(src) * static_cast<std::size_t>(m_ranks)) + static_cast<std::size_t>(dst)];
}

std::uint64_t TrafficPlan::send_count(int rank) const { return send_offset(rank, m_ranks); }

std::uint64_t TrafficPlan::recv_count(int rank) const { return recv_offset(rank, m_ranks); }

std::uint64_t TrafficPlan::send_offset(int src, int dst) const {
  std::uint64_t sum = 0;
  for (int j = 0; j < dst; ++j) {
    sum += count(src, j);
  }
  return sum;
}

std::uint64_t TrafficPlan::recv_offset(int dst, int src) const {
  std::uint64_t sum = 0;
  for (int i = 0; i < src; ++i) {
    sum += count(i, dst);
  }
  return sum;
}

std::uint64_t TrafficPlan::most() const {
  std::uint64_t most = 0;
  for (int r = 0; r < m_ranks; ++r) {
    most = std::max({most, send_count(r), recv_count(r)});
  }
  return most;
}

TrafficPlan plan_of(const CaseSpec& spec, int nranks) {
  static const Traffic kGenerated{};
  return {spec.traffic ? *spec.traffic : kGenerated, spec.count, size_of(spec.dtype), nranks};
}

std::uint64_t send_elements(const CaseSpec& spec, int nranks, int rank) {
  const auto& coll = info(spec.collective);
  return coll.send == Span::Plan ? plan_of(spec, nranks).send_count(rank) : elements(coll.send, spec.count, nranks);
}

std::uint64_t recv_elements(const CaseSpec& spec, int nranks, int rank) {
  const auto& coll = info(spec.collective);
  return coll.recv == Span::Plan ? plan_of(spec, nranks).recv_count(rank) : elements(coll.recv, spec.count, nranks);
}

std::uint64_t most_elements(const CaseSpec& spec, int nranks) {
  const auto& coll = info(spec.collective);
  if (coll.send == Span::Plan) {
    return plan_of(spec, nranks).most();
  }
  return std::max(elements(coll.send, spec.count, nranks), elements(coll.recv, spec.count, nranks));
}

std::uint64_t case_bytes(const CaseSpec& spec, int nranks) {
  const auto& coll = info(spec.collective);
  return coll.algbw_bytes == Span::Plan ? plan_of(spec, nranks).most() * size_of(spec.dtype)
                                        : algbw_bytes(coll, spec.count, size_of(spec.dtype), nranks);
}

std::uint64_t case_count(const CaseSpec& spec, std::uint64_t bytes, int nranks) {
  const auto& coll = info(spec.collective);
  const std::size_t type_size = size_of(spec.dtype);
  if (coll.algbw_bytes != Span::Plan) {
    return count_for_bytes(coll, bytes, type_size, nranks);
  }
  if (spec.traffic && spec.traffic->from_matrix()) {
    CaseSpec probe = spec;
    probe.count = 1;
    return plan_of(probe, nranks).most();
  }
  // nccl-tests: (count / nranks) & ~(16 / eltSize - 1), count being the size in elements
  const std::uint64_t per_peer = bytes / type_size / static_cast<std::uint64_t>(nranks);
  const std::uint64_t align = type_size >= 16 ? 1 : 16 / type_size;
  return per_peer & ~(align - 1);
}

}  // namespace ccbench
