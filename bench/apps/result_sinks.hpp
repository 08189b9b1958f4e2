#pragma once
// Where a run's results go (world rank 0): the JSON file, the console table. The session emits the same
// events to each sink, in order, as google/benchmark's reporters and nvbench's printers receive theirs;
// a sink never measures. The session serialises the calls: hang() comes from the hang guard's thread.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "ccbench/result.hpp"
#include "ccbench/table_printer.hpp"

namespace ccbench {

class ResultSink {
 public:
  ResultSink() = default;
  ResultSink(const ResultSink&) = delete;
  ResultSink& operator=(const ResultSink&) = delete;
  ResultSink(ResultSink&&) = delete;
  ResultSink& operator=(ResultSink&&) = delete;
  virtual ~ResultSink() = default;

  /// Whether the sink reads the document: the session calls those under the document's lock (the hang
  /// guard's thread adds to it), and the others outside it, so a blocked terminal never holds up the
  /// recording of a hang.
  [[nodiscard]] virtual bool reads_document() const = 0;
  /// Set-up is done; the document has its run and environment.
  virtual void begin(const TableHeader& header) = 0;
  /// One size is measured in every group: `rows` (one per group and placement) are now in `doc`.
  virtual void size_done(const ResultDocument& doc, const std::vector<CaseResult>& rows) = 0;
  /// A line between two sweeps of the run (--nccl-variants).
  virtual void note(const std::string& text) = 0;
  /// A hang marked the cases in progress timed out; they are in `doc`. Must not throw.
  virtual void hang(const ResultDocument& doc) noexcept = 0;
  /// The run is over; `doc` is complete.
  virtual void end(const ResultDocument& doc) = 0;
};

/// The result file, replaced atomically after every size, at a hang and at the end.
std::unique_ptr<ResultSink> json_file_sink(std::string path, std::string program);

/// --out -: the document on stdout, once, at the end.
std::unique_ptr<ResultSink> json_stdout_sink();

/// The console table (stdout; stderr when the JSON goes to stdout).
std::unique_ptr<ResultSink> table_sink(std::FILE* out, TablePrinter printer, std::string result_path);

}  // namespace ccbench
