#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "ccbench/cli.hpp"
#include "ccbench/common_flags.hpp"
#include "ccbench/config.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/text.hpp"

namespace ccbench {
namespace {

std::variant<RunConfig, EarlyExit> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "allreduce_bench");
  return parse_command_line(Collective::AllReduce, args);
}

RunConfig config(std::vector<const char*> args) { return std::get<RunConfig>(parse(std::move(args))); }

std::string error_of(std::vector<const char*> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Cli, NcclTestsShortFlags) {
  const RunConfig c = config(
      {"-b", "8", "-e", "4M", "-f", "4", "-c", "1", "-n", "20", "-w", "3", "-d", "half", "-o", "max", "-r", "1"});
  EXPECT_EQ(c.min_bytes, 8U);
  EXPECT_EQ(c.max_bytes, 4U << 20);
  EXPECT_DOUBLE_EQ(c.step_factor, 4.0);
  EXPECT_TRUE(c.check);
  EXPECT_EQ(c.iters, 20U);
  EXPECT_EQ(c.warmup_iters, 3U);
  EXPECT_EQ(c.dtype, DType::Float16);
  EXPECT_EQ(c.op, ReduceOp::Max);
  EXPECT_EQ(c.root, 1);
  EXPECT_EQ(c.argv.size(), 19U);  // the program and 18 arguments
}

TEST(Cli, Defaults) {
  const RunConfig c = config({});
  EXPECT_EQ(c.backend, BackendChoice::Auto);
  EXPECT_EQ(c.timing, TimingMode::Batch);
  EXPECT_EQ(c.placement, Placement::Both);
  EXPECT_FALSE(c.iters);
  EXPECT_FALSE(c.check);
  EXPECT_EQ(c.bind, BindPolicy::None);
  EXPECT_TRUE(config({"--check"}).check);
  EXPECT_FALSE(config({"-c", "0"}).check);
}

TEST(Cli, LongFlags) {
  const RunConfig c =
      config({"--backend", "mpi", "--timing", "per_op", "--placement", "in", "--target-ci", "0.02", "--time-budget",
              "0.5", "--timeout", "30", "--out", "-", "--label", "x", "--samples", "--peak-GBps", "450"});
  EXPECT_EQ(c.backend, BackendChoice::Mpi);
  EXPECT_EQ(c.timing, TimingMode::PerOp);
  EXPECT_EQ(c.placement, Placement::InPlace);
  EXPECT_DOUBLE_EQ(c.target_ci, 0.02);
  EXPECT_EQ(c.time_budget_s, 0.5);
  EXPECT_FALSE(config({}).time_budget_s);  // auto: the runner's samples-scaled budget
  EXPECT_FALSE(config({"--time-budget", "auto"}).time_budget_s);
  EXPECT_DOUBLE_EQ(c.timeout_s, 30);
  EXPECT_EQ(c.out_path, "-");
  EXPECT_EQ(c.label, "x");
  EXPECT_TRUE(c.keep_samples);
  EXPECT_EQ(c.peak_GBps, 450.0);
  EXPECT_EQ(config({"--bind", "auto"}).bind, BindPolicy::Auto);
  EXPECT_EQ(config({"--bind", "none"}).bind, BindPolicy::None);
}

