#pragma once
// What the importer's parsers read from one log, before the logs are merged into one result document.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/rdma_info.hpp"
#include "ccbench/report/import.hpp"
#include "ccbench/statistics.hpp"
#include "ccbench/types.hpp"

namespace ccbench::report::detail {

/// One measured case of one log (a table row's out-of-place or in-place half, a perftest row).
struct ImportedRow {
  DType dtype = DType::Uint8;
  ReduceOp op = ReduceOp::Sum;
  int root = -1;
  bool in_place = false;
  std::uint64_t count = 0;
  std::uint64_t size_bytes = 0;
  std::optional<double> time_s;                    // the log's time per op; unset where it printed N/A or nan
  std::vector<double> iter_times_s;                // nccl-tests -I 1: each iteration's time (max over ranks)
  std::vector<std::vector<double>> per_process_s;  // nccl-tests -I 1, several processes: each one's own times
  std::optional<std::uint64_t> wrong;              // unset where not checked (N/A, -c 0, the old error column)
  std::optional<Summary> latency;                  // perftest ib_write_lat: its own summary of the iterations
  std::optional<double> bw_peak_GBps;              // perftest ib_write_bw's BW peak
  std::uint64_t iterations = 0;
  int line = 0;
  bool no_redop = false;  // nccl-tests printed "none" in its redop column: the test reduces nothing
  std::string failed;     // a row where the run ended early: why (the failure line, or the cut); no time
};

struct ImportedDevice {
  int rank = 0;
  std::string host;
  std::string gpu;     // "NVIDIA H100 80GB HBM3"
  std::string bus_id;  // "0000:1b:00"
};

/// One test of one log: nccl-tests' table (a file may hold several) or a perftest run.
struct ImportedTest {
  std::string file;
  int line = 0;         // where it starts
  std::string tool;     // nccl-tests | perftest
  std::string format;   // text | json
  std::string version;  // the tool's, when the log names it
  Collective coll = Collective::AllReduce;
  int ranks = 0;
  std::vector<ImportedDevice> devices;
  std::string nccl_version;
  std::optional<RdmaInfo> rdma;
  std::string started_utc;
  std::string ended_utc;
  std::vector<std::string> argv;
  std::vector<std::string> notes;
  std::vector<ImportedRow> rows;
  bool root_column = false;  // nccl-tests 2.12+ tables: redop and root columns (what infers an unnamed test)
};

std::vector<ImportedTest> parse_nccl_tests_text(std::string_view text, const std::string& file,
                                                const ImportOptions& options);
std::vector<ImportedTest> parse_nccl_tests_json(std::string_view text, const std::string& file);
std::vector<ImportedTest> parse_perftest(std::string_view text, const std::string& file);

/// A table row printed by another rank than the log's first row (Open MPI's "[1,3]<stdout>:" among "[1,0]" rows):
/// its line number (from 1) and rank; nullopt where every row comes from one rank, or the lines carry no prefix.
std::optional<std::pair<int, int>> stray_rank_row(std::string_view text);
/// The lines of a log with Open MPI's "[1,0]<stdout>:" and srun's "0: " prefixes removed and the ends trimmed.
std::vector<std::string> log_lines(std::string_view text);
/// A whole number or a decimal as the tools print them ("182.87", "15668", "2e-07"); nullopt otherwise.
std::optional<double> number(std::string_view token);
std::vector<std::string> tokens(std::string_view line);
/// A count or size as a whole non-negative number below 2^53 (what a double holds exactly); nullopt otherwise.
std::optional<std::uint64_t> whole(std::optional<double> value);
/// A rank, root or small setting: a whole number within +-2^20; nullopt otherwise.
std::optional<int> small_int(std::optional<double> value);
/// Whether std::regex may look at `line`: libstdc++'s matcher recurses per character, so a line of a hostile
/// log a few ten thousand characters long would overflow the stack. Every line a parser reads with a regex is a
/// short header line of the tool's.
inline bool regex_safe(const std::string& line) { return line.size() <= 1024; }

}  // namespace ccbench::report::detail
