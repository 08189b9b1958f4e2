// trend's verdict (trend.hpp): Pettitt's statistic on a step whose value is known by hand, and the evidence rule over
// histories made of copies of the real runs under tests/data/report/runs (indexed as `index` indexes them): a history
// with nothing in it, series too short to judge (alone and beside a long one), a history older than --max-age, a result
// that cannot be read, and a long series of one unchanged figure, which is steady. Drift on real runs is the cluster
// tier's (cluster.trend).
#include "ccbench/report/trend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "ccbench/report/accept.hpp"  // epoch_of
#include "ccbench/report/input.hpp"

namespace ccbench::report {
namespace {

namespace fs = std::filesystem;
fs::path runs() { return fs::path(CCBENCH_REPORT_DATA) / "runs"; }

TEST(Pettitt, AStepOfEightHasItsChangeAtTheStepAndKOfSixteen) {
  // U_4 = sum over i <= 4 < j of sgn(x_i - x_j) = 4 x 4; p = 2 exp(-6 K^2 / (n^3 + n^2)) = 2 exp(-8/3)
  const auto r = pettitt({3, 3, 3, 3, 1, 1, 1, 1});
  EXPECT_EQ(r.change, 4U);
  EXPECT_DOUBLE_EQ(r.k, 16);
  EXPECT_NEAR(r.p_value, 2 * std::exp(-8.0 / 3.0), 1e-12);
  EXPECT_DOUBLE_EQ(pettitt_min_p(8), r.p_value);  // a perfect step at the middle is the best n values can show
}

TEST(Pettitt, NoChangeGivesKZeroAndPOne) {
  const auto r = pettitt({2, 2, 2, 2, 2, 2});
  EXPECT_DOUBLE_EQ(r.k, 0);
  EXPECT_DOUBLE_EQ(r.p_value, 1);
}

TEST(Pettitt, TheShortestSeriesThatCanReachFivePercentIsEleven) {
  EXPECT_GE(pettitt_min_p(10), 0.05);
  EXPECT_LT(pettitt_min_p(11), 0.05);
}

class Trend : public ::testing::Test {
 protected:
  void SetUp() override {
    m_root = fs::temp_directory_path() / ("ccbench-trend-test-" + std::to_string(::getpid()));
    fs::remove_all(m_root);
    fs::create_directories(m_root);
  }
  void TearDown() override { fs::remove_all(m_root); }
  /// `copies` nights of one real run, night01/NAME.json ..., each with a run id of its own (the run's id with the
  /// night appended): a copy under its own id is a run of its own, as a night's run would be.
  /// `edit`, when given, changes night i's copy (a fault made on a real run: said where it is used).
  void nights(const std::string& fixture, int copies, const std::string& name,
              const std::function<void(nlohmann::json&, int)>& edit = {}) const {
    std::ifstream in(runs() / fixture);
    const auto real = nlohmann::json::parse(in);
    const std::string id = real.at("run").at("id").get<std::string>();
    for (int i = 1; i <= copies; ++i) {
      const auto dir = m_root / (i < 10 ? "night0" : "night") += std::to_string(i);
      fs::create_directories(dir);
      auto doc = real;
      doc["run"]["id"] = fmt::format("{}-night{}", id, i);
      if (edit) {
        edit(doc, i);
      }
      std::ofstream(dir / (name + ".json")) << doc.dump(1);
    }
  }
  /// The same run (one id) under `copies` paths: copies of one result file.
  void copies_of(const std::string& fixture, int copies, const std::string& name) const {
    for (int i = 1; i <= copies; ++i) {
      const auto dir = m_root / ("copy" + std::to_string(i));
      fs::create_directories(dir);
      fs::copy_file(runs() / fixture, dir / (name + ".json"));
    }
  }
  [[nodiscard]] TrendVerdict judge(bool partial = false, TrendOptions options = {}) const {
    HistoryIndex index(":memory:");
    index.update({m_root.string()}, kDefaultMaxFileBytes);
    options.partial = partial;
    return judge_trend(index, options);
  }
  [[nodiscard]] const fs::path& root() const { return m_root; }

