#pragma once
// What the two halves of nccl-tests' text reader share: import_nccl_tests.cpp reads a log's lines and tables,
// import_nccl_tests_runs.cpp tells each test's collective and ranks and checks its table against them.
#include <optional>
#include <string>

#include "ccbench/collective.hpp"
#include "import_logs.hpp"

namespace ccbench::report::detail {

/// The row of a test with the largest printed algbw: its busbw / algbw is the bus factor to the most digits.
struct Best {
  double alg = 0.0;
  double ratio = 0.0;
  int line = 0;
};

/// The text parser's file, options and line, and what it asks of a test once its table is read: its collective
/// and ranks (finish), and its name from a log's or --test's word (set_test).
class TextRuns {
 public:
  TextRuns(const std::string& file, const ImportOptions& options) : m_file(file), m_options(options) {}

 protected:
  [[noreturn]] void fail(const std::string& what) const;
  void set_test(ImportedTest& t, std::string name, bool from_log);
  void finish(ImportedTest& t, const Best& best);

  const std::string& m_file;
  const ImportOptions& m_options;
  int m_line = 0;

 private:
  void check_rates(const ImportedTest& t, const Best& b) const;
  [[nodiscard]] static std::optional<Collective> infer_test(const ImportedTest& t, const Best& b, int ranks);
  int ranks_from_ratio(ImportedTest& t, const Best& b) const;
  static std::string test_name(const ImportedTest& t);
};

}  // namespace ccbench::report::detail
