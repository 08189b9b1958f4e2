#include "baseline_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ccbench/config.hpp"  // parse_bytes
#include "ccbench/errors.hpp"
#include "ccbench/report/accept.hpp"
#include "ccbench/report/baseline.hpp"
#include "ccbench/report/baseline_profile.hpp"
#include "ccbench/report/input.hpp"
#include "report_commands.hpp"

namespace ccbench::report_cli {

namespace {

bool is_identifier(const std::string& text) {
  const auto ok = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  };
  return !text.empty() && std::isalnum(static_cast<unsigned char>(text.front())) != 0 &&
         std::all_of(text.begin(), text.end(), ok);
}

report::BaselineOptions learning_options(const BaselineOptions& o) {
  report::BaselineOptions learn;
  learn.k = o.k;
  learn.min_hosts = o.min_hosts;
  learn.min_spread_pct = o.min_spread_pct;
  for (const auto& size : o.sizes) {
    const auto bytes = ccbench::parse_bytes(size);
    if (!bytes || *bytes == 0) {
      throw UsageError(fmt::format("baseline: --size {}: expected a size like 4M or 16G", size));
    }
    learn.sizes.push_back(*bytes);
  }
  return learn;
}

}  // namespace

CLI::App* add_baseline_command(CLI::App& app, BaselineOptions& o) {
  auto* sub = app.add_subcommand(
      "baseline",
      "an acceptance profile learned from a fleet's results: per busbw check, a floor k robust spreads below the "
      "hosts' median, outliers left out and named; exit 2 (nothing written) for too few hosts or mixed kinds");
  sub->add_option("files", o.files, "result files of one kind of node, or directories of them")->required();
  sub->add_option("-o,--out", o.out, "the profile to write (atomically; never one of the inputs)")->required();
  sub->add_option("--id", o.id, "the profile's id (default: -o's file name without .json)");
  sub->add_option("--name", o.name, "the profile's name");
  sub->add_option("--k", o.k, "spreads: hosts beyond this many from the median are left out; the floor this many below")
      ->check(CLI::Range(1.0, 10.0))
      ->capture_default_str();
  sub->add_option("--min-hosts", o.min_hosts, "fewer hosts refuses the profile, and leaves a check out")
      ->check(CLI::Range(3, 1 << 20))
      ->capture_default_str();
  sub->add_option("--min-spread-pct", o.min_spread_pct,
                  "the spread is at least this share of the median (a fleet that agrees to the digit: MAD 0)")
      ->check(CLI::Range(0.1, 50.0))
      ->capture_default_str();
  sub->add_option("--size", o.sizes, "the sizes to learn (default: each bench's largest)")->delimiter(',');
  sub->add_option("--max-file-size", o.max_file_size, "refuse an input file larger than this (like 256M, 2G)")
      ->capture_default_str();
  return sub;
}

int run_baseline(const BaselineOptions& o) {
  if (o.out.empty() || o.out == "-") {
    throw UsageError("baseline: -o needs a file: the profile is written atomically");
  }
  const std::string id = o.id.empty() ? std::filesystem::path(o.out).stem().string() : o.id;
  if (!is_identifier(id)) {
    throw UsageError(fmt::format("baseline: profile id '{}': letters, digits, '.', '_', '-' only (give --id)", id));
  }
  const auto learn = learning_options(o);
  check_not_an_input(o.out, "-o", o.files);
  Options sizes;
  sizes.max_file_size = o.max_file_size;
  const auto runs = report::read_result_files(o.files, max_file_bytes(sizes));
  const auto baseline = report::learn_baseline(runs, learn);
  const std::string name =
      o.name.empty() ? fmt::format("{} (learned from {} hosts)", id, baseline.provenance.hosts.size()) : o.name;
  const std::string text = report::baseline_profile(baseline, id, name).dump(2) + "\n";
  report::parse_profile(text, o.out);  // what accept reads, read as accept reads it, before it is written
  emit(text, o.out);
  emit(report::baseline_summary(baseline, o.out), "");
  return ccbench::kExitOk;
}

}  // namespace ccbench::report_cli
