#pragma once
// ccbench-report baseline: its own options and subcommand, apart from the others' (report_commands.hpp).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ccbench::report_cli {

struct BaselineOptions {
  std::vector<std::string> files;
  std::string out;  // the profile to write
  std::string id;   // the profile's id; "" for -o's stem
  std::string name;
  double k = 3;
  int min_hosts = 5;
  double min_spread_pct = 1;
  std::vector<std::string> sizes;
  std::string max_file_size = "256M";
};

/// Adds `baseline` to `app`, its options parsed into `o`.
CLI::App* add_baseline_command(CLI::App& app, BaselineOptions& o);
/// Learns the profile, writes it atomically to -o (never over an input) and prints the summary: exit 0; bad input,
/// too few hosts, mixed kinds or nothing learned: UsageError (exit 2), nothing written.
int run_baseline(const BaselineOptions& o);

}  // namespace ccbench::report_cli
