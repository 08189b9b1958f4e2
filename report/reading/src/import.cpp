#include "ccbench/report/import.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

#include "ccbench/rates.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/topo/specs.hpp"
#include "ccbench/version.hpp"
#include "import_logs.hpp"

namespace ccbench::report {

namespace {

using detail::ImportedRow;
using detail::ImportedTest;

/// The tool a log comes from, by what only that tool prints.
std::vector<ImportedTest> parse_log(const ImportLog& log, const ImportOptions& options) {
  const auto first = log.text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && log.text[first] == '{') {
    return detail::parse_nccl_tests_json(log.text, log.name);
  }
  // perftest's banner, or its table's header line; "#bytes" elsewhere (a note in a nccl-tests log) is not one. The
  // lines are split only for a log that holds "#bytes" at all (the parser splits them again).
  const auto perftest_header = [&log] {
    const auto lines = detail::log_lines(log.text);
    return std::any_of(lines.begin(), lines.end(), [](const std::string& line) { return line.starts_with("#bytes"); });
  };
  if (log.text.find("RDMA_Write") != std::string::npos ||
      (log.text.find("#bytes") != std::string::npos && perftest_header())) {
    return detail::parse_perftest(log.text, log.name);
  }
  return detail::parse_nccl_tests_text(log.text, log.name, options);
}

/// A single host's GPUs of one known model: its NVLink spec, all links taken as up (a log shows no link).
void set_peak(CaseResult& r, const ImportedTest& t) {
  if (t.rdma) {
    r.peak_basis = "a perftest log does not give its ports' rates";
    return;
  }
  std::set<std::string> hosts;
  std::set<std::string> gpus;
  for (const auto& d : t.devices) {
    hosts.insert(d.host);
    gpus.insert(d.gpu);
  }
  if (t.devices.empty()) {
    r.peak_basis = "the log names no GPU";
    return;
  }
  if (hosts.size() > 1) {
    r.peak_basis = "several hosts: a nccl-tests log does not name their NICs";
    return;
  }
  if (gpus.size() > 1) {
    r.peak_basis = fmt::format("GPUs of {} models on one host", gpus.size());
    return;
  }
  const auto* spec = topo::SpecDatabase::builtin().find_gpu(*gpus.begin());
  if (spec == nullptr || spec->nvlink_links == 0 || t.devices.size() < 2) {
    r.peak_basis = spec == nullptr ? fmt::format("'{}' is not in the spec database", *gpus.begin())
                                   : "no NVLink between the group's GPUs in the spec";
    return;
  }
  r.peak_GBps = spec->nvlink_total_GBps;
  r.peak_basis = fmt::format(
      "NVLink{} {} links x {:g} GB/s per direction, {} (spec; every link taken as up: a nccl-tests log does not "
      "show the links)",
      spec->nvlink_version, spec->nvlink_links, spec->nvlink_link_GBps, spec->model);
}

struct Key {
  Collective coll;
  DType dtype;
  ReduceOp op;
  int root;
  bool in_place;
  std::uint64_t size;
  int ranks;
  // NOLINTNEXTLINE(readability-implicit-bool-conversion,modernize-use-nullptr): false positives on the defaulted <=>
  auto operator<=>(const Key&) const = default;
};

struct Merged {
  const ImportedTest* test = nullptr;
  const ImportedRow* row = nullptr;
  std::vector<double> samples;
  std::vector<std::vector<double>> per_process;
  std::optional<std::uint64_t> wrong;
  std::uint64_t ops = 0;
  std::vector<std::string> files;
  std::string failed;  // a log's run ended early at this case: why
};

CaseResult result_of(const Key& k, const Merged& m) {
  const auto& coll = info(k.coll);
  const auto& t = *m.test;
  CaseResult r;
  r.benchmark = std::string(coll.bench);
  r.backend = t.rdma ? "verbs" : "nccl";
  r.timing = TimingMode::Batch;
  r.clock = t.rdma ? "perftest (CPU cycles)" : "CUDA events (nccl-tests)";
  r.spec = {k.coll, k.dtype, k.op, coll.has_root ? k.root : 0, k.in_place, m.row->count};
  r.ranks = k.ranks;
  std::set<std::string> hosts;
  for (const auto& d : t.devices) {
    if (std::find(r.group_hosts.begin(), r.group_hosts.end(), d.host) == r.group_hosts.end()) {
      r.group_hosts.push_back(d.host);
    }
  }
  if (r.group_hosts.empty()) {
    r.group_hosts.emplace_back("(not in the log)");
  }
  r.nodes = static_cast<int>(r.group_hosts.size());
  if (t.rdma) {
    r.group = "pair";
    r.group_id = "pair:0-1";
    const auto& ends = t.rdma->endpoints;
    // RoCE names each end by its GID; InfiniBand (no GID lines) by its LID
    r.nodes = !ends[0].gid.empty() || (ends[0].lid == 0 && ends[1].lid == 0) ? (ends[0].gid == ends[1].gid ? 1 : 2)
                                                                             : (ends[0].lid == ends[1].lid ? 1 : 2);
  }
  for (int i = 0; i < k.ranks; ++i) {
    r.group_ranks.push_back(i);
  }
  r.size_bytes = k.size;
  r.ops_per_sample = m.ops;
  r.stop_reason = StopReason::FixedIters;
  r.bus_factor = bus_factor(coll.factor, k.ranks);
  r.wrong_elements = m.wrong;
  r.rdma = t.rdma;
  set_peak(r, t);
  if (!m.failed.empty()) {  // a run that failed here, whatever other logs measured
    r.status = CaseStatus::Failed;
    r.reason = m.samples.empty() ? m.failed
                                 : fmt::format("{} ({} other sample(s) of it measured)", m.failed, m.samples.size());
    return r;
  }
  if (m.samples.empty()) {
    r.status = CaseStatus::Skipped;
    r.reason = "the log printed no time (N/A)";
    return r;
  }
  if (m.row->latency && m.samples.size() == 1) {
    r.time = *m.row->latency;  // one ib_write_lat log: perftest's own summary of its iterations
  } else {
    r.time = summarize(m.samples);
    r.samples_s = m.samples;
  }
  if (!m.per_process.empty()) {
    std::vector<int> world(m.per_process.size());
    for (std::size_t i = 0; i < world.size(); ++i) {
      world[i] = static_cast<int>(i);
    }
    r.per_rank = summarize_ranks(m.per_process, world);
  }
  derive_rates(r);
  if (m.row->bw_peak_GBps && m.samples.size() == 1) {
    r.bw_peak_GBps = m.row->bw_peak_GBps;
  }
  if (t.rdma && m.samples.size() == 1) {
    r.rdma->run_bw_GBps = r.algbw_GBps;
  }
  return r;
}

std::string fnv_hex(const std::vector<ImportLog>& logs) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const auto& log : logs) {
    for (const char c : log.text) {
      h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
  }
  return fmt::format("{:016x}", h);
}

}  // namespace