TEST(Cli, ErrorsAreOneLineAndSayWhatIsWrong) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases{
      {{"-b", "1M", "-e", "1K"}, "--min-bytes 1M is larger than --max-bytes 1K"},
      {{"-f", "1"}, "--step-factor 1 must be greater than 1"},
      {{"-d", "float128"}, "--dtype 'float128' is not one of: int8"},
      {{"--backend", "foo"}, "--backend 'foo' is not one of: auto, mpi, nccl"},
      {{"-n", "-3"}, "--iters -3 must be at least 1"},
      {{"-n", "0"}, "--iters 0 must be at least 1"},
      {{"-o", "xor"}, "--op 'xor' is not one of: sum"},
      {{"-b", "12Q"}, "--min-bytes '12Q' is not a size"},
      {{"--timing", "fast"}, "--timing 'fast' is not batch, per_op or graph"},
      {{"--graph", "5", "--timing", "per_op"}, "--graph 5 and --timing per_op: --graph is graph timing"},
      {{"--graph", "5", "--batch", "7"}, "--graph 5 and --batch 7: give one of them"},
      {{"--graph", "0"}, "--graph 0 must be at least 1"},
      {{"--timing", "graph", "--backend", "mpi"}, "--timing graph captures CUDA graphs: it needs --backend nccl"},
      {{"-c", "2"}, "--check 2 must be 0 or 1"},
      {{"--no-such-flag"}, "--no-such-flag"},
      {{"--target-ci", "0"}, "--target-ci 0 must be a fraction"},
      {{"--time-budget", "1s"}, "--time-budget '1s' is not seconds (e.g. 0.5) or auto"},
      {{"--time-budget", "1e309"}, "--time-budget '1e309' is not seconds"},
      {{"--time-budget", "1e20"}, "--time-budget must be positive seconds, at most 3600"},
      {{"--timeout", "9.3e9"}, "--timeout must be positive seconds, at most 86400"},
      {{"--timeout", "inf"}, "--timeout"},
      {{"-n", "-1"}, "--iters -1 must be at least 1"},
      {{"-n", "1000000000"}, "--iters 1000000000 is more than 1000000"},
      {{"-n", "99999999999"}, "--iters 99999999999 is more than 1000000"},
      {{"-w", "2000000000"}, "--warmup-iters 2000000000 is more than 1000000"},
      {{"--batch", "-1"}, "--batch -1 must be at least 1"},
      {{"--batch", "5000000"}, "--batch 5000000 is more than 1000000"},
      {{"--max-samples", "300000000"}, "--max-samples 300000000 is more than 1000000"},
      {{"-f", "1.0000001"}, "--step-factor 1.0000001 makes"},
      {{"-f", "inf"}, "--step-factor"},
      {{"-b", "6", "-e", "64"}, "--min-bytes 6 is not a whole number of float32 elements (4 B each): use 4 or 8"},
      {{"-d", "float64", "-b", "8", "-e", "100"}, "--max-bytes 100 is not a whole number of float64 elements"},
      {{"-e", "2048T"}, "--max-bytes 2251799813685248 is more than 1125899906842624 (1024T)"},
      {{"--peak-GBps", "inf"}, "--peak-GBps inf must be from 0.001 to 1e+06 GB/s"},
      {{"--peak-GBps", "1e-300"}, "--peak-GBps 1e-300 must be from"},
      {{"--time-budget", "0"}, "--time-budget must be positive seconds"},
      {{"--time-budget", "inf"}, "--time-budget 'inf' is not seconds"},
      {{"--bind", "numa"}, "--bind 'numa' is not none or auto"},
  };
  for (const auto& [args, expected] : cases) {
    const std::string message = error_of(args);
    EXPECT_NE(message.find(expected), std::string::npos) << "got: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  }
}

// The flags every bench takes (copy_bench too): parsed and checked by CommonFlags, one line naming the flag.
CommonFlags common_flags(std::vector<const char*> args) {
  args.insert(args.begin(), "copy_bench");
  CommonFlags flags;
  CLI::App app{"common flags"};
  flags.add_check_args(app, "");
  flags.add_bind(app, "");
  flags.add_timeout(app, "");
  app.parse(static_cast<int>(args.size()), args.data());
  return flags;
}

