#pragma once
// The cases of a fleet sweep, kept compact: a sweep of 1,024 hosts is half a million pairs, so the verdict keeps a
// few numbers of each (who, how it ended, its figures) and not the results. Built from documents in memory (the
// page) or streamed from the files (the fleet verdict), with the checks that make it one sweep.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ccbench/report/input.hpp"

namespace ccbench::report {

class FleetSweep {
 public:
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  /// One pair (--all-pairs) or group of hosts (--hosts-per-group) at one size and placement.
  struct Case {
    std::uint32_t file = 0;
    std::uint32_t first_rank = 0;  // its ranks: ranks()[first_rank, first_rank + rank_count)
    std::uint32_t rank_count = 0;
    std::uint32_t first_host = 0;  // its hosts as the result names them (a pair within a host: one)
    std::uint32_t host_count = 0;
    std::string group_id;
    CaseStatus status = CaseStatus::Ok;
    std::uint64_t size_bytes = 0;
    bool in_place = false;
    double busbw_GBps = kNone;  // of the median sample
    double p50_s = kNone;       // the median sample's time per op
    double min_s = kNone;       // the fastest sample's
    double peak_GBps = kNone;   // the spec's, when the result knew it

    [[nodiscard]] bool measured() const { return status == CaseStatus::Ok && !std::isnan(busbw_GBps); }
  };
  /// A file of the sweep: its path, and its document without the results (environment, topology).
  struct File {
    std::string path;
    LoadedRun head;
  };

  /// Of documents already read. Throws InputError when they are not one sweep (see add_result).
  static FleetSweep of(const std::vector<LoadedRun>& runs);
  /// Streams the files the arguments name (files, or directories of them): no result is kept whole.
  static FleetSweep read(const std::vector<std::string>& paths, std::uintmax_t max_bytes);

  [[nodiscard]] const std::vector<Case>& cases() const { return m_cases; }
  [[nodiscard]] const std::vector<File>& files() const { return m_files; }
  [[nodiscard]] const std::vector<std::string>& host_names() const { return m_host_names; }
  [[nodiscard]] const std::vector<int>& ranks() const { return m_ranks; }
  [[nodiscard]] const std::vector<std::uint32_t>& hosts() const { return m_hosts; }
  [[nodiscard]] const std::string& benchmark() const { return m_benchmark; }
  [[nodiscard]] const std::string& kind() const { return m_kind; }  // "pair" or "hosts"
  [[nodiscard]] const std::set<std::uint64_t>& sizes() const { return m_sizes; }
  [[nodiscard]] bool has_out_of_place() const { return m_has_out_of_place; }
  /// Every host of every file's environment, in name order.
  [[nodiscard]] std::set<std::string> all_hosts() const;
  /// The fewest ranks any host of the sweep has (the lanes a pair sweep can judge), at least 1.
  [[nodiscard]] int lanes() const;
  /// Local rank of `rank` on `host` in file `file` (its index among the host's ranks), or -1.
  [[nodiscard]] int local_rank(std::uint32_t file, const std::string& host, int rank) const;

 private:
  void begin_file(std::string path);
  /// Keeps a fleet case (a pair or a group of hosts) of the current file; ignores any other result.
  void add_result(const CaseResult& r);
  /// The file's other parts, once read; checks that the file belongs to the sweep (one bench, one kind, the
  /// same sizes as the files before).
  void end_file(LoadedRun head);
  std::uint32_t host_index(const std::string& name);

  std::vector<Case> m_cases;
  std::vector<File> m_files;
  std::vector<int> m_ranks;
  std::vector<std::uint32_t> m_hosts;
  std::vector<std::string> m_host_names;
  std::unordered_map<std::string, std::uint32_t> m_host_index;
  std::string m_benchmark;
  std::string m_kind;
  std::string m_first_file;
  std::set<std::uint64_t> m_sizes;
  std::string m_sizes_file;
  std::set<std::uint64_t> m_file_sizes;  // of the file being read
  bool m_has_out_of_place = false;
  std::vector<std::unordered_map<std::string, std::vector<int>>> m_file_hosts;  // per file: host -> its ranks
};

}  // namespace ccbench::report
