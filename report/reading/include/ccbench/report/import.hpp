#pragma once
// ccbench-report import: other tools' logs read into a result document, so that table, compare, accept and html
// take a site's nccl-tests and perftest history beside ccbench's own runs (issue 27).
//
// - nccl-tests: the text table of every 2.x version (the 2.0-2.9 and 2.10-2.11 layouts with their `error`
//   column, `N/A`, times printed without decimals from 10000 us, several tests in one file, Open MPI's
//   --tag-output and srun's --label prefixes, NCCL's INFO lines anywhere), and the JSON file of -J (2.17.3+),
//   with the per-iteration and per-process times of -I 1 (2.19.2+).
// - perftest: ib_write_bw and ib_write_lat (MB/sec and MiB/sec are 2^20 B/s, Gb/sec 10^9 bit/s).
//
// Several logs of one test become samples of the same rows (a row's time from each log, or every iteration's
// with nccl-tests' -I 1), so that compare has the six samples it needs for a confidence interval.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/result.hpp"

namespace ccbench::report {

/// One log as read: its name for messages and the result's source, its bytes, and when it was last written
/// (the only clock a text log has), as ISO 8601 UTC.
struct ImportLog {
  std::string name;
  std::string text;
  std::string modified_utc;
};

struct ImportOptions {
  std::string test;               // --test all_reduce: the test of a nccl-tests log that does not name it (2.0-2.11)
  std::optional<int> ranks;       // --ranks: the ranks of a log that names none (its Rank lines cut away)
  std::string label;              // the run's label
  std::vector<std::string> argv;  // the importer's command line, for a log that does not keep its own
};

/// The logs of one tool as one document; each log's rows are samples of the rows they measure. Throws
/// InputError (one line: "FILE: line N: what") for an unknown, malformed or truncated log, or logs of two tools.
ResultDocument import_logs(const std::vector<ImportLog>& logs, const ImportOptions& options);

/// Reads each path (a regular file of at most `max_bytes`, as read_input_file) with its modification time.
std::vector<ImportLog> read_logs(const std::vector<std::string>& paths, std::uintmax_t max_bytes);

}  // namespace ccbench::report