namespace {

/// What makes a test's rows samples of the same run's: its hosts, ranks and GPU models.
std::string run_signature(const ImportedTest& t) {
  std::set<std::string> hosts;
  std::set<std::string> gpus;
  for (const auto& d : t.devices) {
    hosts.insert(d.host);
    gpus.insert(d.gpu);
  }
  std::string text = fmt::format("{} rank(s)", t.ranks);
  if (!hosts.empty()) {
    text += fmt::format(" on {}", fmt::join(hosts, ","));
  }
  if (!gpus.empty()) {
    text += fmt::format(" of {}", fmt::join(gpus, ","));
  }
  return text;
}

/// Logs of other hosts, rank counts or GPU models are other runs: merged, one node's wrong elements were charged
/// to the first host and an H800's busbw set against an H100's peak. Refused with one line naming both.
void check_one_run(const std::vector<ImportedTest>& tests) {
  const std::string first = run_signature(tests.front());
  for (const auto& t : tests) {
    if (const auto sig = run_signature(t); sig != first) {
      throw InputError(t.file, "",
                       fmt::format("a run of {} beside {}'s run of {}: logs of other hosts, rank counts or GPU "
                                   "models are other runs; import each run on its own (several logs of the same "
                                   "hosts and configuration are samples)",
                                   sig, tests.front().file, first));
    }
  }
}

}  // namespace