std::string common_error_of(std::vector<const char*> args) {
  try {
    (void)common_flags(std::move(args)).checked();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CommonFlags, DefaultsAndValues) {
  const CommonOptions defaults = common_flags({}).checked();
  EXPECT_FALSE(defaults.check_args);
  EXPECT_EQ(defaults.bind, BindPolicy::None);
  EXPECT_DOUBLE_EQ(defaults.timeout_s, RunConfig{}.timeout_s);
  const CommonOptions given = common_flags({"--check-args", "--bind", "auto", "--timeout", "60"}).checked();
  EXPECT_TRUE(given.check_args);
  EXPECT_EQ(given.bind, BindPolicy::Auto);
  EXPECT_DOUBLE_EQ(given.timeout_s, 60.0);
}

TEST(CommonFlags, BadValuesAreOneLineNamingTheFlagAsTheCollectiveBenchesSayIt) {
  const std::vector<std::vector<const char*>> cases = {
      {"--bind", "bogus"}, {"--timeout", "-1"}, {"--timeout", "0"}, {"--timeout", "9.3e9"}};
  for (const auto& args : cases) {
    const std::string message = common_error_of(args);
    EXPECT_EQ(message.rfind(args[0], 0), 0U) << "got: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    EXPECT_EQ(message, error_of(args));  // word for word what allreduce_bench says
  }
  EXPECT_EQ(common_error_of({"--bind", "bogus"}), "--bind 'bogus' is not none or auto");
  EXPECT_EQ(common_error_of({"--timeout", "-1"}), "--timeout must be positive seconds, at most 86400 (a day)");
}

std::variant<RunConfig, EarlyExit> parse_rdma(Collective bench, std::vector<const char*> args) {
  args.insert(args.begin(), bench == Collective::IbWriteLat ? "ib_write_lat_bench" : "ib_write_bw_bench");
  return parse_command_line(bench, args);
}

std::string rdma_error_of(Collective bench, std::vector<const char*> args) {
  try {
    parse_rdma(bench, std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Cli, RdmaMemAndReportGbits) {
  const auto c = std::get<RunConfig>(parse_rdma(Collective::IbWriteBw, {"--mem", "cuda:1", "--report-gbits"}));
  EXPECT_EQ(c.rdma.mem, "cuda:1");
  EXPECT_TRUE(c.rdma.gbits);
  EXPECT_EQ(std::get<RunConfig>(parse_rdma(Collective::IbWriteLat, {})).rdma.mem, "host");
  EXPECT_TRUE(std::get<RunConfig>(parse_rdma(Collective::IbWriteLat, {"--report_gbits"})).rdma.gbits);
  const std::vector<std::tuple<Collective, std::vector<const char*>, std::string>> cases{
      {Collective::IbWriteBw, {"--mem", "gpu"}, "--mem 'gpu' must be host or cuda:N"},
      {Collective::IbWriteBw, {"--mem", "cuda:"}, "--mem 'cuda:' must be host or cuda:N"},
      {Collective::IbWriteBw, {"--mem", "cuda:-1"}, "--mem 'cuda:-1' must be host or cuda:N"},
      {Collective::IbWriteBw, {"--mem", "cuda:99999999999"}, "the device index is too large"},
      {Collective::IbWriteLat, {"--mem", "cuda:0"}, "--mem cuda:N is for ib_write_bw_bench"},
  };
  for (const auto& [bench, args, expected] : cases) {
    const std::string message = rdma_error_of(bench, args);
    EXPECT_NE(message.find(expected), std::string::npos) << "got: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  }
}

TEST(Cli, GraphTiming) {
  const RunConfig g = config({"--graph", "20"});
  EXPECT_EQ(g.timing, TimingMode::Graph);
  ASSERT_TRUE(g.batch_ops);
  EXPECT_EQ(*g.batch_ops, 20U);
  const RunConfig calibrated = config({"--timing", "graph"});
  EXPECT_EQ(calibrated.timing, TimingMode::Graph);
  EXPECT_FALSE(calibrated.batch_ops);
  EXPECT_EQ(config({"--timing", "graph", "--batch", "8"}).batch_ops.value_or(0), 8U);
  EXPECT_EQ(name(TimingMode::Graph), "graph");
  EXPECT_EQ(parse_timing_mode("graph"), TimingMode::Graph);
}

TEST(Cli, NcclVariantsAndFp8Dtypes) {
  EXPECT_FALSE(config({}).nccl_variants);
  EXPECT_TRUE(config({"--nccl-variants"}).nccl_variants);
  EXPECT_TRUE(config({"--nccl-variants", "--backend", "nccl"}).nccl_variants);
  const std::string message = error_of({"--nccl-variants", "--backend", "mpi"});
  EXPECT_NE(message.find("--nccl-variants forces NCCL's ring algorithm: it needs --backend nccl, not mpi"),
            std::string::npos)
      << message;
  EXPECT_EQ(config({"-d", "float8_e4m3"}).dtype, DType::Float8e4m3);
  EXPECT_EQ(config({"-d", "f8e5m2"}).dtype, DType::Float8e5m2);         // nccl-tests' name
  EXPECT_EQ(config({"-d", "float8_e4m3fn"}).dtype, DType::Float8e4m3);  // PyTorch's
  EXPECT_EQ(size_of(DType::Float8e5m2), 1U);
  EXPECT_TRUE(is_fp8(DType::Float8e4m3) && is_floating(DType::Float8e4m3) && !is_fp8(DType::Float16));
  EXPECT_NE(error_of({"-d", "fp4"}).find("float8_e4m3, float8_e5m2"), std::string::npos);
}

TEST(Cli, HelpAndVersionExitEarly) {
  const auto help = parse({"--help"});
  ASSERT_TRUE(std::holds_alternative<EarlyExit>(help));
  EXPECT_NE(std::get<EarlyExit>(help).text.find("--min-bytes"), std::string::npos);
  const auto version = parse({"--version"});
  ASSERT_TRUE(std::holds_alternative<EarlyExit>(version));
  EXPECT_EQ(std::get<EarlyExit>(version).text.rfind("ccbench ", 0), 0U);
}

TEST(Sizes, ParseAndFormatBinarySuffixes) {
  EXPECT_EQ(parse_bytes("8"), 8U);
  EXPECT_EQ(parse_bytes("1K"), 1024U);
  EXPECT_EQ(parse_bytes("4M"), 4U << 20);
  EXPECT_EQ(parse_bytes("2G"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_bytes("16KiB"), 16U << 10);
  EXPECT_EQ(parse_bytes("64B"), 64U);
  EXPECT_FALSE(parse_bytes(""));
  EXPECT_FALSE(parse_bytes("M"));
  EXPECT_FALSE(parse_bytes("-1"));
  EXPECT_FALSE(parse_bytes("99999999999999999999"));
  EXPECT_FALSE(parse_bytes("17179869184T"));  // overflows 64 bits
  EXPECT_EQ(format_size(8, SizeStyle::Short), "8");
  EXPECT_EQ(format_size(4096, SizeStyle::Short), "4K");
  EXPECT_EQ(format_size(3U << 20, SizeStyle::Short), "3M");
  EXPECT_EQ(format_size(1500, SizeStyle::Short), "1500");
}

TEST(Sizes, SweepIncludesBothEndsWhenReached) {
  EXPECT_EQ(sweep_sizes(8, 128, 2), (std::vector<std::uint64_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(sweep_sizes(8, 4 << 20, 4).size(), 10U);  // 8 .. 2M; 8M is past the end
  EXPECT_EQ(sweep_sizes(1024, 1024, 2), (std::vector<std::uint64_t>{1024}));
  EXPECT_TRUE(sweep_sizes(2, 1, 2).empty());
  EXPECT_TRUE(sweep_sizes(1, 2, 1).empty());
  // A factor that rounding repeats: whole float32 elements, each size once.
  EXPECT_EQ(sweep_sizes(8, 16, 1.1, 4), (std::vector<std::uint64_t>{8, 12, 16}));
  EXPECT_EQ(sweep_sizes(1, 4, 2, 4), (std::vector<std::uint64_t>{1, 2, 4}));  // below one element: kept, skipped
  EXPECT_EQ(sweep_length(8, 4 << 20, 2), 20U);
  EXPECT_GT(sweep_length(8, 4 << 20, 1.0000001), 100'000'000U);
}

}  // namespace
}  // namespace ccbench
