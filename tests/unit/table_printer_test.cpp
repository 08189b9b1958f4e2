#include "ccbench/table_printer.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace ccbench {
namespace {

// What the printer wrote, read back from a temporary file.
class Captured {
 public:
  Captured() : m_file(std::tmpfile()) {}
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;
  ~Captured() { std::fclose(m_file); }
  [[nodiscard]] std::FILE* file() const { return m_file; }
  [[nodiscard]] std::string text() const {
    std::rewind(m_file);
    std::string out;
    for (int c = std::fgetc(m_file); c != EOF; c = std::fgetc(m_file)) {
      out.push_back(static_cast<char>(c));
    }
    return out;
  }

 private:
  std::FILE* m_file;
};

CaseResult measured(std::uint64_t bytes, double seconds) {
  CaseResult r;
  r.spec = {Collective::IbWriteBw, DType::Uint8, ReduceOp::Sum, 0, false, bytes};
  r.size_bytes = bytes;
  r.status = CaseStatus::Ok;
  r.time = Summary{};
  r.time->p50 = seconds;
  r.algbw_GBps = static_cast<double>(bytes) / seconds / 1e9;
  r.busbw_GBps = r.algbw_GBps;
  r.wrong_elements = 0;
  return r;
}

CaseResult skipped(std::uint64_t bytes, std::string reason) {
  CaseResult r = measured(bytes, 1.0);
  r.status = CaseStatus::Skipped;
  r.time.reset();
  r.reason = std::move(reason);
  return r;
}

TEST(TablePrinter, GbitsMultipliesTheRatesByEightAndSaysSo) {
  Captured bytes;
  Captured bits;
  const TablePrinter in_bytes(bytes.file(), {false});
  const TablePrinter in_bits(bits.file(), {false}, false, RateUnit::Gbps);
  for (const auto* p : {&in_bytes, &in_bits}) {
    p->header({"t", "verbs", 2, 1, "", "per_op", "n", {}, ""});
    p->row({measured(1'000'000, 1e-4)});  // 10 GB/s
    p->footer({measured(1'000'000, 1e-4)}, "");
  }
  EXPECT_NE(bytes.text().find("rates in GB/s"), std::string::npos);
  EXPECT_NE(bytes.text().find("(GB/s)  (GB/s)"), std::string::npos);
  EXPECT_NE(bytes.text().find("  10.00   10.00"), std::string::npos) << bytes.text();
  EXPECT_NE(bytes.text().find("avg bus bandwidth: 10.000 GB/s"), std::string::npos);
  EXPECT_NE(bits.text().find("rates in Gb/s"), std::string::npos);
  EXPECT_NE(bits.text().find("(Gb/s)  (Gb/s)"), std::string::npos);
  EXPECT_NE(bits.text().find("  80.00   80.00"), std::string::npos) << bits.text();
  EXPECT_NE(bits.text().find("avg bus bandwidth: 80.000 Gb/s"), std::string::npos);
}

// Issue 38, section 3: under -R the header says what NCCL registered (agreed across ranks), not what was asked.
TEST(TablePrinter, TheHeaderSaysWhatRegistrationNcclGranted) {
  Captured with;
  Captured without;
  const TablePrinter p(with.file(), {false});
  const TablePrinter q(without.file(), {false});
  p.header({"t", "nccl", 2, 1, "", "per_op", "n", {}, "none (-R 2 asked; ...)"});
  q.header({"t", "nccl", 2, 1, "", "per_op", "n", {}, ""});
  EXPECT_NE(with.text().find("\n# registration none (-R 2 asked; ...)\n"), std::string::npos) << with.text();
  EXPECT_EQ(without.text().find("registration"), std::string::npos);
}

TEST(TablePrinter, ASkipReasonIsPrintedOnceUntilItChanges) {
  Captured out;
  const TablePrinter p(out.file(), {false});
  p.row({skipped(2, "no CUDA device")});
  p.row({skipped(4, "no CUDA device")});
  p.row({skipped(8, "another reason")});
  p.row({measured(16, 1e-6)});
  const std::string text = out.text();
  const auto first = text.find("#   skipped: no CUDA device");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find("#   skipped: no CUDA device", first + 1), std::string::npos) << text;
  EXPECT_NE(text.find("#   skipped: another reason"), std::string::npos) << text;
}

}  // namespace
}  // namespace ccbench