 private:
  fs::path m_root;
};

TEST_F(Trend, NothingInTheHistoryIsNoVerdict) {
  const auto v = judge();
  EXPECT_EQ(v.ruling.ruling, Ruling::NoVerdict);
  EXPECT_EQ(v.exit_code(), 2);
}

TEST_F(Trend, ASeriesTooShortIsNoVerdictNeverNoDrift) {
  nights("allreduce-np4-a.json", 3, "allreduce");
  const auto v = judge();
  EXPECT_EQ(v.ruling.ruling, Ruling::NoVerdict);
  EXPECT_EQ(v.exit_code(), 2);
  EXPECT_GT(v.too_short, 0U);
}

TEST_F(Trend, NothingLongEnoughIsNoVerdictEvenWithPartial) {
  nights("allreduce-np4-a.json", 3, "allreduce");
  const auto v = judge(true);
  EXPECT_EQ(v.ruling.ruling, Ruling::NoVerdict);
  EXPECT_EQ(v.exit_code(), 2);
}

TEST_F(Trend, CopiesOfOneRunAreOneRunNotALongSeries) {
  copies_of("allreduce-np4-a.json", 24, "allreduce");  // one run under 24 paths: one point per series, too few
  const auto v = judge(true);
  EXPECT_EQ(v.duplicate_runs, 23U * v.series.size());
  ASSERT_FALSE(v.series.empty());
  EXPECT_EQ(v.series.front().points.size(), 1U);
  EXPECT_EQ(v.exit_code(), 2);
}

TEST_F(Trend, OneSeriesThatMovedIsDriftThoughNoHostIsNamed) {
  // the real run's first row halved from night 13 on: one series of its host's 18 moved, the host is not named
  nights("allreduce-np4-a.json", 24, "allreduce", [](nlohmann::json& doc, int night) {
    if (night >= 13) {
      doc["results"][0]["busbw_GBps"] = doc["results"][0]["busbw_GBps"].get<double>() / 2;
    }
  });
  const auto v = judge();
  EXPECT_TRUE(v.hosts.empty());
  EXPECT_EQ(v.drifted_series, 1U);
  EXPECT_EQ(v.exit_code(), 1);
}

TEST_F(Trend, ALatestRunThatMeasuredNothingIsNoVerdict) {
  // the real run's rows marked failed on the last night: 23 steady runs say nothing of the one that failed
  nights("allreduce-np4-a.json", 24, "allreduce", [](nlohmann::json& doc, int night) {
    if (night == 24) {
      for (auto& r : doc["results"]) {
        r["status"] = "failed";
        r["reason"] = "made failed by the test";
      }
    }
  });
  const auto v = judge();
  ASSERT_FALSE(v.ruling.gaps.empty());
  EXPECT_EQ(v.ruling.gaps.front().lack, Lack::Absent);
  EXPECT_EQ(v.exit_code(), 2);
}

TEST_F(Trend, ALongSeriesOfOneFigureIsSteady) {
  nights("allreduce-np4-a.json", 24, "allreduce");
  const auto v = judge();
  EXPECT_EQ(v.ruling.ruling, Ruling::Judged);
  EXPECT_TRUE(v.hosts.empty());
  EXPECT_FALSE(v.fleet_shift);
  EXPECT_EQ(v.exit_code(), 0);
}

TEST_F(Trend, AHistoryOlderThanMaxAgeIsNoVerdictWhateverTheFlag) {
  nights("allreduce-np4-a.json", 24, "allreduce");  // started 2026-11-22T07:38:05Z
  TrendOptions options;
  options.max_age_s = 3600;
  options.now_s = *epoch_of("2026-11-22T08:38:06Z");  // an hour and a second later
  const auto stale = judge(true, options);            // --partial does not cover it
  EXPECT_EQ(stale.ruling.ruling, Ruling::NoVerdict);
  ASSERT_FALSE(stale.ruling.gaps.empty());
  EXPECT_EQ(stale.ruling.gaps.front().lack, Lack::Stale);
  EXPECT_EQ(stale.exit_code(), 2);
  options.now_s = *epoch_of("2026-11-22T08:38:04Z");  // within the hour: judged
  EXPECT_EQ(judge(false, options).exit_code(), 0);
}

TEST_F(Trend, ShortSeriesBesideALongOneIsNoVerdictUnlessPartial) {
  nights("allreduce-np4-a.json", 24, "allreduce");
  nights("allreduce-np2-v1.0.0.json", 2, "allreduce-np2");  // other ranks: other series, two runs each
  EXPECT_EQ(judge().exit_code(), 2);
  const auto partial = judge(true);
  EXPECT_EQ(partial.ruling.ruling, Ruling::Overridden);
  EXPECT_EQ(partial.exit_code(), 0);
  EXPECT_FALSE(partial.ruling.gaps.empty());  // still said
}

TEST_F(Trend, AResultThatCannotBeReadIsNoVerdict) {
  nights("allreduce-np4-a.json", 24, "allreduce");
  std::ifstream in(runs() / "allreduce-np4-b.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(root() / "night24" / "cut.json") << text.substr(0, text.size() / 2);
  const auto v = judge();
  EXPECT_EQ(v.ruling.ruling, Ruling::NoVerdict);
  ASSERT_FALSE(v.ruling.gaps.empty());
  EXPECT_EQ(v.ruling.gaps.back().lack, Lack::Inconsistent);
  EXPECT_EQ(v.exit_code(), 2);
}

}  // namespace
}  // namespace ccbench::report
