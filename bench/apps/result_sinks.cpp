#include "result_sinks.hpp"

#include <fmt/format.h>

#include <utility>

#include "ccbench/output_file.hpp"
#include "ccbench/rank_times.hpp"
#include "ccbench/result_json.hpp"

namespace ccbench {

namespace {

class JsonFileSink final : public ResultSink {
 public:
  JsonFileSink(std::string path, std::string program) : m_path(std::move(path)), m_program(std::move(program)) {}
  [[nodiscard]] bool reads_document() const override { return true; }
  void begin(const TableHeader& /*header*/) override {}
  void size_done(const ResultDocument& doc, const std::vector<CaseResult>& /*rows*/) override { write(doc); }
  void note(const std::string& /*text*/) override {}
  void hang(const ResultDocument& doc) noexcept override {
    try {
      write(doc);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: error: {}\n", m_program, e.what());
    }
  }
  void end(const ResultDocument& doc) override { write(doc); }

 private:
  void write(const ResultDocument& doc) const { write_file_atomically(m_path, json_text(to_json(doc), 2) + "\n"); }

  std::string m_path;
  std::string m_program;
};

class JsonStdoutSink final : public ResultSink {
 public:
  [[nodiscard]] bool reads_document() const override { return true; }
  void begin(const TableHeader& /*header*/) override {}
  void size_done(const ResultDocument& /*doc*/, const std::vector<CaseResult>& /*rows*/) override {}
  void note(const std::string& /*text*/) override {}
  void hang(const ResultDocument& /*doc*/) noexcept override {}
  void end(const ResultDocument& doc) override { fmt::print("{}\n", json_text(to_json(doc), 2)); }
};

class TableSink final : public ResultSink {
 public:
  TableSink(std::FILE* out, TablePrinter printer, std::string result_path)
      : m_out(out), m_printer(std::move(printer)), m_result_path(std::move(result_path)) {}
  [[nodiscard]] bool reads_document() const override { return false; }  // end() reads it: called under the lock
  void begin(const TableHeader& header) override { m_printer.header(header); }
  void size_done(const ResultDocument& /*doc*/, const std::vector<CaseResult>& rows) override { m_printer.rows(rows); }
  void note(const std::string& text) override {
    fmt::print(m_out, "# {}\n", text);
    std::fflush(m_out);
  }
  void hang(const ResultDocument& /*doc*/) noexcept override {}
  void end(const ResultDocument& doc) override {
    m_printer.footer(doc.results, m_result_path == "-" ? std::string{} : m_result_path);
    for (const auto& finding : fabric_findings(doc.fabric)) {  // the fabric's own evidence of a slow result
      fmt::print(m_out, "# fabric: {}\n", finding);
    }
    for (const auto& finding : straggler_findings(doc)) {  // --per-rank: the rank the others waited for
      fmt::print(m_out, "# {}\n", finding);
    }
    std::fflush(m_out);
  }

 private:
  std::FILE* m_out;
  TablePrinter m_printer;
  std::string m_result_path;
};

}  // namespace

std::unique_ptr<ResultSink> json_file_sink(std::string path, std::string program) {
  return std::make_unique<JsonFileSink>(std::move(path), std::move(program));
}

std::unique_ptr<ResultSink> json_stdout_sink() { return std::make_unique<JsonStdoutSink>(); }

std::unique_ptr<ResultSink> table_sink(std::FILE* out, TablePrinter printer, std::string result_path) {
  return std::make_unique<TableSink>(out, std::move(printer), std::move(result_path));
}

}  // namespace ccbench
