#pragma once
// The history index (docs/history.md): one SQLite file that holds, per result row of every result file under the
// folders it is given, what `trend` and `regression --history` read (the series' identity, the run's start, its
// figure, its software). The result files stay the source of truth: the index is updated incrementally from them
// (a file added, changed or removed since the last update is noticed) and can be rebuilt from them at any time.
// It never writes into a result file: it is one file of its own, refused where it is one of the inputs.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/result.hpp"

struct sqlite3;

namespace ccbench::report {

/// What one update did. A file is noticed as changed when its size or modification time (ns) differs from the
/// index's; it is then read and hashed (FNV-1a, 64 bits), and re-indexed only when its bytes differ ("touched":
/// the same bytes under a new time). A file gone from under a folder given is removed with its rows.
struct IndexUpdate {
  std::size_t files = 0;      // *.json files found under the folders given
  std::size_t added = 0;      // new since the last update
  std::size_t changed = 0;    // other bytes: re-read
  std::size_t touched = 0;    // a new size or time, the same bytes: kept
  std::size_t unchanged = 0;  // the same size and time: not read
  std::size_t removed = 0;    // in the index, gone from its folder
  std::size_t rows = 0;       // rows written by this update
  std::vector<std::string> removed_paths;
  std::vector<std::string> changed_paths;
};

/// A *.json file under the folders that is no result: another schema (a verdict, a log) or none is kept apart and
/// counted; a file that says it is a ccbench.result and cannot be read (truncated, malformed) is unreadable, with
/// the reader's one line. Both are listed by every command that reads the index.
struct IndexedProblem {
  std::string path;
  bool unreadable = false;  // a result that cannot be read (else: not a result)
  std::string message;
};

/// One row of one run, as the index keeps it.
struct HistoryPoint {
  std::string series;  // the row's identity and the group's hosts: what must match for two runs to be one series
  std::string bench;
  std::string hosts;  // the group's hosts, sorted, comma-joined
  std::string row;    // describe(key_of(row)): "allreduce_bench mpi batch float32 sum world(2) 1 MiB out-of-place"
  std::uint64_t size_bytes = 0;
  bool in_place = false;
  std::string run_id;
  std::string started_utc;  // the run's start: a series' order
  std::string label;
  std::string path;  // the result file
  std::string status;
  std::optional<double> busbw_GBps;  // the median sample's; unset when the row did not measure (status not ok)
  std::string software;              // libraries, drivers and firmware the run recorded: "mpi=Open MPI v4.1.4; ..."
  std::int64_t file_id = 0;          // the index's id of the file: the same for every row of one run
};

class HistoryIndex {
 public:
  /// Opens (creating it if absent) the index at `db_path`; ":memory:" for one kept only while this lives.
  explicit HistoryIndex(const std::string& db_path);
  ~HistoryIndex();
  HistoryIndex(const HistoryIndex&) = delete;
  HistoryIndex& operator=(const HistoryIndex&) = delete;
  HistoryIndex(HistoryIndex&&) = delete;
  HistoryIndex& operator=(HistoryIndex&&) = delete;

  /// Brings the index up to date with every *.json under `roots` (folders, walked recursively, or files), in one
  /// transaction: an update cut short leaves the index as it was.
  IndexUpdate update(const std::vector<std::string>& roots, std::uintmax_t max_bytes);
  /// Forgets everything, then updates: the index made again from the files alone.
  IndexUpdate rebuild(const std::vector<std::string>& roots, std::uintmax_t max_bytes);

  /// Every row indexed, by series and then by the run's start.
  [[nodiscard]] std::vector<HistoryPoint> points() const;
  /// The same, one at a time (series in the index's order, each by the run's start), none kept.
  void for_each_point(const std::function<void(HistoryPoint&&)>& take) const;
  /// The rows of one series (HistoryPoint::series), by the run's start.
  [[nodiscard]] std::vector<HistoryPoint> series(const std::string& key) const;
  /// The result files of the `n` latest runs that started before `before_utc`, recorded exactly `software` and hold a
  /// row of one of `series` (HistoryPoint::series), none under `exclude` (a folder's path, absolute): latest first.
  /// What `regression --history` takes as a node's own baseline.
  [[nodiscard]] std::vector<std::string> recent_files(const std::vector<std::string>& series,
                                                      const std::string& software, const std::string& before_utc,
                                                      std::size_t n, const std::string& exclude) const;
  [[nodiscard]] std::vector<IndexedProblem> problems() const;
  [[nodiscard]] std::size_t file_count() const;

 private:
  sqlite3* m_db = nullptr;
};

/// The identity of a row's series: its RowKey and the group's hosts.
std::string series_key(const CaseResult& result);
/// The software a run recorded, one "name=value" per thing, sorted: environment.libraries, each host's GPU driver
/// (topology's gpu_discovery), each HCA's firmware (fabric links).
std::string software_of(const ResultDocument& doc);

}  // namespace ccbench::report