ResultDocument import_logs(const std::vector<ImportLog>& logs, const ImportOptions& options) {
  if (logs.empty()) {
    throw UsageError("import: give the logs to read");
  }
  std::vector<ImportedTest> tests;
  std::map<std::string, std::string> seen;  // a log's bytes -> the first name they came under
  std::vector<std::string> duplicates;
  for (const auto& log : logs) {
    // The same bytes given twice (or under two names) are one measurement, not two samples.
    if (const auto [first, added] = seen.emplace(log.text, log.name); !added) {
      duplicates.push_back(fmt::format("{} is the same log as {}: counted once", log.name, first->second));
      continue;
    }
    auto parsed = parse_log(log, options);
    for (auto& t : parsed) {
      if (t.started_utc.empty()) {
        t.started_utc = log.modified_utc;
        t.notes.push_back(
            fmt::format("{}: started_utc is the file's modification time (the log has no clock)", log.name));
      }
      if (!tests.empty() && tests.front().tool != t.tool) {
        throw InputError(
            log.name, "",
            fmt::format("a {} log among {} logs: import one tool's logs at a time", t.tool, tests.front().tool));
      }
      tests.push_back(std::move(t));
    }
  }
  check_one_run(tests);
  for (const auto& t : tests) {  // a root outside the ranks is no run's (the reader refuses such a document)
    for (const auto& row : t.rows) {
      if (info(t.coll).has_root && row.failed.empty() && (row.root < 0 || row.root >= t.ranks)) {
        throw InputError(t.file, "",
                         fmt::format("line {}: root {} is not a rank of the {} ranks of {}", row.line, row.root,
                                     t.ranks, info(t.coll).name));
      }
    }
  }
  if (!duplicates.empty()) {
    tests.front().notes.insert(tests.front().notes.end(), duplicates.begin(), duplicates.end());
  }
  // every log's row is a sample of its case: one time per log, or every iteration's (-I 1)
  std::map<Key, Merged> merged;
  for (const auto& t : tests) {
    for (const auto& row : t.rows) {
      const Key k{t.coll, row.dtype, row.op, row.root, row.in_place, row.size_bytes, t.ranks};
      auto& m = merged[k];
      if (m.test == nullptr) {
        m.test = &t;
        m.row = &row;
      }
      if (!row.iter_times_s.empty()) {
        m.samples.insert(m.samples.end(), row.iter_times_s.begin(), row.iter_times_s.end());
        if (!row.per_process_s.empty() && (m.per_process.empty() || m.per_process.size() == row.per_process_s.size())) {
          m.per_process.resize(row.per_process_s.size());
          for (std::size_t p = 0; p < row.per_process_s.size(); ++p) {
            m.per_process[p].insert(m.per_process[p].end(), row.per_process_s[p].begin(), row.per_process_s[p].end());
          }
        }
        m.ops = 1;
      } else if (row.time_s) {
        m.samples.push_back(*row.time_s);
        m.ops = row.iterations;
      }
      if (row.wrong) {
        m.wrong = m.wrong.value_or(0) + *row.wrong;
      }
      if (!row.failed.empty() && m.failed.empty()) {
        m.failed = row.failed;
      }
    }
  }
  ResultDocument doc;
  const auto& first = tests.front();
  std::set<std::string> benches;
  for (const auto& [k, m] : merged) {
    doc.results.push_back(result_of(k, m));
    benches.insert(doc.results.back().benchmark);
  }
  std::string bench_list;
  for (const auto& b : benches) {
    bench_list += (bench_list.empty() ? "" : ",") + b;
  }
  doc.run.id = fnv_hex(logs);
  doc.run.benchmark = bench_list;
  doc.run.label = options.label;
  doc.run.tool_version = std::string(tool_version());
  doc.run.git_revision = std::string(git_revision());
  doc.run.argv = first.argv.empty() || first.argv.front().empty() ? options.argv : first.argv;
  if (doc.run.argv.empty()) {
    doc.run.argv = {"ccbench-report", "import"};
  }
  std::string started = first.started_utc;
  std::string ended = first.ended_utc;
  RunSource source{first.tool, first.version, first.format, {}, {}};
  for (const auto& t : tests) {
    started = std::min(started, t.started_utc);
    ended = std::max(ended, t.ended_utc);
    if (std::find(source.files.begin(), source.files.end(), t.file) == source.files.end()) {
      source.files.push_back(t.file);
    }
    for (const auto& n : t.notes) {
      if (std::find(source.notes.begin(), source.notes.end(), n) == source.notes.end()) {
        source.notes.push_back(n);
      }
    }
    if (t.version != source.version) {
      source.version = source.version.empty() ? t.version : source.version;
    }
  }
  doc.run.started_utc = started;
  doc.run.ended_utc = ended;
  doc.run.source = std::move(source);
  if (!first.nccl_version.empty()) {
    doc.environment.libraries["nccl"] = first.nccl_version;
  }
  if (first.devices.empty()) {
    HostInfo h{"(not in the log)", {}};
    for (int i = 0; i < first.ranks; ++i) {
      h.ranks.push_back(i);
    }
    doc.environment.hosts.push_back(std::move(h));
  } else {
    for (const auto& d : first.devices) {
      auto it = std::find_if(doc.environment.hosts.begin(), doc.environment.hosts.end(),
                             [&](const HostInfo& h) { return h.hostname == d.host; });
      if (it == doc.environment.hosts.end()) {
        doc.environment.hosts.push_back({d.host, {}});
        it = std::prev(doc.environment.hosts.end());
      }
      it->ranks.push_back(d.rank);
      BindingRecord b;
      b.rank = d.rank;
      b.host = d.host;
      b.gpu = d.bus_id;
      b.cpus = "";
      b.note = fmt::format("{} (from the {} log; CPUs not in it)", d.gpu, first.tool);
      doc.environment.binding.push_back(std::move(b));
    }
  }
  return doc;
}

std::vector<ImportLog> read_logs(const std::vector<std::string>& paths, std::uintmax_t max_bytes) {
  std::vector<ImportLog> logs;
  for (const auto& path : paths) {
    ImportLog log;
    log.name = path;
    log.text = read_input_file(path, max_bytes, "log");
    struct stat st {};
    std::tm tm{};
    if (::stat(path.c_str(), &st) == 0 && ::gmtime_r(&st.st_mtime, &tm) != nullptr) {
      log.modified_utc = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    }
    logs.push_back(std::move(log));
  }
  return logs;
}

}  // namespace ccbench::report
