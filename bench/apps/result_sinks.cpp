#include "result_sinks.hpp"

#include <fmt/format.h>

#include <utility>

#include "ccbench/output_file.hpp"
#include "ccbench/result_json.hpp"

namespace ccbench {

namespace {

class JsonSink final : public ResultSink {
 public:
  JsonSink(std::string path, std::string program) : m_path(std::move(path)), m_program(std::move(program)) {}
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
  void end(const ResultDocument& doc) override {
    write(doc);
    if (m_path == "-") {
      fmt::print("{}\n", json_text(to_json(doc), 2));
    }
  }

 private:
  void write(const ResultDocument& doc) const {
    if (m_path != "-") {
      write_file_atomically(m_path, json_text(to_json(doc), 2) + "\n");
    }
  }

  std::string m_path;
  std::string m_program;
};

class TableSink final : public ResultSink {
 public:
  TableSink(std::FILE* out, TablePrinter printer, std::string result_path)
      : m_out(out), m_printer(std::move(printer)), m_result_path(std::move(result_path)) {}
  void begin(const TableHeader& header) override { m_printer.header(header); }
  void size_done(const ResultDocument& /*doc*/, const std::vector<CaseResult>& rows) override { m_printer.rows(rows); }
  void note(const std::string& text) override {
    fmt::print(m_out, "# {}\n", text);
    std::fflush(m_out);
  }
  void hang(const ResultDocument& /*doc*/) noexcept override {}
  void end(const ResultDocument& doc) override {
    m_printer.footer(doc.results, m_result_path == "-" ? std::string{} : m_result_path);
  }

 private:
  std::FILE* m_out;
  TablePrinter m_printer;
  std::string m_result_path;
};

}  // namespace

std::unique_ptr<ResultSink> json_sink(std::string path, std::string program) {
  return std::make_unique<JsonSink>(std::move(path), std::move(program));
}

std::unique_ptr<ResultSink> table_sink(std::FILE* out, TablePrinter printer, std::string result_path) {
  return std::make_unique<TableSink>(out, std::move(printer), std::move(result_path));
}

}  // namespace ccbench
