// The history index (history_index.hpp) over copies of the real runs under tests/data/report/runs: what an update
// notices (a file added, edited, touched, removed), what it keeps apart (a JSON that is no result, a result cut
// short), and that a rebuild from the files gives what the updates gave.
#include "ccbench/report/history_index.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "ccbench/report/input.hpp"

namespace ccbench::report {
namespace {

namespace fs = std::filesystem;
fs::path runs() { return fs::path(CCBENCH_REPORT_DATA) / "runs"; }

class Index : public ::testing::Test {
 protected:
  void SetUp() override {
    m_root = fs::temp_directory_path() / ("ccbench-index-test-" + std::to_string(::getpid()));
    fs::remove_all(m_root);
    fs::create_directories(m_root / "results" / "night1");
    fs::create_directories(m_root / "results" / "night2");
    fs::copy_file(runs() / "allreduce-np4-a.json", m_root / "results" / "night1" / "allreduce.json");
    fs::copy_file(runs() / "allreduce-np4-b.json", m_root / "results" / "night2" / "allreduce.json");
  }
  void TearDown() override { fs::remove_all(m_root); }
  [[nodiscard]] fs::path results() const { return m_root / "results"; }
  [[nodiscard]] std::string db() const { return (m_root / "history.sqlite").string(); }
  IndexUpdate update(HistoryIndex& index) const { return index.update({results().string()}, kDefaultMaxFileBytes); }

 private:
  fs::path m_root;
};

TEST_F(Index, AddsEveryResultUnderTheFoldersThenReadsNothingUnchanged) {
  HistoryIndex index(db());
  const auto first = update(index);
  EXPECT_EQ(first.files, 2U);
  EXPECT_EQ(first.added, 2U);
  EXPECT_GT(first.rows, 0U);
  const auto points = index.points();
  EXPECT_EQ(points.size(), first.rows);
  const auto again = update(index);
  EXPECT_EQ(again.unchanged, 2U);
  EXPECT_EQ(again.added + again.changed + again.removed + again.touched + again.rows, 0U);
}

TEST_F(Index, ACopyOfAResultIsOneRunAmongTheRecentOnes) {
  // night1's file copied under another folder: the same run (its id), so one launch of regression --history's
  // baseline, not two that agree to the last digit
  fs::create_directories(results() / "copy");
  fs::copy_file(runs() / "allreduce-np4-a.json", results() / "copy" / "allreduce.json");
  HistoryIndex index(db());
  update(index);
  const auto points = index.points();
  const auto a = std::find_if(points.begin(), points.end(),
                              [](const HistoryPoint& p) { return p.path.find("night1") != std::string::npos; });
  ASSERT_NE(a, points.end());
  const auto files = index.recent_files({a->series}, a->software, "9999-12-31T00:00:00Z", 5,
                                        (results().parent_path() / "elsewhere").string());
  const auto of_a = std::count_if(files.begin(), files.end(), [](const std::string& f) {
    return f.find("night1") != std::string::npos || f.find("copy") != std::string::npos;
  });
  EXPECT_EQ(of_a, 1);
}

TEST_F(Index, KeptInItsFileAcrossOpenings) {
  std::size_t rows = 0;
  {
    HistoryIndex index(db());
    rows = update(index).rows;
  }
  HistoryIndex reopened(db());
  EXPECT_EQ(reopened.points().size(), rows);
  EXPECT_EQ(update(reopened).unchanged, 2U);
}

TEST_F(Index, NoticesARemovedFileAndDropsItsRows) {
  HistoryIndex index(db());
  const auto first = update(index);
  fs::remove(results() / "night2" / "allreduce.json");
  const auto u = update(index);
  EXPECT_EQ(u.removed, 1U);
  ASSERT_EQ(u.removed_paths.size(), 1U);
  EXPECT_NE(u.removed_paths[0].find("night2"), std::string::npos);
  EXPECT_LT(index.points().size(), first.rows);
  for (const auto& p : index.points()) {
    EXPECT_EQ(p.path.find("night2"), std::string::npos);
  }
}

TEST_F(Index, NoticesAnEditedFileAndReadsItAgain) {
  HistoryIndex index(db());
  update(index);
  const auto file = results() / "night1" / "allreduce.json";
  {
    std::ofstream out(file, std::ios::app);
    out << "\n";  // other bytes, the same document
  }
  const auto u = update(index);
  EXPECT_EQ(u.changed, 1U);
  EXPECT_EQ(u.unchanged, 1U);
  EXPECT_GT(u.rows, 0U);
}

TEST_F(Index, ATouchedFileWithTheSameBytesIsNotReadAgain) {
  HistoryIndex index(db());
  update(index);
  const auto file = results() / "night1" / "allreduce.json";
  fs::last_write_time(file, fs::last_write_time(file) + std::chrono::seconds(5));
  const auto u = update(index);
  EXPECT_EQ(u.touched, 1U);
  EXPECT_EQ(u.changed, 0U);
  EXPECT_EQ(u.rows, 0U);
}

TEST_F(Index, KeepsFilesThatAreNoResultApartAndAResultCutShortUnreadable) {
  {
    std::ofstream(results() / "night1" / "accept.json") << R"({"schema": "ccbench.accept.verdict"})";
    std::ifstream in(runs() / "allreduce-np2-v1.0.0.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(results() / "night2" / "cut.json") << text.substr(0, text.size() / 2);
  }
  HistoryIndex index(db());
  const auto u = update(index);
  EXPECT_EQ(u.files, 4U);
  const auto problems = index.problems();
  ASSERT_EQ(problems.size(), 2U);
  EXPECT_FALSE(problems[0].unreadable);  // night1/accept.json: another schema
  EXPECT_TRUE(problems[1].unreadable);   // night2/cut.json: says it is a result, cannot be read
}

TEST_F(Index, ARebuildFromTheFilesGivesWhatTheUpdatesGave) {
  HistoryIndex index(db());
  update(index);
  fs::remove(results() / "night2" / "allreduce.json");
  update(index);
  const auto before = index.points();
  const auto rebuilt = index.rebuild({results().string()}, kDefaultMaxFileBytes);
  EXPECT_EQ(rebuilt.added, 1U);
  ASSERT_EQ(index.points().size(), before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(index.points()[i].series, before[i].series);
    EXPECT_EQ(index.points()[i].busbw_GBps, before[i].busbw_GBps);
  }
}

TEST_F(Index, AFolderThatIsNotThereIsRefused) {
  HistoryIndex index(db());
  EXPECT_THROW(index.update({(results() / "nosuch").string()}, kDefaultMaxFileBytes), InputError);
}

}  // namespace
}  // namespace ccbench::report
